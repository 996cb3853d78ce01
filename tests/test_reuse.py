"""Generated code writes results into dead buffers (``trace/reuse.py``), exactly."""
import re

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.ir import optimize
from tapegrad.testing import assert_same_bits
from tapegrad.trace.codegen import compile_program
from test_codegen import interpret, trace as raw_trace


def trace(fn, *arrays):
    return optimize(raw_trace(fn, *arrays))


def run_both(fn, *arrays):
    """(source, compiled results, interpreted results) of ``fn`` traced on ``arrays``."""
    p = trace(fn, *arrays)
    compiled, src = compile_program(p)
    got = compiled(*arrays)
    got = list(got) if isinstance(got, tuple) else [got]
    return src, got, interpret(p, *arrays)


def pinn_step(w1, b1, w2, b2, w3, b3, x):
    """A physics-informed step (nested tapes, weight gradient): its temporaries die all
    over the reverse pass, so most of its results go into dead buffers."""
    params = [w1, b1, w2, b2, w3, b3]
    with tf.GradientTape() as outer:
        outer.watch(params)
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                u = tf.tanh(tf.tanh(x @ w1 + b1) @ w2 + b2) @ w3 + b3
            du = t1.gradient(u, x)
            u_x = du[:, 1:2]
        u_xx = t2.gradient(u_x, x)[:, 1:2]
        r = du[:, 0:1] + u * u_x - 0.01 * u_xx
        loss = tf.reduce_mean(r * r)
    return outer.gradient(loss, params)


def _pinn_arrays(rng, n, dtype):
    sizes = (2, 8, 8, 1)
    out = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        out += [rng.standard_normal((a, b)).astype(dtype), rng.standard_normal(b).astype(dtype)]
    return out + [rng.standard_normal((n, 2)).astype(dtype)]


def _into_dead(src):
    """Lines whose call writes into a buffer that is none of its inputs."""
    lines = []
    for line in src.splitlines():
        m = re.match(r"\s*\w+ = np\.(\w+)\((.*)\)", line.split("  #")[0])
        mm = re.match(r"\s*\w+ = matmul_2d\((\w+), (\w+), (\w+)\)", line.split("  #")[0])
        if mm:  # linalg.matmul_2d(a, b, out)
            lines.append(("matmul", mm.group(3)))
        if not m:
            continue
        args = [a.strip() for a in m.group(2).split(",")]
        out = args[-1][4:] if args[-1].startswith("out=") else args[-1]
        if m.group(1) != "matmul" and len(args) < 2:
            continue
        if out not in args[:-1] and re.fullmatch(r"\w+", out):
            lines.append((m.group(1), out))
    return lines


