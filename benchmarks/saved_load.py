"""Loading a saved program stays linear in its size, in time and in memory.

``python -m benchmarks.saved_load [N ...]`` saves programs of N equations (default 10,000,
30,000 and 100,000: a chain mixing elementwise ops, constants, reshapes, transposes,
reductions and broadcasts), then times ``tapegrad.saved.load`` (best of 2) and measures its
peak traced memory (``tracemalloc``, a separate run). It prints a table; the per-equation
figures should not grow with N. The figure is quoted in ``docs/saved_format.md``.
Not a test: the timings depend on the machine.
"""
import os
import sys
import tempfile
import time
import tracemalloc

import numpy as np

import tapegrad as tf
from tapegrad.compile.concrete import ConcreteFunction
from tapegrad.core.dispatch import PRIMITIVES
from tapegrad.ir import Const, Equation, Program, Var, make_params
from tapegrad.ir.core import frozen_array

F64 = np.dtype("float64")


def chain(n):
    """A program of ``n`` equations on a (4, 8) input: a repeating mix of primitives."""
    x = Var("x", (4, 8), F64)
    consts, eqs, cur, k = [], [], x, 0

    def new(shape):
        nonlocal k
        k += 1
        return Var(f"t{k}", shape, F64)

    def emit(prim, ins, out, **params):
        eqs.append(Equation(PRIMITIVES[prim], tuple(ins), make_params(params), (out,)))
        return out

    while len(eqs) < n:
        i = len(eqs)
        step = i % 8
        if step == 0:
            c = Var(f"c{len(consts)}", (8,), F64)
            consts.append(Const(c, frozen_array(np.full(8, 1.0 + i * 1e-6))))
            cur = emit("mul", [cur, c], new((4, 8)))
        elif step == 1:
            cur = emit("sin", [cur], new((4, 8)))
        elif step == 2:
            cur = emit("reshape", [cur], new((8, 4)), shape=(8, 4))
        elif step == 3:
            cur = emit("transpose", [cur], new((4, 8)), perm=(1, 0))
        elif step == 4:
            r = emit("reduce_sum", [cur], new((4,)), axis=(1,), keepdims=False)
            r = emit("reshape", [r], new((4, 1)), shape=(4, 1))
            cur = emit("sub", [cur, r], new((4, 8)))
        elif step == 5:
            cur = emit("tanh", [cur], new((4, 8)))
        else:
            cur = emit("add", [cur, x], new((4, 8)))
    return Program((x,), (), tuple(consts), tuple(eqs), (cur,), (), "chain")


def measure(n, directory):
    path = os.path.join(directory, f"chain{n}.tgz")
    program = chain(n)
    tf.saved.save(ConcreteFunction.from_program(program), path)
    size = os.path.getsize(path)
    best = float("inf")
    for _ in range(2):
        t0 = time.perf_counter()
        m = tf.saved.load(path)
        best = min(best, time.perf_counter() - t0)
    n_eqs = len(m.program.equations)
    del m
    tracemalloc.start()
    m = tf.saved.load(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    x = np.ones((4, 8))
    np.testing.assert_allclose(m(x).numpy(), ConcreteFunction.from_program(program)(x).numpy())
    return n_eqs, size, best, peak


def main(sizes):
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for n in sizes:
            rows.append(measure(n, d))
    print(f"{'equations':>10} {'file KiB':>9} {'load s':>8} {'us/eqn':>7} {'peak MiB':>9} "
          f"{'KiB/eqn':>8}")
    for n, size, t, peak in rows:
        print(f"{n:>10} {size / 1024:>9.0f} {t:>8.2f} {t / n * 1e6:>7.1f} "
              f"{peak / 2 ** 20:>9.1f} {peak / n / 1024:>8.2f}")
    (n0, _, t0, p0), (n1, _, t1, p1) = rows[0], rows[-1]
    print(f"{n1 // n0}x the equations: {t1 / t0:.1f}x the time, {p1 / p0:.1f}x the memory")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10_000, 30_000, 100_000])
