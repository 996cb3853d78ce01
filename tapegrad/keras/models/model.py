"""``keras.Model``: a layer with training (``compile``, ``fit``, ...), ``summary`` and weight
files. ``Model(inputs, outputs)`` makes a functional model; subclasses define ``call``.

>>> import numpy as np
>>> from tapegrad import keras
>>> class MLP(keras.Model):
...     def __init__(self):
...         super().__init__()
...         self.hidden = keras.layers.Dense(8, activation="tanh")
...         self.out = keras.layers.Dense(1)
...     def call(self, x, training=None):
...         return self.out(self.hidden(x))
>>> model = MLP()
>>> model(np.ones((2, 3))).shape, len(model.trainable_variables)
(TensorShape([2, 1]), 4)
"""
from tapegrad.keras import saving
from tapegrad.keras.layers.base import Layer
from tapegrad.keras.models import summary as _summary
from tapegrad.keras.models.trainer import Trainer


class Model(Trainer, Layer):
    """A model: a layer that can be trained, summarised and saved."""

    _masks_inside = True

    def __new__(cls, *args, **kwargs):
        if cls is Model and _functional_arguments(args, kwargs):
            from tapegrad.keras.models.functional import Functional
            return Layer.__new__(Functional, *args, **kwargs)
        return Layer.__new__(cls, *args, **kwargs)

    def __init__(self, *args, **kwargs):
        if _functional_arguments(args, kwargs):
            # A subclass called as ``CustomModel(inputs, outputs)`` (the "customizing
            # fit()" guide) is a functional model with the subclass's methods: as Keras
            # does, put Functional in its bases and initialise it as one.
            from tapegrad.keras.models.functional import Functional
            _inject_functional(type(self), Functional)
            Functional.__init__(self, *args, **kwargs)
            return
        name = kwargs.pop("name", None)
        trainable = kwargs.pop("trainable", True)
        Layer.__init__(self, name=name, trainable=trainable, dtype=kwargs.pop("dtype", None),
                       **kwargs)  # others are Keras's "Unrecognized keyword arguments"
        Trainer.__init__(self)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A model from ``get_config``: a functional model's config (layers, inputs,
        outputs) is rebuilt as one (``Model.from_config`` as the functional guide uses
        it), other configs are the constructor's arguments."""
        import inspect
        functional = all(k in config for k in ("name", "layers", "input_layers",
                                                "output_layers"))
        spec = inspect.getfullargspec(cls.__init__)
        if functional and (cls is Model or spec.args[1:3] == ["inputs", "outputs"] or (
                spec.varargs == "args" and spec.varkw == "kwargs")):
            from tapegrad.keras.models import graph_config
            return graph_config.functional_from_config(cls, config, custom_objects)
        try:
            return cls(**config)
        except TypeError as e:
            raise TypeError(f"Unable to revive model from config. When overriding the "
                            f"`get_config()` method, make sure that the returned config "
                            f"contains all items used as arguments in the constructor to "
                            f"{cls}, which is the default behavior. You can override this "
                            f"default behavior by defining a `from_config(cls, config)` "
                            f"class method to specify how to create an instance of "
                            f"{cls.__name__} from its config.\n\nReceived config={config}"
                            f"\n\nError encountered during deserialization: {e}") from e

    @property
    def layers(self):
        """The direct sublayers, in the order they were assigned."""
        return list(self._layers)

    def get_layer(self, name=None, index=None):
        if index is not None:
            return self.layers[index]
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}. Existing layers are: "
                         f"{[layer.name for layer in self.layers]}.")

    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False,
                show_trainable=False, layer_range=None):
        """Print a table of the layers, their output shapes and parameter counts."""
        _summary.print_summary(self, print_fn=print_fn, show_trainable=show_trainable)

    def save(self, filepath, overwrite=True, zipped=None, **kwargs):
        """Write the model (config, weights, optimizer state, compile settings) to a
        ``.keras`` file; ``keras.models.load_model`` reads it (see ``model_file``)."""
        from tapegrad.keras import model_file
        model_file.save_model(self, filepath, overwrite=overwrite, zipped=zipped, **kwargs)

    def to_json(self, **kwargs):
        """The model's config as JSON (``keras.models.model_from_json`` reads it)."""
        import json
        from tapegrad.keras.serialization import serialize_keras_object
        return json.dumps(serialize_keras_object(self), **kwargs)

    def save_weights(self, filepath, overwrite=True):
        """Write the weights to ``filepath`` (a ``.weights.npz`` zip: see ``saving``)."""
        saving.save_weights(self, filepath, overwrite=overwrite)

    def load_weights(self, filepath, skip_mismatch=False):
        """Read weights written by ``save_weights`` (validated; nothing is unpickled)."""
        saving.load_weights(self, filepath, skip_mismatch=skip_mismatch)

    def _layer_output_shapes(self):
        return {}


def _functional_arguments(args, kwargs):
    """Whether a Model is called with a functional model's ``(inputs, outputs)``."""
    return (len(args) >= 2 or (len(args) == 1 and "outputs" in kwargs)
            or ("inputs" in kwargs and "outputs" in kwargs))


def _inject_functional(cls, functional):
    """``cls`` with ``Model`` replaced by ``functional`` throughout its bases."""
    if cls is Model:
        return functional
    if cls is object or issubclass(cls, functional) or not issubclass(cls, Model):
        return cls
    cls.__bases__ = tuple(_inject_functional(base, functional) for base in cls.__bases__)
    return cls
