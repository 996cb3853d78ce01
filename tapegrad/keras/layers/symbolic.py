"""Symbolic tensors of the functional API: ``keras.Input`` returns a ``KerasTensor`` (a shape
and a dtype, ``None`` for unknown sizes); calling a layer on one records a ``Node``.

A layer's output shape comes from running the layer itself on concrete zeros, twice, with
each unknown size set to 2 and then to 3: the output sizes that move are unknown. So any
layer (``Lambda`` and subclasses included) gets its output shape without a shape rule of
its own. The weights are built first from the symbolic shape, as Keras does, and restored
after the probe runs, so a probe never changes a model.
"""
import contextlib
import itertools

import numpy as np

from tapegrad.core.state import interpreters

from tapegrad.keras import _tf as tf
from tapegrad.keras import backend

_NODE_IDS = itertools.count()


class KerasTensor:
    """A symbolic input or output of a layer in a functional model (no value)."""

    _keras_symbolic = True  # what keras/symbolic_ops.py looks for (without importing this)

    def __init__(self, shape, dtype="float32", name=None, history=None, sparse=False):
        self.shape = tuple(None if d is None else int(d) for d in shape)
        self.dtype = tf.as_dtype(dtype)
        self.name = name
        self._history = history  # (node, index of this output) or None for an Input

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        dtype = backend.standardize_dtype(self.dtype)
        return (f"<KerasTensor shape={self.shape}, dtype={dtype}, "
                f"name={self.name}>")

    def __bool__(self):
        raise TypeError("A symbolic KerasTensor cannot be used as a Python bool.")

    def __array__(self, dtype=None, copy=None):
        # (tf.* functions convert their arguments through here: Keras's ValueError)
        raise ValueError(f"A KerasTensor is symbolic: it's a placeholder for a shape and a "
                         f"dtype. It doesn't have any actual numerical value. You cannot "
                         f"convert it to a NumPy array, nor use it as input to a TensorFlow "
                         f"function; only as input to a Keras layer or a Keras operation "
                         f"(keras.layers, keras.ops) ({self!r}).")

    def __hash__(self):
        return id(self)


def _binary(fn):
    def method(self, other):
        return _op(fn, self, other)
    return method


def _rbinary(fn):
    def method(self, other):
        return _op(lambda a, b: fn(b, a), self, other)
    return method


