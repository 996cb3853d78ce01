"""Pooling primitives, channels last: ``x`` is ``(N, S_1..S_d, C)``.

Params: ``window``, ``strides`` (d positive ints) and ``padding`` (d ``(lo, hi)`` pairs) — the
op layer (``ops/pool_ops.py``) resolves TensorFlow's 'SAME'/'VALID'.

- ``avg_pool``: the mean over the real elements of each window (with 'SAME' padding the
  divisor counts only those, as in TensorFlow). Linear; ``avg_pool_grad`` is its transpose.
- ``max_pool``: the largest element of each window. Its derivatives go through the element
  that attains it (the first one in the window, as TensorFlow's CPU kernel does):
  ``max_pool_gather(x, t)`` reads ``t`` where ``x`` has each window's maximum (the JVP), and
  ``max_pool_scatter(x, g)`` adds ``g`` there (the VJP: TensorFlow's MaxPoolGrad). They are
  each other's transposes in their second operand (``max_pool_gather`` is MaxPoolGradGrad)
  and constant in ``x`` (the choice is piecewise constant): their derivative in ``x`` is a
  connected zero, as TensorFlow's, so a second derivative through max pooling is zeros, not
  None, and every order of derivative stays within the four primitives.

Each loops over the kernel offsets (a few, ``prod(window)``) doing one strided elementwise
operation over the whole output per offset.
"""
import math

import numpy as np

from tapegrad.core.dispatch import PRIMITIVES, Primitive
from tapegrad.primitives.conv_geometry import (_offsets, _window_slices, check_geometry,
                                               check_ints, check_padding, fold, pad_spatial,
                                               permute_runs, unfold)
from tapegrad.primitives import api
from tapegrad.primitives.params import fail
from tapegrad.primitives.families import xp


def _geometry(x, window, strides, padding):
    return check_geometry("pool", tuple(x.shape[1:-1]), tuple(window), strides,
                          (1,) * len(window), padding)


def _slices(window, strides, out):
    """(kernel offset, index of the padded input it reads for every output) pairs."""
    ones = (1,) * len(window)
    return [(k, (slice(None),) + _window_slices(k, strides, ones, out) + (slice(None),))
            for k in _offsets(window)]


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _real(window, strides, padding, spatial, out, k):
    """Which outputs read a real (not padding) element at kernel offset ``k``, or None: all."""
    masks = []
    for i, s, (lo, _), n, o in zip(k, strides, padding, spatial, out):
        pos = np.arange(o) * s + i - lo
        masks.append((pos >= 0) & (pos < n))
    if all(m.all() for m in masks):
        return None
    m = masks[0]
    for extra in masks[1:]:
        m = np.multiply.outer(m, extra)
    return m.reshape(m.shape + (1,))


def _counts(window, strides, padding, spatial, out, dtype):
    """How many real elements each window holds, ``(O..., 1)`` (TensorFlow's divisor)."""
    c = None
    for w, s, (lo, _), n, o in zip(window, strides, padding, spatial, out):
        start = np.arange(o) * s - lo
        per = np.clip(np.minimum(start + w, n) - np.maximum(start, 0), 0, None)
        c = per if c is None else np.multiply.outer(c, per)
    return np.asarray(c, dtype).reshape(tuple(out) + (1,))


# ---- average pooling -----------------------------------------------------------------------
def _avg_pool(x, *, window, strides, padding):
    out = _geometry(x, window, strides, padding)
    xpad = pad_spatial(x, padding, 0)
    acc = xp.zeros((x.shape[0],) + out + (x.shape[-1],), x.dtype)
    if 0 not in out:
        for _, sl in _slices(window, strides, out):
            acc += xpad[sl]
    acc /= _counts(window, strides, padding, x.shape[1:-1], out, x.dtype)
    return acc


def _avg_pool_grad(g, *, input_spatial, window, strides, padding):
    spatial = tuple(input_spatial)
    out = tuple(g.shape[1:-1])
    g = g / _counts(window, strides, padding, spatial, out, g.dtype)
    padded = tuple(n + lo + hi for n, (lo, hi) in zip(spatial, padding))
    acc = xp.zeros((g.shape[0],) + padded + (g.shape[-1],), g.dtype)
    if 0 not in out:
        for _, sl in _slices(window, strides, out):
            acc[sl] += g
    return acc[(slice(None),) + tuple(slice(lo, lo + n) for n, (lo, _) in
                                      zip(spatial, padding))]


