"""What every Hugging Face runner does the same way: offline loading, batched forwards, the record.

Two families, each with its loading and its `predict_batch` written once here:

* `PairClassifierRunner` (hf-cross-encoder, hf-nli): a sequence classifier over (state, text)
  pairs, the texts being each option's S2.3 rendering or a noul question's statement. A subclass
  says how a pair's logits become one value (`_reduce`), how a value scores an option
  (`_option_score`) and gives a noul P(true) (`_p_true`).
* `CausalLMRunner` (hf-causal-yesno, hf-generate): one S8.2 prompt per (state, noul question),
  left-padded batches. A subclass turns the prompts into outputs (`_outputs`) and one output into
  an answer and its facts (`_decide`).

Subclass `__init__`s keep their own keyword arguments and checks, then call `_load` and `_record`.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from laya_cases.core import questions as Q
from laya_cases.runners import hf_common as H
from laya_cases.runners.base import Capabilities, Runner, RunnerInfo, answer_from_probs, softmax

DEVICES = ("cpu", "cuda", "mps")


class HFRunner(Runner):
    device: str
    batch_size: int

    def _in_batches(self, items: Sequence[Any], forward: Callable[[Sequence[Any]], List[Any]]) -> List[Any]:
        """`forward` over `batch_size` slices of `items`, without autograd, concatenated."""
        import torch

        out: List[Any] = []
        with torch.no_grad():
            for part in H.chunks(items, self.batch_size):
                out.extend(forward(part))
        return out

    def _record(self, model: str, revision: Optional[str], net: Any, max_length: Optional[int],
                settings: Dict[str, Any]) -> None:
        self.info = RunnerInfo(runner=self.name, model_id=model, revision=revision, device=str(self.device),
                               dtype=H.dtype_name(net.dtype), max_length=max_length, settings=settings)


# ------------------------------------------------------------------------------ pair classifiers
class PairClassifierRunner(HFRunner):
    capabilities = Capabilities(probabilities=True, batching=True, question_types=Q.TYPES, devices=DEVICES,
                                min_confidence=True)

    @staticmethod
    def classifier_config(model: str) -> Optional[Dict[str, Any]]:
        """The config.json of a local sequence-classification model, else None (for `accepts`; never loads)."""
        cfg = H.config_of(model)
        archs = [str(a) for a in cfg.get("architectures") or []]
        return cfg if any(a.endswith("ForSequenceClassification") for a in archs) else None

    def _check(self, model: Optional[str], options: Dict[str, Any]) -> None:
        H.check_options(self.name, options)
        if not model:
            raise ValueError("%s needs a model: a local directory or a hub id in the local cache" % self.name)

    def _load(self, model: str, device: str, revision: Optional[str], max_length: int, batch_size: int) -> Optional[str]:
        """Tokenizer and classifier into `tok`/`model`; max_length capped by both. Returns the revision loaded."""
        H.offline()
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        local, loaded_revision = H.resolve(model, revision)
        self.tok = AutoTokenizer.from_pretrained(local, local_files_only=True)
        self.model = AutoModelForSequenceClassification.from_pretrained(
            local, local_files_only=True, dtype=torch.float32).to(device).eval()
        self.device = device
        self.max_length = min(int(max_length),
                              int(getattr(self.tok, "model_max_length", max_length) or max_length),
                              int(getattr(self.model.config, "max_position_embeddings", max_length) or max_length))
        self.batch_size = int(batch_size)
        return loaded_revision

    def _hypothesis(self, text: str) -> str:
        """The second text of a pair for an option text or a statement."""
        return text

    def _reduce(self, logits: Any) -> List[Any]:
        """Per-pair values from one batch's (n, labels) float logits on the cpu."""
        raise NotImplementedError

    def _option_score(self, value: Any) -> float:
        raise NotImplementedError

    def _p_true(self, value: Any) -> float:
        raise NotImplementedError

    def _pair_values(self, pairs: List[Tuple[str, str]]) -> List[Any]:
        def forward(part):
            enc = self.tok([a for a, _ in part], [b for _, b in part], padding=True, truncation=True,
                           max_length=self.max_length, return_tensors="pt").to(self.device)
            return self._reduce(self.model(**enc).logits.float().cpu())
        return self._in_batches(pairs, forward)

    def predict_batch(self, states: List[Any], questions: Dict[str, Any]) -> List[Dict[str, Any]]:
        pairs, spans = [], []                       # spans[i][qid] = slice of `pairs`
        for state in states:
            text = H.prompt_text(state)
            row = {}
            for qid, body in questions.items():
                texts = [H.noul_statement(body)] if body.get("type") == "noul" else Q.option_texts(body)
                row[qid] = (len(pairs), len(pairs) + len(texts))
                pairs.extend((text, self._hypothesis(t)) for t in texts)
            spans.append(row)
        values = self._pair_values(pairs)
        results = []
        for row in spans:
            answers, facts = {}, {}
            for qid, (lo, hi) in row.items():
                body = questions[qid]
                if body.get("type") == "noul":
                    p = self._p_true(values[lo])
                    answers[qid] = answer_from_probs(body, [1.0 - p, p])
                    facts[qid] = {"relevance_score": p}
                else:
                    answers[qid] = answer_from_probs(body, softmax([self._option_score(v) for v in values[lo:hi]]))
            results.append({"answers": answers, "facts": facts})
        return results


