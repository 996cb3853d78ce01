"""The algebraic identities of the primitives: ``x*1``, ``x+(-0.0)``, ``x-0``, ``x/1``,
``--x``, ``x**0``, ``x**1``, ``x**2 -> x*x``, chains of scalar-constant products, merged
scatters (index_add + index_add), logical and/or/where with a constant condition, transpose
of a transpose, reshape and broadcast chains, casts to the same dtype, sums of broadcasts.

Each primitive's block names its rule (``Primitive.identities``); the IR pass
``ir/algebraic.py`` calls ``rule(e, ctx, out, *inputs)`` on each of its equations, with a
context ``ctx`` that knows the program's constants and producers and makes new variables
and equations. A rule returns ``(new_equations, value)`` to replace ``e``, or None.

Every rewrite produces a value of exactly the type (shape and dtype) of the one it replaces:
``x + 0`` where the zero broadcasts ``x`` to a larger shape becomes ``broadcast_to(x)``, not
``x``; where the dtype would change, nothing is rewritten.

Every rewrite is also exact for every IEEE input, NaN, inf, -0.0 and subnormals included:
the compiled program computes bit for bit what the interpreter does. So for floats
``x * 0`` stays (it is NaN for NaN or inf ``x``, and -0.0 for negative ``x``) unless ``x``
is known to be a finite non-negative number (a mask cast from bool); ``x + 0.0`` stays
(-0.0 + 0.0 is +0.0), while ``x + (-0.0)`` and ``x - 0.0`` fold; ``0.0 - x`` is not ``-x``
(0 - 0 is +0). NaN keeps its sign bit through arithmetic and loses it through negation,
so for floats neither ``-0.0 - x`` nor ``c * (-x)`` nor ``-(c * x)`` becomes a product by
``-c`` or a negation (``--x`` is ``x``: two flips); ``c * (d * x)`` folds only where no rounding, overflow or underflow can tell
the two apart; a sum of n copies becomes ``n * x`` only where that is exact. Integer and
bool arithmetic is exact (wrapping), so there every rule applies. For complex dtypes
``x * 1`` and ``x / 1`` stay (NumPy computes ``(inf+1j) * 1`` as ``inf+nanj``).
"""
import numpy as np


def _exact(dtype):
    """Integer and bool arithmetic: every algebraic identity holds (wrapping included)."""
    return np.dtype(dtype).kind in "iub"


def _nonneg_finite(v, ctx):
    """True if ``v`` is provably finite and not negative (not -0.0 either): a mask cast
    from bool, or a cast from an unsigned integer the target float holds without
    overflow. Then ``v * 0.0`` is exactly +0.0."""
    c = ctx.prod(v, "cast")
    if c is None or v.dtype.kind != "f":
        return False
    src = c.inputs[0].dtype
    if src.kind == "b":
        return True
    return src.kind == "u" and (src.itemsize == 1 or v.dtype.itemsize > 2)


def _pow2_at_least_one(c):
    """``c`` is ±2**k with k >= 0: multiplying by it only moves the exponent, and chains of
    such factors overflow exactly where their product does (no rounding, no underflow)."""
    if c is None or not np.isfinite(c) or c == 0 or np.iscomplexobj(c):
        return False
    m, _ = np.frexp(abs(float(c)))
    return m == 0.5 and abs(c) >= 1


def _as(x, out, ctx):
    """``x`` as a value of ``out``'s type: itself, or broadcast; None if the dtype differs."""
    if x.dtype != out.dtype:
        return None
    if x.shape == out.shape:
        return [], x
    e = ctx.eqn("broadcast_to", [x], out.shape, out.dtype, shape=out.shape)
    return [e], e.out


def _fill(out, value, ctx):
    return [], ctx.const(np.broadcast_to(np.array(value, out.dtype), out.shape))


def _scalar_const(v, ctx):
    """The value of a 0-d constant ``v``, or None."""
    return ctx.uniform(v) if v.ndim == 0 else None


