"""Nested structures (lists, tuples, namedtuples, dicts) as in ``tf.nest``.

Dicts are flattened in sorted key order, as TensorFlow does. With ``expand_composites``,
composite tensors (``tf.SparseTensor``, ``tf.IndexedSlices``: classes with ``_tf_composite``)
are flattened into their component tensors and rebuilt from them, as TensorFlow does.
"""


def _composite(x, expand):
    return expand and getattr(type(x), "_tf_composite", False)


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def is_nested(x):
    return isinstance(x, (list, tuple, dict))


def flatten(structure, expand_composites=False):
    """The leaves of ``structure``, depth first.

    >>> flatten({'b': 1, 'a': [2, 3]})
    [2, 3, 1]
    """
    out = []
    _flatten(structure, out, expand_composites)
    return out


def _flatten(x, out, expand=False):
    if isinstance(x, dict):
        for k in sorted(x):
            _flatten(x[k], out, expand)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _flatten(v, out, expand)
    elif _composite(x, expand):
        out.extend(x._tf_components())
    else:
        out.append(x)


def pack_sequence_as(structure, flat_sequence, expand_composites=False):
    """Rebuild ``structure`` with the leaves taken from ``flat_sequence`` in order.

    >>> pack_sequence_as({'b': 0, 'a': [0, 0]}, [2, 3, 1])
    {'b': 1, 'a': [2, 3]}
    """
    flat = list(flat_sequence)
    n = len(flatten(structure, expand_composites))
    if len(flat) != n:
        raise ValueError(f"Could not pack sequence. Structure had {n} atoms, but "
                         f"flat_sequence had {len(flat)} items.")
    return _pack(structure, iter(flat), expand_composites)


def _pack(x, it, expand=False):
    if isinstance(x, dict):
        vals = {k: _pack(x[k], it, expand) for k in sorted(x)}
        return type(x)((k, vals[k]) for k in x) if type(x) is not dict else {k: vals[k] for k in x}
    if _is_namedtuple(x):
        return type(x)(*[_pack(v, it, expand) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(_pack(v, it, expand) for v in x)
    if _composite(x, expand):
        return x._tf_from_components([next(it) for _ in x._tf_components()])
    return next(it)


def map_structure(func, *structure, check_types=True, expand_composites=False):
    """``func`` applied to the leaves of one or more structures of the same shape, packed
    as the first one.

    >>> map_structure(lambda a, b: a + b, [1, (2, 3)], [10, (20, 30)])
    [11, (22, 33)]
    """
    if not structure:
        raise ValueError("Must provide at least one structure")
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=check_types)
    leaves = [flatten(s, expand_composites) for s in structure]
    return pack_sequence_as(structure[0], [func(*xs) for xs in zip(*leaves)],
                            expand_composites)


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False):
    """Raise ``ValueError`` unless both have the same nesting and number of leaves (and,
    with ``check_types``, ``TypeError`` where their sequence types differ), as tf.nest."""
    _same(nest1, nest2, check_types, nest1, nest2)


def _same(a, b, check_types, top1, top2):
    def fail(error):
        raise error("The two structures don't have the same nested structure.\n\n"
                    f"First structure: type={type(top1).__name__} str={top1!r}\n\n"
                    f"Second structure: type={type(top2).__name__} str={top2!r}")
    if is_nested(a) != is_nested(b) or (is_nested(a) and len(a) != len(b)):
        fail(ValueError)
    if not is_nested(a):
        return
    if check_types and type(a) is not type(b) and not (
            isinstance(a, dict) and isinstance(b, dict)):
        fail(TypeError)
    if isinstance(a, dict):
        if sorted(a) != sorted(b):
            fail(ValueError)
        for k in sorted(a):
            _same(a[k], b[k], check_types, top1, top2)
    else:
        for x, y in zip(a, b):
            _same(x, y, check_types, top1, top2)
