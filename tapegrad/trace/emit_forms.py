"""Which NumPy form generated code uses for an equation, where there is a choice.

``ufunc_of``: the ufunc an equation computes, so that it can write into a dead buffer
(``out=``). ``fast_form``: a faster form for particular shapes (BLAS for row sums, a
broadcast multiply for outer products, a contiguous read of a transposed weight matrix),
the same choices the eager implementations make.
"""
import operator

import numpy as np

from tapegrad.primitives import linalg, reductions
from tapegrad.primitives.shape import reshape_p, transpose_p
from tapegrad.util import small_gemm
from tapegrad.util.rows import (MERGE_K, MERGE_ROWS, MERGE_ROWS_COPY, MERGE_WIDTH,  # noqa: F401
                                merge_factor, tile_rows)

# Python operators on arrays are these ufuncs, which take an out= buffer.
_OPERATOR_UFUNCS = {operator.add: np.add, operator.sub: np.subtract, operator.mul: np.multiply,
                    operator.truediv: np.true_divide, operator.neg: np.negative}


# NumPy 2.4 deprecates a positional output for these two (it reads as a third input)
_KEYWORD_OUT = {"maximum", "minimum"}


def out_arg(ufunc, buf):
    """How a call of ``ufunc`` names its output buffer ``buf``: positionally where NumPy
    allows it (the fastest form: no keyword to parse), else ``out=``."""
    return f"out={buf}" if ufunc.__name__ in _KEYWORD_OUT else buf


def ufunc_of(prim):
    """The single-output ufunc a primitive's generated code computes, if it is one."""
    impl = getattr(prim.impl, "wrapped", prim.impl)  # primitives/families.py: recycling
    f = impl if isinstance(impl, np.ufunc) else _OPERATOR_UFUNCS.get(impl)
    if f is None or f.nout != 1 or not prim.emit:
        return None
    if isinstance(impl, np.ufunc) and not prim.emit.startswith(f"np.{impl.__name__}("):
        return None  # the emit string computes something else; leave it alone
    return f


def fast_form(e, made_by, ren, ns):
    """A faster NumPy form of an equation where one exists for its shapes, else None."""
    if e.prim is reductions.reduce_sum_p:
        return _row_sum_form(e, ren, ns)
    if e.prim is transpose_p:
        return _transpose_form(e, ren)
    if e.prim is reshape_p:
        return _reshape_form(e, ren)
    return _matmul_form(e, made_by, ren, ns)


def _int_tuple(values):
    """The source of a tuple of plain integers, or None (a symbolic size, anything else)."""
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
        return None
    items = [int.__repr__(int(v)) for v in values]
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def _transpose_form(e, ren):
    """A matrix's transpose as ``x.T``, any other array's as ``x.transpose(perm)``: the same
    view as ``np.transpose(x, perm)``, without the function's dispatch (``.T`` ~0.15 us, the
    method ~0.3 us, the function ~0.9 us; a backward pass has one per layer). An input of
    rank >= 1 is an array in generated code (only 0-d values may be NumPy scalars)."""
    (x,) = e.inputs
    perm = tuple(dict(e.params)["perm"])
    if x.ndim == 2 and perm == (1, 0):
        return f"{ren[x.name]}.T"
    text = _int_tuple(perm) if x.ndim >= 1 else None
    return None if text is None else f"{ren[x.name]}.transpose({text})"


def _reshape_form(e, ren):
    """An array's reshape as the method, ``x.reshape(shape)``: what ``np.reshape`` calls,
    without its dispatch (~0.3 us against ~1.5 us, CPU time, a loaded machine; a batch
    Jacobian's passes reshape at every layer). Inputs of rank >= 1 only (arrays)."""
    (x,) = e.inputs
    text = _int_tuple(dict(e.params)["shape"]) if x.ndim >= 1 else None
    return None if text is None else f"{ren[x.name]}.reshape({text})"


def _row_sum_form(e, ren, ns):
    """The sum of float matrices' rows as a product with a ones vector (BLAS gemv; see
    ``reductions.row_sums``); the eager implementation does the same, on the same layout."""
    (x,) = e.inputs
    p = dict(e.params)
    split = reductions.row_sums(x, p["axis"])
    if split is None:
        return None
    batch, lead, rest = split
    axis = p["axis"]
    arg = f"np.ascontiguousarray({ren[x.name]})"
    if len(x.shape) > 2:
        arg += f".reshape({(lead, rest) if axis[0] == 0 else (batch, lead, rest)})"
    name = f"_ones{lead}_{x.dtype.name}"
    ns[name] = reductions.ones_vector(lead, x.dtype)
    if p["keepdims"]:
        shape = tuple(1 if i in axis else s for i, s in enumerate(x.shape))
    else:
        shape = tuple(s for i, s in enumerate(x.shape) if i not in axis)
    keep = f".reshape({shape})" if len(x.shape) > 2 or p["keepdims"] else ""
    return f"({name} @ {arg}){keep}  # reduce_sum over the rows"


