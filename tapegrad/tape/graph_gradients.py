"""``tf.gradients`` and ``tf.hessians``: derivatives of a traced function's own operations.

Inside ``tf.function`` every operation is already an equation of the program being built
(trace/tracer.py), so no tape is needed: the equations from the sources to the targets are
read back as tape entries and the one reverse pass (``backward``) runs over them, staging the
derivative's operations into the same program. Eagerly there is nothing to read back, and
TensorFlow's error says to use a ``GradientTape``.

>>> import tapegrad as tf
>>> @tf.function
... def slope(x):
...     return tf.gradients(x ** 3, x)[0]
>>> float(slope(tf.constant(2.0)))
12.0
"""
import numpy as np

from tapegrad.core.state import STATE
from tapegrad.core.tensor import Tensor, Variable
from tapegrad.primitives.api import ones_like, zeros, zeros_like
from tapegrad.tape.backward import backward
from tapegrad.tape.tape_support import UnconnectedGradients, _unconnected
from tapegrad.tape.jacobians import tape_jacobians
from tapegrad.trace.tracer import GraphBuilder, SymbolicTensor


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _builder():
    tracers = [b for b in STATE.stack.tracers if isinstance(b, GraphBuilder)]
    if not tracers:
        raise RuntimeError("tf.gradients is not supported when eager execution is enabled. "
                           "Use tf.GradientTape instead.")
    return tracers[-1]


def _is_float(t):
    return t.dtype.kind in "fc"


class _Graph:
    """The equations of ``builder`` as tape entries, one tensor object per ``Var`` (the
    caller's own tensors where it passed them, so their ids find their cotangents)."""

    def __init__(self, builder):
        self.builder, self.tensors = builder, {}

    def tensor(self, v):
        t = self.tensors.get(v.name)
        if t is None:
            t = self.tensors[v.name] = SymbolicTensor(
                v, self.builder, self.builder.sym_shapes.get(v.name))
        return t

    def adopt(self, t):
        """The tensor standing for ``t`` (a tensor of this trace, or a Variable read here);
        None for a tensor the trace does not compute (a constant) or a variable it never
        read."""
        b = self.builder
        if isinstance(t, Variable):
            cur = b._current.get(t._uid)
            if cur is None:
                return None
            if cur != b.captures[b._capture_index[t._uid]]:
                raise NotImplementedError(
                    f"tf.gradients with respect to variable '{t.name}', which this "
                    "tf.function assigns before the call: use tf.GradientTape.")
            return self.tensor(cur)
        if not isinstance(t, SymbolicTensor) or t._builder is not b:
            return None
        return self.tensors.setdefault(t._var.name, t)

    def entries(self, sources, stops):
        """The float-valued equations with their live set: what depends on ``sources``
        other than through ``stops``."""
        live, out = set(sources), []
        for eq in self.builder.equations:
            ins = [self.tensor(v) for v in eq.inputs]
            if not any(id(a) in live for a in ins):
                continue
            if len(eq.outs) != 1:
                raise NotImplementedError(f"tf.gradients through '{eq.prim.name}' (several "
                                          "results): use tf.GradientTape.")
            res = self.tensor(eq.outs[0])
            if not _is_float(res) or id(res) in stops:
                continue
            live.add(id(res))
            out.append((eq.prim, tuple(ins), dict(eq.params), res))
        return out, live


def gradients(ys, xs, grad_ys=None, name="gradients", gate_gradients=False,
              aggregation_method=None, stop_gradients=None,
              unconnected_gradients=UnconnectedGradients.NONE):
    """The derivatives of ``sum(ys)`` with respect to each of ``xs``, inside ``tf.function``
    (a list as long as ``xs``: None, or zeros with ``unconnected_gradients='zero'``, where
    a source does not reach a target). ``grad_ys`` weight the targets (ones by default);
    ``stop_gradients`` are treated as constants.

    >>> import tapegrad as tf
    >>> @tf.function
    ... def grads(x, y):
    ...     return tf.gradients(x * y + y, [x, y])
    >>> [float(g) for g in grads(tf.constant(3.0), tf.constant(2.0))]
    [2.0, 4.0]
    """
    builder = _builder()
    unconnected = _unconnected(unconnected_gradients)
    ys, xs = _as_list(ys), _as_list(xs)
    gys = [None] * len(ys) if grad_ys is None else _as_list(grad_ys)
    if len(gys) != len(ys):
        raise ValueError(f"Passed {len(gys)} grad_ys for {len(ys)} ys")
    graph = _Graph(builder)
    srcs = [graph.adopt(x) for x in xs]
    stops = {id(s) for s in (graph.adopt(t) for t in _as_list(stop_gradients or []))
             if s is not None}
    ids = {id(s) for s, x in zip(srcs, xs) if s is not None and _is_float(s)}
    entries, live = graph.entries(ids, stops)
    target_cts = {}
    for y, gy in zip(ys, gys):
        t = graph.adopt(y)
        if t is None or id(t) not in live or not _is_float(t):
            continue
        g = ones_like(t) if gy is None else gy
        if not isinstance(g, Tensor):   # a Python number or array, in the target's dtype
            g = Tensor._wrap(np.asarray(g, dtype=t.dtype))
        prev = target_cts.get(id(t))
        target_cts[id(t)] = g if prev is None else prev + g
    cts = backward(entries, target_cts, ids, live=live) if target_cts else {}
    out = []
    for x, s in zip(xs, srcs):
        g = cts.get(id(s)) if s is not None else None
        if g is None and unconnected is UnconnectedGradients.ZERO:
            g = zeros_like(x.read_value() if isinstance(x, Variable) else x)
        out.append(g)
    return out


def hessians(ys, xs, gate_gradients=False, aggregation_method=None, name="hessians"):
    """For each of ``xs``, the Hessian of ``sum(ys)`` with respect to it, of shape
    ``x.shape + x.shape``, inside ``tf.function`` (None where ``ys`` does not depend on
    ``x``). The second pass is vectorized over the gradient's elements.

    >>> import tapegrad as tf
    >>> @tf.function
    ... def h(x):
    ...     return tf.hessians(tf.reduce_sum(x ** 3), x)[0]
    >>> h(tf.constant([1.0, 2.0])).numpy().tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    out = []
    for x in _as_list(xs):
        (g,) = gradients(ys, [x])
        if g is None:
            out.append(None)
            continue
        graph = _Graph(_builder())
        src, gt = graph.adopt(x), graph.adopt(g)
        entries, _ = graph.entries({id(src)}, set())
        h = tape_jacobians(entries, [gt], [src])[0][0]
        if h is None:  # the gradient does not depend on x: a zero Hessian
            shape = tuple(x.shape)
            h = zeros(shape + shape, x.dtype)
        out.append(h)
    return out
