"""The functional model: ``Model(inputs, outputs)`` over a graph of layer calls on
``keras.Input`` tensors; calling it replays the recorded nodes in order.

>>> import numpy as np
>>> from tapegrad import keras
>>> x = keras.Input(shape=(3,))
>>> h = keras.layers.Dense(4, activation="relu")(x)
>>> model = keras.Model(x, keras.layers.Dense(1)(h))
>>> model(np.ones((2, 3))).shape, len(model.layers)
(TensorShape([2, 1]), 3)
"""
from tapegrad.keras import _tf as tf
from tapegrad.keras.layers.input_spec import InputSpec
from tapegrad.keras.layers.symbolic import KerasTensor, Node
from tapegrad.keras.models.model import Model


def _nodes_between(inputs, outputs):
    """The nodes that compute ``outputs`` from ``inputs``, in the order they were made."""
    input_ids = {id(x) for x in inputs}
    nodes, seen, stack = [], set(), list(outputs)
    while stack:
        kt = stack.pop()
        if id(kt) in input_ids:
            continue
        if kt._history is None:
            raise ValueError(f"Graph disconnected: cannot find parent for tensor {kt}. The "
                             "following previous layers were accessed without issue: "
                             f"{[n.layer.name for n in nodes]}")
        node = kt._history[0]
        if id(node) in seen:
            continue
        seen.add(id(node))
        nodes.append(node)
        stack.extend(node.inputs)
    return sorted(nodes, key=lambda n: n.id)


def _keras_layer_order(flat_in, flat_out):
    """The layers in Keras's ``model.layers`` order: deepest first (a layer's depth is its
    longest path to an output), layers of one depth in the order a depth-first walk from
    the outputs first meets them. (A ResNet block's shortcut convolution comes after the
    main branch's first convolutions, as in Keras; ``model.layers[:k]`` slices the same
    layers.)"""
    input_ids = {id(x) for x in flat_in}

    def node_of(kt):
        if kt._history is None:  # an ``Input``: its layer is the node
            return getattr(kt, "_input_layer", None)
        return None if id(kt) in input_ids else kt._history[0]

    def layer_of(node):
        return node.layer if isinstance(node, Node) else node

    first_seen, post, parents, done = {}, [], {}, set()
    for out in flat_out:
        stack = [(node_of(out), False)]
        while stack:
            node, expanded = stack.pop()
            if node is None or (not expanded and id(node) in done):
                continue
            if expanded:
                post.append(node)
                continue
            done.add(id(node))
            first_seen.setdefault(id(layer_of(node)), len(first_seen))
            ins = [node_of(x) for x in node.inputs] if isinstance(node, Node) else []
            parents[id(node)] = [n for n in ins if n is not None]
            stack.append((node, True))
            stack.extend((n, False) for n in reversed(parents[id(node)]))
    node_depth, layer_depth, layers = {}, {}, {}
    for node in reversed(post):
        layer = layer_of(node)
        depth = max(node_depth.setdefault(id(node), 0), layer_depth.get(id(layer), 0))
        layer_depth[id(layer)], node_depth[id(node)] = depth, depth
        layers[id(layer)] = layer
        for parent in parents[id(node)]:
            node_depth[id(parent)] = max(depth + 1, node_depth.get(id(parent), 0))
    for x in flat_in:  # an input no output needs: depth 0, as in Keras
        layer = node_of(x)
        if layer is not None and id(layer) not in layers:
            layers[id(layer)], layer_depth[id(layer)] = layer, 0
            first_seen[id(layer)] = len(first_seen)
    return sorted(layers.values(),
                  key=lambda la: (-layer_depth[id(la)], first_seen[id(la)]))