# ---- max pooling ---------------------------------------------------------------------------
def _first_max(x, window, strides, padding, out):
    """(index, mask) per kernel offset: the outputs whose window attains its maximum first
    (in offset order) at that offset. A NaN counts as the maximum (the first one, as
    argmax), and padding never does (a window of real -inf picks its first real element)."""
    xpad = pad_spatial(x, padding, _lowest(x.dtype))
    slices = _slices(window, strides, out)
    best = None
    for _, sl in slices:
        best = xpad[sl].copy() if best is None else xp.maximum(best, xpad[sl], out=best)
    nan = x.dtype.kind == "f" and bool(xp.isnan(best).any())
    spatial = x.shape[1:-1]
    padded = any(lo or hi for lo, hi in padding)
    taken = None
    for k, sl in slices:
        v = xpad[sl]
        m = v == best
        if nan:
            m |= xp.isnan(v)
        ok = _real(window, strides, padding, spatial, out, k) if padded else None
        if ok is not None:
            m &= ok
        if taken is None:
            taken = m
        else:
            m &= ~taken
            taken |= m
        yield sl, m


def _max_pool(x, *, window, strides, padding):
    out = _geometry(x, window, strides, padding)
    if 0 in out or x.shape[0] == 0:
        return xp.zeros((x.shape[0],) + out + (x.shape[-1],), x.dtype)
    if _tiled(window, strides, padding):
        rows = _tiled_rows(x, window, padding, out)
        best = _row_max(rows)
        return best.reshape((x.shape[0],) + out + (x.shape[-1],))
    xpad = pad_spatial(x, padding, _lowest(x.dtype))
    best = None
    for _, sl in _slices(window, strides, out):
        best = xpad[sl].copy() if best is None else xp.maximum(best, xpad[sl], out=best)
    return best


def _row_max(rows):
    """The maximum over the offsets' rows, taken in offset order as the strided loop does."""
    best = rows[0].copy()
    for k in range(1, rows.shape[0]):
        xp.maximum(best, rows[k], out=best)
    return best


def _max_pool_gather(x, t, *, window, strides, padding):
    out = _geometry(x, window, strides, padding)
    acc = xp.zeros((x.shape[0],) + out + (x.shape[-1],), t.dtype)
    if 0 in out or x.shape[0] == 0:
        return acc
    tpad = pad_spatial(t, padding, 0)
    for sl, m in _first_max(x, window, strides, padding, out):
        acc += xp.where(m, tpad[sl], 0)  # (faster than copyto or add with where=)
    return acc


def _max_pool_scatter(x, g, *, window, strides, padding):
    out = _geometry(x, window, strides, padding)
    if _tiled(window, strides, padding) and 0 not in out and x.shape[0]:
        return _tiled_scatter(x, g, window, padding, out)
    padded = tuple(n + lo + hi for n, (lo, hi) in zip(x.shape[1:-1], padding))
    acc = xp.zeros((x.shape[0],) + padded + (x.shape[-1],), g.dtype)
    if 0 not in out and x.shape[0]:
        for sl, m in _first_max(x, window, strides, padding, out):
            acc[sl] += xp.where(m, g, 0)  # overlapping windows add up
    return acc[(slice(None),) + tuple(slice(lo, lo + n) for n, (lo, _) in
                                      zip(x.shape[1:-1], padding))]


# ---- windows that tile the input: one elementwise pass over the whole input -----------------
def _tiled(window, strides, padding):
    """Windows side by side (stride = window) and no padding before: every window starts at a
    real element. Pooling 2x2 by 2 is this case."""
    return tuple(window) == tuple(strides) and not any(lo for lo, _ in padding)


def _tiled_perm(d):
    """(N, O_1, K_1, ..., O_d, K_d) -> (K_1..K_d, N, O_1..O_d): the offsets outermost."""
    return tuple(2 + 2 * a for a in range(d)) + (0,) + tuple(1 + 2 * a for a in range(d))


def _tiled_rows(x, window, padding, out):
    """The input cut to its tiled windows, ``(K, N*O*C)``: one row per kernel offset."""
    n, c = x.shape[0], x.shape[-1]
    covered = tuple(o * k for o, k in zip(out, window))
    xpad = pad_spatial(x, padding, _lowest(x.dtype))
    cut = xpad[(slice(None),) + tuple(slice(0, e) for e in covered)]
    split = (n,) + tuple(v for o, k in zip(out, window) for v in (o, k)) + (c,)
    return permute_runs(cut.reshape(split), _tiled_perm(len(window))).reshape(
        math.prod(window), -1)


