"""``TimeDistributed``: one layer applied to every time step of a sequence.

As in Keras 3, the wrapped layer is called once per step (axis 1) and the outputs are
stacked back along that axis; so a ``BatchNormalization`` inside normalizes each step over
the batch, and a ``Dense`` gives each step's own matrix product.

>>> import numpy as np
>>> from tapegrad import keras
>>> layer = keras.layers.TimeDistributed(keras.layers.Dense(2, kernel_initializer="ones"))
>>> layer(np.ones((4, 3, 5), "float32")).shape
TensorShape([4, 3, 2])
"""
from tapegrad.keras import _tf as tf
from tapegrad.keras.layers.base import Layer, _call_facts


class TimeDistributed(Layer):
    """Applies ``layer`` to each slice ``inputs[:, t]``; ``mask`` (batch, steps) is passed
    on, step by step, to a layer whose ``call`` takes one."""

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError("Please initialize `TimeDistributed` layer with a "
                             f"`keras.layers.Layer` instance. Received: {layer}")
        super().__init__(**kwargs)
        self.layer = layer
        self.supports_masking = False

    @staticmethod
    def _child_shape(input_shape):
        if not isinstance(input_shape, (tuple, list)) or len(input_shape) < 3:
            raise ValueError("`TimeDistributed` Layer should be passed an `input_shape` with "
                             f"at least 3 dimensions, received: {input_shape}")
        return (input_shape[0], *input_shape[2:])

    def build(self, input_shape):
        child = self._child_shape(tuple(input_shape))
        if not self.layer.built:
            self.layer.build_from_config({"input_shape": child})

    def compute_output_shape(self, input_shape):
        child = self.layer.compute_output_shape(self._child_shape(tuple(input_shape)))
        return (child[0], input_shape[1], *child[1:])

    def call(self, inputs, training=None, mask=None):
        if mask is not None:
            if mask.ndim < 2:
                raise ValueError("The `mask` passed to the `TimeDistributed` layer must be at "
                                 "least 2D (e.g., `(batch_size, timesteps)`), but it has "
                                 f"{mask.ndim} dimension(s) with shape {tuple(mask.shape)}.")
            if tuple(mask.shape[:2]) != tuple(inputs.shape[:2]):
                raise ValueError("The `mask` passed to the `TimeDistributed` layer has a shape "
                                 f"{tuple(mask.shape)} that is incompatible with the input "
                                 f"shape {tuple(inputs.shape)}.")
        has_training, has_mask = _call_facts(type(self.layer))
        steps = []
        for t in range(inputs.shape[1]):
            kwargs = {}
            if has_mask and mask is not None:
                kwargs["mask"] = mask[:, t]
            if has_training:
                kwargs["training"] = training
            steps.append(self.layer.call(inputs[:, t], **kwargs))
        return tf.stack(steps, axis=1)
