"""Shared fixtures: every test starts and ends with no active tape, accumulator or vmap."""
import pytest

import tapegrad  # noqa: F401  (registers every primitive)
from tapegrad.core.state import STATE


@pytest.fixture(autouse=True)
def _clean_state():
    assert not STATE.recorders and not STATE.tracers and not STATE.batch_level, \
        "a previous test left an interpreter active"
    yield
    leaked = (list(STATE.recorders), list(STATE.tracers), STATE.batch_level)
    STATE.recorders, STATE.tracers, STATE.batch_level = [], [], 0
    STATE.refresh()
    assert leaked == ([], [], 0), f"test left interpreters active: {leaked}"