def _tiled_scatter(x, g, window, padding, out):
    """``_max_pool_scatter`` for tiled windows, computing the same numbers.

    The input, cut to the windows, is copied once with the kernel offsets outermost,
    ``(K, N*O*C)``: every later step is a contiguous pass over one offset's rows (each
    strided pass over channels-last data costs ~10x a contiguous one when C is small). The
    first maximum of each window in offset order gets ``g`` (a NaN counts as the maximum);
    padding, only after the input here, holds the dtype's lowest value, so it equals a
    maximum only where the window's real elements are all that low, and the window's first
    element, real, comes first. Adding 0 turns a -0.0 in ``g`` into 0.0, as the plain path's
    sum onto zeros does; then a float ``g``'s bits (as integers) times the mask are its bits or
    0, the bits of 0.0: exactly ``where(mask, g + 0, 0)`` for every ``g`` (NaN, inf), in one
    pass without branches.
    """
    d, n, c = len(window), x.shape[0], x.shape[-1]
    covered = tuple(o * k for o, k in zip(out, window))
    kk = math.prod(window)
    rows = _tiled_rows(x, window, padding, out)
    best = _row_max(rows)
    eq = rows == best
    if x.dtype.kind == "f" and bool(xp.isnan(best).any()):
        eq |= xp.isnan(rows)
    taken = eq[0].copy()
    for k in range(1, kk):  # keep each window's first maximum
        m = eq[k]
        m &= ~taken
        taken |= m
    gf = xp.ascontiguousarray(g).reshape(-1)
    if g.dtype.kind == "f" and g.dtype.itemsize in (2, 4, 8):
        bits = (gf + 0).view(np.dtype(f"i{g.dtype.itemsize}"))
        res = (bits * eq).view(g.dtype)
    else:  # integers (no -0) and anything else: where() (ints: the same as g * eq)
        res = xp.where(eq, gf, xp.zeros((), g.dtype))
        res += 0
    back = tuple(int(i) for i in np.argsort(_tiled_perm(d)))
    res = permute_runs(res.reshape(tuple(window) + (n,) + tuple(out) + (c,)), back)
    res = res.reshape((n,) + covered + (c,))
    spatial = tuple(x.shape[1:-1])
    if covered == spatial:
        return res
    acc = xp.zeros(x.shape, g.dtype)  # a 'VALID' tail no window reads, or 'SAME' padding
    keep = (slice(None),) + tuple(slice(0, min(e, s)) for e, s in zip(covered, spatial))
    acc[keep] = res[keep]
    return acc


# ---- shape rules ---------------------------------------------------------------------------
def _rank(name, x, window):
    if x.ndim != len(window) + 2 or x.ndim < 3:
        raise ValueError(f"{name}: input of rank {x.ndim} for a {len(window)}-d window; "
                         "expected (batch, spatial..., channels)")
    if any(k < 1 for k in window):
        raise ValueError(f"{name}: sliding window ksize must be positive, got {tuple(window)}")


def _pool_abstract(name):
    def rule(x, *, window, strides, padding):
        _dtype(name, x, "f" if name == "avg_pool" else "iuf")
        _rank(name, x, window)
        out = _geometry(x, window, strides, padding)
        return (x.shape[0],) + out + (x.shape[-1],), x.dtype
    return rule


def _avg_grad_abstract(g, *, input_spatial, window, strides, padding):
    _dtype("avg_pool_grad", g, "f")
    _rank("avg_pool_grad", g, window)
    out = check_geometry("avg_pool_grad", tuple(input_spatial), tuple(window), strides,
                         (1,) * len(window), padding)
    if out != tuple(g.shape[1:-1]):
        raise ValueError(f"avg_pool_grad: gradient of spatial shape {tuple(g.shape[1:-1])} "
                         f"for an input {tuple(input_spatial)} that pools to {out}")
    return (g.shape[0],) + tuple(input_spatial) + (g.shape[-1],), g.dtype


def _pair_abstract(name, scatter):
    """gather(x, t): t like x, the result pooled; scatter(x, g): g pooled, the result like x."""
    def rule(x, t, *, window, strides, padding):
        _dtype(name, x, "iuf")
        _dtype(name, t, "f")
        _rank(name, x, window)
        pooled = (x.shape[0],) + _geometry(x, window, strides, padding) + (x.shape[-1],)
        if tuple(t.shape) != (pooled if scatter else tuple(x.shape)):
            raise ValueError(f"{name}: operands of shapes {tuple(x.shape)} and "
                             f"{tuple(t.shape)} do not fit the window {tuple(window)}")
        return (tuple(x.shape) if scatter else pooled), t.dtype
    return rule


def _validate(name):
    def rule(x, *rest, window, strides, padding, input_spatial=None):
        d = len(window) if isinstance(window, tuple) else -1
        if d < 1 or x.ndim != d + 2:
            fail(name, "window", f"must hold one int per spatial axis of the rank-{x.ndim} "
                                 f"input, got {window!r}"[:120])
        check_ints(name, "window", window, d, 1)
        check_ints(name, "strides", strides, d, 1)
        check_padding(name, padding, d)
        if name == "avg_pool_grad":
            check_ints(name, "input_spatial", input_spatial, d, 0)
    return rule