def mul(e, ctx, out, x, y):
    for z, other in ((x, y), (y, x)):
        if ctx.is_const(z, 0) and (_exact(out.dtype) or _nonneg_finite(other, ctx)):
            # a finite non-negative ``other`` times ±0.0 is that same zero
            return _fill(out, ctx.uniform(z), ctx)
    if out.dtype.kind == "c":
        return None  # complex x * 1 is not x where a part is inf (see the module docstring)
    if ctx.is_const(y, 1):
        return _as(x, out, ctx)
    if ctx.is_const(x, 1):
        return _as(y, out, ctx)
    # c * (d * z) -> (c*d) * z and c * (-z) -> (-c) * z: derivative code is full of these
    if _scalar_const(x, ctx) is not None and _scalar_const(y, ctx) is None:
        x, y = y, x
    c = _scalar_const(y, ctx)
    if c is None:
        return None
    inner = ctx.prod(x, "mul")
    if inner is not None:
        a, b = inner.inputs
        d = _scalar_const(b, ctx) if _scalar_const(b, ctx) is not None else _scalar_const(a, ctx)
        z = a if _scalar_const(b, ctx) is not None else b
        exact = _exact(out.dtype) or (_pow2_at_least_one(c) and _pow2_at_least_one(d))
        if d is not None and exact and z.dtype == inner.out.dtype == out.dtype \
                and z.shape == out.shape:
            m = ctx.eqn("mul", [z, ctx.const(np.asarray(c * d, out.dtype))], out.shape,
                        out.dtype)
            return [m], m.out
    # c * (-z) -> (-c) * z only for integers: for a NaN z the two NaNs differ in sign
    # (a product keeps its NaN operand's sign bit; the negation flips it)
    inner = ctx.prod(x, "neg") if _exact(out.dtype) else None
    if inner is not None and inner.inputs[0].shape == out.shape:
        m = ctx.eqn("mul", [inner.inputs[0], ctx.const(np.asarray(-c, out.dtype))], out.shape,
                    out.dtype)
        return [m], m.out
    return None


def add(e, ctx, out, x, y):
    # x + (-0.0) is x for every x; x + 0.0 is not (-0.0 + 0.0 is +0.0)
    if ctx.is_zero(y, negative=True):
        return _as(x, out, ctx)
    if ctx.is_zero(x, negative=True):
        return _as(y, out, ctx)
    # index_add(a, i) + index_add(b, i) -> index_add(a + b, i): one scatter instead of two,
    # exact where each element is named once (else the sums are associated differently)
    ia, ib = ctx.prod(x, "index_add"), ctx.prod(y, "index_add")
    if ia is not None and ib is not None and ia.params == ib.params and (
            _exact(out.dtype) or _names_once(ia)):
        a, b = ia.inputs[0], ib.inputs[0]
        if a.shape == b.shape and a.dtype == b.dtype == out.dtype and x.shape == out.shape:
            s = ctx.eqn("add", [a, b], a.shape, a.dtype)
            i = ctx.eqn("index_add", [s.out], out.shape, out.dtype, **dict(ia.params))
            return [s, i], i.out
    return None


def _names_once(e):
    """An index_add whose index names every element at most once (a plain assignment)."""
    p = dict(e.params)
    return p["index"].names_each_once(p["shape"])


def sub(e, ctx, out, x, y):
    # x - 0.0 is x for every x (-0.0 - 0.0 is -0.0); x - (-0.0) is x + 0.0, which is not
    if ctx.is_zero(y, negative=False):
        return _as(x, out, ctx)
    # 0 - y is -y for integers; for floats not even -0.0 - y is: a NaN y keeps its sign
    # bit through the subtraction, while the negation flips it (and 0.0 - 0.0 is +0.0)
    if _exact(out.dtype) and ctx.is_zero(x, negative=True) \
            and (y.shape, y.dtype) == (out.shape, out.dtype):
        n = ctx.eqn("neg", [y], out.shape, out.dtype)
        return [n], n.out
    return None


def div(e, ctx, out, x, y):
    return _as(x, out, ctx) if ctx.is_const(y, 1) and out.dtype.kind != "c" else None