def row_sum_into_ok(e):
    """Whether ``e`` is a row sum of a 2-D float matrix (``_row_sum_form``, no keepdims)
    that ``row_sum_into`` can write into a buffer."""
    if e.prim is not reductions.reduce_sum_p:
        return False
    (x,) = e.inputs
    p = dict(e.params)
    return (x.ndim == 2 and not p["keepdims"] and isinstance(x.shape[0], (int, np.integer))
            and reductions.row_sums(x, p["axis"]) is not None)


def row_sum_into(e, ren, ns, buf):
    """``_row_sum_form`` writing into the C-contiguous buffer ``buf``: the same
    ``ones @ x`` product (where ``row_sum_into_ok``)."""
    x = e.inputs[0]
    name = f"_ones{x.shape[0]}_{x.dtype.name}"
    ns[name] = reductions.ones_vector(x.shape[0], x.dtype)
    return (f"np.matmul({name}, np.ascontiguousarray({ren[x.name]}), out={buf})"
            "  # reduce_sum over the rows")


def _matmul_form(e, made_by, ren, ns):
    """A matmul of vectors and matrices as a call of ``linalg.matmul_2d``, the eager
    implementation's rule: the form (a broadcast multiply for inner size 1, ``(W @ g.T).T``,
    a copy of a small transposed matrix, a copy of a broadcast or strided operand) and the
    rounding depend on the operands' layouts at run time, which the code cannot always know
    when it is written (arguments, views). Plain ``a @ b`` where the right operand is known
    to be C-contiguous and the left one C- or F-contiguous: the rule then is ``a @ b``."""
    if e.prim is not linalg.matmul_p:
        return None
    a, b = e.inputs
    if a.ndim > 2 or b.ndim > 2:
        return None
    if _outer_product(a, b):  # matmul_2d's first form, whatever the layouts
        return f"{ren[a.name]} * {ren[b.name]}  # matmul with inner size 1: an outer product"
    if _plain_matmul(a, b, made_by):
        return f"{ren[a.name]} @ {ren[b.name]}"
    ns["matmul_2d"] = linalg.matmul_2d
    return f"matmul_2d({ren[a.name]}, {ren[b.name]})"


def _plain_matmul(a, b, made_by):
    """Whether ``matmul_2d(a, b)`` is ``a @ b`` for any arrays the code can be called with:
    no outer product, the right operand C-contiguous (a new matmul result) and the left one
    contiguous (a new matmul result or its transpose)."""
    if a.ndim == 2 and b.ndim == 2 and (not _inner_above_one(a) or gemm_blocks(a, b)):
        return False
    return _new_matmul(b, made_by) and (_new_matmul(a, made_by)
                                        or _transposed_new_matmul(a, made_by))


def gemm_blocks(a, b):
    """Whether ``matmul_2d`` may run the 2-D matmul of ``a`` and ``b`` (IR values) as GEMMs
    of a few rows or of a few inner indices each (``util/small_gemm.py``): its shapes decide,
    the layout at run time."""
    shape = tuple(a.shape) + tuple(b.shape[1:])
    return a.ndim == 2 and b.ndim == 2 and \
        all(isinstance(s, (int, np.integer)) for s in shape) and a.dtype == b.dtype and \
        (small_gemm.blocked_shape(*shape, a.dtype)
         or small_gemm.inner_blocked_shape(*shape, a.dtype))


def _outer_product(a, b):
    return a.ndim == 2 and b.ndim == 2 and isinstance(a.shape[1], (int, np.integer)) \
        and linalg.outer_product(a, b)


def _inner_above_one(a):
    return isinstance(a.shape[1], (int, np.integer)) and a.shape[1] > 1


