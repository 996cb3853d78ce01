"""``keras.Sequential``: a stack of layers, each fed the previous one's output. With an
``Input`` (or ``input_shape=`` on the first layer) it is built at once; otherwise on its
first call.

>>> import numpy as np
>>> from tapegrad import keras
>>> model = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(2)])
>>> model.built, model(np.ones((4, 3))).shape
(True, TensorShape([4, 2]))
"""
from tapegrad.keras.layers.base import Layer
from tapegrad.keras.layers.core import Input, InputLayer
from tapegrad.keras.layers.symbolic import KerasTensor
from tapegrad.keras.models.model import Model


class Sequential(Model):
    """A linear stack of layers."""

    def __init__(self, layers=None, trainable=True, name=None):
        super().__init__(trainable=trainable, name=name)
        self._stack = []
        self._output_shapes = {}
        for layer in layers or ():
            self.add(layer, rebuild=False)
        self._maybe_rebuild()

    def add(self, layer, rebuild=True):
        """Append a layer (an ``Input`` tensor becomes the model's ``InputLayer``)."""
        if isinstance(layer, KerasTensor) and getattr(layer, "_input_layer", None):
            layer = layer._input_layer
        if not isinstance(layer, Layer):
            raise ValueError("Only instances of `keras.Layer` can be added to a Sequential "
                             f"model. Received: {layer} (of type {type(layer)})")
        if isinstance(layer, InputLayer) and self._stack and isinstance(self._stack[0],
                                                                        InputLayer):
            raise ValueError(f"Sequential model '{self.name}' has already been configured "
                             f"to use input shape {self._stack[0].batch_shape}. You cannot "
                             f"add a different Input layer to it.")
        if isinstance(layer, InputLayer) and self._stack:
            raise ValueError("An `Input` can only be the first layer of a Sequential model.")
        if any(x is layer for x in self._stack):
            raise ValueError(f"Layer '{layer.name}' is already in the model.")
        self._stack.append(layer)
        if rebuild:
            self._maybe_rebuild()

    def pop(self, rebuild=True):
        layer = self.layers[-1]
        self._stack.remove(layer)
        self.built = False
        if rebuild:
            self._maybe_rebuild()
        return layer

    def _maybe_rebuild(self):
        self.built = False
        if not self._stack:
            return
        first = self._stack[0]
        if isinstance(first, InputLayer):
            if len(self._stack) > 1:
                self.build(first.batch_shape)
        elif first._input_shape_arg is not None:
            self.build((None,) + first._input_shape_arg)

    @property
    def layers(self):
        return [x for x in self._stack if not isinstance(x, InputLayer)]

    def build(self, input_shape=None):
        if input_shape is None:
            raise ValueError("You must provide an `input_shape` argument.")
        shape = (None,) + tuple(input_shape)[1:]
        first = self._stack[0] if self._stack else None
        x = first.output if isinstance(first, InputLayer) else Input(batch_shape=shape)
        self._symbolic = [x, None]
        self._output_shapes = {}
        for layer in self.layers:
            x = layer(x)
            self._output_shapes[id(layer)] = getattr(x, "shape", None)
        self._symbolic[1] = x
        self._symbolic_input_shape = shape
        self.built = True

    def _graph_end(self, i, what):
        if not self.built or "_symbolic" not in self.__dict__:
            raise ValueError(f"The layer {self.name} has never been called and thus has no "
                             f"defined {what}.")
        return self._symbolic[i]

    @property
    def input(self):
        """The symbolic input of the built model (a feature extractor's
        ``keras.Model(model.input, [layer.output for layer in model.layers])``)."""
        return self._graph_end(0, "input")

    @property
    def output(self):
        return self._graph_end(1, "output")

    @property
    def inputs(self):
        return [self.input]

    @property
    def outputs(self):
        return [self.output]

    def call(self, inputs, training=None, mask=None):
        for layer in self.layers:
            inputs = layer(inputs)
        return inputs

    @property
    def input_shape(self):
        return getattr(self, "_symbolic_input_shape", None)

    @property
    def output_shape(self):
        layers = self.layers
        return self._output_shapes.get(id(layers[-1])) if layers else None

    def _layer_output_shapes(self):
        return dict(self._output_shapes)

    def get_config(self):
        from tapegrad.keras.serialization import serialize_keras_object
        config = {"name": self.name, "trainable": self.trainable, "dtype": self._dtype_config(),
                  "layers": [serialize_keras_object(x) for x in self._stack]}
        if self.built and not (self._stack and isinstance(self._stack[0], InputLayer)):
            config["build_input_shape"] = getattr(self, "_symbolic_input_shape", None)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from tapegrad.keras.serialization import deserialize_keras_object
        config = dict(config)
        layers = [deserialize_keras_object(c, custom_objects)
                  for c in config.pop("layers", [])]
        shape = config.pop("build_input_shape", None)
        model = cls(name=config.get("name"), trainable=config.get("trainable", True))
        for layer in layers:
            model.add(layer, rebuild=False)
        model._maybe_rebuild()
        if not model.built and shape is not None:
            model.build(tuple(shape))
        return model

    def get_build_config(self):
        return None  # the config's layers and build_input_shape say it all
