"""``BatchNormalization`` and ``LayerNormalization``, with Keras 3's defaults and forms.

>>> import numpy as np
>>> from tapegrad import keras
>>> bn = keras.layers.BatchNormalization()
>>> y = bn(np.arange(6.0).reshape(3, 2), training=True)
>>> [w.name for w in bn.weights]
['gamma', 'beta', 'moving_mean', 'moving_variance']
"""
from tapegrad.keras import _tf as tf
from tapegrad.keras import backend, initializers
from tapegrad.keras.layers.base import Layer
from tapegrad.keras.layers.input_spec import InputSpec


def _axes(axis, ndim):
    axes = [axis] if isinstance(axis, int) else list(axis)
    return sorted(a % ndim for a in axes)


def _normalize(x, mean, variance, gamma, beta, epsilon):
    # tf.nn.batch_normalization's arrangement: x * inv + (beta - mean * inv)
    inv = tf.math.rsqrt(variance + epsilon)
    if gamma is not None:
        inv = inv * gamma
    res = -mean * inv
    if beta is not None:
        res = res + beta
    return x * inv + res


class BatchNormalization(Layer):
    """Normalises with the batch's statistics while training (and updates the moving
    averages), with the moving averages otherwise."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones",
                 moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, synchronized=False, **kwargs):
        super().__init__(**kwargs)
        self.axis, self.momentum, self.epsilon = int(axis), float(momentum), float(epsilon)
        self.center, self.scale = center, scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer
        self.supports_masking = True

    def build(self, input_shape):
        ndim = len(input_shape)
        axis = self.axis % ndim
        shape = (input_shape[axis],)
        self.gamma = self.add_weight(name="gamma", shape=shape,
                                     initializer=self.gamma_initializer,
                                     regularizer=self.gamma_regularizer) if self.scale else None
        self.beta = self.add_weight(name="beta", shape=shape,
                                    initializer=self.beta_initializer,
                                    regularizer=self.beta_regularizer) if self.center else None
        self.moving_mean = self.add_weight(name="moving_mean", shape=shape,
                                           initializer=self.moving_mean_initializer,
                                           trainable=False)
        self.moving_variance = self.add_weight(name="moving_variance", shape=shape,
                                               initializer=self.moving_variance_initializer,
                                               trainable=False)
        self.input_spec = InputSpec(ndim=ndim, axes={self.axis: input_shape[axis]})
        self._reduction_axes = [i for i in range(ndim) if i != axis]
        self._bshape = [1] * ndim
        self._bshape[axis] = input_shape[axis]

    def call(self, inputs, training=None, mask=None):
        inputs = self._floating(inputs)
        gamma, beta = self.gamma, self.beta
        if training and self.trainable:
            mean, variance = (tf.nn.moments(inputs, axes=self._reduction_axes)
                              if mask is None else self._masked_moments(inputs, mask))
            m = self.momentum
            self.moving_mean.assign(self.moving_mean * m + mean * (1.0 - m))
            self.moving_variance.assign(self.moving_variance * m + variance * (1.0 - m))
        else:
            mean, variance = self.moving_mean, self.moving_variance
        if self.axis % inputs.ndim != inputs.ndim - 1:
            mean, variance = (tf.reshape(mean, self._bshape),
                              tf.reshape(variance, self._bshape))
            gamma = None if gamma is None else tf.reshape(gamma, self._bshape)
            beta = None if beta is None else tf.reshape(beta, self._bshape)
        return _normalize(inputs, mean, variance, gamma, beta, self.epsilon)

    def _masked_moments(self, inputs, mask):
        """Keras's moments over the unmasked entries only (mask: one axis fewer)."""
        if mask.ndim != inputs.ndim - 1:
            raise ValueError("The mask provided should be one dimension less than the "
                             f"inputs. Received: mask.shape={tuple(mask.shape)}, "
                             f"inputs.shape={tuple(inputs.shape)}")
        weights = tf.broadcast_to(tf.expand_dims(tf.cast(mask, inputs.dtype), -1),
                                  tf.shape(inputs))
        axes, eps = self._reduction_axes, backend.epsilon()
        weighted = weights * inputs
        count = tf.reduce_sum(weights, axes, keepdims=True)
        mean = tf.reduce_sum(weighted, axes, keepdims=True) / (count + eps)
        variance = tf.reduce_sum(weights * tf.square(weighted - mean), axes,
                                 keepdims=True) / (count + eps)
        return tf.squeeze(mean), tf.squeeze(variance)


class LayerNormalization(Layer):
    """Normalises each sample over ``axis`` (the last by default)."""

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                 **kwargs):
        super().__init__(**kwargs)
        if not isinstance(axis, (int, list, tuple)):
            raise TypeError("Expected an int or a list/tuple of ints for the argument "
                            f"'axis', but received: {axis!r}")
        self.axis, self.epsilon = axis, float(epsilon)
        self.center, self.scale = center, scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer
        self.supports_masking = True

    def build(self, input_shape):
        ndim = len(input_shape)
        axes = _axes(self.axis, ndim)
        if len(set(axes)) != len(axes):
            raise ValueError(f"Duplicate axes are not allowed. Received: axis={self.axis}")
        self._axes = axes
        shape = tuple(input_shape[a] for a in axes)
        self.gamma = self.add_weight(name="gamma", shape=shape,
                                     initializer=self.gamma_initializer,
                                     regularizer=self.gamma_regularizer) if self.scale else None
        self.beta = self.add_weight(name="beta", shape=shape,
                                    initializer=self.beta_initializer,
                                    regularizer=self.beta_regularizer) if self.center else None
        self._bshape = [input_shape[i] if i in axes else 1 for i in range(ndim)]
        self._reshape = axes != [ndim - 1]

    def call(self, inputs):
        inputs = self._floating(inputs)
        mean, variance = tf.nn.moments(inputs, axes=self._axes, keepdims=True)
        gamma, beta = self.gamma, self.beta
        if self._reshape:
            gamma = None if gamma is None else tf.reshape(gamma, self._bshape)
            beta = None if beta is None else tf.reshape(beta, self._bshape)
        return _normalize(inputs, mean, variance, gamma, beta, self.epsilon)
