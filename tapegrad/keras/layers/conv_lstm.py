"""``ConvLSTM2D``: an LSTM whose gates are convolutions (keras.io's "next-frame prediction
with Conv-LSTM"). ``ConvLSTM2DCell`` convolves the frame with ``kernel`` (the layer's
strides, padding and dilation) and the previous ``h`` with ``recurrent_kernel`` ('same',
stride 1); the gates are Keras's ``i, f, c, o`` in that order along the last axis. The RNN
loop of ``recurrent.py`` runs it over the frames (axis 1).

>>> import numpy as np
>>> from tapegrad import keras
>>> layer = keras.layers.ConvLSTM2D(3, 3, padding="same", return_sequences=True)
>>> layer(np.ones((2, 4, 6, 6, 1), np.float32)).shape
TensorShape([2, 4, 6, 6, 3])
"""
from tapegrad.keras import _tf as tf
from tapegrad.keras import activations, backend, initializers
from tapegrad.keras.layers.base import Layer
from tapegrad.keras.layers.convolutional import _tuple
from tapegrad.keras.layers.input_spec import InputSpec
from tapegrad.keras.layers.recurrent import RNN


def _conv_length(size, kernel, padding, stride, dilation):
    if padding == "same":
        return -(-size // stride)
    return (size - dilation * (kernel - 1) - 1) // stride + 1


class ConvLSTM2DCell(Layer):
    """One ConvLSTM step on ``(batch, rows, cols, channels)`` frames: states ``[h, c]``
    of ``(batch, out_rows, out_cols, filters)``; ``unit_forget_bias`` starts the forget
    gate's bias at one."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, activation="tanh", recurrent_activation="sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.filters = filters
        self.kernel_size = _tuple(kernel_size, 2, "kernel_size")
        self.strides = _tuple(strides, 2, "strides")
        self.padding = str(padding).lower()
        self.data_format = backend.standardize_data_format(data_format)
        if self.data_format != "channels_last":
            raise NotImplementedError("ConvLSTM2D: tapegrad.keras runs data_format="
                                      "'channels_last' only.")
        self.dilation_rate = _tuple(dilation_rate, 2, "dilation_rate")
        if dropout or recurrent_dropout:
            raise NotImplementedError("ConvLSTM2D: tapegrad.keras has no dropout or "
                                      "recurrent_dropout for ConvLSTM2D.")
        self.dropout, self.recurrent_dropout, self.seed = dropout, recurrent_dropout, seed
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias, self.unit_forget_bias = use_bias, unit_forget_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer, self.recurrent_regularizer = kernel_regularizer, recurrent_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint, self.recurrent_constraint = kernel_constraint, recurrent_constraint
        self.bias_constraint = bias_constraint
        self.state_size = [filters, filters]
        self._out_hw = None

    def build(self, input_shape):
        rows, cols, channels = input_shape[-3], input_shape[-2], input_shape[-1]
        self._out_hw = tuple(
            _conv_length(s, k, self.padding, st, d) for s, k, st, d in zip(
                (rows, cols), self.kernel_size, self.strides, self.dilation_rate))
        n = 4 * self.filters
        self.kernel = self.add_weight(
            name="kernel", shape=self.kernel_size + (channels, n),
            initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(
            name="recurrent_kernel", shape=self.kernel_size + (self.filters, n),
            initializer=self.recurrent_initializer, regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint)
        self.bias = self.add_weight(
            name="bias", shape=(n,), initializer=self._bias_initial,
            regularizer=self.bias_regularizer,
            constraint=self.bias_constraint) if self.use_bias else None
        self.built = True

    def _bias_initial(self, shape, dtype=None):
        if not self.unit_forget_bias:
            return self.bias_initializer(shape, dtype=dtype)
        f = self.filters
        return tf.concat([self.bias_initializer((f,), dtype=dtype), tf.ones((f,), dtype=dtype),
                          self.bias_initializer((2 * f,), dtype=dtype)], 0)

    def get_initial_state(self, batch_size=None):
        shape = (batch_size,) + self._out_hw + (self.filters,)
        return [tf.zeros(shape, dtype=self.compute_dtype) for _ in range(2)]

    def call(self, inputs, states, training=False):
        h_tm1, c_tm1 = states[0], states[1]
        z = tf.nn.convolution(inputs, self.kernel, strides=list(self.strides),
                              padding=self.padding.upper(), dilations=list(self.dilation_rate))
        if self.bias is not None:
            z = z + self.bias
        z = z + tf.nn.convolution(h_tm1, self.recurrent_kernel, strides=[1, 1], padding="SAME")
        z_i, z_f, z_c, z_o = tf.split(z, 4, axis=-1)
        act, ract = self.activation, self.recurrent_activation
        c = ract(z_f) * c_tm1 + ract(z_i) * act(z_c)
        h = ract(z_o) * act(c)
        return h, [h, c]


class ConvLSTM2D(RNN):
    """A ConvLSTM over ``(batch, time, rows, cols, channels)``: ``(batch, out_rows,
    out_cols, filters)``, or every step's with ``return_sequences``; the cell's weights and
    arguments read on the layer, as Keras's."""

    _cell_class = ConvLSTM2DCell  # its arguments are the layer's config too (layer_config.py)

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, activation="tanh", recurrent_activation="sigmoid", *,
                 return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, zero_output_for_mask=False,
                 activity_regularizer=None, **kwargs):
        loop = {k: kwargs.pop(k) for k in ("name", "trainable", "dtype", "input_shape",
                                           "batch_input_shape") if k in kwargs}
        cell = ConvLSTM2DCell(filters, kernel_size, strides=strides, padding=padding,
                              data_format=data_format, dilation_rate=dilation_rate,
                              activation=activation, recurrent_activation=recurrent_activation,
                              dtype=loop.get("dtype"), trainable=loop.get("trainable", True),
                              name="conv_lstm_cell", **kwargs)
        super().__init__(cell, return_sequences=return_sequences, return_state=return_state,
                         go_backwards=go_backwards, stateful=stateful, unroll=unroll,
                         zero_output_for_mask=zero_output_for_mask,
                         activity_regularizer=activity_regularizer, **loop)
        self.input_spec = InputSpec(ndim=5)

    def get_config(self):
        config = super().get_config()
        cell = self.cell  # Keras lists the sizes as the cell resolved them: (3, 3), not 3
        config.update(kernel_size=cell.kernel_size, strides=cell.strides,
                      dilation_rate=cell.dilation_rate)
        return config

    def __getattr__(self, name):
        # filters, kernel, padding, ...: the cell's (only once it exists)
        cell = self.__dict__.get("cell")
        if cell is not None and not name.startswith("_") and name in cell.__dict__:
            return getattr(cell, name)
        if cell is not None and name in ("kernel", "recurrent_kernel", "bias"):
            return getattr(cell, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
