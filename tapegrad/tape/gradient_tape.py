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
import enum
import warnings
import weakref

import numpy as np

from tapegrad.primitives.api import UNITS, convert_to_tensor, is_unit, ones_like, unit, zeros
from tapegrad.primitives.variables import read_variable_p
from tapegrad.core import hooks
from tapegrad.core.state import STATE, Interpreter, recording
from tapegrad.core.tensor import Tensor, Variable
from tapegrad.tape.backward import backward
from tapegrad.util import nest


class UnconnectedGradients(enum.Enum):
    """What ``gradient`` returns for a source the target does not depend on."""

    NONE = "none"
    ZERO = "zero"


def _unconnected(value):
    if isinstance(value, UnconnectedGradients):
        return value
    try:
        return UnconnectedGradients(value)
    except ValueError:
        raise ValueError(f"Unknown value for unconnected_gradients: '{value}'") from None


_ONES = {}


def _ones_like(t):
    """The cotangent of a target when none is given (ones); scalar ones are shared
    (tensors are immutable), and a real one is the unit that derivative rules' products
    skip (``api.times``)."""
    if t.shape == ():
        dtype = t.dtype
        if dtype.kind == "f":
            one = UNITS.get(dtype)
            return one if one is not None else unit(dtype)
        one = _ONES.get(dtype)
        if one is None:
            arr = np.ones((), dtype)
            arr.flags.writeable = False  # shared by every tape: nothing may write into it
            one = _ONES[dtype] = Tensor._wrap(arr)
        return one
    return ones_like(t)


def _own(c):
    """A result for the user: never the shared unit cotangent itself (a target that is also
    a source gets its own cotangent), which derivative rules treat as the number one
    (``api.times``)."""
    return Tensor._wrap(c._value) if is_unit(c) else c


def _zeros_for(s):
    return zeros(s.shape, dtype=s.dtype)


def _is_float(x):
    return x.dtype.kind in "fc"


def _float_tensors(xs):
    """Whether every item of ``xs`` is a float Tensor (a loop: a generator in ``all`` costs
    ~0.1 us more per item, and a model's weights are many)."""
    for x in xs:
        if not isinstance(x, Tensor) or x.dtype.kind not in "fc":
            return False
    return True


def _concrete_floats(xs):
    """Whether every item of ``xs`` is a concrete float Tensor (a loop, as
    ``_float_tensors``)."""
    for t in xs:
        if type(t) is not Tensor or t._value.dtype.kind not in "fc":
            return False
    return True


class _WeakDict(dict):
    """A dict that can be weakly referenced."""

    __slots__ = ("__weakref__",)


