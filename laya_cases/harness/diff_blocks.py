"""The benchmarks' own sections of `diff A B`, each added when both runs are of its kind: what `diff`
(cli), `Store.diff` (api) and the compare page (serve) pass to report/diff.py, which knows no benchmark."""
from laya_cases.harness.robustness.compare import DIFF_BLOCK as ROBUSTNESS

DIFF_BLOCKS = (ROBUSTNESS,)
