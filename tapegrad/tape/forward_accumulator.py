"""``ForwardAccumulator``: forward-mode JVPs computed as each operation runs.

Tangents are kept per tensor id while the tensor lives, as in TensorFlow: the accumulator
holds its primals weakly, and a tensor's death (a weakref callback, which runs before its id
can be reused) drops its tangent.
"""
import warnings
import weakref

from tapegrad.primitives.api import cast, convert_to_tensor, zeros
from tapegrad.core.state import STATE, Interpreter, recording
from tapegrad.core.tensor import Tensor
from tapegrad.tape.tape_support import UnconnectedGradients, _recording_derivatives, _unconnected
from tapegrad.tape.rules import jvp_of
from tapegrad.util import nest


class ForwardAccumulator(Interpreter):
    """Compute Jacobian-vector products with forward mode, as ``tf.autodiff.ForwardAccumulator``.

    ``primals`` (tensors or variables, possibly nested) get the matching ``tangents``; every
    operation run inside the context computes its output's tangent at once. ``jvp(t)`` looks
    it up, also after the context has ended. Nested with a ``GradientTape`` (either way
    round) or another accumulator, it gives second derivatives: the outer one sees the inner
    one's derivative computations.

    >>> import tapegrad as tf
    >>> x = tf.constant(3.0)
    >>> with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
    ...     y = x * x
    >>> float(acc.jvp(y))
    6.0
    """

    records = True  # an interpreter (core/state.py) that sees every operation

    def __init__(self, primals, tangents):
        fp, ft = nest.flatten(primals), nest.flatten(tangents)
        if len(fp) != len(ft):
            raise ValueError(f"ForwardAccumulator: {len(fp)} primals but {len(ft)} tangents; "
                             "they must have the same structure.")
        self._tangents = _Tangents()  # id(tensor) -> (weakref to the tensor, tangent)
        tangents_ref = weakref.ref(self._tangents)  # a strong one would be a cycle

        def forget(ref):
            d = tangents_ref()
            if d is not None:
                e = d.get(ref.key)
                if e is not None and e[0] is ref:
                    del d[ref.key]
        self._forget = forget
        self._entered = False
        for p, t in zip(fp, ft):
            if not isinstance(p, Tensor):
                raise TypeError(f"ForwardAccumulator: primals must be tensors or variables, "
                                f"got {p!r} of type {type(p).__name__}.")
            if id(p) in self._tangents:
                raise ValueError(f"Tensor {p} was specified as a primal multiple times. This "
                                 "may indicate an error. If it was intended, please sum the "
                                 "corresponding tangents.")
            if t is None:
                raise ValueError(f"ForwardAccumulator: the tangent of primal {p!r} is None.")
            t = convert_to_tensor(t, dtype=p.dtype) if not isinstance(t, Tensor) else t
            if tuple(t.shape) != tuple(p.shape):
                raise ValueError(f"ForwardAccumulator: tangent shape {tuple(t.shape)} does not "
                                 f"match primal shape {tuple(p.shape)}.")
            if p.dtype.kind not in "fc":
                warnings.warn(f"ForwardAccumulator: primal of dtype {p.dtype.name} is not "
                              "floating; its tangent is ignored.", stacklevel=2)
                continue
            if t.dtype != p.dtype:
                t = cast(t, p.dtype)
            self._put(p, t)

    def __enter__(self):
        if self._entered:
            raise ValueError("Accumulator is already recording.")
        self._entered = True
        STATE.push(self)
        return self

    def __exit__(self, *exc):
        self._entered = False
        STATE.remove(self)
        return False

    def _put(self, x, tangent):
        ref = _KeyedRef(x, self._forget)
        ref.key = id(x)
        self._tangents[ref.key] = (ref, tangent)

    def record(self, prim, args, params, out, recorders, index):
        tan = self._tangents
        ts = None
        for i, a in enumerate(args):
            e = tan.get(id(a))
            if e is not None:
                if ts is None:
                    ts = [None] * len(args)
                ts[i] = e[1]
        if ts is None or out.dtype.kind not in "fc":
            return
        # Only recorders outside this one see the JVP computation (that is how nesting works).
        # Outer tapes note what they record there as derivative code.
        outer = recorders[:index]
        with _recording_derivatives(outer) if outer else recording(outer):
            t = jvp_of(prim, args, params, out, ts)
        if t is not None:
            self._put(out, t)

    def sees(self, tensor):
        e = self._tangents.get(id(tensor))  # entries of dead tensors are dropped
        return e is not None and e[0]() is tensor

    def record_custom(self, op, inputs, out, recorders, index):
        # The function's own operations gave ``out`` its tangent, as TensorFlow does; the
        # custom rule, transposed, only where they left it none (a Python number, a NumPy
        # value) although an input has one.
        tan = self._tangents
        if id(out) not in tan and any(id(x) in tan for x in inputs if isinstance(x, Tensor)):
            self.record(op, inputs, {}, out, recorders, index)

    def read_variable(self, var, val):
        e = self._tangents.get(id(var))
        if e is not None:
            self._put(val, e[1])
        return val

    def jvp(self, primals, unconnected_gradients=UnconnectedGradients.NONE):
        """The JVP of tensors computed inside (same structure as ``primals``).

        Tensors that do not depend on a primal give None, or zeros with
        ``unconnected_gradients='zero'``.
        """
        unconnected = _unconnected(unconnected_gradients)

        def one(p):
            if not isinstance(p, Tensor):
                raise TypeError(f"ForwardAccumulator.jvp: expected tensors, got {p!r} of type "
                                f"{type(p).__name__}.")
            e = self._tangents.get(id(p))
            if e is not None:
                return e[1]
            if unconnected is UnconnectedGradients.ZERO:
                return zeros(p.shape, dtype=p.dtype)
            return None
        return nest.map_structure(one, primals)


class _Tangents(dict):
    """A dict that can be weakly referenced."""

    __slots__ = ("__weakref__",)


class _KeyedRef(weakref.ref):
    """A weak reference that remembers the id its tensor had."""

    __slots__ = ("key",)
