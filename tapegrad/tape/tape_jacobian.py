"""``GradientTape.jacobian`` and ``batch_jacobian``: the argument checks and TensorFlow's
rules for unconnected sources, around tape/jacobians.py's vectorized passes (a mixin of
``GradientTape``, tape/gradient_tape.py)."""
import warnings

from tapegrad.primitives.api import zeros
from tapegrad.core import hooks
from tapegrad.core.state import STATE
from tapegrad.core.tensor import Tensor
from tapegrad.tape.tape_support import (UnconnectedGradients, _is_float, _recording_derivatives,
                                        _unconnected)
from tapegrad.util import nest


class JacobianMethods:
    """The Jacobian methods of ``GradientTape`` (which provides ``_begin_use``, ``_resolve``,
    ``_recorders_for_backward``, ``_remember`` and ``_persistent``)."""

    __slots__ = ()

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
        from tapegrad.tape.batch_jacobian import tape_batch_jacobian
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
            return tape_batch_jacobian(entries, target, source, mode=mode,
                                       chunk_size=chunk_size, loop=not experimental_use_pfor)
        with _recording_derivatives(self._recorders_for_backward()):
            j = compute()
        if self._persistent:
            self._remember(j, compute)
        if j is None:  # TensorFlow returns zeros here whatever unconnected_gradients says
            j = zeros(tuple(target.shape) + tuple(source.shape[1:]), dtype=target.dtype)
        return j

