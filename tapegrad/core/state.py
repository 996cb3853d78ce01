"""The interpreter stack: per-thread state, and the protocol every interpreter implements.

Tapes, forward accumulators, tracers (``tapegrad.function``) and vmap levels are all
*interpreters*: objects on one stack (``STATE.stack.interpreters``, outermost first), with
the small interface of ``Interpreter``. ``bind`` (core/dispatch.py) asks them what to do
with each operation, and Variables ask them what a read, an assignment or a creation means.
``STATE.stack`` is an immutable ``Stack``: the tuple and its views (``recorders``,
``computers``, ...), computed once when the stack changes, so the dispatcher reads an
attribute instead of filtering the stack for every operation. ``STATE.stack.idle`` is True
when it is empty: ``bind`` then takes its fast path, little more than the NumPy call.

The stack changes in two ways only: ``STATE.push``/``STATE.remove`` (entering and leaving a
``with`` block), and ``interpreters(stack)``, the one context manager that installs a whole
stack and always restores the old one. All of them go through ``switch``, the one place
that sets it (a batching rule's own operations call it directly, twice, see
``batching/interpreter.py``).

>>> STATE.stack.idle, STATE.stack.interpreters
(True, ())
>>> with interpreters((Interpreter(),)):
...     STATE.stack.idle, len(STATE.stack.interpreters)
(False, 1)
>>> STATE.stack.idle
True
"""
import itertools
import threading

# Epochs are unique across threads: a variable's cached snapshot, stamped with the epoch of
# the thread that read it, is never mistaken for a current one by another thread.
_EPOCHS = itertools.count()


class Interpreter:
    """The interpreter protocol; the defaults do nothing (let the operation pass).

    What an interpreter does is said by five flags, which decide the views of the stack it
    appears in (``bind`` never tests what kind of interpreter it has):

    - ``records``: ``record`` sees every finished operation (tapes, forward accumulators);
    - ``computes``: ``process`` computes the operations whose inputs hold its values — the
      levels follow the data: a ``BatchedTensor`` names its vmap level, a symbolic tensor its
      trace (batchers, tracers). Asked from the top of the stack down; the first answer
      that is not None is the output. With none, NumPy computes.

    ``batches``: a vmap level; the batchers, in stack order, are levels 1, 2, ... (the
    ``_level`` a ``BatchedTensor`` carries).
    ``owns_variables``: reads of variables become its values, and assignments and creations
    are its business (tracers: a read is a program input, an assignment a deferred update).
    ``uses_custom_vjp``: a ``custom_gradient`` function's own rule replaces, for this
    interpreter, the operations inside the function (tapes; an accumulator follows them).
    """

    __slots__ = ()
    records = False
    computes = False
    batches = False
    owns_variables = False
    uses_custom_vjp = False

    def process(self, prim, args, params):
        """The output of ``prim(*args, **params)`` if ``args`` hold this interpreter's
        values (or ``prim`` is stateful and this is a trace), else None."""
        return None

    def record(self, prim, args, params, out, recorders, index):
        """See a finished operation; ``recorders[index]`` is this one (the ones before it
        are outer: they see what this one computes about the operation)."""

    def record_custom(self, op, inputs, out, recorders, index):
        """See a ``custom_gradient`` operation from ``inputs`` to ``out``, whose rules are
        the user's (``tape/custom_gradient.py``)."""

    def sees(self, tensor):
        """Whether this recorder records operations on ``tensor`` now (it watches it, or
        recorded the operation that made it, and is not paused): True, False, or None where
        it cannot tell. ``primitives/memo.py`` reuses a rule's tensor only where every
        recorder answers."""
        return None

    def derivative_mark(self):
        """Derivative code (a reverse pass, a tangent) is about to be recorded by this
        recorder: what ``derivative_done`` needs to note which entries it was, or None."""
        return None

    def derivative_done(self, mark):
        """The derivative code begun at ``mark`` (``derivative_mark``) is recorded."""

    def read_variable(self, var, val):
        """A read of variable ``var`` whose value so far is tensor ``val``: returns the
        value the read gives (the same tensor, unless this interpreter owns variables)."""
        return val

    def assign_variable(self, var, value, op):
        """``var.<op>(value)`` (op: assign, assign_add, assign_sub), asked of the innermost
        interpreter that owns variables; returns None when the assignment is deferred."""
        raise NotImplementedError

    def create_variable(self, initial):
        """A ``tf.Variable`` is created with tensor ``initial``; returns its concrete value
        (asked of the innermost interpreter that owns variables)."""
        return initial


