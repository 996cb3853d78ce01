"""Activation layers with parameters: ``ReLU``, ``LeakyReLU``, ``PReLU``, ``Softmax``, ``ELU``.

>>> from tapegrad import keras
>>> keras.layers.LeakyReLU()([-1.0, 1.0]).numpy().tolist()
[-0.30000001192092896, 1.0]
"""
from tapegrad.keras import _tf as tf
from tapegrad.keras import activations
from tapegrad.keras.layers.base import Layer
from tapegrad.keras.layers.input_spec import InputSpec


class ReLU(Layer):
    """max(x, 0) with Keras's optional ``max_value``, ``negative_slope`` and ``threshold``."""

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        if max_value is not None and max_value < 0.0:
            raise ValueError("max_value of a ReLU layer cannot be a negative value. "
                             f"Received: max_value={max_value}")
        if negative_slope is None or negative_slope < 0.0:
            raise ValueError("negative_slope of a ReLU layer cannot be a negative value. "
                             f"Received: negative_slope={negative_slope}")
        self.max_value, self.negative_slope, self.threshold = max_value, negative_slope, threshold

    def call(self, inputs):
        return activations.relu(inputs, negative_slope=self.negative_slope,
                                max_value=self.max_value, threshold=self.threshold)


class LeakyReLU(Layer):
    """x for x > 0, else ``negative_slope * x`` (Keras 3's default slope is 0.3)."""

    def __init__(self, negative_slope=0.3, **kwargs):
        if "alpha" in kwargs:
            negative_slope = kwargs.pop("alpha")
        super().__init__(**kwargs)
        self.supports_masking = True
        if negative_slope is None or negative_slope < 0:
            raise ValueError("The negative_slope value of a Leaky ReLU layer cannot be None "
                             f"or negative value. Expected a float. Received: "
                             f"negative_slope={negative_slope}")
        self.negative_slope = negative_slope

    def call(self, inputs):
        return tf.nn.leaky_relu(inputs, alpha=self.negative_slope)


class Softmax(Layer):
    """Softmax along ``axis``; a ``mask`` (True = keep) sends masked logits to -1e9."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.axis = axis

    def call(self, inputs, mask=None):
        if mask is not None:
            keep = tf.cast(mask, "bool") if mask.dtype.kind == "b" else mask > 0.5
            out = tf.nn.softmax(tf.where(keep, inputs, -1e9 if inputs.dtype.itemsize > 2
                                         else -3e4), axis=self.axis)
            return tf.where(keep, out, tf.zeros_like(out))  # a fully masked row gives 0s
        return activations._remember_logits(tf.nn.softmax(inputs, axis=self.axis), inputs)


class ELU(Layer):
    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.alpha = alpha

    def call(self, inputs):
        return activations.elu(inputs, alpha=self.alpha)


class PReLU(Layer):
    """x for x >= 0, else ``alpha * x`` with a learned ``alpha`` per input entry (Keras's
    ``relu(x) - alpha * relu(-x)``); ``shared_axes`` share one alpha along those axes
    (``[1, 2]``: one per channel of an image).

    >>> import numpy as np
    >>> from tapegrad import keras
    >>> layer = keras.layers.PReLU(alpha_initializer=keras.initializers.Constant(0.25))
    >>> layer(np.array([[-2.0, 3.0]], "float32")).numpy().tolist()
    [[-0.5, 3.0]]
    """

    def __init__(self, alpha_initializer="Zeros", alpha_regularizer=None,
                 alpha_constraint=None, shared_axes=None, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.alpha_initializer = alpha_initializer
        self.alpha_regularizer, self.alpha_constraint = alpha_regularizer, alpha_constraint
        if shared_axes is None:
            self.shared_axes = None
        elif isinstance(shared_axes, (list, tuple)):
            self.shared_axes = list(shared_axes)
        else:
            self.shared_axes = [shared_axes]

    def build(self, input_shape):
        shape = list(input_shape[1:])
        for i in self.shared_axes or ():
            shape[i - 1] = 1
        self.alpha = self.add_weight(shape=shape, name="alpha",
                                     initializer=self.alpha_initializer,
                                     regularizer=self.alpha_regularizer,
                                     constraint=self.alpha_constraint)
        axes = {i: input_shape[i] for i in range(1, len(input_shape))
                if self.shared_axes and i not in self.shared_axes}
        self.input_spec = InputSpec(ndim=len(input_shape), axes=axes)

    def call(self, inputs):
        return tf.nn.relu(inputs) - self.alpha * tf.nn.relu(-inputs)

    def compute_output_shape(self, input_shape):
        return input_shape
