"""The structure of a tape: everything a pass over it sees besides the array values.

Two tapes of one structure run every rule alike, so a result that depends only on the
structure can be reused: the compiled derivative passes (``compile/derivative_cache.py``) and
the sparsity patterns (``sparsity/detect.py``) are both keyed by it.

>>> import tapegrad as tf
>>> x = tf.constant([1.0, 2.0])
>>> with tf.GradientTape() as g:
...     g.watch(x)
...     y = tf.sin(x) * x
>>> parts, leaves, where = structure(g._entries, 2)
>>> [(prim.name, refs) for prim, refs, *_ in parts]
[('sin', (-1,)), ('mul', (0, -1))]
>>> leaves == [x], where[id(y)]
(True, 1)
"""
from tapegrad.core.tensor import Tensor
from tapegrad.util.keys import FLOAT_TYPES, exact


def structure(entries, n, accept=None):
    """``(parts, leaves, where)`` for the tape ``entries[:n]``, or None.

    ``parts``: per entry ``(prim, refs)`` or ``(prim, refs, params items)``, where ``refs``
    says where each argument comes from: ``k >= 0`` the output of entry ``k`` (``(k, j)``:
    output ``j`` of an entry with several), or ``-1 - i`` leaf ``i``, a tensor no earlier
    entry made, numbered by first use. Output shapes are not in it: a primitive's shape
    rule takes its input shapes and params only, so the leaves' shapes (the caller adds
    what it needs of the leaves) fix them. ``leaves``: those tensors, in that order;
    ``where``: ``id(tensor) -> ref`` for every leaf and output.

    ``accept``: a mapping ``prim -> bool``; with it, a tape holding a refused primitive, or
    an output that is not one concrete ``Tensor``, gives None.
    """
    where = {}
    get = where.get
    leaves = []
    parts = []
    append = parts.append
    check = accept is not None
    for k in range(n):
        prim, args, params, out = entries[k]
        if check and not accept[prim]:
            return None
        refs = []
        for a in args:
            r = get(id(a))
            if r is None:  # a leaf: numbered by first use
                r = where[id(a)] = -1 - len(leaves)
                leaves.append(a)
            refs.append(r)
        if params:
            items = tuple(params.items())
            if not FLOAT_TYPES.isdisjoint(map(type, params.values())):  # 0.0 vs -0.0
                items = tuple((k, exact(v)) for k, v in items)
            append((prim, tuple(refs), items))
        else:
            append((prim, tuple(refs)))
        if type(out) is Tensor:
            where[id(out)] = k
        elif check:
            return None
        elif type(out) in (tuple, list):
            for j, o in enumerate(out):
                where[id(o)] = (k, j)
        else:
            where[id(out)] = k
    return parts, leaves, where
