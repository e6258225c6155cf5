"""laya_cases/interop/pandas_probe.py: ingest converts with pyarrow without importing pandas, and pyarrow sees
pandas objects as usual once anything imports pandas. Each check runs in a fresh interpreter (the
probe is once per process)."""
from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("pandas", reason="pandas is not installed: nothing to skip")

PANDAS_AWARE = """
import pandas as pd
import pyarrow as pa
cat = pa.array(pd.Series(pd.Categorical(["a", "b", "a"])))
ints = pa.array(pd.Series([1, None], dtype="Int64"))
print(cat.type, ints.type, ints.null_count, pa.Table.from_pandas(pd.DataFrame({"x": [1.5]})).num_rows)
"""


def python(code: str, check: bool = True) -> str:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0 or not check, proc.stderr
    return proc.stdout.strip() if proc.returncode == 0 else "failed: %s" % proc.stderr.strip().splitlines()[-1]


@pytest.mark.slow
def test_ingest_converts_without_importing_pandas(tmp_path):
    from helpers import ROOT

    out = python("""
import sys
from laya_cases.record.ingest.answers import ingest
from laya_cases.store.warehouse import Warehouse
ingest(Warehouse(%r), %r, run_id="r", bulk=True)
import pyarrow as pa
pa.array([1, 2]); pa.Table.from_pylist([{"a": 1}])
print("pandas" in sys.modules)
""" % (str(tmp_path / "wh"), str(ROOT / "data" / "support.answers.jsonl")))
    assert out == "False"


@pytest.mark.parametrize("call", ["import pyarrow\npandas_probe.skip()", "pandas_probe.install()\nimport pyarrow"])
@pytest.mark.slow
def test_pyarrow_sees_pandas_objects_once_pandas_is_imported(call):
    """skip() once pyarrow is imported (ingest), install() before (the CLI): no pandas until it is imported,
    then pyarrow converts pandas objects as it does on its own."""
    as_usual = python(PANDAS_AWARE)                                  # pyarrow's own behaviour
    assert as_usual.startswith("dictionary<") and as_usual.endswith(" int64 1 1")
    assert python("import sys\nfrom laya_cases.interop import pandas_probe\n%s\nimport pyarrow as pa\npa.array([1])\n"
                  "assert 'pandas' not in sys.modules\n%s" % (call, PANDAS_AWARE)) == as_usual


@pytest.mark.slow
def test_without_the_rearm_pyarrow_would_not():
    """The check above can fail: pyarrow, told once that pandas is missing, keeps treating a Series as a
    plain sequence (its categorical is no dictionary) unless the probe is re-armed."""
    out = python("from laya_cases.interop import pandas_probe\npandas_probe._After.find_spec = lambda *a, **k: None\n"
                 "pandas_probe.skip()\n" + PANDAS_AWARE, check=False)
    assert out != python(PANDAS_AWARE), out
