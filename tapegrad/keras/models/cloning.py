"""``keras.models.clone_model`` and ``model_from_json``: a model of new layers (fresh
weights) with the same structure, as Keras 3 makes it.

A functional model's calls are replayed on new ``Input`` tensors with each layer cloned
once (a shared layer stays shared); a Sequential model gets the clones in order; another
model is rebuilt from its config (``from_config(get_config())``) and built like the
original.

>>> import numpy as np
>>> from tapegrad import keras
>>> x = keras.Input((2,))
>>> model = keras.Model(x, keras.layers.Dense(3)(x))
>>> clone = keras.models.clone_model(model)
>>> clone.output_shape, clone.layers[1] is model.layers[1]
((None, 3), False)
"""
import json

from tapegrad.keras import _tf as tf
from tapegrad.keras.layers.core import Input, InputLayer
from tapegrad.keras.layers.symbolic import KerasTensor


def _default_clone(layer):
    return layer.__class__.from_config(layer.get_config())


def clone_model(model, input_tensors=None, clone_function=None, call_function=None,
                recursive=False, **kwargs):
    """A copy of ``model`` made of new layers (``clone_function(layer)``, by default the
    layer's class ``from_config`` its ``get_config``), its weights freshly initialised."""
    from tapegrad.keras.models.functional import Functional
    from tapegrad.keras.models.sequential import Sequential
    clone_function = clone_function or _default_clone
    if isinstance(model, Sequential):
        return _clone_sequential(model, clone_function)
    if isinstance(model, Functional) and type(model) is Functional:
        return _clone_functional(model, input_tensors, clone_function)
    clone = model.__class__.from_config(model.get_config())
    build = model.get_build_config() if model.built else None
    if build:
        clone.build_from_config(build)
    return clone


def _clone_sequential(model, clone_function):
    from tapegrad.keras.models.sequential import Sequential
    layers = []
    for layer in model._stack:
        if isinstance(layer, InputLayer):
            layers.append(Input(batch_shape=layer.batch_shape, dtype=layer.output.dtype,
                                name=layer.name))
        else:
            layers.append(clone_function(layer))
    clone = Sequential(layers, name=model.name, trainable=model.trainable)
    if not clone.built and model.built and getattr(model, "_symbolic_input_shape", None):
        clone.build(model._symbolic_input_shape)
    return clone


def _clone_functional(model, input_tensors, clone_function):
    from tapegrad.keras.models.model import Model
    if input_tensors is None:
        new_inputs = [Input(batch_shape=x.shape, dtype=x.dtype, name=x._input_layer.name)
                      for x in model._flat_inputs]
    else:
        new_inputs = tf.nest.flatten(input_tensors)
    values = {id(old): new for old, new in zip(model._flat_inputs, new_inputs)}
    clones = {}

    def value(x):
        return values[id(x)] if isinstance(x, KerasTensor) else x
    for node in model._nodes:
        layer = node.layer
        if id(layer) not in clones:
            clones[id(layer)] = clone_function(layer)
        out = clones[id(layer)](*tf.nest.map_structure(value, node.args),
                                **tf.nest.map_structure(value, node.kwargs))
        for old, new in zip(node.outputs, tf.nest.flatten(out)):
            values[id(old)] = new
    inputs = tf.nest.pack_sequence_as(model._inputs_struct, new_inputs) \
        if isinstance(model._inputs_struct, (list, tuple, dict)) else new_inputs[0]
    return Model(inputs, tf.nest.map_structure(value, model._outputs_struct), name=model.name,
                 trainable=model.trainable)


def model_from_json(json_string, custom_objects=None):
    """The model of ``model.to_json()`` (new weights), its classes from tapegrad.keras,
    the registered ones and ``custom_objects``."""
    from tapegrad.keras.serialization import deserialize_keras_object
    return deserialize_keras_object(json.loads(json_string), custom_objects=custom_objects)
