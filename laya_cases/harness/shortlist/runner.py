"""A runner that narrows each choice before the decision runner sees it (S7.18, S7.20).

`NarrowingRunner` wraps any runner. Per state (one call per row, so each row's latency includes
its embedding or its elimination rounds): shortlist mode ranks every choice question's labels
(retrieval.rank) and asks the decision runner once on the narrowed questions; tournament mode
asks it on groups of at most g labels, round after round, then once more on the finalists. The
answer must be one of the kept labels (else the call fails, as S7.18 says). Every case gets the
facts `shortlist_labels`, `shortlist_scores` (null on pass-through and in a tournament) and
`shortlist_status`; the decision runner's own facts pass through, its `logits` put back in the
original option order (null for a label the model never saw).

Statuses need the gold label, which a runner is never given: the wrapper holds the dataset rows in
order and takes as many as each call has states (`run` calls in row order, one chunk per call); a
call whose states are not the next rows' states fails rather than guess a gold.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from laya_cases.core import answers as A
from laya_cases.core import questions as Q
from laya_cases.runners.base import Capabilities, Runner, RunnerInfo
from laya_cases.harness.shortlist.constants import (SHORTLIST_SCHEMA, SHORTLIST_STATUSES, TOURNAMENT_SCHEMA,
                                                    TOURNAMENT_STATUSES)
from laya_cases.harness.shortlist import retrieval as R


class NarrowingRunner(Runner):
    capabilities = Capabilities(batching=False, min_confidence=False)

    def __init__(self, inner: Runner, rows: Sequence[Any], *, k: Optional[int] = None,
                 embed: Optional[R.Embed] = None, group_size: Optional[int] = None,
                 embedder_id: Optional[str] = None) -> None:
        self.inner, self.expected = inner, list(rows)       # dataset rows: their state and expected
        self.k, self.embed, self.group_size = k, embed, group_size
        self.tournament = group_size is not None
        self.name = getattr(inner, "name", "") or "runner"
        caps = inner.capabilities
        self.capabilities = Capabilities(batching=False, min_confidence=False, devices=caps.devices,
                                         question_types=caps.question_types)
        self._next = 0
        self.counts = {s: 0 for s in (TOURNAMENT_STATUSES if self.tournament else SHORTLIST_STATUSES)}
        i = inner.info
        mode = ({"tournament_group_size": group_size} if self.tournament
                else {"shortlist_k": k, "embedder_id": embedder_id})
        self.info = RunnerInfo(runner=i.runner, model_id=i.model_id, revision=i.revision, device=i.device,
                               dtype=i.dtype, max_length=i.max_length, settings=dict(i.settings, **mode))

    def predict_batch(self, states: List[Any], questions: Dict[str, Any], **kwargs: Any) -> List[Dict[str, Any]]:
        rows = self.expected[self._next:self._next + len(states)]
        self._next += len(states)
        if len(rows) != len(states) or any(row.state != state for row, state in zip(rows, states)):
            raise RuntimeError("shortlist: the run called the runner out of row order")   # never guess a gold
        return [self._one(state, questions, row.expected) for state, row in zip(states, rows)]

    def _ask(self, state: Any, questions: Dict[str, Any]) -> Dict[str, Any]:
        results = self.inner.predict_batch([state], questions)
        if not isinstance(results, list) or len(results) != 1 or not isinstance(results[0], dict):
            raise RuntimeError("decision runner returned %r for one state" % type(results).__name__)
        return results[0]

    def _choices(self, questions: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
        return {qid: body for qid, body in questions.items()
                if isinstance(body, dict) and body.get("type") == "choice" and R.labels_of(body)}

    def _eliminate(self, state: Any, choices: Dict[str, Dict[str, Any]]) -> Dict[str, List[Any]]:
        """S7.20: groups of at most g labels, winners advance until at most g remain (finalists)."""
        labels = {qid: R.labels_of(body) for qid, body in choices.items()}
        while True:
            cut = [(qid, part) for qid, kept in labels.items() if len(kept) > self.group_size
                   for part in R.groups(kept, self.group_size)]
            if not cut:
                return labels
            asked = {str(i): R.narrowed(choices[qid], part) for i, (qid, part) in enumerate(cut)}
            answers = self._ask(state, asked).get("answers") or {}
            winners: Dict[str, List[Any]] = {}
            for i, (qid, part) in enumerate(cut):
                answer = answers.get(str(i))
                choice = answer.get("choice") if isinstance(answer, dict) else None
                if choice not in part:
                    raise ValueError("question %r: round answer %r is not in its group" % (qid, choice))
                winners.setdefault(qid, []).append(choice)
            labels.update(winners)

    def _one(self, state: Any, questions: Dict[str, Any], gold: Dict[str, Any]) -> Dict[str, Any]:
        choices = self._choices(questions)
        scores: Dict[str, Optional[List[float]]] = {}
        if self.tournament:
            kept = self._eliminate(state, choices)
        else:
            ranked = {qid: R.rank(state, body, self.embed, self.k) for qid, body in choices.items()}
            kept = {qid: r.labels for qid, r in ranked.items()}
            scores = {qid: r.scores for qid, r in ranked.items()}
        final = dict(questions)
        for qid, labels in kept.items():
            if labels != R.labels_of(choices[qid]):
                final[qid] = R.narrowed(choices[qid], labels)
        result = self._ask(state, final)
        answers = result.get("answers") if isinstance(result.get("answers"), dict) else {}
        inner_facts = result.get("facts") if isinstance(result.get("facts"), dict) else {}
        facts = {qid: dict(f) for qid, f in inner_facts.items() if isinstance(f, dict)}
        for qid, labels in kept.items():
            answer = answers.get(qid)
            if isinstance(answer, dict) and (answer.get("type") != "choice" or answer.get("choice") not in labels):
                raise ValueError("question %r: choice answer %r is outside the %s" % (
                    qid, answer.get("choice"), "finalists" if self.tournament else "shortlist"))
            facts[qid] = self._facts(facts.get(qid, {}), choices[qid], final[qid], labels, scores.get(qid))
            if isinstance(answer, dict) and qid in gold:
                status = R.status(gold[qid], labels, A.correct(answer, gold[qid]), self.tournament)
                facts[qid]["shortlist_status"] = status
                self.counts[status] += 1
        return dict(result, answers=answers, facts=facts)

    @staticmethod
    def _facts(inner: Dict[str, Any], original: Dict[str, Any], asked: Dict[str, Any], labels: List[Any],
               scores: Optional[List[float]]) -> Dict[str, Any]:
        out = dict(inner, shortlist_labels=[str(l) for l in labels], shortlist_scores=scores)
        out.setdefault("temperature_bucket", Q.bucket("choice", len(labels)))
        logits = inner.get("logits")
        if isinstance(logits, (list, tuple)):
            seen = Q.option_labels(asked)
            by_label = dict(zip(seen, logits)) if len(seen) == len(logits) else {}
            out["logits"] = [by_label.get(l) for l in Q.option_labels(original)] if by_label else None
        return out

    def config_block(self, config: Dict[str, Any], checkpoint_id: str, embedder_id: Optional[str]) -> None:
        """The S7.19 / S7.20 config keys of the run, counts as committed."""
        if self.tournament:
            config["schema"] = TOURNAMENT_SCHEMA
            config["tournament_group_size"] = self.group_size
            config["tournament"] = {"group_size": self.group_size, "checkpoint_id": checkpoint_id,
                                    "counts": dict(self.counts)}
        else:
            config["schema"] = SHORTLIST_SCHEMA
            config["shortlist"] = {"k": self.k, "checkpoint_id": checkpoint_id, "embedder_id": embedder_id,
                                   "counts": dict(self.counts)}
