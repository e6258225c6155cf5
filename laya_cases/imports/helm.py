"""HELM run folders -> runs: one run per `benchmark_output/runs/<suite>/<run_name>/` (one model, one scenario,
one adapter), read from its `scenario_state.json` and `per_instance_stats.json` (docs/imports.md, "HELM").

Read from HELM's own code (crfm-helm 0.5.16): `benchmark/runner.py` writes `run_spec.json`, `scenario.json`,
`scenario_state.json` (adaptation/scenario_state.py ScenarioState: `adapter_spec` and `request_states`, each
an adaptation/request_state.py RequestState: `instance`, `reference_index`, `request_mode`,
`train_trial_index`, `output_mapping`, `request`, `result`), `stats.json` and `per_instance_stats.json`
(metrics/metric.py PerInstanceStats: `instance_id`, `perturbation`, `train_trial_index`, `stats`, each a
metrics/statistic.py Stat whose `name` is a MetricName and whose `mean` is the per-instance value), every
dataclass through `asdict_without_nones`. An Instance (scenarios/scenario.py) carries `input.text`,
`references` (`output.text`, `tags`: `correct` marks the gold), `split`, `sub_split`, `id` and, for a
perturbed copy (augmentations/perturbation.py: the id is kept), a `perturbation` (PerturbationDescription,
`name`). Multiple-choice adapters (adaptation/adapters/multiple_choice_*_adapter.py): `multiple_choice_joint`
makes one request per instance whose `output_mapping` maps the answer letter to a reference text;
`multiple_choice_separate_original` / `_calibrated` one request per reference (and per `request_mode`
`original` / `calibration`), echoing the prompt with max_tokens 0. helm_rows.py turns each instance into one
`choice` decision and checks it against HELM's per-instance `exact_match`, `max_prob`, `predicted_index`.
"""
from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterator, List, Optional, Tuple

from laya_cases.core.errors import UsageError
from laya_cases.imports.common import Imported, Source, read_json
from laya_cases.imports.helm_rows import JOINT, SEPARATE, joint_row, separate_row

STATE, STATS, SPEC = "scenario_state.json", "per_instance_stats.json", "run_spec.json"
MAX_PROB_NOTE = ("%s is a multiple_choice_joint run: HELM logs no per-option probabilities, so each decision's "
                 "confidence is HELM's max_prob (exp of the generated answer's logprob), not a distribution over "
                 "the options")
Key = Tuple[str, Optional[str], int]


def is_run_file(name: str) -> bool:
    return os.path.basename(name) in (STATE, STATS)


def run_folders(path: str) -> List[str]:
    """The run folder of a scenario_state.json / per_instance_stats.json, or every folder at or under `path`
    holding a scenario_state.json, in path order."""
    if os.path.isfile(path):
        if not is_run_file(path):
            raise UsageError("%s is not a HELM %s or %s" % (path, STATE, STATS))
        return [os.path.dirname(path) or "."]
    found = sorted(folder for folder, _, names in os.walk(path) if STATE in names)
    if not found:
        raise UsageError("%s holds no HELM run folder (benchmark_output/runs/<suite>/<run>/%s)" % (path, STATE))
    return found


def _perturbation_key(value: Any) -> Optional[str]:
    return None if value is None else json.dumps(value, sort_keys=True)


class HelmRun:
    """One HELM run folder: its Source (identity) and one decision per instance (and perturbed copy)."""

    def __init__(self, folder: str, norm: str = "raw", item_field: Optional[str] = None):
        if norm != "raw":
            raise UsageError("--norm is not read for HELM (it decides by its adapter's own reference score), got %r"
                             % norm)
        if item_field is not None:
            raise UsageError("--item-id is not read for HELM: the item id is the instance id (perturbed copies "
                             "keep it)")
        self.folder = folder
        self.state_path, self.stats_path = os.path.join(folder, STATE), os.path.join(folder, STATS)
        if not os.path.isfile(self.stats_path):
            raise UsageError("%s: no %s beside it (HELM writes both; is the run finished?)" % (self.state_path, STATS))
        self.state = read_json(self.state_path)
        if not isinstance(self.state, dict) or not isinstance(self.state.get("request_states"), list):
            raise UsageError("%s field 'request_states' must be a list (is it a HELM scenario_state.json?)"
                             % self.state_path)
        adapter = self.state.get("adapter_spec")
        if not isinstance(adapter, dict):
            raise UsageError("%s field 'adapter_spec' must be an object" % self.state_path)
        self.adapter, self.method = adapter, adapter.get("method")
        if self.method not in JOINT + tuple(SEPARATE):
            raise UsageError("%s field 'adapter_spec.method' is %r: only %s runs are decisions (docs/imports.md)"
                             % (self.state_path, self.method, ", ".join(JOINT + tuple(SEPARATE))))
        spec_path = os.path.join(folder, SPEC)
        spec = read_json(spec_path) if os.path.isfile(spec_path) else None
        name = spec.get("name") if isinstance(spec, dict) else None
        self.name = name if isinstance(name, str) and name else os.path.basename(os.path.normpath(folder))
        self.qid = self.name.split(":")[0]
        model = adapter.get("model") or adapter.get("model_deployment")
        files = [self.state_path, self.stats_path] + ([spec_path] if spec is not None else [])
        self.source = Source(harness="helm", version=None, model=model if isinstance(model, str) else None,
                             tasks=[self.name], files=files,
                             normalisation=_normalisation(self.method), label=folder,
                             notes=[MAX_PROB_NOTE % folder] if self.method in JOINT else [])

    def rows(self) -> Iterator[Imported]:
        stats = _stats(self.stats_path)
        trials = self.adapter.get("num_train_trials")
        tag_trial = isinstance(trials, int) and not isinstance(trials, bool) and trials > 1
        for key, (first, states) in _groups(self.state["request_states"], self.state_path).items():
            where = "%s request_states[%d]" % (self.state_path, first)
            logged = stats.get(key)
            if logged is None:
                raise UsageError("%s: %s has no entry for instance %r (perturbation %s, train trial %d)"
                                 % (where, STATS, key[0], json.loads(key[1])["name"] if key[1] else "none", key[2]))
            make = joint_row if self.method in JOINT else separate_row
            raw, answer, extra = make(self.method, self.adapter, states, logged, self.state_path, self.qid)
            instance = states[0][1]["instance"]
            tags = ["split=%s" % instance.get("split"),
                    "perturbation=%s" % ((instance.get("perturbation") or {}).get("name") or "original")]
            sub = instance.get("sub_split")
            tags += ["sub_split=%s" % sub] if sub is not None else []
            tags += ["train_trial=%d" % key[2]] if tag_trial else []
            raw["tags"] = tags
            yield Imported(self.state_path, first + 1, raw, {self.qid: answer}, {self.qid: extra} if extra else {})


