"""Recurrent cells, Keras 3's: ``SimpleRNNCell``, ``LSTMCell``, ``GRUCell`` and
``StackedRNNCells``. A cell computes one step, ``cell(x_t, states) -> (output, new_states)``;
``keras.layers.RNN`` runs it over a sequence (``recurrent.py``).

Weights as Keras names and lays them out: ``kernel`` (input, gates * units),
``recurrent_kernel`` (units, gates * units), ``bias``; LSTM's gates i, f, c, o with the forget
bias starting at one, GRU's z, r, h with ``reset_after``. ``dropout`` and
``recurrent_dropout`` drop the same entries at every step of one call (the masks are made
when the call starts and cleared when it ends), as Keras does; with ``recurrent_dropout`` (or
``implementation=1``) the gates get one mask each and their products are computed apart.

>>> import numpy as np
>>> from tapegrad import keras
>>> cell = keras.layers.LSTMCell(3)
>>> out, (h, c) = cell(np.ones((2, 5), np.float32), [np.zeros((2, 3), np.float32)] * 2)
>>> out.shape, c.shape
(TensorShape([2, 3]), TensorShape([2, 3]))
"""
from tapegrad.keras import _tf as tf
from tapegrad.keras import activations, initializers
from tapegrad.keras import random as krandom
from tapegrad.keras.layers.base import Layer


class _DropoutMasks:
    """The dropout masks of one call of a cell: made once, reused at every step."""

    _mask_count = None   # gates with masks of their own (implementation 1), else one mask

    def _make_mask(self, like, rate):
        ones = tf.ones_like(like)
        if self._mask_count is None:
            return krandom.dropout(ones, rate, seed=self.seed_generator)
        return [krandom.dropout(ones, rate, seed=self.seed_generator)
                for _ in range(self._mask_count)]

    def get_dropout_mask(self, step_input):
        if self.__dict__.get("_dropout_mask") is None and self.dropout > 0:
            self._dropout_mask = self._make_mask(step_input, self.dropout)
        return self.__dict__.get("_dropout_mask")

    def get_recurrent_dropout_mask(self, state):
        if self.__dict__.get("_recurrent_mask") is None and self.recurrent_dropout > 0:
            self._recurrent_mask = self._make_mask(state, self.recurrent_dropout)
        return self.__dict__.get("_recurrent_mask")

    def reset_dropout_mask(self):
        self._dropout_mask = None

    def reset_recurrent_dropout_mask(self):
        self._recurrent_mask = None


