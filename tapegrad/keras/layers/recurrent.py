"""Recurrent layers: ``SimpleRNN``, ``LSTM`` and ``GRU`` with Keras 3's cells (weights
``kernel``, ``recurrent_kernel``, ``bias``; LSTM's gates i, f, c, o with the forget bias at
one; GRU's z, r, h with ``reset_after``), ``return_sequences``, ``return_state``,
``go_backwards``, ``initial_state`` and masks (a masked step keeps the previous state and
output, as Keras's ``rnn`` loop does).

The loop over the steps is a Python loop, so the number of steps must be known when the
layer runs (eagerly, or in a trace with a fixed sequence length).

>>> import numpy as np
>>> from tapegrad import keras
>>> keras.layers.LSTM(4, return_sequences=True)(np.ones((2, 3, 5))).shape
(2, 3, 4)
"""
from tapegrad.keras import _tf as tf
from tapegrad.keras import activations, initializers
from tapegrad.keras.layers.base import Layer
from tapegrad.keras.layers.input_spec import InputSpec


class _Recurrent(Layer):
    """The loop shared by the three layers; a subclass gives its gates (``_step``), its
    number of state tensors and its weight shapes."""

    _gates = 1
    _states = 1

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, seed=None, return_sequences=False,
                 return_state=False, go_backwards=False, stateful=False, unroll=False,
                 **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if not isinstance(units, int) or units <= 0:
            raise ValueError("Received an invalid value for argument `units`, expected a "
                             f"positive integer, got {units}.")
        if dropout or recurrent_dropout:
            raise NotImplementedError(f"{type(self).__name__}: tapegrad.keras has no "
                                      "dropout or recurrent_dropout in recurrent layers.")
        if stateful:
            raise NotImplementedError(f"{type(self).__name__}: tapegrad.keras has no "
                                      "stateful recurrent layers.")
        self.units = units
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self._regularizers_of = (kernel_regularizer, recurrent_regularizer, bias_regularizer)
        self._constraints_of = (kernel_constraint, recurrent_constraint, bias_constraint)
        self.return_sequences, self.return_state = return_sequences, return_state
        self.go_backwards = go_backwards
        self.input_spec = InputSpec(ndim=3)
        self.supports_masking = True

    def _bias_shape(self):
        return (self._gates * self.units,)

    def _bias_initial(self, shape, dtype=None):
        return self.bias_initializer(shape, dtype=dtype)

    def build(self, input_shape):
        n = self._gates * self.units
        kr, rr, br = self._regularizers_of
        kc, rc, bc = self._constraints_of
        self.kernel = self.add_weight(name="kernel", shape=(input_shape[-1], n),
                                      initializer=self.kernel_initializer, regularizer=kr,
                                      constraint=kc)
        self.recurrent_kernel = self.add_weight(name="recurrent_kernel",
                                                shape=(self.units, n),
                                                initializer=self.recurrent_initializer,
                                                regularizer=rr, constraint=rc)
        self.bias = self.add_weight(name="bias", shape=self._bias_shape(),
                                    initializer=self._bias_initial, regularizer=br,
                                    constraint=bc) if self.use_bias else None

    def call(self, sequences, initial_state=None, mask=None, training=None):
        x = self._floating(sequences)
        batch, steps = x.shape[0], x.shape[1]
        if initial_state is None:
            states = [tf.zeros((batch, self.units), dtype=x.dtype)] * self._states
        else:
            states = list(initial_state) if isinstance(initial_state, (list, tuple)) else [
                initial_state]
            states = [tf.cast(s, x.dtype) for s in states]
        order = range(steps - 1, -1, -1) if self.go_backwards else range(steps)
        keep = None if mask is None else tf.cast(mask, "bool")
        output = tf.zeros((batch, self.units), dtype=x.dtype)
        outputs = []
        for t in order:
            new_output, new_states = self._step(x[:, t, :], states)
            if keep is not None:  # a masked step carries the state and output over
                k = keep[:, t:t + 1]
                new_output = tf.where(k, new_output, output)
                new_states = [tf.where(k, n, s) for n, s in zip(new_states, states)]
            output, states = new_output, new_states
            outputs.append(output)
        result = tf.stack(outputs, axis=1) if self.return_sequences else output
        return [result, *states] if self.return_state else result

    def compute_mask(self, inputs, previous_mask=None):
        mask = previous_mask if self.return_sequences else None
        return [mask] + [None] * self._states if self.return_state else mask


class SimpleRNN(_Recurrent):
    """``h_t = activation(x_t @ kernel + bias + h_{t-1} @ recurrent_kernel)``."""

    def __init__(self, units, activation="tanh", **kwargs):
        kwargs.pop("recurrent_activation", None)
        super().__init__(units, activation=activation, **kwargs)

    def _step(self, x_t, states):
        h = tf.matmul(x_t, self.kernel)
        if self.bias is not None:
            h = h + self.bias
        out = self.activation(h + tf.matmul(states[0], self.recurrent_kernel))
        return out, [out]