@pytest.mark.parametrize("special", [False, True], ids=["finite", "nan-inf-zero"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_pinn_step_writes_into_dead_buffers_with_the_interpreters_bits(special, dtype):
    rng = np.random.default_rng(3)
    arrays = _pinn_arrays(rng, 64, dtype)
    if special:
        x = arrays[-1]
        x[3, 0], x[5, 1], x[7], x[9, 0] = np.nan, np.inf, -0.0, -np.inf
        arrays[2][1, 2] = -0.0
    with np.errstate(all="ignore"):
        src, got, want = run_both(pinn_step, *arrays)
    kinds = {k for k, _ in _into_dead(src)}
    assert "matmul" in kinds and "multiply" in kinds, src
    for g, w in zip(got, want):
        assert_same_bits(g, w)


def test_a_matmul_never_writes_into_a_buffer_of_another_layout():
    # sin of a transposed input is F-ordered (NumPy keeps the input's layout): when it dies,
    # a matmul of its shape must allocate instead of writing into it
    x = np.arange(1.0, 37.0).reshape(6, 6) / 10
    w = np.linspace(-1, 1, 36).reshape(6, 6)

    def f(x, w):
        a = tf.sin(tf.transpose(x)) * 2.0
        b = a @ w
        return (b + 1.0) @ w
    src, got, want = run_both(f, x, w)
    f_order = re.search(r"(\w+) = np\.sin\(", src).group(1)
    assert f"out={f_order}" not in src, src
    assert_same_bits(got[0], want[0])


def test_a_buffer_is_not_handed_on_while_a_view_of_it_lives():
    x = np.linspace(-2, 2, 24).reshape(4, 6)

    def f(x):
        s = tf.sin(x)
        col = s[:, 1:2]          # a view of s, read at the end
        e = tf.exp(x) * 3.0       # s is no input here: its buffer is still needed
        return e * col + tf.cos(x)
    src, got, want = run_both(f, x)
    s = re.search(r"(\w+) = np\.sin\(", src).group(1)
    code = [ln.split("  #")[0] for ln in src.splitlines() if not ln.strip().startswith("#")]
    view = re.search(rf"(\w+) = {s}\[", src).group(1)
    last = max(i for i, ln in enumerate(code) if re.search(rf"\b{view}\b", ln))
    # until the view's last read, nothing writes into s; after it, s's buffer is free
    assert not any(buf == s for _, buf in _into_dead("\n".join(code[:last + 1]))), src
    assert any(buf == s for _, buf in _into_dead("\n".join(code[last + 1:]))), src
    assert_same_bits(got[0], want[0])


def test_the_buffer_that_died_last_is_taken_first():
    x = np.linspace(-2, 2, 32).reshape(4, 8)

    def f(x):
        a = tf.sin(x)
        b = tf.cos(x)
        c = a * b            # a and b die here; c takes a's buffer in place
        d = tf.exp(x)        # the freshest dead buffer is b's
        return c + 1.0, d
    src, got, want = run_both(f, x)
    b = re.search(r"(\w+) = np\.cos\(", src).group(1)
    assert re.search(rf"= np\.exp\(x0, {b}\)", src), src
    for g, w in zip(got, want):
        assert_same_bits(g, w)


def test_results_are_never_buffers_handed_on():
    x = np.linspace(-2, 2, 32).reshape(4, 8)

    def f(x):
        a = tf.sin(x) * 2.0
        b = tf.exp(a)
        return b, tf.cos(x) * 3.0, tf.tanh(x)
    src, got, want = run_both(f, x)
    outs = re.search(r"return \((.*)\)", src).group(1).split(", ")
    assert len(set(outs)) == 3
    for g, w in zip(got, want):
        assert_same_bits(g, w)
    again = compile_program(trace(f, x))[0](x)
    assert not any(np.shares_memory(a, b) for a in got for b in again)



def test_a_buffer_taken_through_a_reshape_is_handed_on_at_its_new_shape():
    # u writes into t's buffer through a reshape; when u dies, its buffer is free for
    # results of u's shape, not t's (a batch Jacobian's reverse pass does this)
    x = np.linspace(-1, 1, 128).reshape(32, 4)
    w = np.linspace(-1, 1, 16).reshape(4, 4)

    def f(x, w):
        v = tf.reshape(tf.sin(x @ w), (8, 4, 4))
        u = v * 2.0
        m = tf.reshape(u, (32, 4)) @ w
        return (m @ w) * 3.0
    src, got, want = run_both(f, x, w)
    assert "np.multiply(v, c0, v)" in src and "out=u)" not in src, src
    for g, w_ in zip(got, want):
        assert_same_bits(g, w_)


OPS = [(1, tf.sin), (1, tf.tanh), (1, lambda a: a * 2.0), (1, tf.transpose),
       (1, lambda a: tf.reshape(tf.reshape(a, [-1]), a.shape)), (1, lambda a: a[::-1]),
       (2, tf.multiply), (2, tf.add), (2, tf.matmul), (2, tf.matmul)]


@pytest.mark.parametrize("seed", range(30))
def test_random_programs_of_matmuls_views_and_ufuncs_keep_the_interpreters_bits(seed):
    rng = np.random.default_rng(seed)
    n = (4, 16)[seed % 2]
    steps = []
    for k in range(40):  # mostly recent values: the others die, their buffers go round
        arity, fn = OPS[rng.integers(len(OPS))]
        steps.append((fn, [int(rng.integers(max(0, k - 4), 2 + k)) for _ in range(arity)]))
    outs = sorted({41, 40, int(rng.integers(2, 40))})

    def f(x, w):
        vals = [x, w]
        for fn, refs in steps:
            vals.append(fn(*[vals[r] for r in refs]))
        return [vals[k] for k in outs]
    x = rng.uniform(-1, 1, (n, n)).astype("float32")
    w = rng.uniform(-1, 1, (n, n)).astype("float32")
    x[0, 1], w[2, 0], x[3, 3] = np.nan, -0.0, np.inf
    with np.errstate(all="ignore"):
        src, got, want = run_both(f, x, w)
    for g, w_ in zip(got, want):
        assert_same_bits(g, w_)


def test_a_ufunc_of_a_transposed_input_keeps_numpys_layout():
    # x.T * 1.5 follows x.T's layout (F): it allocates instead of filling a's dead C buffer;
    # exp(x) * 2 (C, as a rule) takes it
    x = np.linspace(-1, 1, 64).reshape(8, 8)

    def f(x):
        a = tf.sin(x @ x) * 2.0
        s = tf.reduce_sum(a)       # a dies here: its buffer is free
        return tf.transpose(x) * 1.5 + s, tf.exp(x) * 2.0
    src, got, want = run_both(f, x)
    a = re.search(r"(\w+) = np\.multiply\(\w+, c0, \w+\)", src).group(1)
    assert re.search(rf"= np\.exp\(x0, {a}\)", src), src
    assert sum(buf == a for _, buf in _into_dead(src)) == 1, src
    for g, w_ in zip(got, want):
        assert_same_bits(g, w_)
        assert g.flags.c_contiguous == w_.flags.c_contiguous


def test_the_few_rows_form_of_a_matmul_makes_a_c_buffer_that_is_handed_on():
    # g @ W.T with few rows and a large W is (W @ g.T).T copied into C order: a new C array,
    # so once it dies a matmul can write into it
    rng = np.random.default_rng(0)
    g = rng.standard_normal((8, 256)).astype("float32")
    w = rng.standard_normal((256, 256)).astype("float32")

    def f(g, w):
        h = tf.tanh(g @ tf.transpose(w))
        s = tf.reduce_sum(h, axis=1)       # h dies here
        return (g @ w) * 2.0, s
    src, got, want = run_both(f, g, w)
    assert "matmul_2d(x0, x1, h)" in src, src  # the eager rule, into h's buffer
    for a, b in zip(got, want):
        assert_same_bits(a, b)
