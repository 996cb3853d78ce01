"""``tf.map_fn``, ``tf.foldl``, ``tf.foldr`` and ``tf.scan``.

Each is a Python loop over the first axis: ``unstack``, the function on each slice, then
``stack``. Every step goes through the primitives, so tapes, forward mode and ``vmap`` see
ordinary operations and the results differentiate like any other. Under ``tf.function`` the
loop is unrolled at trace time (the program holds one copy of ``fn`` per element), where
TensorFlow builds a ``while_loop``: the same values, a longer program for long inputs.
"""
from tapegrad.core.dtypes import as_dtype
from tapegrad.core.tensor import Tensor, convert_to_tensor
from tapegrad.errors import InvalidArgumentError, OutOfRangeError
from tapegrad.ops.array_ops import stack, unstack, zeros
from tapegrad.util import nest


def _leaves(elems, what):
    """The tensors of ``elems`` and their common first size."""
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if not flat:
        raise ValueError(f"{what}: elems must hold at least one tensor.")
    n = None
    for t in flat:
        if t.ndim == 0:
            raise ValueError("Elements in elems must be 1+ dimensional Tensors, not scalars")
        if n is not None and t.shape[0] != n:
            raise ValueError(f"Dimensions {n} and {t.shape[0]} are not compatible")
        n = t.shape[0]
    return flat, n


def _slices(elems, flat, n, reverse=False):
    """The elements ``elems[i]`` (the structure of elems, each leaf's row i), in order."""
    rows = [unstack(t) for t in flat]
    order = range(n - 1, -1, -1) if reverse else range(n)
    return [nest.pack_sequence_as(elems, [r[i] for r in rows]) for i in order]


def _structure_key(x):
    return nest.map_structure(lambda _: 0, x)


def _check_like(out, like, what):
    if _structure_key(out) != _structure_key(like):
        raise ValueError(f"{what}: the two structures don't have the same nested structure.\n"
                         f"First structure: {like!r}\nSecond structure: {out!r}")


def _signature_dtypes(signature):
    """The dtype of each leaf of ``fn_output_signature`` (a dtype or a TensorSpec)."""
    return [as_dtype(getattr(s, "dtype", s)) for s in nest.flatten(signature)]


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True,
           swap_memory=False, infer_shape=True, name=None, fn_output_signature=None):
    """Apply ``fn`` to each element along axis 0 of ``elems`` (a tensor or a nested
    structure of tensors sharing their first size) and stack the results.

    Without ``fn_output_signature``, ``fn`` must return the structure and dtypes of
    ``elems``; with it (a dtype, a ``tf.TensorSpec`` or a structure of them), those.

    >>> import tapegrad as tf
    >>> tf.map_fn(lambda x: x * x, tf.constant([1.0, 2.0, 3.0])).numpy().tolist()
    [1.0, 4.0, 9.0]
    >>> tf.map_fn(lambda t: t[0] + t[1], (tf.constant([1, 2]), tf.constant([10, 20])),
    ...           fn_output_signature=tf.int32).numpy().tolist()
    [11, 22]
    """
    signature = fn_output_signature if fn_output_signature is not None else dtype
    flat, n = _leaves(elems, "map_fn")
    like = elems if signature is None else signature
    want = [t.dtype for t in flat] if signature is None else _signature_dtypes(signature)
    outs = []
    for x in _slices(elems, flat, n):
        y = fn(x)
        if isinstance(y, list) and isinstance(like, tuple):
            y = tuple(y)
        _check_like(y, like, "map_fn")
        leaves = [convert_to_tensor(v) for v in nest.flatten(y)]
        for v, d in zip(leaves, want):
            if v.dtype != d:
                raise InvalidArgumentError(
                    f"map_fn: fn returned a {v.dtype.name} tensor where "
                    f"{'elems' if signature is None else 'fn_output_signature'} says "
                    f"{d.name} (TensorArray dtype is {d.name} but Op is trying to write dtype "
                    f"{v.dtype.name}).")
        outs.append(leaves)
    if n == 0:
        return _empty(like, signature, flat)
    stacked = [stack([o[k] for o in outs]) for k in range(len(outs[0]))]
    return nest.pack_sequence_as(like, stacked)


def _empty(like, signature, flat):
    """map_fn over zero elements: empty results, their shape known only from a spec."""
    if signature is None:
        return nest.pack_sequence_as(like, [zeros((0,) + tuple(t.shape[1:]), t.dtype)
                                            for t in flat])
    out = []
    for s in nest.flatten(signature):
        shape = getattr(s, "shape", ())
        if shape is None or None in shape:
            raise ValueError("map_fn over zero elements needs fully defined shapes in "
                             "fn_output_signature (tf.TensorSpec).")
        out.append(zeros((0,) + tuple(shape), as_dtype(getattr(s, "dtype", s))))
    return nest.pack_sequence_as(signature, out)


def _fold(fn, elems, initializer, reverse, what):
    flat, n = _leaves(elems, what)
    xs = _slices(elems, flat, n, reverse)
    if initializer is None:
        if n == 0:
            raise OutOfRangeError(f"{what}: elems is empty and there is no initializer "
                                  "(Tried to read from index 0 but array size is: 0).")
        acc, xs = xs[0], xs[1:]
    else:
        acc = nest.map_structure(_as_tensor, initializer)
    return acc, xs


def _as_tensor(v):
    return v if isinstance(v, Tensor) else convert_to_tensor(v)


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """``acc = fn(acc, x)`` for each element ``x`` from first to last; the final ``acc``.
    Without an initializer, the first element starts the fold.

    >>> import tapegrad as tf
    >>> int(tf.foldl(lambda a, x: a * 10 + x, tf.constant([1, 2, 3])))
    123
    """
    acc, xs = _fold(fn, elems, initializer, False, "foldl")
    for x in xs:
        acc = fn(acc, x)
    return acc


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """``foldl`` from the last element to the first.

    >>> import tapegrad as tf
    >>> int(tf.foldr(lambda a, x: a * 10 + x, tf.constant([1, 2, 3])))
    321
    """
    acc, xs = _fold(fn, elems, initializer, True, "foldr")
    for x in xs:
        acc = fn(acc, x)
    return acc


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
         swap_memory=False, infer_shape=True, reverse=False, name=None):
    """Every intermediate ``acc`` of a fold, stacked (row i: after element i). With
    ``reverse`` the fold runs from the end; rows stay in the order of ``elems``.

    >>> import tapegrad as tf
    >>> tf.scan(lambda a, x: a + x, tf.constant([1, 2, 3]), initializer=10).numpy().tolist()
    [11, 13, 16]
    """
    acc, xs = _fold(fn, elems, initializer, reverse, "scan")
    seq = [acc] if initializer is None else []
    for x in xs:
        acc = fn(acc, x)
        if isinstance(acc, list):
            acc = tuple(acc)
        seq.append(acc)
    if not seq:
        return nest.map_structure(lambda t: zeros((0,) + tuple(t.shape), t.dtype), acc)
    if reverse:
        seq = seq[::-1]
    flats = [[_as_tensor(v) for v in nest.flatten(s)] for s in seq]
    stacked = [stack([f[k] for f in flats]) for k in range(len(flats[0]))]
    return nest.pack_sequence_as(seq[0], stacked)
