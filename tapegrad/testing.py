"""Test utilities: a generic gradient checker and a batching checker.

``check_grads`` follows HIPS autograd: it never builds a Jacobian. It draws a random input
direction ``u`` (and, for reverse mode, a random output direction ``v``) and compares one
number computed by automatic differentiation with a central difference of ``f`` along ``u``,
all in float64, so it costs the same at any size. With ``order=2`` the same check runs on
the derivative function itself (reverse-over-reverse, forward-over-reverse,
reverse-over-forward and forward-over-forward), through nested tapes and accumulators.

``check_batching`` compares the batching interpreter (one call on stacked values) with a
Python loop over the examples followed by a stack.
"""
import numpy as np

from tapegrad.core.state import STATE
from tapegrad.core.tensor import Tensor, convert_to_tensor
from tapegrad.util import nest

__all__ = ["check_grads", "check_batching", "assert_same_bits", "assert_identical_bits", "EPS",
           "RTOL", "ATOL"]

EPS, RTOL, ATOL = 1e-6, 1e-5, 1e-6


def _is_float(a):
    return np.asarray(a).dtype.kind in "fc"


def _as_arrays(args):
    """Floating arguments become float64 arrays; others (indices, masks) stay as they are."""
    out = []
    for a in args:
        v = np.asarray(a._value if isinstance(a, Tensor) else a)
        out.append(v.astype(np.float64) if v.dtype.kind == "f" else v)
    return out


def _call(f, arrays):
    """``f`` on fresh float64 tensors; its outputs flattened to float64 arrays (None -> 0)."""
    out = f(*[Tensor._wrap(np.array(a)) for a in arrays])
    return [None if o is None else np.asarray(o._value if isinstance(o, Tensor) else o,
                                              dtype=np.float64)
            for o in map(_dense, nest.flatten(out))]


def _dense(o):
    """A gradient as ``tf.IndexedSlices`` (through row gathers) as its dense sum."""
    return convert_to_tensor(o) if getattr(o, "_tf_composite", False) else o


def _flat_out(out, like):
    """AD outputs as float64 arrays, zeros for None (an unconnected output); a gradient as
    ``tf.IndexedSlices`` (through row gathers) as its dense sum."""
    res = []
    for o, l in zip(nest.flatten(out), like):
        if o is None:
            res.append(np.zeros(np.shape(l)))
        else:
            o = _dense(o)
            res.append(np.asarray(o._value if isinstance(o, Tensor) else o, dtype=np.float64))
    return res


def _numeric_jvp(f, arrays, dirs, eps):
    """Central difference of ``f`` at ``arrays`` along ``dirs`` (None for fixed arguments)."""
    plus = [a if d is None else a + eps * d for a, d in zip(arrays, dirs)]
    minus = [a if d is None else a - eps * d for a, d in zip(arrays, dirs)]
    fp, fm = _call(f, plus), _call(f, minus)
    return [None if p is None else (p - m) / (2 * eps) for p, m in zip(fp, fm)]


def _close(a, b, rtol, atol):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    scale = np.maximum(np.abs(a), np.abs(b))
    return bool(np.all(np.abs(a - b) <= atol + rtol * scale))


def _derivative_fns(f, float_idx):
    """The VJP and JVP of ``f`` as functions of (args..., direction...), built with tapegrad."""
    from tapegrad.tape.forward_accumulator import ForwardAccumulator
    from tapegrad.tape.gradient_tape import GradientTape

    n_dir = len(float_idx)

    def vjp_fn(*args_and_v):
        args, vs = list(args_and_v[:-1]), args_and_v[-1]
        xs = [args[i] for i in float_idx]
        with GradientTape() as tape:
            tape.watch(xs)
            y = f(*args)
        flat_y = [t for t in nest.flatten(y) if t is not None]
        og = list(vs) if isinstance(vs, (list, tuple)) else [vs]
        # a gather's IndexedSlices as its dense sum: a derivative of it is checked densely
        return [_dense(g) for g in tape.gradient(flat_y, xs, output_gradients=og,
                                                   unconnected_gradients="zero")]

    def jvp_fn(*args_and_u):
        args = list(args_and_u[:-n_dir])
        us = list(args_and_u[-n_dir:])
        xs = [args[i] for i in float_idx]
        with ForwardAccumulator(xs, us) as acc:
            y = f(*args)
        flat_y = [t for t in nest.flatten(y) if t is not None]
        return acc.jvp(flat_y, unconnected_gradients="zero")

    return vjp_fn, jvp_fn


