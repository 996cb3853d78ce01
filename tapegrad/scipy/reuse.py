"""Compiled programs kept between solver calls, reused only when a fresh trace matches exactly.

A solver call traces ``fun`` once (milliseconds); everything else it needs — the derivative
programs, the sparsity pattern, its colouring, the compiled compressed Jacobian — is built
from that one trace (``Compiled.g``), never from ``fun`` again. So two calls whose traces are
the same program compute the same things, and the second can take the first one's
``Compiled`` whole. "The same program" is decided on the trace itself, not on ``fun``: the
fingerprint holds every equation (primitive, params, where each input comes from, the result
types), every constant by dtype, shape and bytes (NaN, -0.0 and integers compare exactly),
and each captured Variable by identity. Whatever ``fun`` read in Python (a closure cell, a
global, a default, an ``args`` value, an array changed in place) is in the trace as a
constant or as its shape of computation, so any change gives a new fingerprint and a
fresh ``Compiled``; a Variable is read at run time, so its new value needs nothing.

Names and source lines of the trace are left out (they do not change what is computed).
The ``stand_ins`` Variables (``solve_ivp``'s ``t``: new for each call) count by position, and
a reused ``Compiled`` brings its own. An entry is taken out while a solve uses it, so two
concurrent solves never share one-point caches or ``t``.

>>> import numpy as np, tapegrad as tf
>>> a = compiled(lambda x: tf.reduce_sum(x ** 2), np.zeros(3))
>>> release(a)
>>> b = compiled(lambda x: tf.reduce_sum(x ** 2), np.zeros(3))   # another lambda, same program
>>> b is a
True
>>> release(b); compiled(lambda x: tf.reduce_sum(x ** 3), np.zeros(3)) is a
False
"""
import threading
from collections import OrderedDict

import numpy as np

from tapegrad.control_flow.primitives import Subprogram
from tapegrad.primitives.gather import Index
from tapegrad.scipy.compiled import Compiled

SIZE = 8  # entries kept (each holds its programs, pattern and the user's function alive)

_lock = threading.Lock()
_entries = OrderedDict()  # fingerprint -> Compiled, least recently released first


def compiled(fun, x0, args=(), trace=True, name="fun", stand_ins=()):
    """A ``Compiled`` for ``fun``: a cached one whose trace equals this call's fresh trace,
    else the new one. Hand it back with ``release`` when the solve is done."""
    c = Compiled(fun, x0, args, trace, name, stand_ins)
    # only where the trace alone decides every derived program (no custom gradient)
    key = c.key = fingerprint(c) if trace and c.base.differentiable else None
    if key is None:
        return c
    with _lock:
        old = _entries.pop(key, None)
    if old is None:
        return c
    old.restart()
    return old


def release(c):
    """Keep ``c`` for the next call with the same trace (the newest ``SIZE`` are kept)."""
    if getattr(c, "key", None) is None:
        return
    with _lock:
        _entries[c.key] = c
        _entries.move_to_end(c.key)
        while len(_entries) > SIZE:
            _entries.popitem(last=False)


class Kept(list):
    """The ``Compiled`` programs of one solve: ``kept(fun, x0, ...)`` is ``compiled``, and
    leaving the ``with`` block releases them all (also when the solve raised).

    >>> import numpy as np, tapegrad as tf
    >>> with Kept() as kept:
    ...     c = kept(lambda x: tf.reduce_sum(x), np.zeros(2))
    >>> compiled(lambda x: tf.reduce_sum(x), np.zeros(2)) is c
    True
    """

    def __call__(self, *args, **kwargs):
        c = compiled(*args, **kwargs)
        self.append(c)
        return c

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for c in self:
            release(c)


def clear():
    """Forget every kept program (they also go when ``SIZE`` newer ones are kept)."""
    with _lock:
        _entries.clear()


def fingerprint(c):
    """A hashable, exact description of what ``c``'s trace computes."""
    base = c.base
    slots = []
    for v in base.variables:
        pos = next((k for k, s in enumerate(c.stand_ins) if s is v), None)
        # a captured Variable by identity: the cached Compiled keeps it alive, so an equal
        # id is the same object
        slots.append(("stand_in", pos) if pos is not None else ("variable", id(v)))
    return (c.name, c.shape, tuple(slots), program_key(base.program))


def program_key(p):
    """The program with its values numbered in order of definition (names dropped)."""
    num = {}

    def define(v):
        num[v.name] = len(num)
        return (tuple(v.shape), np.dtype(v.dtype).str)

    head = (tuple(define(v) for v in p.inputs), tuple(define(v) for v in p.captures),
            tuple(define(c.var) + _array(c.value) for c in p.constants))
    eqs = tuple((e.prim.name, tuple(num[v.name] for v in e.inputs), _param(e.params),
                 tuple(define(v) for v in e.outs)) for e in p.equations)
    return head + (eqs, tuple(num[v.name] for v in p.outputs),
                   tuple((i, num[v.name]) for i, v in p.updates))


def _array(a):
    a = np.asarray(a)
    return (a.dtype.str, a.shape, a.tobytes())


def _param(v):
    """A param's value with its type, compared exactly (``0.0`` is not ``-0.0``, ``True`` is
    not ``1``); an object of another type by identity (the program keeps it alive)."""
    t = type(v)
    if v is None or v is Ellipsis or t in (bool, int, str):
        return (t.__name__, v)
    if t is float:
        return ("float", v.hex())
    if isinstance(v, (np.generic, np.ndarray)):
        return ("array",) + _array(v)
    if isinstance(v, np.dtype):
        return ("dtype", v.str)
    if t in (tuple, list):
        return (t.__name__,) + tuple(_param(x) for x in v)
    if t is slice:
        return ("slice", _param(v.start), _param(v.stop), _param(v.step))
    if t is Index:
        return ("index", _param(v.key))
    if t is Subprogram:
        return ("program", program_key(v.program))
    return ("object", t, id(v))
