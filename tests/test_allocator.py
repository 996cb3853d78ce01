"""util/allocator.py: glibc's malloc keeps a step's freed arrays for the next step.

Checked by what it is for: a burst of large arrays freed together and allocated again
faults no page in a process where tapegrad tuned malloc, and faults every page in one where
``TAPEGRAD_MALLOC=default`` left glibc's defaults.
"""
import os
import subprocess
import sys

import pytest

import tapegrad  # noqa: F401  (tunes malloc on import)
from tapegrad.util import allocator

glibc = pytest.mark.skipif(allocator._mallopt() is None, reason="glibc only")

# 40 arrays of 512 KB (20 MB) freed together, then made again: the second burst's page
# faults. Above glibc's dynamic trim threshold (1 MB after a 512 KB block), below ours.
BURST = """
import resource, sys
import numpy as np
{imports}
def burst():
    xs = [np.ones(1 << 17, np.float32) for _ in range(40)]
    del xs
burst(); burst()
f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
burst()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
"""


def _faults(env_extra, imports="import tapegrad"):
    env = {k: v for k, v in os.environ.items()
           if k not in allocator._USER_VARS and k != "TAPEGRAD_MALLOC"}
    env.update(env_extra)
    out = subprocess.run([sys.executable, "-c", BURST.format(imports=imports)], env=env,
                         capture_output=True, text=True, timeout=120, check=True)
    return int(out.stdout.split()[-1])


@glibc
def test_a_freed_burst_is_reused_without_page_faults():
    pages = 40 * (512 << 10) // 4096  # 5,120 pages in a burst
    tuned = _faults({}, "from tapegrad.util import allocator; allocator.tune()")
    untuned = _faults({"TAPEGRAD_MALLOC": "default"},
                      "from tapegrad.util import allocator; allocator.tune()")
    assert tuned < pages // 20
    assert untuned > pages // 2  # the same burst without tuning: every page again


@glibc
def test_importing_tapegrad_tunes_and_the_opt_out_leaves_malloc_alone():
    pages = 40 * (512 << 10) // 4096
    assert _faults({}) < pages // 20
    assert _faults({"TAPEGRAD_MALLOC": "default"}) > pages // 2


def test_the_users_own_settings_win(monkeypatch):
    monkeypatch.setattr(allocator, "_state", {"done": None})
    monkeypatch.setenv("MALLOC_TOP_PAD_", "1048576")
    assert allocator.tune() == "left to the user"
    assert allocator.tune() == "already"  # once per process
    monkeypatch.setattr(allocator, "_state", {"done": None})
    monkeypatch.delenv("MALLOC_TOP_PAD_")
    monkeypatch.setenv("TAPEGRAD_MALLOC", "default")
    assert allocator.tune() == "left to the user"
    assert allocator.state() == "left to the user"


def test_tuned_once_at_import():
    assert allocator.state() in ("tuned", "not glibc", "left to the user")
    assert allocator.tune() == "already"
