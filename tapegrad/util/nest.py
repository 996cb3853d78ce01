"""Nested structures (lists, tuples, namedtuples, dicts) as in ``tf.nest``.

Dicts are flattened in sorted key order, as TensorFlow does.
"""


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def is_nested(x):
    return isinstance(x, (list, tuple, dict))


def flatten(structure):
    """The leaves of ``structure``, depth first.

    >>> flatten({'b': 1, 'a': [2, 3]})
    [2, 3, 1]
    """
    out = []
    _flatten(structure, out)
    return out


def _flatten(x, out):
    if isinstance(x, dict):
        for k in sorted(x):
            _flatten(x[k], out)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _flatten(v, out)
    else:
        out.append(x)


def pack_sequence_as(structure, flat):
    """Rebuild ``structure`` with the leaves taken from ``flat`` in order.

    >>> pack_sequence_as({'b': 0, 'a': [0, 0]}, [2, 3, 1])
    {'b': 1, 'a': [2, 3]}
    """
    it = iter(flat)
    return _pack(structure, it)


def _pack(x, it):
    if isinstance(x, dict):
        vals = {k: _pack(x[k], it) for k in sorted(x)}
        return type(x)((k, vals[k]) for k in x) if type(x) is not dict else {k: vals[k] for k in x}
    if _is_namedtuple(x):
        return type(x)(*[_pack(v, it) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(_pack(v, it) for v in x)
    return next(it)


def map_structure(fn, structure):
    return pack_sequence_as(structure, [fn(v) for v in flatten(structure)])
