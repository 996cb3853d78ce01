"""Machine description and the NumPy float32 matmul rate (the "floor" for FLOP-bound rows)."""
import os
import platform
import time

import numpy as np


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


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
