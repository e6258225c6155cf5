"""The real `laya` Agent as a runner: `--model convaiinnovations/laya` or a local checkpoint directory.

Answers come straight from `laya.Agent.predict_batch`, so they are the served answers: logits of
the option markers divided by the bucket temperature (falling back to the per-type one), which the
Agent clamps to [0.5, 5] at load time (S2.6).

`unclamped=True` (`--unclamped`) answers with the checkpoint's raw temperatures instead. The Agent
keeps the shipped values in `temperature_raw` / `temperature_by_options_raw` and only ever reads the
clamped copies `temperature` / `temperature_by_options` when it decodes, so the one change is to
replace those two attributes after load with the raw values. A raw value that is not a finite
number keeps the Agent's fallback (1.0); a raw value <= 0 is floored at 0.001, the S7.4 floor.
Temperature scaling is monotone, so predictions never change; confidences (and so ECE) do.

Every decision records the temperature applied and its bucket (columns `temperature`,
`temperature_bucket`), the bucket's served (clamped) and raw (unclamped) temperatures
(`temperature_clamped`, `temperature_unclamped`) and the raw option-marker logits before any
temperature (`logits`, canonical option order), so both regimes re-derive from the store with no
model: p = softmax(logits / max(0.001, T)) (S7.4, docs/massive.md). The logits are read during the
Agent's own forward pass: for one `predict_batch` call the runner wraps the Agent's
`_encode_state` (one call per state, in state order) and `_decode_answers` (which receives the
same per-state item list and the logit matrix) and keeps each state's rows, mapped back to
canonical order with the Agent's `unpermute_probs`; nothing is recomputed. `exact=True`
(`--runner-option exact=true`, which the MASSIVE harness sets) additionally replaces a choice
answer's 4-decimal `probabilities` and `answer_confidence` by the unrounded softmax of those
logits, so stored confidences are unrounded as S7.7 requires; predictions never change.
The run records the checkpoint revision (null for a local directory).
"""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Tuple

from laya_cases.core import questions as Q
from laya_cases.runners.base import Capabilities, Runner, RunnerInfo, softmax
from laya_cases.runners.hf_common import offline

DEFAULT_MODEL = "convaiinnovations/laya"
_HUB_PREFIX = "convaiinnovations/"


def unclamped_temperature(raw: Any) -> float:
    """The raw temperature as a divisor: finite numbers as shipped (floored at 0.001), else 1.0."""
    t = Q.temperature_value(raw)
    return 1.0 if t is None else max(0.001, t)


def _option_count(body: Dict[str, Any]) -> int:
    return len(Q.option_labels(body))


class _LogitTap:
    """Raw option logits of every state of one `Agent.predict_batch` call (see the module doc)."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.encoded: List[Any] = []                    # per state, in call order
        self.rows: Dict[int, Dict[str, List[float]]] = {}    # id(items) -> {qid: logits}

    def __enter__(self) -> "_LogitTap":
        from laya.common import unpermute_probs

        agent = self.agent
        encode, decode = agent._encode_state, agent._decode_answers

        def tap_encode(*args: Any, **kwargs: Any) -> Any:
            items = encode(*args, **kwargs)
            self.encoded.append(items)
            return items

        def tap_decode(logits: Any, act: Any, items: Any, ids: List[str], internal: Dict[str, Any],
                       offset: int, *args: Any, **kwargs: Any) -> Any:
            rows = {}
            for j, qid in enumerate(ids):
                row = logits[offset + j, : len(items[j]["markers"])]
                row = unpermute_probs(row, internal[qid].get("option_order"))
                rows[qid] = [float(x) for x in row]
            self.rows[id(items)] = rows
            return decode(logits, act, items, ids, internal, offset, *args, **kwargs)

        agent._encode_state, agent._decode_answers = tap_encode, tap_decode
        return self

    def __exit__(self, *exc: Any) -> None:
        del self.agent._encode_state, self.agent._decode_answers     # the class methods again

    def logits(self, n_states: int) -> List[Dict[str, List[float]]]:
        """Each state's {qid: logits}; empty dicts when the calls did not line up (never guessed)."""
        if len(self.encoded) != n_states:
            return [{} for _ in range(n_states)]
        return [self.rows.get(id(items), {}) for items in self.encoded]


