"""util/allocator.py: glibc's malloc keeps a step's freed arrays for the next step.

Checked by what it is for: a burst of large arrays freed together and allocated again
faults no page in a process where tapegrad tuned malloc, and faults every page in one where
``TAPEGRAD_MALLOC=default`` left glibc's defaults; and the heap is on huge pages where the
kernel gives them when asked (util/huge_pages.py), with the same values.
"""
import os
import subprocess
import sys

import pytest

import tapegrad  # noqa: F401  (tunes malloc on import)
from tapegrad.util import allocator, huge_pages

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


# -- huge pages for the heap (util/huge_pages.py) ----------------------------------------------
HEAP_FLAGS = """
import json, sys
{imports}
from tapegrad.util import huge_pages
heap, cur = [], None
for line in open("/proc/self/smaps"):
    p = line.split()
    if "-" in p[0] and len(p) >= 5:
        cur = [p[-1], p[0], 0, ""]
        if cur[0] == "[heap]":
            heap.append(cur)
    elif cur is not None and p[0] == "Size:":
        cur[2] = int(p[1]) << 10
    elif cur is not None and p[0] == "VmFlags:":
        cur[3] = " ".join(p[1:])
x = np.random.default_rng(0).standard_normal((2048, 32)).astype(np.float32)
with tapegrad.GradientTape() as t:
    t.watch(x := tapegrad.constant(x))
    y = tapegrad.reduce_sum(tapegrad.tanh(x) * x)
g = t.gradient(y, x).numpy()
print(json.dumps({{"state": huge_pages.state(), "heap": heap, "bits": g.tobytes().hex()[:4096]}}))
"""


def _heap(env_extra):
    env = {k: v for k, v in os.environ.items()
           if k not in allocator._USER_VARS and k != "TAPEGRAD_MALLOC"}
    env.update(env_extra)
    code = HEAP_FLAGS.format(imports="import numpy as np\nimport tapegrad")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120, check=True)
    import json
    return json.loads(out.stdout.splitlines()[-1])


def test_the_thp_mode_is_read_from_the_selected_word():
    assert huge_pages.mode("always madvise [never]") == "never"
    assert huge_pages.mode("[always] madvise never") == "always"
    assert huge_pages.mode("") is None


@glibc
def test_the_heap_asks_for_huge_pages_where_the_kernel_waits_to_be_asked():
    kernel = huge_pages.mode(huge_pages._read("enabled"))
    tuned, left = _heap({}), _heap({"TAPEGRAD_MALLOC": "default"})
    advised = [h for h in tuned["heap"] if "hg" in h[3].split()]
    assert not [h for h in left["heap"] if "hg" in h[3].split()]
    assert left["state"] is None  # the opt-out leaves the heap alone too
    if kernel == "madvise":
        assert tuned["state"] == "advised"
        # the reserve: at least 32 MB of the heap on huge pages (48 MB grown, whole pages)
        assert sum(h[2] for h in advised) >= 32 << 20
    else:
        assert tuned["state"] == f"kernel: {kernel}" and not advised
    assert tuned["bits"] == left["bits"]  # where the memory lies changes no value


def test_advised_once_per_process():
    assert huge_pages.state() in (None, "advised", "no heap", "madvise failed", "failed") or \
        huge_pages.state().startswith("kernel: ")
    if huge_pages.state() is not None:
        assert huge_pages.advise(None) == huge_pages.state()  # decided: never again