def check_grads(f, args, modes=("fwd", "rev"), order=2, eps=EPS, rtol=RTOL, atol=ATOL,
                seed=0, _path=""):
    """Check the derivatives of ``f`` at ``args`` against central differences, in float64.

    ``f`` takes tensors and returns a tensor or a nested structure of tensors. Floating
    arguments are differentiated (converted to float64 first); integer and bool arguments
    (indices, masks) are passed through unchanged. Reverse mode (``'rev'``) compares
    ``<v, J u>`` computed with a ``GradientTape`` VJP against the central difference of
    ``f`` along ``u``; forward mode (``'fwd'``) compares the ``ForwardAccumulator`` JVP
    along ``u`` with that difference. ``order=2`` repeats both checks on the VJP and JVP
    functions themselves, which exercises nested tapes, nested accumulators and the mixed
    forward-over-reverse and reverse-over-forward combinations. Raises AssertionError.

    >>> import tapegrad as tf
    >>> from tapegrad.testing import check_grads
    >>> check_grads(lambda x, y: tf.sin(x) * y, [[0.5, 1.0], 2.0], order=2)
    """
    from tapegrad.tape.forward_accumulator import ForwardAccumulator
    from tapegrad.tape.gradient_tape import GradientTape

    for m in modes:
        if m not in ("fwd", "rev"):
            raise ValueError(f"check_grads: unknown mode {m!r}; use 'fwd' and/or 'rev'.")
    if order < 1:
        return
    if STATE.stack.recorders or STATE.stack.batch_level:
        raise RuntimeError("check_grads must run with no active tape, accumulator or vmap.")
    arrays = _as_arrays(args)
    float_idx = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"]
    if not float_idx:
        raise ValueError("check_grads: f has no floating argument to differentiate.")
    rng = np.random.RandomState(seed)
    u = [rng.standard_normal(a.shape) if i in float_idx else None
         for i, a in enumerate(arrays)]
    y0 = _call(f, arrays)
    num = _numeric_jvp(f, arrays, u, eps)
    where = _path or "f"

    if "fwd" in modes:
        xs = [Tensor._wrap(np.array(a)) for a in arrays]
        with ForwardAccumulator([xs[i] for i in float_idx], [Tensor._wrap(u[i])
                                                              for i in float_idx]) as acc:
            y = f(*xs)
        flat_y = nest.flatten(y)
        jvp = _flat_out([acc.jvp(t) if t is not None else None for t in flat_y], y0)
        for k, (a, n) in enumerate(zip(jvp, num)):
            if n is None:
                continue
            if not _close(a, n, rtol, atol):
                raise AssertionError(
                    f"check_grads: forward-mode JVP of {where} (output {k}) differs from the "
                    f"central difference:\n  JVP     {a!r}\n  numeric {n!r}\n"
                    f"  max abs error {np.max(np.abs(a - n)) if a.shape == n.shape else '-'}")

    v = [None if y is None else rng.standard_normal(y.shape) for y in y0]
    if "rev" in modes:
        xs = [Tensor._wrap(np.array(a)) for a in arrays]
        srcs = [xs[i] for i in float_idx]
        with GradientTape() as tape:
            tape.watch(srcs)
            y = f(*xs)
        pairs = [(t, vv) for t, vv in zip(nest.flatten(y), v) if t is not None]
        grads = tape.gradient([t for t, _ in pairs], srcs,
                              output_gradients=[Tensor._wrap(vv) for _, vv in pairs])
        grads = _flat_out(grads, [arrays[i] for i in float_idx])
        for g, i in zip(grads, float_idx):
            if g.shape != arrays[i].shape:
                raise AssertionError(
                    f"check_grads: gradient of {where} for argument {i} has shape {g.shape}, "
                    f"expected {arrays[i].shape}.")
        ad = sum(float(np.sum(g * u[i])) for g, i in zip(grads, float_idx))
        nv = sum(float(np.sum(n * vv)) for n, vv in zip(num, v) if n is not None)
        if not _close(ad, nv, rtol, atol):
            raise AssertionError(
                f"check_grads: reverse-mode <v, J u> of {where} differs from the central "
                f"difference: VJP gives {ad!r}, numeric {nv!r} (error {abs(ad - nv):.3g}).")

    if order > 1:
        vjp_fn, jvp_fn = _derivative_fns(f, float_idx)
        if "rev" in modes:
            vs = [vv for vv in v if vv is not None]
            check_grads(lambda *a: vjp_fn(*a[:len(arrays)], list(a[len(arrays):])),
                        list(arrays) + vs, modes, order - 1, eps, rtol, atol, seed + 1,
                        f"vjp({where})")
        if "fwd" in modes:
            check_grads(jvp_fn, list(arrays) + [u[i] for i in float_idx], modes, order - 1,
                        eps, rtol, atol, seed + 2, f"jvp({where})")