class LayaAgentRunner(Runner):
    name = "laya-agent"
    capabilities = Capabilities(probabilities=True, batching=True, question_types=Q.TYPES,
                                devices=("cpu", "cuda", "mps"), min_confidence=True, per_row_model=False)

    @classmethod
    def accepts(cls, model: str) -> bool:
        """A convaiinnovations hub id, or a directory holding a checkpoint (or subfolders of them)."""
        if not isinstance(model, str) or not model:
            return False
        if os.path.isdir(model):
            if os.path.isfile(os.path.join(model, "rl_agent_config.json")):
                return True
            try:
                return any(os.path.isfile(os.path.join(model, d, "rl_agent_config.json")) for d in os.listdir(model))
            except OSError:
                return False
        return model.startswith(_HUB_PREFIX)

    def __init__(self, model: str = DEFAULT_MODEL, device: str = "cpu", revision: Optional[str] = None,
                 subfolder: Optional[str] = None, unclamped: bool = False, batch_size: Optional[int] = None,
                 exact: bool = False, **options: Any) -> None:
        offline()                     # a hub id loads from the local cache only
        import laya

        if options:
            raise ValueError("%s runner: unknown option(s) %s" % (self.name, ", ".join(sorted(options))))
        self.agent = self._load_agent(model, device=device, revision=revision, subfolder=subfolder)
        self.unclamped = bool(unclamped)
        self.exact = bool(exact)
        self.batch_size = batch_size
        agent = self.agent
        self._clamped = (list(agent.temperature), dict(agent.temperature_by_options))
        self._raw = ([unclamped_temperature(t) for t in agent.temperature_raw],
                     {k: unclamped_temperature(v) for k, v in agent.temperature_by_options_raw.items()})
        if self.unclamped:
            # The documented patch: the decoder reads only these two attributes (see module doc).
            agent.temperature = [unclamped_temperature(t) for t in agent.temperature_raw]
            agent.temperature_by_options = {k: unclamped_temperature(v)
                                            for k, v in agent.temperature_by_options_raw.items()}
        rule = ("laya %s.predict_batch: softmax(option-marker logits / T_bucket), T_bucket = "
                "temperature_by_options[<type>:<size>] else temperature[type]; choice = argmax, "
                "score = sum i*p_i, noul = P(true); temperatures %s"
                % (type(agent).__name__,
                   "raw as shipped (--unclamped)" if self.unclamped else "clamped to [0.5, 5] as served"))
        self.info = RunnerInfo(
            runner=self.name, model_id=model, revision=agent.revision, device=self._device(), dtype=self._dtype(),
            max_length=agent.cfg.get("max_len", 512),
            settings={
                "subfolder": subfolder, "head_max_len": agent.cfg.get("head_max_len", 192),
                "temperatures": "unclamped" if self.unclamped else "clamped",
                "temperature": list(agent.temperature),
                "temperature_by_options": dict(agent.temperature_by_options),
                "temperature_raw": agent.temperature_raw,
                "temperature_by_options_raw": agent.temperature_by_options_raw,
                "batch_size": batch_size, "laya_version": getattr(laya, "__version__", None),
                "exact_probabilities": self.exact,
                "decision_rule": rule,
            })

    def _load_agent(self, model: str, device: str, revision: Optional[str], subfolder: Optional[str]) -> Any:
        """The torch Agent; laya_onnx.py loads an ONNXAgent here and keeps everything else."""
        from laya.agent import Agent

        return Agent(model, device=device, revision=revision, subfolder=subfolder)

    def _device(self) -> str:
        return str(self.agent.device)

    def _dtype(self) -> str:
        return str(self.agent.dtype).replace("torch.", "")

    def _temperature(self, body: Dict[str, Any]) -> Tuple[str, float, float, float]:
        """(bucket, applied, clamped, unclamped) exactly as `Agent._decode_answers` looks the
        temperature up (no lang override): the bucket's value, else the type's."""
        from laya.common import QTYPES

        kind = body.get("type")
        bucket = Q.bucket(str(kind), _option_count(body))

        def lookup(temps: tuple) -> float:
            return float(temps[1].get(bucket, temps[0][QTYPES[kind]]))

        applied = float(self.agent.temperature_by_options.get(bucket, self.agent.temperature[QTYPES[kind]]))
        return bucket, applied, lookup(self._clamped), lookup(self._raw)

    def predict_batch(self, states: List[Any], questions: Dict[str, Any]) -> List[Dict[str, Any]]:
        with _LogitTap(self.agent) as tap:
            results = self.agent.predict_batch(list(states), questions, batch_size=self.batch_size)
        facts = {}
        for qid, body in questions.items():
            if isinstance(body, dict) and body.get("type") in Q.TYPES:
                bucket, t, clamped, raw = self._temperature(body)
                facts[qid] = {"temperature": t, "temperature_bucket": bucket,
                              "temperature_clamped": clamped, "temperature_unclamped": raw}
        out = []
        for r, logits in zip(results, tap.logits(len(results))):
            mine = {q: dict(f, **({"logits": logits[q]} if q in logits else {})) for q, f in facts.items()}
            if self.exact:
                self._exact(r["answers"], mine)
            # the Agent's own `model` ("laya-rl-agent") is what the reference's model slice reads (S4.3)
            out.append({"answers": r["answers"], "facts": mine, "usage": r.get("usage"), "model": r.get("model")})
        return out

    @staticmethod
    def _exact(answers: Dict[str, Any], facts: Dict[str, Dict[str, Any]]) -> None:
        """Choice answers: unrounded probabilities and answer_confidence from the stored logits."""
        for qid, answer in answers.items():
            fact = facts.get(qid, {})
            if not (isinstance(answer, dict) and answer.get("type") == "choice" and fact.get("logits")
                    and isinstance(answer.get("probabilities"), dict)
                    and len(answer["probabilities"]) == len(fact["logits"])):
                continue
            p = softmax(fact["logits"], fact["temperature"])
            answer["probabilities"] = dict(zip(answer["probabilities"], p))
            answer["answer_confidence"] = max(p)