class Stack:
    """An interpreter stack (immutable), with the views the dispatcher reads.

    ``interpreters``: the tuple, outermost first. The views are computed once, when the
    stack is made: ``recorders`` (outermost first), ``computers`` (innermost first),
    ``tracers`` (those owning variables, innermost last), ``variable_owner`` (the innermost
    of them, or None), ``batchers`` (the vmap levels 1, 2, ...), ``batch_level`` (their
    number), ``readers`` (who sees a variable read: its owner first, then the recorders),
    ``idle`` (no interpreter at all) and ``recording_only`` (recorders, but nothing that
    computes: the common busy case, tapes or accumulators on concrete values).
    """

    __slots__ = ("interpreters", "recorders", "computers", "tracers", "variable_owner",
                 "batchers", "batch_level", "readers", "idle", "recording_only", "below")

    def __init__(self, interpreters=(), below=None):
        self.interpreters = interpreters = tuple(interpreters)
        self.below = below  # the stack without the top one, when made by ``pushed``
        recorders, computers, owners, batchers = [], [], [], []
        for i in interpreters:  # one pass: this runs at every tape's enter and exit
            if i.records:
                recorders.append(i)
            if i.computes:
                computers.append(i)
            if i.owns_variables:
                owners.append(i)
            if i.batches:
                batchers.append(i)
        computers.reverse()
        self.recorders, self.computers = recorders, tuple(computers)
        self.tracers, self.batchers, self.batch_level = owners, batchers, len(batchers)
        self.variable_owner = owners[-1] if owners else None
        self.readers = owners[-1:] + recorders
        self.idle = not interpreters
        self.recording_only = bool(recorders) and not computers

    def pushed(self, interpreter):
        """This stack with ``interpreter`` on top (it remembers this one as ``below``)."""
        i = interpreter
        if not i.records or i.computes or i.owns_variables or i.batches:
            return Stack(self.interpreters + (i,), self)
        # a tape or an accumulator (the common push): the views of this one, plus a recorder
        s = _new(Stack)
        s.interpreters, s.below = self.interpreters + (i,), self
        s.recorders, s.readers = self.recorders + [i], self.readers + [i]
        s.computers, s.tracers, s.batchers = self.computers, self.tracers, self.batchers
        s.batch_level, s.variable_owner = self.batch_level, self.variable_owner
        s.idle, s.recording_only = False, not s.computers
        return s

    def popped(self, interpreter):
        """This stack without ``interpreter``, wherever it is."""
        s = self.interpreters
        if s and s[-1] is interpreter:
            if self.below is not None:
                return self.below
            s = s[:-1]
        else:
            s = tuple(i for i in s if i is not interpreter)
        return Stack(s) if s else IDLE

    def __repr__(self):
        return f"Stack({list(self.interpreters)})"


_new = object.__new__
IDLE = Stack()  # its lists are never changed in place (no view is)


class _State(threading.local):
    def __init__(self):
        self.stack = IDLE
        self.epoch = next(_EPOCHS)  # renewed whenever what records changes (Variable reads)

    def install(self, stack):
        """Make ``stack`` (a ``Stack``) current and return the one it replaces (``switch``)."""
        return switch(self.stack, stack)

    def push(self, interpreter):
        """Put ``interpreter`` on top of the stack (entering its ``with`` block)."""
        old = self.stack  # one thread-local read: every tape's enter runs this
        switch(old, old.pushed(interpreter))

    def remove(self, interpreter):
        """Take ``interpreter`` off the stack, wherever it is (leaving its ``with`` block)."""
        old = self.stack
        switch(old, old.popped(interpreter))

    def bump(self):
        """A new epoch: variable snapshots cached before now are read afresh (a tape began
        watching, paused, resumed or was reset: what it records changed)."""
        self.epoch = next(_EPOCHS)

    def clear(self):
        """Empty the stack (a test's clean-up after an interpreter leaked)."""
        self.install(IDLE)

    def with_recorders(self, recorders):
        """The interpreters with the recorders replaced by ``recorders`` (outermost first)."""
        return tuple(i for i in self.stack.interpreters if not i.records) + tuple(recorders)


STATE = _State()


def switch(old, new):
    """Replace the current stack ``old`` by ``new`` (both ``Stack``s) and return ``old``: the
    one place that sets ``STATE.stack``. ``STATE.install``, ``push``, ``remove`` and
    ``interpreters`` come here; so does a batching rule, directly (``old`` is the stack it
    has read already: one thread-local read fewer, and no ``with``, which would cost about
    1 µs per operation there). A new epoch (see ``bump``) unless neither stack has an
    interpreter that sees variable reads (then no snapshot goes stale: a vmap level
    entering, a batching rule's own operations)."""
    st = STATE
    if new.readers or old.readers:
        st.epoch = next(_EPOCHS)
    st.stack = new
    return old


class interpreters:
    """Install the interpreter stack ``stack`` (a tuple of interpreters, outermost first, or
    a ``Stack``); always restore the old one.

    The one way code switches interpreter state: hiding every interpreter
    (``interpreters(())``: a computation that nothing records, traces or batches), hiding
    some (``interpreters(STATE.with_recorders(outer))``: only the outer tapes see a forward
    accumulator's tangent computation), or adding one for a while.
    """

    __slots__ = ("new", "old")

    def __init__(self, stack):
        self.new = stack if type(stack) is Stack else tuple(stack)  # a Stack, or a tuple

    def __enter__(self):
        st = STATE
        old, new = st.stack, self.new
        if type(new) is not Stack:
            new = old if new == old.interpreters else Stack(new) if new else IDLE
        self.old = None if new is old else st.install(new)  # None: nothing to switch back
        return self

    def __exit__(self, *exc):
        if self.old is not None:
            STATE.install(self.old)
        return False


def recording(recorders):
    """``interpreters`` with the recorders replaced by ``recorders`` (the rest unchanged)."""
    return interpreters(STATE.with_recorders(recorders))
