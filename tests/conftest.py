"""Shared fixtures: every test starts and ends with no active tape, accumulator or vmap."""
import pytest

import tapegrad  # noqa: F401  (registers every primitive)
from tapegrad.core.state import STATE


@pytest.fixture(autouse=True)
def _clean_state():
    assert STATE.stack.idle, f"a previous test left an interpreter active: {STATE.stack}"
    yield
    leaked = STATE.stack
    STATE.clear()
    assert leaked.idle, f"test left interpreters active: {leaked}"
