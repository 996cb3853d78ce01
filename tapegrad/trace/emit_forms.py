"""Which NumPy form generated code uses for an equation, where there is a choice.

``ufunc_of``: the ufunc an equation computes, so that it can write into a dead buffer
(``out=``). ``fast_form``: a faster form for particular shapes (BLAS for row sums, a
broadcast multiply for outer products, a contiguous read of a transposed weight matrix),
the same choices the eager implementations make.
"""
import operator

import numpy as np

from tapegrad.primitives import linalg, reductions
from tapegrad.primitives.shape import transpose_p

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
        return _matrix_transpose_form(e, ren)
    return _matmul_form(e, made_by, ren)


def _matrix_transpose_form(e, ren):
    """A matrix's transpose as ``x.T``: the same view as ``np.transpose(x, (1, 0))``, without
    the function's dispatch (~0.15 us against ~0.9 us; a backward pass has one per layer)."""
    (x,) = e.inputs
    if x.ndim != 2 or tuple(dict(e.params)["perm"]) != (1, 0):
        return None
    return f"{ren[x.name]}.T"


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


def _matmul_form(e, made_by, ren):
    """A faster NumPy form of a 2-D ``matmul`` where OpenBLAS has one, else None.

    - inner size 1 (an outer product): a broadcast multiply;
    - a few rows times a large transposed matrix (``g @ W.T``): ``(W @ g.T).T``, copied
      into C order;
    - a small transposed matrix: copied into C order first.
    The tests, and why, are ``primitives/linalg``'s, shared with the eager implementation.
    """
    if e.prim is not linalg.matmul_p:
        return None
    a, b = e.inputs
    if a.ndim != 2 or b.ndim != 2 or a.dtype != b.dtype:
        return None
    if linalg.outer_product(a, b):
        return f"{ren[a.name]} * {ren[b.name]}  # matmul with inner size 1: an outer product"
    t = made_by.get(b.name)
    if t is not None and t.prim is transpose_p and t.inputs[0].ndim == 2 \
            and linalg.few_rows_large_matrix(a, b):
        return (f"np.ascontiguousarray(({ren[t.inputs[0].name]} @ {ren[a.name]}.T).T)"
                "  # matmul, W read contiguously")
    if t is not None and t.prim is transpose_p and linalg.small_matrix(b):
        # the eager rule copies whatever is not C-contiguous; this is a no-op where b is
        return f"{ren[a.name]} @ np.ascontiguousarray({ren[b.name]})  # matmul, W.T copied"
    return None


def matmul_into(e, made_by, ren, buf):
    """A 2-D matmul writing into the dead C-contiguous buffer ``buf`` (``trace/reuse.py``):
    the forms of ``_matmul_form`` with an output, the same BLAS call or broadcast multiply."""
    a, b = (ren[v.name] for v in e.inputs)
    if linalg.outer_product(*e.inputs):
        return f"np.multiply({a}, {b}, {buf})  # matmul with inner size 1: an outer product"
    t = made_by.get(e.inputs[1].name)
    if t is not None and t.prim is transpose_p and linalg.small_matrix(e.inputs[1]):
        return f"np.matmul({a}, np.ascontiguousarray({b}), out={buf})  # matmul, W.T copied"
    return f"np.matmul({a}, {b}, out={buf})"