for _name, _fn in [("add", lambda a, b: a + b), ("sub", lambda a, b: a - b),
                   ("mul", lambda a, b: a * b), ("truediv", lambda a, b: a / b),
                   ("matmul", lambda a, b: tf.matmul(a, b)), ("pow", lambda a, b: a ** b),
                   ("floordiv", lambda a, b: a // b), ("mod", lambda a, b: a % b)]:
    setattr(KerasTensor, f"__{_name}__", _binary(_fn))
    setattr(KerasTensor, f"__r{_name}__", _rbinary(_fn))
for _name, _fn in [("lt", lambda a, b: a < b), ("le", lambda a, b: a <= b),
                   ("gt", lambda a, b: a > b), ("ge", lambda a, b: a >= b)]:
    setattr(KerasTensor, f"__{_name}__", _binary(_fn))  # (== and != stay identity: hashing)
KerasTensor.__neg__ = lambda self: _op(lambda a: -a, self)
KerasTensor.__abs__ = lambda self: _op(abs, self)
KerasTensor.__getitem__ = lambda self, idx: _op(lambda a: a[idx], self)


def _op(fn, *args):
    return op_node(fn, args, {}, name="tf_op_lambda")


def op_node(fn, args, kwargs, name=None):
    """The symbolic result of ``fn(*args, **kwargs)`` where some arguments are
    ``KerasTensor`` objects: a node of a ``Lambda`` layer named after ``fn`` taking them, the
    other arguments held as they are (keras/symbolic_ops.py)."""
    from tapegrad.keras import backend
    from tapegrad.keras.layers.core import Lambda
    flat = tf.nest.flatten((args, kwargs))
    where = [i for i, x in enumerate(flat) if isinstance(x, KerasTensor)]

    def call(tensors):
        full = list(flat)
        for i, t in zip(where, tensors):
            full[i] = t
        a, k = tf.nest.pack_sequence_as((args, kwargs), full)
        return fn(*a, **k)
    layer = Lambda(call, name=backend.unique_name(name or getattr(fn, "__name__", "op")))
    return layer([flat[i] for i in where])


class Node:
    """One call of a layer on symbolic tensors: where each ``KerasTensor`` came from."""

    def __init__(self, layer, args, kwargs, outputs):
        self.layer, self.args, self.kwargs = layer, args, kwargs
        self.outputs = outputs
        self.id = next(_NODE_IDS)

    @property
    def inputs(self):
        return [x for x in tf.nest.flatten((self.args, self.kwargs))
                if isinstance(x, KerasTensor)]


def any_symbolic(args, kwargs):
    for a in args:
        if isinstance(a, KerasTensor) or (isinstance(a, (list, tuple, dict)) and any(
                isinstance(x, KerasTensor) for x in tf.nest.flatten(a))):
            return True
    return bool(kwargs) and any(isinstance(x, KerasTensor) for x in tf.nest.flatten(kwargs))


# The sizes the two probes give an unknown size: (batch axis, other axes). An output size
# that differs between the probes is unknown. The other axes' pairs are far enough apart
# that a stride-2 pooling (or any stride up to the smaller size) still tells them apart
# (2 and 3 would both pool to 1), and grow when a probe is too small for the layer (a 7x7
# kernel on an image of unknown size). The last, small pair is for a layer that bounds
# the size (a position embedding of a few positions over a sequence of unknown length).
_PROBE_SIZES = (((2, 3), (8, 16)), ((2, 3), (32, 64)), ((2, 3), (128, 256)),
                ((2, 3), (2, 3)))


def _concrete(structure, batch, other):
    def fill(x):
        if not isinstance(x, KerasTensor):
            return x
        shape = tuple((batch if i == 0 else other) if d is None else d
                      for i, d in enumerate(x.shape))
        if x.dtype.kind == "O":  # strings: one word each, so a text layer finds tokens
            return tf.constant(np.full(shape, b"a", dtype=object))
        return tf.constant(np.zeros(shape, x.dtype))
    return tf.nest.map_structure(fill, structure)


def _has_unknown_inner(structure):
    return any(isinstance(x, KerasTensor) and None in x.shape[1:]
               for x in tf.nest.flatten(structure))


def _probe(layer, args, kwargs):
    """The layer's outputs on the two probes (zeros with the unknown sizes filled in)."""
    tries = _PROBE_SIZES if _has_unknown_inner((args, kwargs)) else _PROBE_SIZES[:1]
    for attempt, (batches, others) in enumerate(tries):
        try:
            return [layer(*_concrete(args, b, o), **_concrete(kwargs, b, o))
                    for b, o in zip(batches, others)]
        except Exception:
            if attempt == len(tries) - 1:
                raise


def _outside_interpreters():
    """Probes run with no interpreter: a trace in progress (a Sequential built on its first
    call inside ``tf.function``) would defer the weights' restoring assignments to every
    later call, and a tape would record the probes."""
    return interpreters(())


def symbolic_call(layer, args, kwargs, record=True):
    """Call ``layer`` on symbolic tensors: build it, find its output spec, record a Node."""
    with _outside_interpreters():
        return _symbolic_call(layer, args, kwargs, record)


def _symbolic_call(layer, args, kwargs, record):
    first = args[0] if args else next(iter(kwargs.values()))
    if layer.input_spec is not None:
        from tapegrad.keras.layers.input_spec import assert_input_compatibility
        assert_input_compatibility(layer.input_spec, first, layer.name)
    from tapegrad.keras.layers.base import _Scope
    scope = _Scope(layer) if not layer.built else contextlib.nullcontext()
    with scope:  # weights its build and first call make are below it (Keras's name scope)
        if not layer.built:
            layer._maybe_build(first)
        saved = [(v, v.numpy()) for v in layer.weights]
        try:
            with np.errstate(all="ignore"):
                probes = _probe(layer, args, kwargs)
        finally:
            for v, value in saved:
                v.assign(value)
    outs = []

    def spec(a, b):
        shape = tuple(None if da != db else da for da, db in zip(a.shape, b.shape))
        kt = KerasTensor(shape, a.dtype, name=layer.name)
        outs.append(kt)
        return kt
    flat = [spec(a, b) for a, b in zip(tf.nest.flatten(probes[0]), tf.nest.flatten(probes[1]))]
    structure = tf.nest.pack_sequence_as(probes[0], flat)
    if record:
        node = Node(layer, args, kwargs, outs)
        for i, kt in enumerate(outs):
            kt._history = (node, i)
        # ``layer.output`` / ``layer.input`` read the first call (a feature extractor's
        # ``Model(model.input, [l.output for l in model.layers])``); bypasses tracking
        layer.__dict__.setdefault("_inbound_nodes", []).append((node, structure))
    return structure


def output_shape(layer, input_shape):
    """The output shape(s) of ``layer`` for input shape(s) (None for unknown sizes)."""
    if _is_shape(input_shape):
        inputs = KerasTensor(input_shape, layer.dtype)
    else:
        inputs = [KerasTensor(s, layer.dtype) for s in input_shape]
    out = symbolic_call(layer, (inputs,), {}, record=False)
    return tf.nest.map_structure(lambda kt: kt.shape, out)


def _is_shape(s):
    return isinstance(s, (list, tuple)) and all(d is None or isinstance(d, int) for d in s)


def saved_shape(s):
    """A shape read from a config (lists, from JSON) as a tuple; a list or dict of shapes
    keeps its structure."""
    if _is_shape(s):
        return tuple(s)
    if isinstance(s, dict):
        return {k: saved_shape(v) for k, v in s.items()}
    return [saved_shape(x) for x in s]


def symbolic_inputs(shape, dtype):
    """``KerasTensor``s of the shape(s) ``shape`` (a shape, or a list or dict of them)."""
    if _is_shape(shape):
        return KerasTensor(shape, dtype)
    if isinstance(shape, dict):
        return {k: symbolic_inputs(v, dtype) for k, v in shape.items()}
    return [symbolic_inputs(x, dtype) for x in shape]
