"""``GradientTape``: records operations on watched tensors and differentiates them.

The tape is a list of entries ``(primitive, inputs, params, output)`` in execution order, so
walking it backwards is a reverse topological order. Tensors are identified by ``id``; the
tape keeps every tensor it names alive, so an id cannot be reused while the tape exists.

Higher orders need no special machinery: derivative rules are ordinary operations, so an
outer tape records them. A persistent tape also records its own gradient computations, even
after its ``with`` block has ended: that is why the lesson's ``tape.gradient(dy_dx, x)`` gives
12 where TensorFlow returns None.
"""
import contextlib
import operator
import warnings
import weakref

from tapegrad.primitives.api import convert_to_tensor, is_unit
from tapegrad.primitives.variables import read_variable_p
from tapegrad.core.state import STATE, Interpreter
from tapegrad.core import dtypes as _dt
from tapegrad.core.tensor import Tensor, Variable
from tapegrad.tape.backward import backward
from tapegrad.tape import sparse_rows
from tapegrad.primitives.gather import take_p
from tapegrad.tape.tape_jacobian import JacobianMethods
from tapegrad.tape.tape_support import (  # noqa: F401  (UnconnectedGradients: public here)
    UnconnectedGradients, _WeakDict, _concrete_floats, _float_tensors, _is_float,
    _ones_like, _own, _recording_derivatives, _unconnected, _zeros_for)
from tapegrad.util import nest

_OUT = operator.itemgetter(3)  # an operation's output


