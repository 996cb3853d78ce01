"""Family helpers that generate the boilerplate of a primitive's registry block.

A block reads like a page of a calculus book::

    exp_p = unary("exp", xp.exp, lambda g, ans, x: g * ans)

For elementwise primitives the JVP rule of each input is its VJP rule (the Jacobian is
diagonal), so a block states the derivative once. Rules use the primitive layer's functions
(``primitives/api.py``: thin ``bind`` wrappers), so derivatives of derivatives work to any
order.
"""
import numpy as np

from tapegrad.primitives.api import reduce_sum, reshape
from tapegrad.core.dispatch import PRIMITIVES, Primitive
from tapegrad.core.tensor import raw_shape
from tapegrad.util import buffers
from tapegrad.util.rows import EAGER_K, EAGER_ROWS, merge_factor, tile_rows

xp = np  # the array namespace: every implementation goes through it (GPU arrays later)


def broadcast_shapes(*shapes):
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError("shapes " + " and ".join(str(tuple(s)) for s in shapes)
                         + " are not broadcast-compatible") from None


def elementwise_abstract(*avals, **params):
    """Broadcast shape, promoted dtype (``np.result_type``): the rule of add, where..."""
    shape = broadcast_shapes(*[a.shape for a in avals])
    return shape, np.result_type(*[a.dtype for a in avals])


def ufunc_dtype(ufunc):
    """The output dtype of ``ufunc`` on arrays of the given dtypes, by NumPy's own type
    resolution (no data is made). Raises ``TypeError`` where the ufunc has no loop."""
    def rule(*dtypes):
        return ufunc.resolve_dtypes(tuple(dtypes) + (None,) * ufunc.nout)[ufunc.nin]
    return rule


def elementwise(dtype_rule):
    """The abstract rule of an elementwise primitive: broadcast shape, ``dtype_rule(*dtypes)``
    (e.g. ``ufunc_dtype(np.exp)``: int8 -> float16, as NumPy computes it)."""
    def abstract(*avals, **params):
        shape = broadcast_shapes(*[a.shape for a in avals])
        return shape, np.dtype(dtype_rule(*[a.dtype for a in avals]))
    return abstract


def no_bool(dtype_rule, name):
    """``dtype_rule`` for non-bool inputs (where NumPy's bool result would differ between the
    implementation and the generated code, or TensorFlow refuses bools)."""
    def rule(*dtypes):
        if any(d.kind == "b" for d in dtypes):
            raise TypeError(f"{name}: bool inputs are not supported")
        return dtype_rule(*dtypes)
    return rule


def kinds_only(kinds, name):
    """The input dtype when every input is of one of ``kinds`` (``'f'``: floats...)."""
    def rule(*dtypes):
        if any(d.kind not in kinds for d in dtypes):
            raise TypeError(f"{name}: inputs of dtype {', '.join(d.name for d in dtypes)} are "
                            f"not supported (dtype kinds {kinds!r} only)")
        return np.result_type(*dtypes)
    return rule


_OPERATOR_UFUNCS = {"neg": np.negative, "add": np.add, "sub": np.subtract, "mul": np.multiply,
                    "div": np.true_divide}


def elementwise_batch(prim):
    """Batching rule of an elementwise primitive: align ranks, then apply once. ``prim`` is
    the primitive, or its name (a block names itself: the primitive is made with its rules)."""
    def rule(args, batched, **params):
        rank = max((a.ndim - 1 if b else a.ndim) for a, b in zip(args, batched))
        aligned = []
        for a, b in zip(args, batched):
            r = a.ndim - 1 if b else a.ndim
            if b and r < rank:
                a = reshape(a, (a.shape[0],) + (1,) * (rank - r) + tuple(a.shape[1:]))
            aligned.append(a)
        return (PRIMITIVES[prim] if type(prim) is str else prim).bind_raw(*aligned, **params)
    return rule