class Functional(Model):
    """A model defined by its input and output ``KerasTensor``s."""

    def __init__(self, inputs, outputs, name=None, trainable=True, **kwargs):
        super().__init__(name=name, trainable=trainable, **kwargs)
        flat_in, flat_out = tf.nest.flatten(inputs), tf.nest.flatten(outputs)
        for x in flat_in + flat_out:
            if not isinstance(x, KerasTensor):
                raise ValueError("All `inputs` and `outputs` values must be KerasTensors. "
                                 f"Received: inputs={inputs}, outputs={outputs}")
        self._inputs_struct = tuple(inputs) if isinstance(inputs, list) else inputs
        self._outputs_struct = outputs
        self._flat_inputs, self._flat_outputs = flat_in, flat_out
        self._nodes = _nodes_between(flat_in, flat_out)
        self._graph_layers = _keras_layer_order(flat_in, flat_out)
        self.input_spec = [InputSpec(shape=x.shape, allow_last_axis_squeeze=True,
                                     name=x.name) for x in flat_in]
        if len(self.input_spec) == 1 and not isinstance(inputs, (list, tuple, dict)):
            self.input_spec = self.input_spec[0]
        self.built = True

    @property
    def layers(self):
        return list(self._graph_layers)

    @property
    def inputs(self):
        return list(self._flat_inputs)

    @property
    def outputs(self):
        return list(self._flat_outputs)

    @property
    def input(self):
        return self._inputs_struct

    @property
    def output(self):
        return self._outputs_struct

    @property
    def input_shape(self):
        return tf.nest.map_structure(lambda x: x.shape, self._inputs_struct)

    @property
    def output_shape(self):
        return tf.nest.map_structure(lambda x: x.shape, self._outputs_struct)

    def __call__(self, *args, **kwargs):
        if args and isinstance(args[0], dict) and not isinstance(self._inputs_struct, dict):
            # inputs by name, for a model of a list of inputs: put them in the model's order
            # before the shapes are checked against its inputs
            args = (self._by_name(args[0]),) + args[1:]
        return super().__call__(*args, **kwargs)

    def _by_name(self, inputs):
        missing = [x.name for x in self._flat_inputs if x.name not in inputs]
        if missing:
            raise ValueError(f"Missing data for input(s) {missing}. You passed a data "
                             f"dictionary with keys {list(inputs)}. Expected the following "
                             f"keys: {[x.name for x in self._flat_inputs]}")
        return [inputs[x.name] for x in self._flat_inputs]

    def call(self, inputs, training=None, mask=None):
        if isinstance(inputs, dict) and not isinstance(self._inputs_struct, dict):
            flat = self._by_name(inputs)
        else:
            flat = tf.nest.flatten(inputs)
        if len(flat) != len(self._flat_inputs):
            raise ValueError(f'Layer "{self.name}" expects {len(self._flat_inputs)} '
                             f"input(s), but it received {len(flat)} input tensors.")
        values = {id(kt): v for kt, v in zip(self._flat_inputs, flat)}

        def value(x):
            return values[id(x)] if isinstance(x, KerasTensor) else x
        for node in self._nodes:
            args = tf.nest.map_structure(value, node.args)
            kwargs = tf.nest.map_structure(value, node.kwargs)
            out = node.layer(*args, **kwargs)
            for kt, v in zip(node.outputs, tf.nest.flatten(out)):
                values[id(kt)] = v
        return tf.nest.map_structure(value, self._outputs_struct)

    def get_config(self):
        """Keras 3's functional config: each layer's config with its ``inbound_nodes``
        (the calls: arguments with ``__keras_tensor__`` references ``[layer name, node
        index, output index]``), then ``input_layers`` and ``output_layers``."""
        from tapegrad.keras.models import graph_config
        return graph_config.functional_config(self)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from tapegrad.keras.models import graph_config
        return graph_config.functional_from_config(cls, config, custom_objects)

    def get_build_config(self):
        return None  # built from its inputs

    def _layer_output_shapes(self):
        shapes = {}
        for x in self._flat_inputs:
            shapes[id(x._input_layer)] = x.shape
        for node in self._nodes:
            outs = [kt.shape for kt in node.outputs]
            shapes.setdefault(id(node.layer), outs[0] if len(outs) == 1 else outs)
        return shapes