class GradientTape(JacobianMethods, Interpreter):
    """Record operations for automatic differentiation.

    >>> import tapegrad as tf
    >>> x = tf.Variable(2.0)
    >>> with tf.GradientTape() as tape:
    ...     y = x ** 3
    >>> float(tape.gradient(y, x))
    12.0
    """

    # an interpreter (core/state.py) that sees every operation; a custom_gradient's rule
    # replaces what it would record of the function's own operations
    records = uses_custom_vjp = True
    __slots__ = ("_persistent", "_watch_accessed_variables", "_entered", "_paused", "_used",
                 "_lazy", "_entries", "_watched", "_keep", "_variables", "_derived",
                 "_takes", "__weakref__")

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = bool(persistent)
        self._watch_accessed_variables = bool(watch_accessed_variables)
        self._entered = self._paused = self._used = False
        # _clear(), inlined: a tape is made per step
        self._lazy = None
        self._entries, self._watched, self._keep = [], set(), []
        self._variables, self._derived = {}, []
        self._takes = False  # a row gather is recorded: gradients may be tf.IndexedSlices

    def _clear(self):
        self._lazy = None  # id(gradient result) -> (weakref, recompute function), when needed
        self._entries = []
        self._watched = set()
        self._keep = []          # watched tensors and variables, kept alive
        self._variables = {}     # uid -> watched Variable
        self._derived = []       # (start, end): entries recorded by a derivative computation
        self._takes = False      # a row gather recorded (tape/sparse_rows.py)

    # -- context --------------------------------------------------------------------------
    def __enter__(self):
        if self._entered:
            raise ValueError("Tape is still recording, This can happen if you try to "
                             "re-enter an already-active tape.")
        self._entered = True
        STATE.push(self)
        return self

    def __exit__(self, *exc):
        if self._entered:  # _stop(), inlined
            self._entered = False
            STATE.remove(self)
        return False

    def _stop(self):
        if self._entered:
            self._entered = False
            STATE.remove(self)

    # -- recording --------------------------------------------------------------------------
    def watch(self, tensor):
        """Watch a tensor, a variable, or a nested structure of them.

        >>> import tapegrad as tf
        >>> x = tf.constant(3.0)
        >>> with tf.GradientTape() as g:
        ...     g.watch(x)
        ...     y = x * x
        >>> float(g.gradient(y, x))
        6.0
        """
        if type(tensor) is Tensor and tensor.dtype.kind in "fc":  # the common case
            self._watch(tensor)
            return
        if type(tensor) in (list, tuple) and _concrete_floats(tensor):
            # a flat list of float tensors (a model's weights): one epoch bump for all
            STATE.bump()
            w, keep = self._watched, self._keep
            for t in tensor:
                if id(t) not in w:
                    w.add(id(t))
                    keep.append(t)
            return
        for t in nest.flatten(tensor):
            if not isinstance(t, Tensor):
                raise ValueError(
                    f"Passed in object {t!r} of type {type(t).__name__!r}, not tf.Tensor or "
                    "tf.Variable or ExtensionType.")
            if not _is_float(t):
                warnings.warn(f"The dtype of the watched tensor must be floating (e.g. "
                              f"tf.float32), got tf.{_dt.name(t.dtype)}", stacklevel=2)
                continue
            self._watch(t)

    def _watch(self, t):
        STATE.bump()  # cached variable snapshots predate this watch: read afresh
        if id(t) not in self._watched:
            self._watched.add(id(t))
            self._keep.append(t)
            if type(t) is Variable:
                self._variables[t._uid] = t

    def record(self, prim, args, params, out, recorders, index):
        if self._paused:
            return
        w = self._watched
        for a in args:
            if id(a) in w:
                break
        else:
            return
        if (out._value.dtype if type(out) is Tensor else out.dtype).kind not in "fc":
            return
        self._entries.append((prim, args, params, out))
        w.add(id(out))
        if prim is take_p:
            self._takes = True

    def record_many(self, ops, roots=None):
        """``record`` of each ``(prim, args, params, out)`` of ``ops``, in order, in one call
        (the operations of a compiled pass shown to its outer tapes, compile/recorded_pass.py);
        each recorded entry is the given tuple itself.

        ``roots``: the positions of the operations none of whose arguments is an earlier
        operation's output, where every output is a float tensor (or None). Every other
        operation reads an earlier one's output; so where this tape sees an argument of each
        root, it records every operation (each sees the output of one it recorded), and
        they are appended at once: the same entries as the loop below, at C speed.
        """
        if self._paused:
            return
        w = self._watched
        if roots is not None:
            for k in roots:
                for a in ops[k][1]:
                    if id(a) in w:
                        break
                else:
                    break  # a root this tape does not see: the loop decides each operation
            else:
                self._entries.extend(ops)
                w.update(map(id, map(_OUT, ops)))
                return
        append, add = self._entries.append, w.add
        for op in ops:
            for a in op[1]:
                if id(a) in w:
                    break
            else:
                continue
            out = op[3]
            if (out._value.dtype if type(out) is Tensor else out.dtype).kind in "fc":
                append(op)
                add(id(out))

    def record_custom(self, op, inputs, out, recorders, index):
        self.record(op, inputs, {}, out, recorders, index)

    def sees(self, tensor):
        # the watched ids are alive: the tape keeps what it watched and what it recorded
        return not self._paused and id(tensor) in self._watched

    def derivative_mark(self):
        return self._entries, len(self._entries)

    def derivative_done(self, mark):
        entries, start = mark
        if self._entries is entries and len(entries) > start:  # not used up meanwhile
            self._derived.append((start, len(entries)))

    def read_variable(self, var, val):
        if self._paused:
            return val
        w = self._watched
        if id(var) not in w:
            if not (self._watch_accessed_variables and var.trainable and
                    var._value.dtype.kind in "fc"):  # _is_float of its concrete value
                return val
            # _watch without a new epoch: other snapshots stay what this tape saw, and this
            # variable's is made after the readers (Variable.read_value)
            w.add(id(var))
            self._keep.append(var)
            if type(var) is Variable:
                self._variables[var._uid] = var
        self._entries.append((read_variable_p, (var,), {}, val))
        w.add(id(val))
        return val

    @contextlib.contextmanager
    def stop_recording(self):
        """Temporarily stop recording: operations inside get no gradient."""
        if not self._entered:
            raise RuntimeError("Trying to stop recording a tape which is not recording.")
        old, self._paused = self._paused, True
        STATE.bump()
        try:
            yield
        finally:
            self._paused = old
            STATE.bump()

    def reset(self):
        """Forget everything recorded so far; recording continues."""
        if not self._entered:
            raise ValueError("Tape is not recording.")
        self._clear()
        STATE.bump()

    def watched_variables(self):
        """The watched variables, in creation order."""
        return tuple(self._variables[k] for k in sorted(self._variables))

    # -- differentiation ----------------------------------------------------------------------
    def _begin_use(self):
        """The records and the watched ids (watched tensors and recorded outputs) for one
        use; a non-persistent tape is used up."""
        if self._used and not self._persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one "
                               "set of gradients (or jacobians)")
        entries, watched = self._entries, self._watched
        if not self._persistent:
            self._used = True
            if self._entered:  # _stop(), inlined
                self._entered = False
                STATE.remove(self)
            # Drop the records now: the caller's `entries` is the last reference, so the
            # intermediates are freed as soon as this use returns (reference counting only).
            # watched_variables() keeps answering, as in TensorFlow.
            self._entries, self._watched, self._keep = [], set(), []
        return entries, watched

    def _recorders_for_backward(self):
        """Who records the derivative computation: outer tapes, and this tape if it is
        persistent and still inside its ``with`` block (as in TensorFlow)."""
        recs = STATE.stack.recorders
        if self._persistent and self._entered:
            return [r for r in recs if r is not self] + [self]
        for r in recs:
            if r is self:
                return [r for r in recs if r is not self]
        return recs  # the usual case: this tape has left the stack (or was never on it)

    # A persistent tape used after its block records nothing while computing a gradient,
    # so first-order gradients cost no more time or memory. It remembers, weakly, how each
    # result was made; if a result is later differentiated on this tape, the gradient is
    # recomputed once with recording on, and that recorded copy is differentiated instead.
    def _remember(self, result, recompute):
        """Note how ``result`` can be recomputed (``recompute()``, run with recording on)."""
        if result is None or not self._persistent or self._entered:
            return
        if self._lazy is None:
            self._lazy = _WeakDict()
        lazy, key = self._lazy, id(result)
        lazy_ref = weakref.ref(lazy)  # a strong reference here would be a cycle

        def forget(_):
            d = lazy_ref()
            if d is not None:
                d.pop(key, None)
        lazy[key] = (weakref.ref(result, forget), recompute)

    def _remember_grads(self, cts, target_cts, source_ids):
        entries = self._entries
        for sid in source_ids:
            self._remember(cts.get(sid),
                           lambda sid=sid: backward(entries, target_cts, {sid}).get(sid))

    def _resolve(self, target):
        """Replace gradient results of this tape by recorded copies (see ``_remember``)."""
        lazy = self._lazy
        if not lazy:
            return target

        def one(t):
            if not isinstance(t, Tensor) or id(t) in self._watched:
                return t
            rec = lazy.get(id(t))
            if rec is None or rec[0]() is not t:
                return t
            with _recording_derivatives([r for r in STATE.stack.recorders if r is not self] + [self]):
                again = rec[1]()
            return t if again is None else again
        return nest.map_structure(one, target)

    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """Gradient of the sum of ``target`` with respect to ``sources``.

        The result has the structure of ``sources``; unconnected sources give None, or
        zeros with ``unconnected_gradients='zero'``.
        """
        if target is None:
            raise TypeError("Argument `target` should be a list or nested structure of Tensors, "
                            "Variables or CompositeTensors to be differentiated, but received "
                            "None.")
        entries, watched = self._begin_use()
        if self._persistent:
            target = self._resolve(target)
        if type(unconnected_gradients) is not UnconnectedGradients:
            unconnected_gradients = _unconnected(unconnected_gradients)
        if output_gradients is None and isinstance(target, Tensor) \
                and target.dtype.kind in "fc":
            # the common cases — one target, and one source or a flat list of them (a
            # model's weights) — without the structure handling
            one = isinstance(sources, Tensor)
            many = not one and type(sources) in (list, tuple) and _float_tensors(sources)
            if (one and sources.dtype.kind in "fc") or many:
                return self._simple_gradient(entries, watched, target, sources, one,
                                            unconnected_gradients)
        unconnected = unconnected_gradients
        flat_targets = [target] if isinstance(target, Tensor) else nest.flatten(target)
        # a flat list or tuple of tensors (a model's weights): no structure to walk
        flat = type(sources) in (list, tuple) and all(isinstance(s, Tensor) for s in sources)
        flat_sources = list(sources) if flat else nest.flatten(sources)
        for s in flat_sources:
            if not isinstance(s, Tensor):
                raise ValueError(f"GradientTape.gradient: sources must be tensors or "
                                 f"variables, got {s!r} of type {type(s).__name__}.")
        if output_gradients is not None:
            ogs = nest.flatten(output_gradients)
            if len(ogs) != len(flat_targets):
                raise ValueError(f"output_gradients has {len(ogs)} entries but target has "
                                 f"{len(flat_targets)}; they must match.")
        else:
            ogs = [None] * len(flat_targets)
        target_cts = {}
        for t, og in zip(flat_targets, ogs):
            if not isinstance(t, Tensor):
                t = convert_to_tensor(t)
            if not _is_float(t):
                warnings.warn(f"The dtype of the target tensor must be floating (e.g. "
                              f"tf.float32) when calling GradientTape.gradient, got "
                              f"tf.{_dt.name(t.dtype)}", stacklevel=2)
                continue
            if og is None:
                g = _ones_like(t)
            else:
                g = convert_to_tensor(og, dtype=t.dtype) if not isinstance(og, Tensor) else og
                if tuple(g.shape) != tuple(t.shape):
                    raise ValueError(f"output_gradients shape {tuple(g.shape)} does not match "
                                     f"target shape {tuple(t.shape)}.")
            key = id(t)
            target_cts[key] = g if key not in target_cts else target_cts[key] + g
        good = []
        for s in flat_sources:
            ok = s.dtype.kind in "fc"
            if not ok:
                warnings.warn(f"The dtype of the source tensor must be floating (e.g. "
                              f"tf.float32) when calling GradientTape.gradient, got "
                              f"tf.{_dt.name(s.dtype)}", stacklevel=2)
            good.append(ok)
        # Only what this tape watched (or recorded) has a gradient, and a target that is
        # also a source (its own cotangent): a tensor the tape never saw gives None even where a
        # recorded operation used it, as in TensorFlow.
        cts = self._backward(entries, target_cts, {
            id(s) for s, ok in zip(flat_sources, good)
            if ok and (id(s) in watched or id(s) in target_cts)})
        out = []
        for s, ok in zip(flat_sources, good):
            c = _own(cts.get(id(s))) if ok else None
            if c is None and unconnected is UnconnectedGradients.ZERO:
                c = _zeros_for(s)
            out.append(c)
        if flat:
            return out if type(sources) is list else tuple(out)
        return nest.pack_sequence_as(sources, out)

    def _backward(self, entries, target_cts, source_ids):
        """The reverse pass, recorded by whoever records this tape's gradients; a source
        read only through row gathers gets ``tf.IndexedSlices`` (tape/sparse_rows.py)."""
        if self._takes and sparse_rows.any_marked():
            found, extra = sparse_rows.plan(entries, len(entries), source_ids, target_cts)
            if found:
                cts = self._backward_dense(entries, target_cts, source_ids | extra)
                return sparse_rows.rows(cts, found, source_ids)
        return self._backward_dense(entries, target_cts, source_ids)

    def _backward_dense(self, entries, target_cts, source_ids):
        recs = self._recorders_for_backward()
        st = STATE.stack
        if recs is st.recorders and len(recs) == len(st.interpreters):
            # the recorders on the stack are the ones (none: first order; the outer tapes
            # of an inner tape's gradient): nothing to switch, only the marks to make
            if not recs:
                # a used-up tape's records die with this pass: its arrays may be handed over
                cts = backward(entries, target_cts, source_ids, consumed=not self._persistent)
            else:
                marks = [(r, r.derivative_mark()) for r in recs]
                try:
                    cts = backward(entries, target_cts, source_ids)
                finally:
                    for r, mark in marks:
                        if mark is not None:
                            r.derivative_done(mark)
        else:
            with _recording_derivatives(recs):
                cts = backward(entries, target_cts, source_ids)
        if self._persistent:
            self._remember_grads(cts, target_cts, source_ids)
        return cts

    def _simple_gradient(self, entries, watched, target, sources, one, unconnected):
        """``gradient`` of one float target for one float source or a flat list of them."""
        tid = id(target)
        target_cts = {tid: _ones_like(target)}
        if one:
            sid = id(sources)
            ids = {sid} if sid in watched or sid == tid else set()
        else:
            ids = set(map(id, sources))  # as sets, at C speed (a model's weights)
            ids = (ids & watched) | {tid} if tid in ids else ids & watched
        cts = self._backward(entries, target_cts, ids)
        zero = unconnected is UnconnectedGradients.ZERO
        if one:
            c = cts.get(id(sources))
            if c is None:
                return _zeros_for(sources) if zero else None
            return Tensor._wrap(c._value) if is_unit(c) else c  # _own, inlined
        out = [cts.get(id(s)) for s in sources]  # a model's weights: many sources
        for i, c in enumerate(out):
            if c is None:
                if zero:
                    out[i] = _zeros_for(sources[i])
            elif is_unit(c):  # _own
                out[i] = Tensor._wrap(c._value)
        return out if type(sources) is list else tuple(out)
