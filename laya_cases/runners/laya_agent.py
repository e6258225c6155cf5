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
`temperature_bucket`); the run records the checkpoint revision (null for a local directory).
"""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

from .. import questions as Q
from .base import Capabilities, Runner, RunnerInfo

DEFAULT_MODEL = "convaiinnovations/laya"
_HUB_PREFIX = "convaiinnovations/"


def unclamped_temperature(raw: Any) -> float:
    """The raw temperature as a divisor: finite numbers as shipped (floored at 0.001), else 1.0."""
    t = Q.temperature_value(raw)
    return 1.0 if t is None else max(0.001, t)


def _option_count(body: Dict[str, Any]) -> int:
    return len(Q.option_labels(body))


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
                 **options: Any) -> None:
        from .hf_common import offline

        offline()                     # a hub id loads from the local cache only
        import laya
        from laya.agent import Agent

        if options:
            raise ValueError("laya-agent runner: unknown option(s) %s" % ", ".join(sorted(options)))
        self.agent = Agent(model, device=device, revision=revision, subfolder=subfolder)
        self.unclamped = bool(unclamped)
        self.batch_size = batch_size
        agent = self.agent
        if self.unclamped:
            # The documented patch: the decoder reads only these two attributes (see module doc).
            agent.temperature = [unclamped_temperature(t) for t in agent.temperature_raw]
            agent.temperature_by_options = {k: unclamped_temperature(v)
                                            for k, v in agent.temperature_by_options_raw.items()}
        dtype = str(agent.dtype).replace("torch.", "")
        rule = ("laya Agent.predict_batch: softmax(option-marker logits / T_bucket), T_bucket = "
                "temperature_by_options[<type>:<size>] else temperature[type]; choice = argmax, "
                "score = sum i*p_i, noul = P(true); temperatures %s"
                % ("raw as shipped (--unclamped)" if self.unclamped else "clamped to [0.5, 5] as served"))
        self.info = RunnerInfo(
            runner=self.name, model_id=model, revision=agent.revision, device=str(agent.device), dtype=dtype,
            max_length=agent.cfg.get("max_len", 512),
            settings={
                "subfolder": subfolder, "head_max_len": agent.cfg.get("head_max_len", 192),
                "temperatures": "unclamped" if self.unclamped else "clamped",
                "temperature": list(agent.temperature),
                "temperature_by_options": dict(agent.temperature_by_options),
                "temperature_raw": agent.temperature_raw,
                "temperature_by_options_raw": agent.temperature_by_options_raw,
                "batch_size": batch_size, "laya_version": getattr(laya, "__version__", None),
                "decision_rule": rule,
            })

    def _temperature(self, body: Dict[str, Any]) -> tuple:
        """(bucket, temperature) exactly as `Agent._decode_answers` looks it up (no lang override)."""
        from laya.common import QTYPES

        kind = body.get("type")
        bucket = Q.bucket(str(kind), _option_count(body))
        return bucket, float(self.agent.temperature_by_options.get(bucket, self.agent.temperature[QTYPES[kind]]))

    def predict_batch(self, states: List[Any], questions: Dict[str, Any]) -> List[Dict[str, Any]]:
        results = self.agent.predict_batch(list(states), questions, batch_size=self.batch_size)
        facts = {}
        for qid, body in questions.items():
            if isinstance(body, dict) and body.get("type") in Q.TYPES:
                bucket, t = self._temperature(body)
                facts[qid] = {"temperature": t, "temperature_bucket": bucket}
        return [{"answers": r["answers"], "facts": {q: dict(f) for q, f in facts.items()}, "usage": r.get("usage")}
                for r in results]
