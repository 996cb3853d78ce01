"""Per-thread interpreter state.

Everything the dispatcher needs to decide what to do with an operation lives here.
``plain`` is a single flag that is True when no tape, accumulator, tracer or batcher is
active: then ``bind`` takes its fast path, little more than the NumPy call.
"""
import itertools
import threading

# Epochs are unique across threads: a variable's cached snapshot, stamped with the epoch of
# the thread that read it, is never mistaken for a current one by another thread.
_EPOCHS = itertools.count()


class _State(threading.local):
    def __init__(self):
        self.recorders = []      # active tapes and forward accumulators, outermost first
        self.tracers = []        # active graph builders (tapegrad.function), innermost last
        self.batch_level = 0     # depth of nested vmap transforms
        self.plain = True
        self.recording_only = False
        self.epoch = next(_EPOCHS)  # renewed whenever what records changes (Variable reads)

    def refresh(self):
        other = self.tracers or self.batch_level
        recs = bool(self.recorders)
        self.plain = not (recs or other)
        # the common non-plain case: tapes or accumulators only, on concrete values
        self.recording_only = recs and not other
        self.epoch = next(_EPOCHS)

    def bump(self):
        """A new epoch: variable snapshots cached before now are read afresh."""
        self.epoch = next(_EPOCHS)


STATE = _State()


class swap_recorders:
    """Context manager that installs a recorder list and always restores the old one."""

    __slots__ = ("new", "old", "same")

    def __init__(self, new):
        self.new = new

    def __enter__(self):
        self.old = STATE.recorders
        self.same = self.new == self.old  # the same recorders: nothing to switch
        if not self.same:
            STATE.recorders = self.new
            STATE.refresh()

    def __exit__(self, *exc):
        if not self.same:
            STATE.recorders = self.old
            STATE.refresh()
        return False
