"""``BatchNormalization``, ``LayerNormalization``, ``GroupNormalization`` and
``UnitNormalization``, with Keras 3's defaults and forms.

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
    _config_extra = {"renorm": False, "renorm_clipping": None, "renorm_momentum": 0.99}

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
    _config_extra = {"rms_scaling": False}

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


class GroupNormalization(Layer):
    """Normalises each sample over groups of channels (``groups=-1``: one channel a group,
    instance normalisation; ``groups=1``: all of them, as ``LayerNormalization`` over the
    non-batch axes). Keras's weight order: ``gamma``, then ``beta``.

    >>> import numpy as np
    >>> from tapegrad import keras
    >>> gn = keras.layers.GroupNormalization(groups=2)
    >>> y = gn(np.arange(16.0).reshape(2, 2, 4))
    >>> [w.name for w in gn.weights], [round(float(v), 3) for v in np.ravel(y[0, :, :2])]
    (['gamma', 'beta'], [-1.213, -0.728, 0.728, 1.213])
    """

    def __init__(self, groups=32, axis=-1, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                 **kwargs):
        if not isinstance(groups, int) or (groups <= 0 and groups != -1):
            raise ValueError("Received an invalid value for argument `groups`, expected a "
                             "positive integer (or `-1` for instance normalization). "
                             f"Received: groups={groups}")
        super().__init__(**kwargs)
        self.supports_masking = True
        self.autocast = False  # Keras: computes in the input's float dtype, returns its own
        self.groups, self.axis, self.epsilon = groups, axis, epsilon
        self.center, self.scale = center, scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer
        self.beta_constraint, self.gamma_constraint = beta_constraint, gamma_constraint

    def build(self, input_shape):
        ndim = len(input_shape)
        if not -ndim <= self.axis < ndim:
            raise ValueError(f"Axis {self.axis} is out of bounds for input shape "
                             f"{tuple(input_shape)}. Received: axis={self.axis}")
        dim = input_shape[self.axis]
        if dim is None:
            raise ValueError(f"Axis {self.axis} of input tensor should have a defined "
                             "dimension but the layer received an input with shape "
                             f"{tuple(input_shape)}.")
        if self.groups == -1:
            self.groups = dim  # as Keras: the config then names the channel count
        if dim < self.groups:
            raise ValueError(f"Number of groups ({self.groups}) cannot be more than the "
                             f"number of channels ({dim}).")
        if dim % self.groups:
            raise ValueError(f"Number of groups ({self.groups}) must be a multiple of the "
                             f"number of channels ({dim}).")
        self.input_spec = InputSpec(ndim=ndim, axes={self.axis: dim})
        self.gamma = self.add_weight(name="gamma", shape=(dim,),
                                     initializer=self.gamma_initializer,
                                     regularizer=self.gamma_regularizer,
                                     constraint=self.gamma_constraint) if self.scale else None
        self.beta = self.add_weight(name="beta", shape=(dim,),
                                    initializer=self.beta_initializer,
                                    regularizer=self.beta_regularizer,
                                    constraint=self.beta_constraint) if self.center else None

    def call(self, inputs):
        inputs = self._floating(inputs)
        shape = tuple(inputs.shape)
        a = self.axis % len(shape)
        g = self.groups
        # the channel axis split into (groups, channels per group); the statistics of a
        # sample's group are over every other axis but the batch
        grouped = shape[:a] + (g, shape[a] // g) + shape[a + 1:]
        x = tf.reshape(inputs, (-1,) + grouped[1:])
        axes = [i for i in range(1, len(grouped)) if i != a]
        mean, variance = tf.nn.moments(x, axes=axes, keepdims=True)
        bshape = [1] * len(grouped)
        bshape[a], bshape[a + 1] = g, shape[a] // g
        gamma = None if self.gamma is None else tf.reshape(self.gamma, bshape)
        beta = None if self.beta is None else tf.reshape(self.beta, bshape)
        y = _normalize(x, mean, variance, gamma, beta, self.epsilon)
        return tf.cast(tf.reshape(y, (-1,) + shape[1:]), self._dtype)

    def get_config(self):
        return {**super().get_config(), "groups": self.groups, "axis": self.axis,
                "epsilon": self.epsilon, "center": self.center, "scale": self.scale}


class UnitNormalization(Layer):
    """Each sample scaled to unit L2 norm along ``axis`` (an int or a list), as Keras 3:
    ``x * rsqrt(max(sum(x**2), 1e-24))``.

    >>> from tapegrad import keras
    >>> keras.layers.UnitNormalization()([[3.0, 4.0]]).numpy().astype(float).round(3).tolist()
    [[0.6, 0.8]]
    """

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        if isinstance(axis, (list, tuple)):
            axis = list(axis)
        elif not isinstance(axis, int):
            raise TypeError("Invalid value for `axis` argument: expected an int or a "
                            f"list/tuple of ints. Received: axis={axis}")
        self.axis = axis
        self.supports_masking = True

    def call(self, inputs):
        from tapegrad.keras.ops import normalize
        return normalize(inputs, axis=self.axis, order=2, epsilon=1e-12)