def _ufunc_rule(name, impl, dtype):
    if dtype is not None:
        return elementwise(dtype)
    impl = getattr(impl, "wrapped", impl)
    ufunc = impl if isinstance(impl, np.ufunc) else _OPERATOR_UFUNCS[name]
    return elementwise(ufunc_dtype(ufunc))


def _recycling_impl(name, impl):
    """``recycling(impl)`` where ``impl`` is a ufunc or the operator of one, else ``impl``."""
    if isinstance(impl, np.ufunc):
        return recycling(impl, impl) if impl.nout == 1 else impl
    if name in _OPERATOR_UFUNCS and impl.__module__ in ("_operator", "operator"):
        return recycling(impl, _OPERATOR_UFUNCS[name])
    return impl


_SMALL = buffers.MIN_BYTES // 16  # elements below which no result reaches MIN_BYTES
_MERGED_UFUNCS = (np.add, np.subtract, np.multiply, np.true_divide)  # exact in any loop
_NDARRAY = np.ndarray


def _merged_rows(ufunc, x, y):
    """``ufunc(x, y)`` where one operand is one short row broadcast over the other's rows,
    computed on rows merged r at a time (``util/rows.py``'s rule, which generated code
    follows too, with an eager call's thresholds), else None. Each element is the same ufunc of the same two
    values (add, subtract, multiply and divide round exactly in every loop), so the result
    is the same bits, dtype and shape."""
    big, row = (x, y) if x.size >= y.size else (y, x)
    if big.ndim < 2 or big.shape[-1] > EAGER_K:  # (a dense layer's bias: decided at once)
        return None
    b, k = big.shape[-2:]
    if not (row.size == k and 0 < row.ndim <= big.ndim and row.shape[-1] == k
            and big.flags.c_contiguous):
        return None
    r = merge_factor(b, k, big.size // k if k else 0, runtime_tile=True, eager=True)
    if r is None:
        return None
    merged = big.reshape(big.shape[:-2] + (b // r, r * k))
    tiled = tile_rows(row.reshape(k), r)
    out = ufunc(merged, tiled) if big is x else ufunc(tiled, merged)
    return out.reshape(big.shape)


def recycling(impl, ufunc):
    """``impl`` (a ufunc, or the operator that calls it on arrays), computing a result of at
    least ``buffers.MIN_BYTES`` into recycled memory: the same ufunc loop with ``out=``, so
    the same values, without the page faults of a fresh block (``util/buffers.py``).
    Anything else (smaller, Python scalars, a dtype without a loop) calls ``impl`` itself.
    ``.wrapped`` is ``impl`` (what code generation and the shape rules look at).
    """
    if ufunc.nin == 1:
        def run(x):
            if x.__class__ is not np.ndarray or x.size < _SMALL:
                return impl(x)
            out = _output(ufunc, (x,))
            return impl(x) if out is None else ufunc(x, out=out)
    else:
        merges = ufunc in _MERGED_UFUNCS

        def run(x, y):
            try:  # NumPy arrays and scalars have .size; anything else is impl's
                xs, ys = x.size, y.size
            except AttributeError:
                return impl(x, y)
            if xs < _SMALL and ys < _SMALL:
                # merged rows need a short row broadcast over >= EAGER_ROWS rows: operands
                # of different sizes (equal sizes never merge), the larger's rows short
                # (most operations stop at the first test, a dense layer's bias at the last)
                if merges and xs != ys and (xs >= EAGER_ROWS or ys >= EAGER_ROWS):
                    big = x if xs > ys else y
                    if type(big) is _NDARRAY and big.shape[-1] <= EAGER_K and \
                            type(x) is type(y):  # (both arrays)
                        out = _merged_rows(ufunc, x, y)
                        if out is not None:
                            return out
                return impl(x, y)
            out = _output(ufunc, (x, y))
            return impl(x, y) if out is None else ufunc(x, y, out=out)
    run.wrapped, run.__name__, run.__doc__ = impl, impl.__name__, impl.__doc__
    return run


def _output(ufunc, args):
    """Recycled memory for ``ufunc(*args)``'s result, or None (not large, or not plain NumPy
    operands whose result NumPy's own type resolution states)."""
    if not all(type(a) is np.ndarray or isinstance(a, np.generic) for a in args):
        return None  # a Python scalar, a subclass: their promotion is impl's business
    try:
        dtype = ufunc.resolve_dtypes(tuple(a.dtype for a in args) + (None,))[-1]
        shape = np.broadcast_shapes(*[np.shape(a) for a in args])
    except (TypeError, ValueError):  # impl raises its own error
        return None
    return buffers.empty(shape, dtype)


def unary(name, impl, vjp, *, emit=None, jvp=None, dtype=None, fresh=False, identities=None,
          complex=None):
    """An elementwise primitive of one input; ``vjp(g, ans, x)`` also serves as its JVP.

    The output dtype is the ufunc's (``impl``, or the ufunc of an operator), else
    ``dtype(*input_dtypes)``.
    """
    impl = _recycling_impl(name, impl)
    return Primitive(name, impl, nin=1, vjp=(vjp,), jvp=(jvp or vjp,),
                     emit=emit or f"np.{impl.__name__}({{0}})", fresh=fresh,
                     abstract=_ufunc_rule(name, impl, dtype), batch=elementwise_batch(name),
                     elementwise=True, identities=identities, complex=complex)


def binary(name, impl, vjp_x, vjp_y, *, emit=None, dtype=None, identities=None, complex=None,
           fresh=False):
    """An elementwise primitive of two inputs; each VJP rule also serves as its JVP."""
    impl = _recycling_impl(name, impl)
    return Primitive(name, impl, nin=2, vjp=(vjp_x, vjp_y), jvp=(vjp_x, vjp_y), fresh=fresh,
                     emit=emit or f"np.{impl.__name__}({{0}}, {{1}})",
                     abstract=_ufunc_rule(name, impl, dtype), batch=elementwise_batch(name),
                     elementwise=True, identities=identities, complex=complex)


def nondiff(name, impl, nin, *, emit=None, abstract=None, batch=None, validate=None,
            fresh=False, identities=None):
    """A primitive whose output carries no gradient (comparisons, argmax, floor...).

    ``batch="elementwise"`` makes it elementwise; with no ``abstract``, its rule is then
    ``impl``'s (a ufunc)."""
    if abstract is None and batch == "elementwise":
        abstract = elementwise(ufunc_dtype(impl))
    if batch == "elementwise":
        return Primitive(name, impl, nin=nin, nondiff=True, emit=emit, abstract=abstract,
                         validate=validate, fresh=fresh, batch=elementwise_batch(name),
                         elementwise=True, identities=identities)
    return Primitive(name, impl, nin=nin, nondiff=True, emit=emit, abstract=abstract,
                     validate=validate, fresh=fresh, batch=batch, identities=identities)


def linear_jvp(name):
    """JVP of a linear primitive: apply it to the tangent (``name``: the block's primitive,
    made with its rules)."""
    return (lambda t, ans, *xs, **params: PRIMITIVES[name].bind_raw(t, *xs[1:], **params),)


def summed_axes(cshape, shape):
    """The axes of a cotangent of shape ``cshape`` that broadcasting to it added to ``shape``."""
    lead = len(cshape) - len(shape)
    return tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and cshape[lead + i] != 1)


def unbroadcast(ct, shape):
    """Sum a cotangent down to ``shape``: the one place where broadcasting is undone."""
    if ct is None:
        return None
    cshape = tuple(raw_shape(ct))
    shape = tuple(shape)
    if cshape == shape:
        return ct
    axes = summed_axes(cshape, shape)
    if axes:
        ct = reduce_sum(ct, axis=axes, keepdims=False)
    if tuple(raw_shape(ct)) != shape:
        ct = reshape(ct, shape)
    return ct
