"""``vmap`` (JAX's name) and ``vectorized_map`` (TensorFlow's): one call on a whole batch.

The mapped function runs once. Its inputs are ``BatchedTensor`` s, so each operation inside
runs its primitive's batching rule on the stacked values: NumPy on the whole batch, not a
Python loop (see ``batching.py``).
"""
import functools

from tapegrad.core.tensor import Tensor, convert_to_tensor
from tapegrad.batching.interpreter import (
    BatchedTensor, batch_level, move_from_front, move_to_front, unbatch, _batched)
from tapegrad.util import nest


def vmap(fn, in_axes=0, out_axes=0, axis_size=None):
    """Vectorize ``fn`` over an axis of its arguments, as ``jax.vmap``.

    ``in_axes`` is an int, None, or a tuple with one entry per positional argument; an entry
    may be a nested structure matching its argument (a tree prefix). None means "not mapped".
    Keyword arguments are mapped over axis 0. ``out_axes`` says where the batch axis goes in
    each output (same prefix rules). ``axis_size`` is needed only when nothing is mapped.

    >>> import tapegrad as tf
    >>> xs = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    >>> w = tf.constant([10.0, 1.0])
    >>> tf.vmap(lambda x, w: tf.reduce_sum(x * w), in_axes=(0, None))(xs, w)
    tapegrad.Tensor([12. 34.], shape=(2,), dtype=float32)
    """
    if isinstance(in_axes, dict):
        raise TypeError("vmap in_axes must be an int, None, or a tuple of entries corresponding "
                        "to the positional arguments passed to the function, got a dict.")
    _check_axes_spec(in_axes, "in_axes")
    _check_axes_spec(out_axes, "out_axes")
    if axis_size is not None and (not isinstance(axis_size, int) or axis_size < 0):
        raise ValueError(f"vmap: axis_size must be a non-negative int, got {axis_size!r}.")

    @functools.wraps(fn)
    def vmapped(*args, **kwargs):
        return _vmap_call(fn, args, kwargs, in_axes, out_axes, axis_size, True, True)

    return vmapped


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """Apply ``fn`` to each element of ``elems`` (split along axis 0), as ``tf.vectorized_map``.

    ``fn`` is called once, on the whole batch, through the batching rules. ``elems`` may be a
    nested structure; ``fn`` gets one element of the same structure. A primitive without a
    batching rule runs in a Python loop (with a warning), or raises ValueError when
    ``fallback_to_while_loop`` is False.

    >>> import tapegrad as tf
    >>> tf.vectorized_map(lambda x: tf.reduce_sum(x * x), tf.constant([[1.0, 2.0], [3.0, 4.0]]))
    tapegrad.Tensor([ 5. 25.], shape=(2,), dtype=float32)
    """
    return _vmap_call(lambda e: fn(e), (elems,), {}, 0, 0, None, fallback_to_while_loop,
                      warn, what="vectorized_map")


# -- implementation ---------------------------------------------------------------------------
def _check_axes_spec(spec, name):
    for leaf in nest.flatten(spec):
        if leaf is not None and (isinstance(leaf, bool) or not isinstance(leaf, int)):
            raise TypeError(f"vmap {name} must be an int, None, or a (nested) tuple of them, "
                            f"got {spec!r}.")


def _prefix_leaves(spec, tree, what):
    """One axis per leaf of ``tree``: ``spec`` is a tree prefix of ``tree``."""
    if spec is None or isinstance(spec, int):
        return [spec] * len(nest.flatten(tree))
    if isinstance(spec, dict):
        if not isinstance(tree, dict) or set(spec) != set(tree):
            raise ValueError(f"vmap {what} specification must be a tree prefix of the "
                             f"corresponding value, got specification {spec!r} for value tree "
                             f"{_describe(tree)}.")
        return [a for k in sorted(tree) for a in _prefix_leaves(spec[k], tree[k], what)]
    if isinstance(spec, (list, tuple)):
        if not isinstance(tree, (list, tuple)) or len(spec) != len(tree):
            raise ValueError(f"vmap {what} specification must be a tree prefix of the "
                             f"corresponding value, got specification {spec!r} for value tree "
                             f"{_describe(tree)}.")
        return [a for s, t in zip(spec, tree) for a in _prefix_leaves(s, t, what)]
    raise TypeError(f"vmap {what}: unexpected specification {spec!r}.")


