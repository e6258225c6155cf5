"""tests/conftest.py names test files by their base name (LONGEST_FILES, handed out first under xdist)."""
from __future__ import annotations

from helpers import ROOT


def test_every_longest_file_in_conftest_names_a_test_file():
    """A renamed file would silently drop out of LONGEST_FILES and could run alone at the end of `-n auto`
    (kept here, with the other checks on the suite itself, because conftest cannot hold tests)."""
    from conftest import LONGEST_FILES

    names = {path.name for path in (ROOT / "tests").glob("*/test_*.py")}
    assert [name for name in LONGEST_FILES if name not in names] == []