def _dtype(name, x, kinds):
    if np.dtype(x.dtype).kind not in kinds:
        raise TypeError(f"{name}: unsupported dtype {np.dtype(x.dtype).name}")


# ---- batching: windows never mix examples, so a batch axis joins N --------------------------
def _pool_batch(name):
    """The batching rule of pooling primitive ``name`` (the block's own, made with it)."""
    def rule(args, batched, **params):
        prim = PRIMITIVES[name]
        b = next(a.shape[0] for a, f in zip(args, batched) if f)
        ops = []
        for a, f in zip(args, batched):
            if not f:  # a shared operand (x of a tangent's gather): one copy per example
                a = api.broadcast_to(a, (b,) + tuple(a.shape))
            ops.append(fold(a, 0, 1))
        return unfold(prim.bind_raw(*ops, **params), 0, 1, b)
    return rule


# ---- the registry blocks -------------------------------------------------------------------
_EMIT = "window={window}, strides={strides}, padding={padding})"

avg_pool_p = Primitive(
    "avg_pool", _avg_pool, nin=1, abstract=_pool_abstract("avg_pool"),
    vjp=(lambda g, ans, x, **p: avg_pool_grad_p.bind_raw(
        g, input_spatial=tuple(x.shape[1:-1]), **p),),
    jvp=(lambda x_dot, ans, x, **p: avg_pool_p.bind_raw(x_dot, **p),),
    batch=_pool_batch("avg_pool"), validate=_validate("avg_pool"), sparsity="linear",
    emit="_avg_pool({0}, " + _EMIT, doc="average pooling over the real elements of windows")

avg_pool_grad_p = Primitive(
    "avg_pool_grad", _avg_pool_grad, nin=1, abstract=_avg_grad_abstract,
    vjp=(lambda g, ans, y, *, input_spatial, **p: avg_pool_p.bind_raw(g, **p),),
    jvp=(lambda y_dot, ans, y, **p: avg_pool_grad_p.bind_raw(y_dot, **p),),
    emit="_avg_pool_grad({0}, input_spatial={input_spatial}, " + _EMIT,
    batch=_pool_batch("avg_pool_grad"), validate=_validate("avg_pool_grad"),
    sparsity="linear",
    doc="the transpose of average pooling")

max_pool_p = Primitive(
    "max_pool", _max_pool, nin=1, abstract=_pool_abstract("max_pool"),
    vjp=(lambda g, ans, x, **p: max_pool_scatter_p.bind_raw(x, g, **p),),
    jvp=(lambda x_dot, ans, x, **p: max_pool_gather_p.bind_raw(x, x_dot, **p),),
    batch=_pool_batch("max_pool"), validate=_validate("max_pool"), sparsity="window",
    emit="_max_pool({0}, " + _EMIT, doc="max pooling")

max_pool_gather_p = Primitive(
    "max_pool_gather", _max_pool_gather, nin=2, abstract=_pair_abstract("max_pool_gather", False),
    vjp=(lambda g, ans, x, t, **p: api.zeros_like(x),
         lambda g, ans, x, t, **p: max_pool_scatter_p.bind_raw(x, g, **p)),
    jvp=(lambda x_dot, ans, x, t, **p: api.zeros_like(ans),
         lambda t_dot, ans, x, t, **p: max_pool_gather_p.bind_raw(x, t_dot, **p)),
    emit="_max_pool_gather({0}, {1}, " + _EMIT,
    batch=_pool_batch("max_pool_gather"), validate=_validate("max_pool_gather"),
    sparsity="window_gather",
    doc="t at the element where x has each window's maximum (the JVP of max pooling)")

max_pool_scatter_p = Primitive(
    "max_pool_scatter", _max_pool_scatter, nin=2,
    abstract=_pair_abstract("max_pool_scatter", True),
    vjp=(lambda g, ans, x, t, **p: api.zeros_like(x),
         lambda g, ans, x, t, **p: max_pool_gather_p.bind_raw(x, g, **p)),
    jvp=(lambda x_dot, ans, x, t, **p: api.zeros_like(ans),
         lambda t_dot, ans, x, t, **p: max_pool_scatter_p.bind_raw(x, t_dot, **p)),
    emit="_max_pool_scatter({0}, {1}, " + _EMIT,
    batch=_pool_batch("max_pool_scatter"), validate=_validate("max_pool_scatter"),
    sparsity="window_scatter",
    doc="g added at the element where x has each window's maximum (the VJP of max pooling)")

# The code generator imports these by name for the ``emit`` strings above.
EMIT_HELPERS = {"_avg_pool": _avg_pool, "_avg_pool_grad": _avg_pool_grad,
                "_max_pool": _max_pool, "_max_pool_gather": _max_pool_gather,
                "_max_pool_scatter": _max_pool_scatter}