class _Cell(_DropoutMasks, Layer):
    """What the three cells share: arguments, weights, initial state and config."""

    _gates = 1

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 dropout=0.0, recurrent_dropout=0.0, seed=None, implementation=2, **kwargs):
        if not isinstance(units, int) or units <= 0:
            raise ValueError("Received an invalid value for argument `units`, expected a "
                             f"positive integer, got {units}.")
        super().__init__(**kwargs)
        self.units = units
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = kernel_regularizer
        self.recurrent_regularizer = recurrent_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.recurrent_constraint = recurrent_constraint
        self.bias_constraint = bias_constraint
        self.dropout = min(1.0, max(0.0, float(dropout)))
        self.recurrent_dropout = min(1.0, max(0.0, float(recurrent_dropout)))
        self.implementation = 1 if self.recurrent_dropout else implementation
        if self.implementation == 1 and self._gates > 1:
            self._mask_count = self._gates
        self.seed = seed
        self.seed_generator = krandom.SeedGenerator(seed)
        self.state_size = units
        self.output_size = units

    def _bias_shape(self):
        return (self._gates * self.units,)

    def _bias_initial(self, shape, dtype=None):
        return self.bias_initializer(shape, dtype=dtype)

    def build(self, input_shape):
        n = self._gates * self.units
        self.kernel = self.add_weight(
            name="kernel", shape=(input_shape[-1], n), initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(
            name="recurrent_kernel", shape=(self.units, n),
            initializer=self.recurrent_initializer, regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint)
        self.bias = self.add_weight(
            name="bias", shape=self._bias_shape(), initializer=self._bias_initial,
            regularizer=self.bias_regularizer,
            constraint=self.bias_constraint) if self.use_bias else None
        self.built = True

    def get_initial_state(self, batch_size=None):
        sizes = self.state_size if isinstance(self.state_size, list) else [self.state_size]
        return [tf.zeros((batch_size, d), dtype=self.compute_dtype) for d in sizes]

    def _masked(self, x, mask, training, k):
        """``x`` times gate ``k``'s mask (all gates' when there is one mask)."""
        if not training or mask is None:
            return x
        return x * (mask[k] if isinstance(mask, list) else mask)


class SimpleRNNCell(_Cell):
    """``h_t = activation(x_t @ kernel + bias + h_{t-1} @ recurrent_kernel)``."""

    def __init__(self, units, activation="tanh", **kwargs):
        kwargs.pop("recurrent_activation", None)
        super().__init__(units, activation=activation, **kwargs)

    def call(self, sequence, states, training=False):
        prev = states[0] if isinstance(states, (list, tuple)) else states
        dp = self.get_dropout_mask(sequence)
        rec = self.get_recurrent_dropout_mask(prev)
        h = tf.matmul(self._masked(sequence, dp, training, 0), self.kernel)
        if self.bias is not None:
            h = h + self.bias
        output = h + tf.matmul(self._masked(prev, rec, training, 0), self.recurrent_kernel)
        if self.activation is not None:
            output = self.activation(output)
        return output, ([output] if isinstance(states, (list, tuple)) else output)


class LSTMCell(_Cell):
    """Long short-term memory: states ``[h, c]``; ``unit_forget_bias`` starts the forget
    gate's bias at one."""

    _gates = 4

    def __init__(self, units, unit_forget_bias=True, **kwargs):
        super().__init__(units, **kwargs)
        self.unit_forget_bias = unit_forget_bias
        self.state_size = [units, units]

    def _bias_initial(self, shape, dtype=None):
        if not self.unit_forget_bias:
            return self.bias_initializer(shape, dtype=dtype)
        u = self.units
        return tf.concat([self.bias_initializer((u,), dtype=dtype),
                          tf.ones((u,), dtype=dtype),
                          self.bias_initializer((2 * u,), dtype=dtype)], 0)

    def call(self, inputs, states, training=False):
        h_tm1, c_tm1 = states[0], states[1]
        u, act, ract = self.units, self.activation, self.recurrent_activation
        if self.implementation == 1:
            dp = self.get_dropout_mask(inputs) if 0.0 < self.dropout < 1.0 else None
            rec = (self.get_recurrent_dropout_mask(h_tm1)
                   if 0.0 < self.recurrent_dropout < 1.0 else None)
            z = []
            for k in range(4):   # gates i, f, c, o, each from its own masked copies
                x_k = tf.matmul(self._masked(inputs, dp, training, k),
                                self.kernel[:, k * u:(k + 1) * u])
                if self.bias is not None:
                    x_k = x_k + self.bias[k * u:(k + 1) * u]
                z.append(x_k + tf.matmul(self._masked(h_tm1, rec, training, k),
                                         self.recurrent_kernel[:, k * u:(k + 1) * u]))
        else:
            dp = self.get_dropout_mask(inputs) if 0.0 < self.dropout < 1.0 else None
            z = tf.matmul(self._masked(inputs, dp, training, 0), self.kernel)
            z = z + tf.matmul(h_tm1, self.recurrent_kernel)
            if self.bias is not None:
                z = z + self.bias
            z = tf.split(z, 4, axis=1)
        i, f, o = ract(z[0]), ract(z[1]), ract(z[3])
        c = f * c_tm1 + i * act(z[2])
        h = o * act(c)
        return h, [h, c]


class GRUCell(_Cell):
    """Gated recurrent unit: gates z, r, h; with ``reset_after`` (Keras's default) the reset
    gate multiplies the recurrent projection, and the bias has two rows (input, recurrent)."""

    _gates = 3

    def __init__(self, units, reset_after=True, **kwargs):
        super().__init__(units, **kwargs)
        self.reset_after = reset_after

    def _bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def call(self, inputs, states, training=False):
        nested = isinstance(states, (list, tuple))
        h_tm1 = states[0] if nested else states
        u, ract = self.units, self.recurrent_activation
        in_b = rec_b = None
        if self.bias is not None:
            in_b, rec_b = tf.unstack(self.bias) if self.reset_after else (self.bias, None)
        dp = self.get_dropout_mask(inputs) if 0.0 < self.dropout < 1.0 else None
        if self.implementation == 1:
            rec = (self.get_recurrent_dropout_mask(h_tm1)
                   if 0.0 < self.recurrent_dropout < 1.0 else None)
            x = [tf.matmul(self._masked(inputs, dp, training, k),
                           self.kernel[:, k * u:(k + 1) * u]) for k in range(3)]
            if in_b is not None:
                x = [x_k + in_b[k * u:(k + 1) * u] for k, x_k in enumerate(x)]
            hs = [self._masked(h_tm1, rec, training, k) for k in range(3)]
            r_z = tf.matmul(hs[0], self.recurrent_kernel[:, :u])
            r_r = tf.matmul(hs[1], self.recurrent_kernel[:, u:2 * u])
            if self.reset_after and rec_b is not None:
                r_z, r_r = r_z + rec_b[:u], r_r + rec_b[u:2 * u]
            z, r = ract(x[0] + r_z), ract(x[1] + r_r)
            if self.reset_after:
                r_h = tf.matmul(hs[2], self.recurrent_kernel[:, 2 * u:])
                if rec_b is not None:
                    r_h = r_h + rec_b[2 * u:]
                r_h = r * r_h
            else:
                r_h = tf.matmul(r * hs[2], self.recurrent_kernel[:, 2 * u:])
            x_h = x[2]
        else:
            matrix_x = tf.matmul(self._masked(inputs, dp, training, 0), self.kernel)
            if in_b is not None:
                matrix_x = matrix_x + in_b
            x_z, x_r, x_h = tf.split(matrix_x, 3, axis=-1)
            if self.reset_after:
                inner = tf.matmul(h_tm1, self.recurrent_kernel)
                if rec_b is not None:
                    inner = inner + rec_b
            else:
                inner = tf.matmul(h_tm1, self.recurrent_kernel[:, :2 * u])
            z = ract(x_z + inner[:, :u])
            r = ract(x_r + inner[:, u:2 * u])
            if self.reset_after:
                r_h = r * inner[:, 2 * u:]
            else:
                r_h = tf.matmul(r * h_tm1, self.recurrent_kernel[:, 2 * u:])
        hh = self.activation(x_h + r_h)
        h = z * h_tm1 + (1 - z) * hh
        return h, ([h] if nested else h)


class StackedRNNCells(Layer):
    """Cells run one after another at each step, each feeding the next; the states are
    one entry per cell."""

    def __init__(self, cells, **kwargs):
        super().__init__(**kwargs)
        for cell in cells:
            _check_cell(cell, "All cells must")
        self.cells = list(cells)

    def _saved_children(self):
        from tapegrad.keras import backend
        used, out = {}, []
        for c in self.cells:   # Keras's path of a list: cells/<class in snake case>[_n]
            if isinstance(c, Layer):
                base = backend.to_snake_case(type(c).__name__)
                used[base] = used.get(base, -1) + 1
                out.append((f"cells/{base}" + (f"_{used[base]}" if used[base] else ""), c))
        return out

    @property
    def state_size(self):
        return [c.state_size for c in self.cells]

    @property
    def output_size(self):
        return _output_size(self.cells[-1])

    def get_initial_state(self, batch_size=None):
        return [initial_state(c, batch_size, self.compute_dtype) for c in self.cells]

    def build(self, input_shape):
        for cell in self.cells:
            if isinstance(cell, Layer) and not cell.built:
                cell.build(input_shape)
                cell.built = True
            input_shape = (input_shape[0], _output_size(cell))
        self.built = True

    def call(self, inputs, states, training=False):
        new_states = []
        for cell, s in zip(self.cells, states):
            was_list = isinstance(s, (list, tuple))
            inputs, s = call_cell(cell, inputs, list(s) if was_list else [s], training)
            new_states.append(s[0] if len(s) == 1 and not was_list else s)
        return inputs, (new_states[0] if len(new_states) == 1 else new_states)

    def get_config(self):
        from tapegrad.keras.serialization import serialize_keras_object
        base = {"name": self.name, "trainable": self.trainable, "dtype": self._dtype_config()}
        return {**base, "cells": [serialize_keras_object(c) for c in self.cells]}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from tapegrad.keras.serialization import deserialize_keras_object
        config = dict(config)
        cells = [c if isinstance(c, Layer) else deserialize_keras_object(c, custom_objects)
                 for c in config.pop("cells")]
        return cls(cells, **config)


# ---- what the RNN loop needs of any cell, a tapegrad one or the user's ---------------------
def _check_cell(cell, who):
    if "call" not in dir(cell):
        raise ValueError(f"{who} have a `call` method. Received: cell={cell}")
    if "state_size" not in dir(cell):
        raise ValueError(f"{who} have a `state_size` attribute (single integer or list of "
                         f"integers, one integer per RNN state). Received: cell={cell}")


def _output_size(cell):
    size = getattr(cell, "output_size", None)
    if size is not None:
        return size
    s = cell.state_size
    return s[0] if isinstance(s, (list, tuple)) else s


def initial_state(cell, batch_size, dtype):
    """The cell's own ``get_initial_state``, else zeros of ``(batch, d)`` per state."""
    fn = getattr(cell, "get_initial_state", None)
    if fn is not None:
        return fn(batch_size=batch_size)
    sizes = cell.state_size
    if isinstance(sizes, int):
        return tf.zeros((batch_size, sizes), dtype=dtype)
    return [tf.zeros((batch_size, d), dtype=dtype) for d in sizes]


def call_cell(cell, inputs, states, training):
    """One step: ``(output, new_states as a list)``; a Layer cell sees ``training`` when its
    ``call`` takes it."""
    if isinstance(cell, _Cell) and cell.built:   # tapegrad's own: no conversions to make
        out, new = cell.call(inputs, states, training=training)
    elif isinstance(cell, Layer):
        out, new = cell(inputs, states, training=training)
    else:
        out, new = cell.call(inputs, states)
    return out, (list(new) if isinstance(new, (list, tuple)) else [new])


def reset_masks(cell):
    """Forget the dropout masks of the call that ended (every cell of a stack)."""
    if isinstance(cell, _DropoutMasks):
        cell.reset_dropout_mask()
        cell.reset_recurrent_dropout_mask()
    for c in getattr(cell, "cells", ()) if isinstance(cell, StackedRNNCells) else ():
        reset_masks(c)