def pow(e, ctx, out, x, y):
    if ctx.is_const(y, 0):  # x ** 0 is 1 for every x in NumPy, 0, inf and nan included
        return _fill(out, 1, ctx)
    if out.dtype.kind == "c":
        return None
    if ctx.is_const(y, 1):  # pow(x, 1) is x, -0.0 and nan included
        return _as(x, out, ctx)
    # NumPy's power with exponent 2 squares (x * x), for every float and integer
    if ctx.is_const(y, 2) and (x.shape, x.dtype) == (out.shape, out.dtype):
        m = ctx.eqn("mul", [x, x], out.shape, out.dtype)
        return [m], m.out
    return None


def one_minus_square(e, ctx, out, x):
    """``1 - x*x`` as the square and the subtraction it computes (the same bits: its
    implementation is those two ufuncs): generated code writes such ufuncs into dead
    buffers, keeps them between calls and fuses product chains, which one helper call
    would hide from it."""
    if (x.shape, x.dtype) != (out.shape, out.dtype):
        return None
    sq = ctx.eqn("square", [x], out.shape, out.dtype)
    sub = ctx.eqn("sub", [ctx.const(np.ones((), out.dtype)), sq.out], out.shape, out.dtype)
    return [sq, sub], sub.out


def _logical(absorbing):
    """The rule of logical and (``absorbing=False``) or logical or (True): a constant
    ``absorbing`` operand fixes the result, the other constant leaves the other operand."""
    def rule(e, ctx, out, x, y):
        if ctx.is_const(x, absorbing) or ctx.is_const(y, absorbing):
            return _fill(out, absorbing, ctx)
        if ctx.is_const(y, not absorbing):
            return _as(x, out, ctx)
        if ctx.is_const(x, not absorbing):
            return _as(y, out, ctx)
        return None
    return rule


logical_and, logical_or = _logical(False), _logical(True)


def where(e, ctx, out, c, x, y):
    if ctx.is_const(c, True):
        return _as(x, out, ctx)
    if ctx.is_const(c, False):
        return _as(y, out, ctx)
    return None


def neg(e, ctx, out, x):
    inner = ctx.prod(x, "neg")
    if inner is not None:
        return [], inner.inputs[0]
    # -(c * z) -> (-c) * z, with -c folded now: integers only, as in ``mul`` (NaN's sign)
    inner = ctx.prod(x, "mul") if _exact(out.dtype) else None
    if inner is not None:
        a, b = inner.inputs
        for z, c in ((a, b), (b, a)):
            v = ctx.values.get(c.name)
            if v is not None and v.dtype == out.dtype and np.broadcast_shapes(
                    z.shape, v.shape) == out.shape:
                m = ctx.eqn("mul", [z, ctx.const(-v)], out.shape, out.dtype)
                return [m], m.out
    return None


def transpose(e, ctx, out, x):
    perm = dict(e.params)["perm"]
    inner = ctx.prod(x, "transpose")
    if inner is not None:
        p0 = dict(inner.params)["perm"]
        perm, x = tuple(p0[i] for i in perm), inner.inputs[0]
    if tuple(perm) == tuple(range(len(perm))):
        return [], x
    if inner is None:
        return None
    t = ctx.eqn("transpose", [x], out.shape, out.dtype, perm=tuple(int(p) for p in perm))
    return [t], t.out


def _chain(name):
    """A rule for a shape primitive (reshape, broadcast_to): two in a row become one, and
    one that keeps the shape vanishes."""
    def rule(e, ctx, out, x):
        inner = ctx.prod(x, name)
        if inner is not None:
            x = inner.inputs[0]
        if x.shape == out.shape:
            return [], x
        if inner is None:
            return None
        r = ctx.eqn(name, [x], out.shape, out.dtype, shape=out.shape)
        return [r], r.out
    return rule


reshape, broadcast_to = _chain("reshape"), _chain("broadcast_to")


def cast(e, ctx, out, x):
    return ([], x) if x.dtype == out.dtype else None


