"""TensorFlow's ``tf.IndexedSlices`` gradients: a source read only through row gathers.

TensorFlow gives the gradient of a tensor or variable that reaches the target only through
``tf.gather`` on its first axis (an embedding lookup) as ``tf.IndexedSlices``: the
cotangent of each gathered row, unsummed, with its row index, in the order of the gathers.
A source that reaches the target by any other operation too gets the dense sum. Keras's
optimizers step such a gradient per slice (``keras/optimizers``), so the form is part of
what a training step computes, not only of what it returns.

The reverse pass is the same; it is also asked for the cotangents of the gathers' outputs
(``plan``), which become the slices' values (``rows``). The slices are made by
``ops/indexed_slices.py`` through the hook ``hooks.indexed_slices``.

>>> import tapegrad as tf
>>> v = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
>>> with tf.GradientTape() as tape:
...     y = tf.reduce_sum(tf.gather(v, [2, 0, 2]) * 2.0)
>>> g = tape.gradient(y, v)
>>> type(g).__name__, g.indices.numpy().tolist(), g.values.numpy().tolist()
('IndexedSlices', [2, 0, 2], [[2.0, 2.0], [2.0, 2.0], [2.0, 2.0]])
"""
import weakref

from tapegrad.core import hooks
from tapegrad.primitives.gather import take_p
from tapegrad.primitives.variables import read_variable_p


# id -> weak reference of the outputs of tf.gather as programs call it (``mark``); by
# identity (a WeakSet would compare tensors with ==), each dropped when its tensor dies
_GATHERS = {}


def mark(t):
    """``t``, the output of a program's ``tf.gather`` (``ops/indexing_ops.row_gather``): a
    tape reading its source through it may give IndexedSlices. tapegrad's own ops gather
    unmarked, so their gradients stay dense where TensorFlow's kernels give dense ones."""
    k = id(t)
    try:
        _GATHERS[k] = weakref.ref(t, lambda _, k=k: _GATHERS.pop(k, None))
    except TypeError:  # not weakly referable: not a tensor, nothing to mark
        pass
    return t


def any_marked():
    """Whether a program's gather output is alive (else no gradient can be IndexedSlices:
    a tape that recorded only tapegrad's own gathers skips ``plan``)."""
    return bool(_GATHERS)


def _marked(t):
    r = _GATHERS.get(id(t))
    return r is not None and r() is t


def plan(entries, n, source_ids, target_cts):
    """``({source id: (take entries, other consumers' outputs)}, extra ids)`` for the
    sources that some program's row gather (``take`` on axis 0, ``mark``ed) reads, directly or through a variable's
    read; ``extra``: the consumers' output ids, whose cotangents decide (see ``rows``)."""
    alias = {}
    for k in range(n):
        prim, args, _, out = entries[k]
        if prim is read_variable_p and id(args[0]) in source_ids:
            alias[id(out)] = id(args[0])
    takes, others = {}, {}
    for k in range(n):
        e = entries[k]
        prim, args = e[0], e[1]
        if prim is read_variable_p:
            continue
        for pos, a in enumerate(args):
            s = alias.get(id(a), id(a) if id(a) in source_ids else None)
            if s is None:
                continue
            if prim is take_p and pos == 0 and e[2]["axis"] == 0 and _marked(e[3]):
                takes.setdefault(s, []).append(e)
            else:
                others.setdefault(s, []).append(e[3])
    found = {s: (t, others.get(s, ())) for s, t in takes.items() if s not in target_cts}
    extra = set()
    for t, o in found.values():
        extra.update(id(e[3]) for e in t)
        extra.update(map(id, o))
    return found, extra


def rows(cts, found, source_ids):
    """``cts`` with each planned source's cotangent as ``tf.IndexedSlices`` where only row
    gathers carry its cotangent (the others' outputs got none), and without the extra ids."""
    make = hooks.indexed_slices
    for s, (takes, others) in found.items():
        if s not in cts or make is None or any(id(o) in cts for o in others):
            continue
        parts = [(cts[id(out)], i) for _, (_, i), _, out in takes if id(out) in cts]
        if parts:
            cts[s] = make(parts, tuple(takes[0][1][0].shape))
    for k in [k for k in cts if k not in source_ids]:
        del cts[k]
    return cts
