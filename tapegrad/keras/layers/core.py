"""The core layers: ``Dense``, ``Embedding``, ``Activation``, ``Lambda``, ``Dropout``,
``Flatten``, ``Reshape``, and the model inputs ``Input`` / ``InputLayer``.

>>> import numpy as np
>>> from tapegrad import keras
>>> layer = keras.layers.Dense(4, activation="relu")
>>> layer(np.ones((2, 3))).shape, [w.shape for w in layer.weights]
(TensorShape([2, 4]), [TensorShape([3, 4]), TensorShape([4])])
"""
import math

from tapegrad.keras import _tf as tf
from tapegrad.keras import activations, backend, initializers, masking
from tapegrad.keras.layers.base import Layer
from tapegrad.keras.layers.input_spec import InputSpec
from tapegrad.keras.layers.symbolic import KerasTensor


class Dense(Layer):
    """``activation(inputs @ kernel + bias)`` on the last axis."""
    _config_omits = ("lora_rank", "activity_regularizer")  # Keras lists lora_rank if set
    _config_extra = {"quantization_config": None}

    def __init__(self, units, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, lora_rank=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if not isinstance(units, int) or units <= 0:
            raise ValueError(f"Received an invalid value for `units`, expected a positive "
                             f"integer. Received: units={units}")
        self.units = units
        self.activation = activations.get(activation)
        self._identity = self.activation is activations.linear
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.input_spec = InputSpec(min_ndim=2)
        self.supports_masking = True

    def build(self, input_shape):
        input_dim = input_shape[-1]
        self.kernel = self.add_weight(name="kernel", shape=(input_dim, self.units),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = self.add_weight(name="bias", shape=(self.units,),
                                    initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None
        self.input_spec = InputSpec(min_ndim=2, axes={-1: input_dim})

    def call(self, inputs, training=None):
        inputs = self._floating(inputs)
        x = tf.matmul(inputs, self.kernel) if inputs.ndim == 2 else tf.tensordot(
            inputs, self.kernel, 1)
        if self.bias is not None:
            x = x + self.bias
        return x if self._identity else self.activation(x)

    def get_config(self):
        return {**super().get_config(), "units": self.units, "use_bias": self.use_bias,
                "activation": activations.serialize(self.activation)}


class Embedding(Layer):
    """Rows of an ``(input_dim, output_dim)`` table, looked up by integer index."""
    _config_omits = ("lora_rank",)
    _config_extra = {"activity_regularizer": None, "quantization_config": None}

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform",
                 embeddings_regularizer=None, embeddings_constraint=None, mask_zero=False,
                 weights=None, lora_rank=None, **kwargs):
        kwargs.pop("input_length", None)
        super().__init__(**kwargs)
        self.input_dim, self.output_dim = input_dim, output_dim
        self.embeddings_initializer = initializers.get(
            "random_uniform" if embeddings_initializer == "uniform" else embeddings_initializer)
        self.embeddings_regularizer = embeddings_regularizer
        self.embeddings_constraint = embeddings_constraint
        self.mask_zero = mask_zero
        self._makes_masks = self.supports_masking = bool(mask_zero)
        self._initial = weights

    def build(self, input_shape=None):
        self.embeddings = self.add_weight(
            name="embeddings", shape=(self.input_dim, self.output_dim),
            initializer=self.embeddings_initializer, regularizer=self.embeddings_regularizer,
            constraint=self.embeddings_constraint)
        if self._initial is not None:
            self.set_weights(self._initial)

    def call(self, inputs):
        from tapegrad.keras.ops.arrays import take
        if inputs.dtype.name not in ("int32", "int64"):
            inputs = tf.cast(inputs, "int32")
        # Keras's ops.take: a negative id counts from the end, one past it raises
        return take(self.embeddings, inputs, axis=0)

    def compute_mask(self, inputs, previous_mask=None):
        """``inputs != 0`` with ``mask_zero=True`` (index 0 is padding), else None."""
        if not self.mask_zero:
            return None
        return tf.not_equal(inputs, 0)


class Activation(Layer):
    """Applies an activation function (a name or a callable)."""

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)
        self.supports_masking = True

    def call(self, inputs):
        return self.activation(inputs)


class Identity(Layer):
    """Its input, unchanged (a placeholder layer, as Keras's)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, inputs):
        return tf.nest.map_structure(tf.identity, inputs)


class Lambda(Layer):
    """Wraps a function of the inputs as a layer (it holds no weights)."""

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        self.function = function
        self.arguments = arguments or {}
        self._output_shape = output_shape
        self.mask = mask
        self.supports_masking = True

    def call(self, inputs, mask=None, training=None):
        return self.function(inputs, **self.arguments)

    def compute_mask(self, inputs, previous_mask=None):
        """``mask(inputs, previous_mask)`` for a function ``mask``, a fixed ``mask``, or
        the input's mask (Keras's Lambda)."""
        if callable(self.mask):
            return self.mask(inputs, previous_mask)
        return self.mask if self.mask is not None else previous_mask


class Dropout(Layer):
    """Zeroes a fraction ``rate`` of the inputs while training (the rest scaled by
    1 / (1 - rate)); the identity otherwise."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= rate <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float "
                             f"value between 0 and 1. Received: rate={rate}")
        self.rate, self.noise_shape, self.seed = rate, noise_shape, seed
        self.supports_masking = True

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:
            return tf.zeros_like(inputs)
        shape = tf.shape(inputs) if self.noise_shape is None else [
            d if d is not None else inputs.shape[i] for i, d in enumerate(self.noise_shape)]
        keep = tf.random.uniform(shape, dtype=inputs.dtype) >= self.rate
        return tf.where(keep, inputs / (1.0 - self.rate), tf.zeros_like(inputs))