def reduce_sum(e, ctx, out, x):
    p = dict(e.params)
    axis, keepdims = tuple(p["axis"]), p["keepdims"]
    if not axis:
        return _as(x, out, ctx)
    inner = ctx.prod(x, "broadcast_to")
    if inner is None or out.dtype.kind == "b":
        return None
    # sum over axes along which x was only broadcast: n copies of the same value
    a = inner.inputs[0]
    full = (1,) * (x.ndim - a.ndim) + a.shape
    if any(full[i] != 1 for i in axis):
        return None
    n = 1
    for i in axis:
        n *= x.shape[i]
    # a float sum of n copies of a rounds n - 1 times, n * a once: equal for n <= 2 only
    if n == 0 or (n > 2 and not _exact(out.dtype)):
        return None
    if keepdims:
        kept = tuple(1 if i in axis else s for i, s in enumerate(full))
    else:
        kept = tuple(s for i, s in enumerate(full) if i not in axis)
    eqs, t = [], a
    if kept != a.shape:
        eqs.append(ctx.eqn("reshape", [t], kept, a.dtype, shape=kept))
        t = eqs[-1].out
    if kept != out.shape:
        eqs.append(ctx.eqn("broadcast_to", [t], out.shape, a.dtype, shape=out.shape))
        t = eqs[-1].out
    if n != 1:
        c = ctx.const(np.asarray(n, dtype=out.dtype))
        eqs.append(ctx.eqn("mul", [t, c], out.shape, out.dtype))
        t = eqs[-1].out
    return eqs, t


def integer_pow(e, ctx, out, x):
    y = dict(e.params)["y"]
    if y == 0:
        return _fill(out, 1, ctx)
    if y == 1:
        return [], x
    if y == 2:
        m = ctx.eqn("mul", [x, x], out.shape, out.dtype)
        return [m], m.out
    return None


def matmul(e, ctx, out, a, w):
    """``reshape(C * X) @ W`` with constants C (J,1,K) and W (K,N) -> ``X @ (C^T * W)``.

    This is the first step of every vectorized reverse-mode Jacobian of a dense layer: the
    J basis rows (the cotangents), scaled elementwise by the layer's derivative X, times the weights. Folding
    the basis rows into the weights skips a (J, B, K) temporary: J GEMMs on X instead.
    """
    wv = ctx.values.get(w.name)
    r = ctx.prod(a, "reshape")
    if wv is None or wv.ndim != 2 or r is None or a.ndim != 2:
        return None
    m = ctx.prod(r.inputs[0], "mul")
    if m is None or m.out.ndim != 3:
        return None
    c, x = m.inputs
    if ctx.values.get(c.name) is None:
        c, x = x, c
    cv = ctx.values.get(c.name)
    J, B, K = m.out.shape
    if cv is None or cv.shape != (J, 1, K) or x.shape != (B, K) or a.shape != (J * B, K) \
            or cv.dtype != out.dtype or x.dtype != out.dtype or wv.dtype != out.dtype:
        return None
    # exact only for cotangents of 0 and ±1 (then (c x) w and x (c w) are the same products,
    # NaN and inf included); other factors round and overflow differently
    if not _exact(out.dtype) and not np.isin(cv, (0, 1, -1)).all():
        return None
    N = wv.shape[1]
    # Cost model: the folded (J, K, N) constant is read on every call instead of writing
    # and reading the (J, B, K) temporary C * X. It pays only when it is no larger than
    # what it replaces (the two constants and that temporary): N <= B, roughly. Past that
    # (a 32->512->512 Jacobian at batch 16) it would be a 3x slower program and a constant
    # 30x the size of the weights.
    if J * K * N > cv.size + wv.size + J * B * K:
        return None
    folded = ctx.const(np.ascontiguousarray(cv.reshape(J, K, 1) * wv))
    g = ctx.eqn("matmul", [x, folded], (J, B, N), out.dtype)
    back = ctx.eqn("reshape", [g.out], out.shape, out.dtype, shape=out.shape)
    return [g, back], back.out