def _describe(tree):
    return repr(nest.map_structure(lambda x: getattr(x, "shape", type(x).__name__), tree))


def _vmap_call(fn, args, kwargs, in_axes, out_axes, axis_size, fallback, warn,
               what="vmap"):
    if isinstance(in_axes, (list, tuple)):
        if len(in_axes) != len(args):
            raise ValueError(f"vmap in_axes must be an int, None, or a tuple of entries "
                             f"corresponding to the positional arguments passed to the "
                             f"function, but got len(in_axes)={len(in_axes)}, "
                             f"len(args)={len(args)}")
        axes = [a for s, x in zip(in_axes, args) for a in _prefix_leaves(s, x, "in_axes")]
    else:
        axes = [in_axes] * len(nest.flatten(args))
    axes += [0] * len(nest.flatten(kwargs))
    leaves = nest.flatten(args) + nest.flatten(kwargs)
    size, where = None, None
    mapped = []
    for i, (x, ax) in enumerate(zip(leaves, axes)):
        if ax is None or x is None:
            mapped.append(None)
            continue
        if not isinstance(x, Tensor):
            x = convert_to_tensor(x)
        nd = x.ndim
        if not -nd <= ax < nd:
            raise ValueError(f"{what} was requested to map its argument along axis {ax}, "
                             f"which implies that its rank should be at least "
                             f"{ax + 1 if ax >= 0 else -ax}, but is only {nd} (its shape is "
                             f"{tuple(x.shape)})")
        ax %= nd
        n = x.shape[ax]
        if size is None:
            size, where = n, (i, ax)
        elif n != size:
            raise ValueError(f"{what} got inconsistent sizes for array axes to be mapped: "
                             f"argument {where[0]} has size {size} along axis {where[1]}, "
                             f"argument {i} has size {n} along axis {ax}.")
        mapped.append((x, ax))
    if size is None:
        if axis_size is None:
            raise ValueError(f"{what} must have at least one non-None value in in_axes "
                             "(or be given axis_size).")
        size = axis_size
    elif axis_size is not None and axis_size != size:
        raise ValueError(f"{what} got axis_size={axis_size} but the mapped arguments have "
                         f"size {size}.")

    with batch_level(fallback, warn) as lvl:
        new = [x if m is None else _batched(move_to_front(*m), lvl)
               for x, m in zip(leaves, mapped)]
        n_args = len(nest.flatten(args))
        a = nest.pack_sequence_as(args, new[:n_args])
        k = nest.pack_sequence_as(kwargs, new[n_args:])
        out = fn(*a, **k)
    return _unbatch_outputs(out, out_axes, lvl, size, what)


def _unbatch_outputs(out, out_axes, lvl, size, what):
    flat = nest.flatten(out)
    if isinstance(out_axes, (list, tuple, dict)):
        axes = _prefix_leaves(out_axes, out, "out_axes")
    else:
        axes = [out_axes] * len(flat)
    res = []
    for y, ax in zip(flat, axes):
        if y is None:
            res.append(None)
            continue
        if not isinstance(y, Tensor):
            y = convert_to_tensor(y)
        batched = type(y) is BatchedTensor and y._level == lvl
        if type(y) is BatchedTensor and y._level > lvl:
            raise ValueError(f"{what}: the function returned a value from an inner vmap that "
                             "has already ended.")
        if ax is None:
            if batched:
                raise ValueError(f"{what} has mapped output but out_axes is None")
            res.append(y)
            continue
        v = unbatch(y, lvl, size)
        nd = v.ndim
        if not -nd <= ax < nd:
            raise ValueError(f"{what}: out_axes {ax} is out of range for an output of rank "
                             f"{nd - 1}.")
        res.append(move_from_front(v, ax))
    return nest.pack_sequence_as(out, res)
