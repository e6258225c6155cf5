"""The CLI's outputs are pinned byte for byte (tests/golden/capture.py writes and documents them).

A refactor must not change what users see: text, --json, --markdown, --view table, diff, compare,
gates and exit codes over the spec's T3 fixtures and the bundled dataset's recorded answers. When
a change in output is intended, rerun `python tests/golden/capture.py` and review the diff.
"""
from __future__ import annotations

import difflib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "golden"))
import capture  # noqa: E402

pytestmark = pytest.mark.slow   # every golden CLI output captured anew


def test_cli_outputs_match_the_goldens(tmp_path):
    capture.capture(tmp_path)
    expected_dir = capture.HERE / "expected"
    expected = sorted(p.name for p in expected_dir.iterdir())
    assert sorted(p.name for p in tmp_path.iterdir()) == expected
    for name in expected:
        want = (expected_dir / name).read_text(encoding="utf-8")
        got = (tmp_path / name).read_text(encoding="utf-8")
        assert got == want, "%s differs:\n%s" % (name, "".join(list(difflib.unified_diff(
            want.splitlines(True), got.splitlines(True), "expected", "now"))[:60]))