class GradientTape(Interpreter):
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
                 "__weakref__")

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = bool(persistent)
        self._watch_accessed_variables = bool(watch_accessed_variables)
        self._entered = self._paused = self._used = False
        # _clear(), inlined: a tape is made per step
        self._lazy = None
        self._entries, self._watched, self._keep = [], set(), []
        self._variables, self._derived = {}, []

    def _clear(self):
        self._lazy = None  # id(gradient result) -> (weakref, recompute function), when needed
        self._entries = []
        self._watched = set()
        self._keep = []          # watched tensors and variables, kept alive
        self._variables = {}     # uid -> watched Variable
        self._derived = []       # (start, end): entries recorded by a derivative computation

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
                              f"tf.float32), got tf.{t.dtype.name}", stacklevel=2)
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

    def record_many(self, ops):
        """``record`` of each ``(prim, args, params, out)`` of ``ops``, in order, in one call
        (the operations of a compiled pass shown to its outer tapes, compile/recorded_pass.py);
        each recorded entry is the given tuple itself."""
        if self._paused:
            return
        w = self._watched
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
                              f"tf.{t.dtype.name}", stacklevel=2)
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
                              f"tf.{s.dtype.name}", stacklevel=2)
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
        """The reverse pass, recorded by whoever records this tape's gradients."""
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
            ids = {id(s) for s in sources if id(s) in watched or id(s) == tid}
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

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True, mode="auto",
                 chunk_size=None):
        """Jacobian of ``target`` with respect to each source: ``target.shape + source.shape``.

        ``sources`` may be nested; the result has its structure. All rows are computed in one
        vectorized pass, chunked under ``tapegrad.config.memory_budget()`` unless
        ``chunk_size`` (rows per pass) is given. ``mode`` is 'auto' (forward mode when the
        sources have fewer elements than the target), 'forward' or 'reverse'.
        ``experimental_use_pfor=False`` computes the rows one by one (persistent tapes only).

        >>> import tapegrad as tf
        >>> with tf.GradientTape() as g:
        ...     x = tf.constant([1.0, 2.0])
        ...     g.watch(x)
        ...     y = x * x
        >>> g.jacobian(y, x).numpy().tolist()
        [[2.0, 0.0], [0.0, 4.0]]
        """
        from tapegrad.tape import jacobians
        if not isinstance(target, Tensor):
            raise TypeError(f"jacobian: target must be a single Tensor or Variable, got "
                            f"{target!r} of type {type(target).__name__}.")
        flat_sources = nest.flatten(sources)
        for s in flat_sources:
            if not isinstance(s, Tensor):
                raise ValueError(f"GradientTape.jacobian: sources must be tensors or "
                                 f"variables, got {s!r} of type {type(s).__name__}.")
        mode = jacobians.check_mode(mode)
        chunk_size = jacobians.check_chunk_size(chunk_size)
        unconnected = _unconnected(unconnected_gradients)
        if not experimental_use_pfor and not self._persistent:
            raise RuntimeError("GradientTape must be created with persistent=True to compute "
                               "the jacobian with eager execution enabled and with "
                               "experimental_use_pfor set to False.")
        entries, watched = self._begin_use()
        if self._persistent:
            target = self._resolve(target)
        # sources this tape never watched (nor recorded) give None, as in TensorFlow
        seen = [k for k, s in enumerate(flat_sources) if id(s) in watched]
        seen_sources = [flat_sources[k] for k in seen]
        if not _is_float(target):
            warnings.warn(f"The dtype of the target tensor must be floating (e.g. tf.float32) "
                          f"when calling GradientTape.jacobian, got tf.{target.dtype.name}",
                          stacklevel=2)
        def compute():
            if STATE.stack.idle and experimental_use_pfor and hooks.compiled_jacobian is not None:
                # a structure seen before: the whole Jacobian as generated NumPy code
                out = hooks.compiled_jacobian(entries, len(entries), target, seen_sources,
                                              mode, chunk_size)
                if out is not None:
                    return out
            (out,) = jacobians.tape_jacobians(entries, [target], seen_sources, mode=mode,
                                              chunk_size=chunk_size,
                                              loop=not experimental_use_pfor)
            return out
        with _recording_derivatives(self._recorders_for_backward()):
            out = compute()
        if self._persistent:
            for i, j in enumerate(out):
                self._remember(j, lambda i=i: compute()[i])
        if len(seen) < len(flat_sources):
            got = dict(zip(seen, out))
            out = [got.get(k) for k in range(len(flat_sources))]
        if unconnected is UnconnectedGradients.ZERO:
            out = [zeros(tuple(target.shape) + tuple(s.shape), dtype=s.dtype)
                   if j is None else j for j, s in zip(out, flat_sources)]
        return nest.pack_sequence_as(sources, out)

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True, mode="auto",
                       chunk_size=None):
        """Per-example Jacobians: result shape ``[b, y1..yn, x1..xm]``.

        As in TensorFlow, entry ``[b, i, j]`` is the sum over the target's batch ``b'`` of
        ``d target[b', i] / d source[b, j]``: example b's Jacobian where examples are
        independent. Where sparsity detection sees that they are not (a mean over the batch,
        BatchNorm in training) it warns (``BatchCouplingWarning``), and computes that sum in
        reverse mode whatever ``mode`` says. An unconnected source gives zeros (as in
        TensorFlow). ``mode`` and ``chunk_size`` as in ``jacobian``.

        >>> import tapegrad as tf
        >>> x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        >>> with tf.GradientTape() as g:
        ...     g.watch(x)
        ...     y = x * x
        >>> g.batch_jacobian(y, x).numpy().tolist()
        [[[2.0, 0.0], [0.0, 4.0]], [[6.0, 0.0], [0.0, 8.0]]]
        """
        from tapegrad.tape import jacobians
        if not isinstance(target, Tensor):
            raise TypeError(f"batch_jacobian: target must be a single Tensor or Variable, got "
                            f"{target!r} of type {type(target).__name__}.")
        if not isinstance(source, Tensor):
            raise TypeError(f"batch_jacobian: source must be a single Tensor or Variable, got "
                            f"{source!r} of type {type(source).__name__}.")
        for x in (target, source):
            if x.ndim < 2:  # TensorShape.with_rank_at_least(2)
                raise ValueError(f"Shape {tuple(x.shape)} must have rank at least 2")
        if target.shape[0] != source.shape[0]:
            raise ValueError(f"Need first dimension of target shape ({tuple(target.shape)}) "
                             f"and source shape ({tuple(source.shape)}) to match.")
        mode = jacobians.check_mode(mode)
        chunk_size = jacobians.check_chunk_size(chunk_size)
        _unconnected(unconnected_gradients)
        if not self._persistent:
            # TensorFlow's loop runs its body once per row where it is not vectorized,
            # or in groups of parallel_iterations: a non-persistent tape cannot
            if experimental_use_pfor and parallel_iterations is not None:
                raise RuntimeError("GradientTape must be created with persistent=True to "
                                   "compute the batch_jacobian with parallel_iterations.")
            if not experimental_use_pfor and not STATE.stack.tracers:
                raise RuntimeError("GradientTape must be created with persistent=True to "
                                   "compute the batch_jacobian with eager execution enabled "
                                   "and with experimental_use_pfor set to False.")
        entries, watched = self._begin_use()
        if self._persistent:
            target = self._resolve(target)

        def compute():
            if id(source) not in watched:  # never watched: unconnected
                return None
            return jacobians.tape_batch_jacobian(entries, target, source, mode=mode,
                                                 chunk_size=chunk_size,
                                                 loop=not experimental_use_pfor)
        with _recording_derivatives(self._recorders_for_backward()):
            j = compute()
        if self._persistent:
            self._remember(j, compute)
        if j is None:  # TensorFlow returns zeros here whatever unconnected_gradients says
            j = zeros(tuple(target.shape) + tuple(source.shape[1:]), dtype=target.dtype)
        return j


class _recording_derivatives:
    """``recording(recs)`` for a derivative computation: each recorder in ``recs`` that
    notes derivative code (``derivative_mark``: tapes) marks the entries it records meanwhile
    as such (``tf.draw`` tells them apart)."""

    __slots__ = ("swap", "marks")

    def __init__(self, recs):
        # the recorders already on the stack (an inner tape's gradient under its outer
        # tapes, the nested-tape case): nothing to switch
        st = STATE.stack
        same = recs is st.recorders and len(recs) == len(st.interpreters)
        self.swap = None if same else recording(recs)
        self.marks = [(r, m) for r in recs if (m := r.derivative_mark()) is not None]

    def __enter__(self):
        if self.swap is not None:
            self.swap.__enter__()

    def __exit__(self, *exc):
        if self.swap is not None:
            self.swap.__exit__(*exc)
        for r, mark in self.marks:
            r.derivative_done(mark)
        return False