def _new_matmul(v, made_by):
    """``v`` is a matmul's result, which ``matmul_2d`` makes C-contiguous (not an outer
    product's: a broadcast multiply's layout follows its operands)."""
    e = made_by.get(v.name)
    if e is None or e.prim is not linalg.matmul_p or len(e.inputs) != 2:
        return False
    x, y = e.inputs
    return x.ndim <= 2 and y.ndim <= 2 and (x.ndim == 1 or y.ndim == 1 or _inner_above_one(x))


def _transposed_new_matmul(v, made_by):
    e = made_by.get(v.name)
    return e is not None and e.prim is transpose_p and e.inputs[0].ndim == 2 \
        and _new_matmul(e.inputs[0], made_by)


def matmul_into(e, made_by, ren, buf, ns):
    """A matmul of vectors and matrices writing into the dead C-contiguous buffer ``buf``
    (``trace/reuse.py``): ``_matmul_form``'s call with an output, the same BLAS call or
    broadcast multiply."""
    a, b = (ren[v.name] for v in e.inputs)
    if _outer_product(*e.inputs):
        return f"np.multiply({a}, {b}, {buf})  # matmul with inner size 1: an outer product"
    if _plain_matmul(*e.inputs, made_by):
        return f"np.matmul({a}, {b}, out={buf})"
    ns["matmul_2d"] = linalg.matmul_2d
    return f"matmul_2d({a}, {b}, {buf})"


# ---- broadcast rows merged (the cost model: util/rows.py) ---------------------------------
def merged_rows(e, consts):
    """How many rows at a time a broadcast elementwise operation should run on, or None:
    ``util/rows.py``'s rule. A constant ``c`` is tiled once (r * c.size elements: never more
    than the result it is broadcast into); a 1-D argument or temporary at every call."""
    ufunc = ufunc_of(e.prim)
    if ufunc is None or len(e.outs) != 1 or len(e.inputs) != 2 or ufunc.nin != 2:
        return None
    out = e.out
    if out.ndim < 2 or not all(isinstance(s, (int, np.integer)) for s in out.shape):
        return None
    b, k = out.shape[-2:]
    if not k or k > MERGE_K:
        return None
    kinds = [_row_kind(v, b, k, out.ndim, consts) for v in e.inputs]
    if None in kinds or "full" not in kinds or not {"tile", "copy"} & set(kinds):
        return None
    return merge_factor(int(b), int(k), out.size // k, "copy" in kinds)


def _row_kind(v, b, k, ndim, consts):
    shape = (1,) * (ndim - v.ndim) + tuple(v.shape)
    if v.size == 1:
        return "scalar"
    if shape[-2:] == (b, k):
        return "full"
    if shape[-2:] == (1, k):
        return "tile" if v.name in consts else "copy" if v.ndim == 1 else None
    return None


def merged_rows_form(e, r, names, consts, ns, new_name, notes, tiled, out=None, recycled=None):
    """The code of ``e`` on rows merged ``r`` at a time (``merged_rows``): ``out`` names a
    dead buffer of the result's shape to write into; ``recycled(shape)``, where given, is
    the code of a recycled buffer of that shape. The tiled constants go into ``ns`` (once
    per constant and r: ``tiled`` maps them to their names), a line about each into
    ``notes``."""
    ufunc = ufunc_of(e.prim)
    b, k = (int(s) for s in e.out.shape[-2:])
    merged = tuple(int(s) for s in e.out.shape[:-2]) + (b // r, r * k)
    args = []
    for v, name in zip(e.inputs, names):
        kind = _row_kind(v, b, k, e.out.ndim, consts)
        if kind == "full":
            lead = tuple(int(s) for s in v.shape[:-2])
            args.append(f"{name}.reshape({lead + (b // r, r * k)})")
        elif kind == "tile":
            if (v.name, r) not in tiled:
                value = np.tile(consts[v.name], r)
                value.flags.writeable = False
                tname = tiled[v.name, r] = new_name(f"{name}_rows")
                ns[tname] = value
                notes.append(f"# {tname}: {name} tiled {r} times along its last axis "
                             "(passed in)")
            args.append(tiled[v.name, r])
        elif kind == "copy":
            ns["_tile_rows"] = tile_rows
            args.append(f"_tile_rows({name}, {r})")
        else:
            args.append(name)
    if recycled is not None:
        args.append(f"out={recycled(merged)}")
    elif out is not None:
        args.append(out_arg(ufunc, f"{out}.reshape({merged})"))
    shape = tuple(int(s) for s in e.out.shape)
    return (f"np.{ufunc.__name__}({', '.join(args)}).reshape({shape})"
            f"  # {r} rows at a time")