class Masking(Layer):
    """Masks the timesteps whose features all equal ``mask_value``: they become 0 and the
    output's mask (``(batch, steps)``) is False there, for the layers downstream.

    >>> import numpy as np
    >>> from tapegrad import keras
    >>> x = np.array([[[1.0, 2.0], [0.0, 0.0], [3.0, 0.0]]])
    >>> keras.layers.Masking().compute_mask(x).numpy().tolist()
    [[True, False, True]]
    """
    _makes_masks = True

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.mask_value = mask_value
        self.supports_masking = True

    def compute_mask(self, inputs, previous_mask=None):
        return tf.reduce_any(tf.not_equal(inputs, self.mask_value), axis=-1)

    def call(self, inputs):
        keep = tf.reduce_any(tf.not_equal(inputs, self.mask_value), axis=-1, keepdims=True)
        out = tf.where(keep, inputs, tf.zeros_like(inputs))
        masking.set_keras_mask(out, tf.squeeze(keep, axis=-1))
        return out


class Flatten(Layer):
    """Reshapes ``(batch, ...)`` to ``(batch, n)``."""

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = backend.standardize_data_format(data_format)
        self.input_spec = InputSpec(min_ndim=1)

    def call(self, inputs):
        if inputs.ndim == 1:
            return tf.expand_dims(inputs, 1)
        if self.data_format == "channels_first" and inputs.ndim > 2:
            # channels moved last first, so the flat order is the channels-last one (Keras)
            inputs = tf.transpose(inputs, (0, *range(2, inputs.ndim), 1))
        return tf.reshape(inputs, (inputs.shape[0], math.prod(inputs.shape[1:])))


class Reshape(Layer):
    """Reshapes each sample to ``target_shape`` (one entry may be -1)."""

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(target_shape)

    def call(self, inputs):
        return tf.reshape(inputs, (inputs.shape[0],) + self.target_shape)


class InputLayer(Layer):
    """The first layer of a functional or Sequential model; holds its ``KerasTensor``."""

    def __init__(self, shape=None, batch_size=None, dtype=None, sparse=None,
                 batch_shape=None, input_tensor=None, optional=False, name=None, **kwargs):
        if "input_shape" in kwargs:
            shape = kwargs.pop("input_shape")
        if "batch_input_shape" in kwargs:
            batch_shape = kwargs.pop("batch_input_shape")
        string = dtype is not None and backend.standardize_dtype(dtype) == "string"
        # (a string input has the default policy, as in Keras: no float dtype computes it)
        super().__init__(name=name, dtype=None if string else dtype, **kwargs)
        if shape is not None and batch_shape is not None:
            raise ValueError("You cannot pass both `shape` and `batch_shape` at the same "
                             "time.")
        if input_tensor is not None:
            batch_shape = input_tensor.shape
        elif batch_shape is None:
            if shape is None:
                raise ValueError("You must pass a `shape` argument.")
            shape = (shape,) if isinstance(shape, int) else tuple(shape)
            batch_shape = (batch_size,) + shape
        self._batch_shape = tuple(batch_shape)
        self.built = True
        out = input_tensor if input_tensor is not None else KerasTensor(
            self._batch_shape, dtype=backend.standardize_dtype(dtype), name=self.name)
        out._history = None
        out._input_layer = self
        self.__dict__["_input_tensor"] = out

    @property
    def output(self):
        return self._input_tensor

    @property
    def batch_shape(self):
        return self._batch_shape

    def get_config(self):
        return {"batch_shape": list(self._batch_shape),
                "dtype": backend.standardize_dtype(self.output.dtype),
                "sparse": False, "name": self.name}

    def call(self, inputs):
        return inputs


def Input(shape=None, batch_size=None, dtype=None, sparse=None, batch_shape=None, name=None,
          tensor=None, optional=False):
    """A symbolic input of a functional model: ``keras.Input(shape=(3,))`` is a batch of
    3-vectors.

    >>> from tapegrad import keras
    >>> keras.Input(shape=(3,)).shape
    (None, 3)
    """
    layer = InputLayer(shape=shape, batch_size=batch_size, dtype=dtype, batch_shape=batch_shape,
                       name=name, input_tensor=tensor)
    return layer.output

