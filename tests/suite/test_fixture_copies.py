"""tests/fixtures/spec/ are copies of the spec's test vectors: they must equal the spec wherever it is present."""
from __future__ import annotations

import pytest

from helpers import SHARED, SPEC_FIXTURES

SPEC = SHARED / "spec" / "fixtures"


@pytest.mark.skipif(not SPEC.is_dir(), reason="the spec (../shared/spec) is not beside this clone; the copies are used as they are")
@pytest.mark.parametrize("name", sorted(p.name for p in SPEC_FIXTURES.iterdir() if p.name != "README.md"))
def test_copy_equals_the_spec(name):
    assert (SPEC_FIXTURES / name).read_bytes() == (SPEC / name).read_bytes()


def test_every_spec_vector_is_copied():
    if not SPEC.is_dir():
        pytest.skip("the spec (../shared/spec) is not beside this clone")
    assert {p.name for p in SPEC.iterdir()} - {"README.md"} <= {p.name for p in SPEC_FIXTURES.iterdir()}
