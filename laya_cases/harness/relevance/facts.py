"""The S8.10 run facts of a relevance run, kept up to date while it runs (settings_json.relevance).

`Measured` wraps the loaded runner: every call is timed, the facts dict inside the runner's
`info.settings["relevance"]` is updated in place after each call (duration, inference seconds,
throughput, peak memory), so whatever the run commits carries them. It also completes the S8.5
facts of scoring runners that give only a normalised yes score (no_score = 1 - yes, native_score =
logit(yes) when the runner reports none) and the S8.3 facts of the generative runner
(`truncated`, `parsed`).
"""
from __future__ import annotations

import datetime as _dt
import math
import platform
import subprocess
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from laya_cases.core.version import __version__
from laya_cases.runners.base import Runner

GENERATIVE_RUNNERS = ("hf-generate",)


def source_commit() -> Optional[str]:
    root = Path(__file__).resolve().parents[3]
    if not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _runtime() -> str:
    from importlib.metadata import PackageNotFoundError, version

    parts = ["python %s" % platform.python_version()]
    for name in ("torch", "transformers"):
        try:
            parts.append("%s %s" % (name, version(name)))
        except PackageNotFoundError:
            pass
    return ", ".join(parts)


def _device_name(device: str) -> str:
    if str(device).startswith("cuda"):
        import torch

        return torch.cuda.get_device_name(torch.device(device))
    return "%s (%s)" % (platform.processor() or platform.machine() or "cpu", device)


def _peak_rss() -> Optional[int]:
    try:
        import resource            # POSIX only
    except ImportError:
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024     # Linux reports KiB


def _logit(p: float) -> Optional[float]:
    if not 0.0 < p < 1.0:
        return None
    return math.log(p) - math.log1p(-p)


class Measured(Runner):
    """The runner of one (model, language) run, timed; its facts live in `info.settings['relevance']`."""

    def __init__(self, inner: Runner, facts: Dict[str, Any]):
        self.inner, self.name, self.capabilities, self.info = inner, inner.name, inner.capabilities, inner.info
        self.generative = inner.name in GENERATIVE_RUNNERS
        self.items, self.inference = 0, 0.0
        self._cuda = str(self.info.device).startswith("cuda")
        if self._cuda:
            import torch

            torch.cuda.reset_peak_memory_stats()
        try:
            import torch

            torch.manual_seed(int(facts.get("seed", 0)))
        except ImportError:
            pass
        settings = inner.info.settings
        self.facts = dict(facts, mode="generative" if self.generative else "scoring",
                          runner=inner.name, model_revision=inner.info.revision, dtype=inner.info.dtype,
                          max_length=inner.info.max_length, device=inner.info.device,
                          device_name=_device_name(inner.info.device), runtime=_runtime(),
                          package_version="laya-cases %s" % __version__, source_commit=source_commit(),
                          decision_rule=settings.get("decision_rule"), prompt_sha256=settings.get("prompt_sha256"),
                          prompt_template=settings.get("prompt_template"),
                          decoding="greedy" if self.generative else None,
                          max_new_tokens=settings.get("max_new_tokens"),
                          generation_mode="generate" if self.generative else "score",
                          started_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
        self._settings = settings
        settings.pop("relevance", None)      # a previous language's facts; installed again by `install`
        self._started = time.perf_counter()

    def install(self, total_rows: int = 0) -> None:
        """Put the facts into the run's settings and start the clock: `execute(on_loaded=...)` calls it
        once the model is ready (after a resumed run's settings were compared, so they do not differ)."""
        self._started = time.perf_counter()
        self._update()
        self._settings["relevance"] = self.facts

    def _update(self) -> None:
        peak_vram = None
        if self._cuda:
            import torch

            peak_vram = int(torch.cuda.max_memory_allocated())
        self.facts.update(items=self.items, inference_seconds=self.inference,
                          duration_seconds=time.perf_counter() - self._started,
                          throughput_items_per_second=(self.items / self.inference) if self.inference > 0 else None,
                          peak_vram_bytes=peak_vram,
                          peak_rss_bytes=_peak_rss())

    def predict_batch(self, states: List[Any], questions: Dict[str, Any], **kwargs: Any) -> List[Dict[str, Any]]:
        started = time.perf_counter()
        results = self.inner.predict_batch(states, questions, **kwargs)
        self.inference += time.perf_counter() - started
        self.items += len(states)
        for result in results if isinstance(results, list) else ():
            self._complete(result, questions)
        self._update()
        return results

    def _complete(self, result: Any, questions: Dict[str, Any]) -> None:
        if not isinstance(result, dict):
            return
        answers = result.get("answers") if isinstance(result.get("answers"), dict) else {}
        facts = result.setdefault("facts", {})
        for qid in questions:
            answer = answers.get(qid) if isinstance(answers.get(qid), dict) else {}
            mine = facts.setdefault(qid, {})
            if self.generative:
                mine.setdefault("truncated", bool(answer.get("truncated", False)))
                mine.setdefault("parsed", answer.get("type") == "noul")
                continue
            yes = mine.get("relevance_score")
            if yes is None and isinstance(answer.get("noul"), (int, float)):
                yes = mine["relevance_score"] = float(answer["noul"])
            if yes is not None:
                mine.setdefault("no_score", 1.0 - yes)
                mine.setdefault("native_score", _logit(yes))