class LSTM(_Recurrent):
    """Long short-term memory: states ``[h, c]``; gates i, f, c, o in that order along
    the kernels' columns; ``unit_forget_bias`` starts the forget gate's bias at one."""

    _gates = 4
    _states = 2

    def __init__(self, units, unit_forget_bias=True, **kwargs):
        super().__init__(units, **kwargs)
        self.unit_forget_bias = unit_forget_bias

    def _bias_initial(self, shape, dtype=None):
        if not self.unit_forget_bias:
            return self.bias_initializer(shape, dtype=dtype)
        u = self.units
        return tf.concat([self.bias_initializer((u,), dtype=dtype),
                          tf.ones((u,), dtype=dtype),
                          self.bias_initializer((2 * u,), dtype=dtype)], 0)

    def _step(self, x_t, states):
        h_tm1, c_tm1 = states
        z = tf.matmul(x_t, self.kernel) + tf.matmul(h_tm1, self.recurrent_kernel)
        if self.bias is not None:
            z = z + self.bias
        z0, z1, z2, z3 = tf.split(z, 4, axis=1)
        i = self.recurrent_activation(z0)
        f = self.recurrent_activation(z1)
        c = f * c_tm1 + i * self.activation(z2)
        o = self.recurrent_activation(z3)
        h = o * self.activation(c)
        return h, [h, c]


class GRU(_Recurrent):
    """Gated recurrent unit: gates z, r, h; with ``reset_after`` (Keras's default) the
    reset gate multiplies the recurrent projection, and the bias has two rows (input,
    recurrent)."""

    _gates = 3

    def __init__(self, units, reset_after=True, **kwargs):
        super().__init__(units, **kwargs)
        self.reset_after = reset_after

    def _bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def _step(self, x_t, states):
        h_tm1 = states[0]
        u = self.units
        input_bias, recurrent_bias = (tf.unstack(self.bias) if self.reset_after else
                                      (self.bias, None)) if self.bias is not None else (
            None, None)
        matrix_x = tf.matmul(x_t, self.kernel)
        if input_bias is not None:
            matrix_x = matrix_x + input_bias
        x_z, x_r, x_h = tf.split(matrix_x, 3, axis=-1)
        if self.reset_after:
            inner = tf.matmul(h_tm1, self.recurrent_kernel)
            if recurrent_bias is not None:
                inner = inner + recurrent_bias
        else:
            inner = tf.matmul(h_tm1, self.recurrent_kernel[:, :2 * u])
        z = self.recurrent_activation(x_z + inner[:, :u])
        r = self.recurrent_activation(x_r + inner[:, u:2 * u])
        if self.reset_after:
            recurrent_h = r * inner[:, 2 * u:]
        else:
            recurrent_h = tf.matmul(r * h_tm1, self.recurrent_kernel[:, 2 * u:])
        hh = self.activation(x_h + recurrent_h)
        h = z * h_tm1 + (1 - z) * hh
        return h, [h]


class Bidirectional(Layer):
    """A recurrent layer run forwards and, as a copy with ``go_backwards`` flipped,
    backwards; the outputs merged by ``merge_mode`` (``"concat"``, ``"sum"``, ``"mul"``,
    ``"ave"`` or None for the pair), the backward sequence put back in time order."""

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None,
                 **kwargs):
        if merge_mode not in ("sum", "mul", "ave", "concat", None):
            raise ValueError(f"Invalid merge mode. Received: {merge_mode}. Merge mode "
                             "should be one of {'sum', 'mul', 'ave', 'concat', None}")
        super().__init__(**kwargs)
        config = layer.get_config()
        forward_config = {**config, "name": "forward_" + layer.name}
        self.forward_layer = type(layer).from_config(forward_config)
        if backward_layer is None:
            backward_config = {**config, "name": "backward_" + layer.name,
                               "go_backwards": not layer.go_backwards}
            backward_layer = type(layer).from_config(backward_config)
        self.backward_layer = backward_layer
        self.merge_mode = merge_mode
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        self.supports_masking = True
        self.input_spec = InputSpec(ndim=3)

    def call(self, sequences, initial_state=None, mask=None, training=None):
        fw_state = bw_state = None
        if initial_state is not None:
            half = len(initial_state) // 2
            fw_state, bw_state = initial_state[:half], initial_state[half:]
        fw = self.forward_layer(sequences, initial_state=fw_state, mask=mask)
        bw = self.backward_layer(sequences, initial_state=bw_state, mask=mask)
        states = []
        if self.return_state:
            fw, *fw_states = fw
            bw, *bw_states = bw
            states = fw_states + bw_states
        if self.return_sequences:
            bw = tf.reverse(bw, [1])
        if self.merge_mode == "concat":
            out = tf.concat([fw, bw], axis=-1)
        elif self.merge_mode == "sum":
            out = fw + bw
        elif self.merge_mode == "ave":
            out = (fw + bw) / 2
        elif self.merge_mode == "mul":
            out = fw * bw
        else:
            out = [fw, bw]
        if self.return_state:
            return (out if isinstance(out, list) else [out]) + states
        return out

    def compute_mask(self, inputs, previous_mask=None):
        mask = previous_mask if self.return_sequences else None
        if self.merge_mode is None:
            mask = [mask, mask]
        if self.return_state:
            extra = [None] * (2 * getattr(self.forward_layer, "_states", 1))
            return (mask if isinstance(mask, list) else [mask]) + extra
        return mask

    def get_config(self):
        from tapegrad.keras.serialization import serialize_keras_object
        config = {**super().get_config(), "merge_mode": self.merge_mode}
        layer = serialize_keras_object(self.forward_layer)  # the wrapped layer's own name
        layer["config"]["name"] = self.forward_layer.name.removeprefix("forward_")
        config["layer"] = layer
        config["backward_layer"] = serialize_keras_object(self.backward_layer)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from tapegrad.keras.serialization import deserialize_keras_object
        config = dict(config)

        def layer_of(c):  # a config, or the layer load_model has already made of it
            return c if c is None or isinstance(c, Layer) else deserialize_keras_object(
                c, custom_objects)
        layer = layer_of(config.pop("layer"))
        return cls(layer, backward_layer=layer_of(config.pop("backward_layer", None)),
                   **config)