# ------------------------------------------------------------------------------ causal LMs
class CausalLMRunner(HFRunner):
    capabilities = Capabilities(probabilities=True, batching=True, question_types=("noul",), devices=DEVICES,
                                min_confidence=True)

    def _load(self, model: str, device: str, revision: Optional[str], prompt: Optional[str],
              batch_size: int) -> Tuple[Optional[str], Dict[str, Any]]:
        """Template into `template`, tokenizer (left-padded) and LM into `tok`/`lm`.
        Returns (revision loaded, the template's and the load's settings)."""
        self.template, sha, where = H.read_template(prompt, H.YESNO_TEMPLATE)
        H.offline()
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        local, loaded_revision = H.resolve(model, revision)
        tok = AutoTokenizer.from_pretrained(local, local_files_only=True)
        tok.padding_side = "left"
        if tok.pad_token_id is None:
            tok.pad_token = tok.eos_token
        self.tok = tok
        self.lm = AutoModelForCausalLM.from_pretrained(local, local_files_only=True,
                                                       dtype=torch.float32).to(device).eval()
        self.device, self.batch_size = device, int(batch_size)
        settings = {"source": H.source_facts(local) or None,
                    "chat_template": bool(getattr(tok, "chat_template", None)),
                    "prompt_template": where, "prompt_sha256": sha}
        return loaded_revision, settings

    def _record_lm(self, model: str, revision: Optional[str], settings: Dict[str, Any]) -> None:
        limit = int(getattr(self.lm.config, "max_position_embeddings", 0) or 0) or None
        self._record(model, revision, self.lm, limit, dict(settings, batch_size=self.batch_size))

    def _outputs(self, prompts: List[str]) -> List[Any]:
        raise NotImplementedError

    def _decide(self, body: Dict[str, Any], output: Any) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        """(answer, facts) for one question from its prompt's output."""
        raise NotImplementedError

    def predict_batch(self, states: List[Any], questions: Dict[str, Any]) -> List[Dict[str, Any]]:
        keys = [(i, qid) for i in range(len(states)) for qid in questions]
        prompts = H.render_prompts(self.tok, self.template, [states[i] for i, _ in keys],
                                   [questions[q] for _, q in keys])
        results: List[Dict[str, Any]] = [{"answers": {}, "facts": {}} for _ in states]
        for (i, qid), output in zip(keys, self._outputs(prompts)):
            results[i]["answers"][qid], results[i]["facts"][qid] = self._decide(questions[qid], output)
        return results