def check_batching(f, batched_args, batched=None, rtol=1e-12, atol=1e-12, fallback_ok=True):
    """Compare ``f`` under the batching interpreter with a loop over examples and a stack.

    ``batched_args[i]`` carries a leading batch axis where ``batched[i]`` is True (the
    default for every argument); other arguments are shared by all examples. With
    ``fallback_ok=False`` it also fails when a primitive fell back to the Python loop
    instead of using its batching rule.

    >>> import numpy as np
    >>> import tapegrad as tf
    >>> from tapegrad.testing import check_batching
    >>> check_batching(lambda x, y: tf.reduce_sum(x * y, axis=0), [np.ones((3, 2, 4)), 2.0],
    ...                batched=[True, False])
    """
    from tapegrad.batching import interpreter as batching

    if batched is None:
        batched = [True] * len(batched_args)
    vals = [np.asarray(a._value if isinstance(a, Tensor) else a) for a in batched_args]
    sizes = {v.shape[0] for v, b in zip(vals, batched) if b}
    if len(sizes) != 1:
        raise ValueError(f"check_batching: batched arguments need one common batch size, got "
                         f"{sorted(sizes)}.")
    (n,) = sizes
    expect = []
    for k in range(n):
        out = f(*[Tensor._wrap(np.array(v[k] if b else v)) for v, b in zip(vals, batched)])
        expect.append([np.asarray(o._value) for o in nest.flatten(out)])

    fell_back = []
    loop = batching._loop

    def spy(prim, *a, **kw):
        fell_back.append(prim.name)
        return loop(prim, *a, **kw)

    batching._loop = spy
    try:
        with batching.batch_level() as lvl:
            args = [batching.BatchedTensor(Tensor._wrap(np.array(v)), lvl) if b
                    else Tensor._wrap(np.array(v)) for v, b in zip(vals, batched)]
            out = f(*args)
            got = [np.asarray(batching.unbatch(o, lvl, n)._value) for o in nest.flatten(out)]
    finally:
        batching._loop = loop
    if not fallback_ok and fell_back:
        raise AssertionError(f"check_batching: primitive(s) {sorted(set(fell_back))} fell back "
                             "to a Python loop instead of their batching rule.")
    for k, g in enumerate(got):
        want = np.stack([e[k] for e in expect])
        if g.shape != want.shape:
            raise AssertionError(f"check_batching: output {k} has shape {g.shape} batched, "
                                 f"{want.shape} from the loop.")
        if g.dtype != want.dtype:
            raise AssertionError(f"check_batching: output {k} has dtype {g.dtype} batched, "
                                 f"{want.dtype} from the loop.")
        if want.dtype.kind in "fc":
            ok = np.allclose(g, want, rtol=rtol, atol=atol, equal_nan=True)
        else:
            ok = np.array_equal(g, want)
        if not ok:
            raise AssertionError(f"check_batching: output {k} differs from the loop:\n"
                                 f"  batched {g!r}\n  loop    {want!r}")


def assert_same_bits(a, b, what=None):
    """Assert ``a`` and ``b`` are the same floats: dtype, shape, NaN where NaN, every other
    value equal with the same sign (0.0 and -0.0 differ). ``what`` goes into the message.

    >>> import numpy as np
    >>> assert_same_bits(np.array([np.nan, -0.0]), np.array([np.nan, -0.0]))
    >>> assert_same_bits(np.array([0.0]), np.array([-0.0]))
    Traceback (most recent call last):
    ...
    AssertionError: (None, array([0.]), array([-0.]))
    """
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (what, a.dtype, b.dtype, a.shape, b.shape)
    nan = np.isnan(a)
    assert (nan == np.isnan(b)).all(), (what, a, b)
    ok = ~nan
    assert (a[ok] == b[ok]).all() and (np.signbit(a[ok]) == np.signbit(b[ok])).all(), \
        (what, a, b)


def assert_identical_bits(a, b, what=None):
    """Assert ``a`` and ``b`` hold the same bytes: dtype, shape and every bit of every
    element, so also the sign bit (and payload) of each NaN, which ``assert_same_bits``
    lets differ. Generated code must give the interpreter's numbers this exactly.

    >>> import numpy as np
    >>> assert_identical_bits(np.array([np.nan, -0.0]), np.array([np.nan, -0.0]))
    >>> assert_identical_bits(np.array([np.nan]), -np.array([np.nan]))
    Traceback (most recent call last):
    ...
    AssertionError: (None, 'bits at [0]:', ['0x7ff8000000000000'], ['0xfff8000000000000'])
    """
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (what, a.dtype, b.dtype, a.shape, b.shape)
    if a.dtype.kind not in "fc":
        assert np.array_equal(a, b), (what, a, b)
        return
    u = np.dtype(f"u{a.dtype.itemsize // (2 if a.dtype.kind == 'c' else 1)}")
    ua, ub = a.view(u).reshape(-1), b.view(u).reshape(-1)
    bad = np.flatnonzero(ua != ub)
    assert bad.size == 0, (what, f"bits at {bad[:8].tolist()}:",
                           [hex(int(v)) for v in ua[bad[:8]]], [hex(int(v)) for v in ub[bad[:8]]])
