"""Values that a primitive's derivative rules compute from its output, made once per output.

Nested tapes differentiate the same operation several times: in a physics-informed step
(u_x and u_xx by nested tapes, then the weight gradient) the rule of every ``tanh`` runs
in each pass and computes ``1 - y*y`` of the same output ``y`` each time, and the outer
tapes record each copy and differentiate through each copy again. ``derived(ans, key, make)``
gives the rules one tensor per output instead: made by ``make(ans)`` the first time, and
handed out again while it is what the plain rule would give the recorders now. The value
is the same (the same operations on the same array); what changes is that the outer tapes
see one recorded tensor used twice instead of two copies, so their reverse pass sums its
cotangents first and runs ``1 - y*y``'s rule once: other bits than with copies. Eager
execution, a trace (``tf.function``) and vmap therefore all share it alike, or a compiled
step would differ from the eager one in the last bits (W9P did). The rules of tanh (``1 - y*y``), tan (``1 + y*y``)
and sigmoid (``y (1 - y)``) take their derivative from it.

A remembered tensor is handed out again only where that is exact for every recorder on the
stack: each either does not record operations on ``ans`` now (it never watched it, it was
reset, it is paused), or it recorded the remembered tensor itself (so its derivative
reaches ``ans`` through the recorded operations, as a fresh copy's would). Recorders say
so through ``Interpreter.sees``; one that cannot tell (None) makes a fresh copy. Symbolic
and batched tensors are remembered as concrete ones are (the tapes inside a trace or a vmap
answer ``sees`` for them the same way). Nothing is remembered where nothing records (a
fresh copy then changes no derivative), nor for NumPy arrays (a first-order pass that
nothing records: its operations are plain NumPy, and it is usually compiled). The one
exception is ``given``: the derivative cache traces a tape's pass with the tape's own
derived tensors standing in (``compile/derivative_cache.py``, which checks them per tape).
The remembered tensor lives as long as ``ans`` does (a weak reference drops it then); only
outputs that a recorder holds anyway are remembered.

>>> import numpy as np
>>> import tapegrad as tf
>>> x = tf.constant([0.5, -1.0])
>>> with tf.GradientTape() as t2:
...     t2.watch(x)
...     with tf.GradientTape() as t1:
...         t1.watch(x)
...         y = tf.tanh(x)
...     dy = t1.gradient(y, x)    # makes 1 - y*y, which t2 records
>>> d2 = t2.gradient(dy, x)       # tanh's rule in this pass gets that tensor again
>>> t = np.tanh(x.numpy())
>>> bool(np.allclose(d2.numpy(), -2 * t * (1 - t * t)))
True
"""
import threading
import weakref

from tapegrad.core.state import STATE
from tapegrad.core.tensor import Tensor

_lock = threading.Lock()
_memo = {}  # id(ans) -> (weak reference to ans, {key: derived tensor})
_given = threading.local()  # .table: {id(ans): (ans, {key: d})} while a pass is traced


def derived(ans, key, make):
    """``make(ans)``, or the tensor it gave before for this ``ans`` where that is exact (see
    the module doc). ``key`` names the derived value among those of one output."""
    table = getattr(_given, "table", None)
    if table is not None:
        entry = table.get(id(ans))
        if entry is not None and entry[0] is ans and key in entry[1]:
            return entry[1][key]
        log = _given.log
        if log is not None:  # a traced pass that notes what the real one would remember
            d = make(ans)
            log.append((ans, key, d))
            return d
    if not isinstance(ans, Tensor):  # NumPy: a first-order pass that nothing records
        return make(ans)
    recorders = STATE.stack.recorders
    if not recorders:  # nothing records the copy: sharing it changes no derivative
        return make(ans)
    entry = _memo.get(id(ans))
    if entry is not None and entry[0]() is ans:
        d = entry[1].get(key)
        if d is not None and _still_exact(recorders, ans, d):
            return d
    d = make(ans)
    if isinstance(d, Tensor):
        _remember(ans, key, d)
    return d


def reusable(recorders, ans, d):
    """Whether ``derived`` would hand out ``d``, remembered for ``ans``, to a rule run under
    ``recorders`` now (the module doc's rule)."""
    return _still_exact(recorders, ans, d)


def remember(ans, key, d):
    """Note ``d`` as ``ans``'s derived value ``key``, as ``derived`` does when it makes one
    under recorders (``compile/recorded_pass.py``: a pass whose rules did not run)."""
    _remember(ans, key, d)


def _still_exact(recorders, ans, d):
    for r in recorders:
        if r.sees(ans) is not False and r.sees(d) is not True:
            return False
    return True


def _remember(ans, key, d):
    k = id(ans)
    with _lock:
        entry = _memo.get(k)
        if entry is None or entry[0]() is not ans:
            def forget(ref, k=k):
                with _lock:
                    e = _memo.get(k)
                    if e is not None and e[0] is ref:
                        del _memo[k]
            entry = _memo[k] = (weakref.ref(ans, forget), {})
        entry[1][key] = d


def derived_values(ans):
    """``{key: tensor}`` remembered for ``ans`` now (empty if none): each is what
    ``make(ans)`` gave, so a pass may read it instead of recomputing it."""
    entry = _memo.get(id(ans))
    if entry is None or entry[0]() is not ans:
        return {}
    return dict(entry[1])


def derived_on(outs):
    """``[(k, {key: tensor})]`` for the tensors ``outs[k]`` that have derived values now, in
    order: ``derived_values`` of each, in one call (a compiled pass checks every output of
    its tape at every call, ``compile/recorded_pass.py``).

    >>> derived_on([object()])
    []
    """
    got = []
    get = _memo.get
    for k, ans in enumerate(outs):
        entry = get(id(ans))
        if entry is not None and entry[0]() is ans and entry[1]:
            got.append((k, dict(entry[1])))
    return got


class given:
    """``with given({id(ans): (ans, {key: d})}):`` ``derived`` answers ``d`` for these
    ``ans`` (stand-ins of a traced pass: ``compile/derivative_cache.py`` hands the symbolic
    pass the tape's own derived tensors, which ``derived_values`` vouches for).

    ``log``: a list; every other ``derived`` call then makes its value and appends
    ``(ans, key, value)`` (what a recorded pass would remember: ``compile/recorded_pass.py``).
    """

    __slots__ = ("table", "log", "old")

    def __init__(self, table, log=None):
        self.table, self.log = table, log

    def __enter__(self):
        self.old = (getattr(_given, "table", None), getattr(_given, "log", None))
        _given.table, _given.log = self.table, self.log

    def __exit__(self, *exc):
        _given.table, _given.log = self.old
        return False


def remembered():
    """How many outputs have derived values remembered now (for tests)."""
    return sum(1 for ref, _ in list(_memo.values()) if ref() is not None)
