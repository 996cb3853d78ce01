"""Machine description and the NumPy float32 matmul rate (the "floor" for FLOP-bound rows)."""
import os
import platform
import subprocess
import time

import numpy as np


def cpu_model():
    """'model name' from /proc/cpuinfo, with family/model/MHz and the widest SIMD flag."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key in ("model name", "cpu family", "model", "cpu MHz", "flags"):
                    fields.setdefault(key, value.strip())
    except OSError:
        return platform.processor() or "unknown"
    flags = fields.get("flags", "").split()
    simd = next((f for f in ("avx512f", "avx2", "avx", "neon") if f in flags), None)
    extra = [f"family {fields['cpu family']} model {fields['model']}"] if "model" in fields else []
    extra += [f"{float(fields['cpu MHz']):.0f} MHz"] if "cpu MHz" in fields else []
    extra += [simd] if simd else []
    name = fields.get("model name", platform.processor() or "unknown")
    return f"{name} ({', '.join(extra)})" if extra else name


def git_revision():
    """Commit of the checkout being measured (tapegrad changes quickly), '+dirty' if edited."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        rev = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "tapegrad"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (rev or "no commit") + ("+dirty" if dirty else "")


def memory_gib():
    try:
        with open("/proc/meminfo") as f:
            kib = int(f.readline().split()[1])
        return round(kib / 2**20, 1)
    except (OSError, ValueError, IndexError):
        return None


def blas():
    try:
        info = np.show_config(mode="dicts")
        lib = info["Build Dependencies"]["blas"]
        return f"{lib.get('name')} {lib.get('version', '')}".strip()
    except Exception:
        return "unknown"


def load_line():
    """'load 1.23/0.98/0.70 on 2 cores' (1, 5 and 15 minute averages): how shared the box was."""
    try:
        a, b, c = os.getloadavg()
    except OSError:  # pragma: no cover - not on every platform
        return "load unknown"
    return f"load {a:.2f}/{b:.2f}/{c:.2f} on {os.cpu_count()} cores"


def describe():
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = None
    return {
        "cpu": cpu_model(),
        "logical_cores": os.cpu_count(),
        "cores_used": usable,
        "memory_gib": memory_gib(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy_blas": blas(),
        "tapegrad_revision": git_revision(),
    }


def matmul_rate(quick=False):
    """Best float32 GFLOP/s of ``a @ b`` over a few square sizes (median of repeats each)."""
    best = 0.0
    detail = {}
    for n in (512, 1024) if quick else (512, 1024, 2048):
        rng = np.random.default_rng(0)
        a = rng.standard_normal((n, n)).astype(np.float32)
        b = rng.standard_normal((n, n)).astype(np.float32)
        a @ b  # warm-up
        times = []
        for _ in range(3 if quick else 5):
            loops, t0 = 0, time.perf_counter()
            while True:
                a @ b
                loops += 1
                elapsed = time.perf_counter() - t0
                if elapsed > (0.05 if quick else 0.2):
                    break
            times.append(elapsed / loops)
        rate = 2.0 * n**3 / sorted(times)[len(times) // 2] / 1e9
        detail[n] = round(rate, 1)
        best = max(best, rate)
    return best, detail