def _normalisation(method: str) -> Dict[str, Any]:
    if method in JOINT:
        return {"adapter": method, "confidence": "max_prob", "probabilities": None, "item_id": "instance.id"}
    return {"adapter": method, "score": SEPARATE[method], "probabilities": "softmax(score)",
            "item_id": "instance.id"}


def _groups(states: List[Any], path: str) -> Dict[Key, Tuple[int, List[Tuple[int, Dict[str, Any]]]]]:
    """(instance id, perturbation, train trial) -> (index of its first request state, [(index, state)]), in
    file order: the joint adapter makes one request state per instance, the separate ones one per reference."""
    out: Dict[Key, Tuple[int, List[Tuple[int, Dict[str, Any]]]]] = {}
    for i, state in enumerate(states):
        where = "%s request_states[%d]" % (path, i)
        instance = state.get("instance") if isinstance(state, dict) else None
        if not isinstance(instance, dict):
            raise UsageError("%s field 'instance' must be an object" % where)
        ident, trial = instance.get("id"), state.get("train_trial_index")
        if not isinstance(ident, str) or not ident:
            raise UsageError("%s field 'instance.id' must be the instance's id" % where)
        if not isinstance(trial, int) or isinstance(trial, bool):
            raise UsageError("%s field 'train_trial_index' must be an integer" % where)
        perturbation = instance.get("perturbation")
        if perturbation is not None and not (isinstance(perturbation, dict) and isinstance(perturbation.get("name"), str)):
            raise UsageError("%s field 'instance.perturbation' must be a PerturbationDescription with a name" % where)
        key = (ident, _perturbation_key(perturbation), trial)
        out.setdefault(key, (i, []))[1].append((i, state))
    return out


def _stats(path: str) -> Dict[Key, Tuple[str, Dict[str, List[float]]]]:
    """(instance id, perturbation, train trial) -> (where, {stat name: [per-instance means]}) of
    per_instance_stats.json."""
    doc = read_json(path)
    if not isinstance(doc, list):
        raise UsageError("%s must be a list of per-instance stats (is it a HELM per_instance_stats.json?)" % path)
    out: Dict[Key, Tuple[str, Dict[str, List[float]]]] = {}
    for j, entry in enumerate(doc):
        where = "%s [%d]" % (path, j)
        if not isinstance(entry, dict) or not isinstance(entry.get("instance_id"), str):
            raise UsageError("%s field 'instance_id' must be the instance's id" % where)
        trial, stats = entry.get("train_trial_index"), entry.get("stats")
        if not isinstance(trial, int) or isinstance(trial, bool):
            raise UsageError("%s field 'train_trial_index' must be an integer" % where)
        if not isinstance(stats, list):
            raise UsageError("%s field 'stats' must be a list" % where)
        values: Dict[str, List[float]] = {}
        for stat in stats:
            name = stat.get("name") if isinstance(stat, dict) else None
            if not isinstance(name, dict) or not isinstance(name.get("name"), str):
                raise UsageError("%s field 'stats[].name.name' must be a metric name" % where)
            values.setdefault(name["name"], []).append(_mean(stat, where))
        out[(entry["instance_id"], _perturbation_key(entry.get("perturbation")), trial)] = (where, values)
    return out


def _mean(stat: Dict[str, Any], where: str) -> Any:
    """A Stat's per-instance value: its `mean` (asdict_without_nones drops it when count is 0)."""
    mean = stat.get("mean")
    if mean is None or (isinstance(mean, (int, float)) and not isinstance(mean, bool)):
        return mean
    raise UsageError("%s field 'stats.%s.mean' must be a number, got %s"
                     % (where, stat["name"]["name"], type(mean).__name__))


def runs(path: str, norm: str = "raw", item_field: Optional[str] = None) -> List[HelmRun]:
    return [HelmRun(folder, norm, item_field) for folder in run_folders(path)]
