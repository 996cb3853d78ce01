"""Recurrent layers: ``RNN`` runs a cell (``rnn_cells.py``: ``SimpleRNNCell``,
``LSTMCell``, ``GRUCell``, ``StackedRNNCells``, or the user's own) over the steps of a
sequence; ``SimpleRNN``, ``LSTM`` and ``GRU`` are RNNs of Keras 3's cells, made from the
layer's arguments, with ``return_sequences``, ``return_state``, ``go_backwards``,
``initial_state``, ``dropout`` / ``recurrent_dropout`` and masks (a masked step keeps the
previous states and output, as Keras's ``rnn`` loop does). ``Bidirectional`` runs a copy
backwards.

The loop over the steps is a Python loop, so the number of steps must be known when the
layer runs (eagerly, or in a trace with a fixed sequence length).

>>> import numpy as np
>>> from tapegrad import keras
>>> keras.layers.LSTM(4, return_sequences=True)(np.ones((2, 3, 5))).shape
TensorShape([2, 3, 4])
"""
from tapegrad.keras import _tf as tf
from tapegrad.keras.layers.base import Layer
from tapegrad.keras.layers.input_spec import InputSpec
from tapegrad.keras.layers.rnn_cells import (GRUCell, LSTMCell, SimpleRNNCell, StackedRNNCells,
                                             _check_cell, call_cell, initial_state,
                                             reset_masks)


class RNN(Layer):
    """A cell run over the steps of a sequence (axis 1): ``keras.layers.RNN(cell)``, where
    the cell is any object with ``call(inputs, states)`` and ``state_size`` (a list of cells
    is stacked). Options as Keras's: ``return_sequences``, ``return_state``,
    ``go_backwards``, ``zero_output_for_mask``, ``initial_state`` and masks (a masked step
    keeps the previous states; its output is the previous one, or zeros with
    ``zero_output_for_mask``).

    >>> import numpy as np
    >>> from tapegrad import keras
    >>> layer = keras.layers.RNN([keras.layers.LSTMCell(4), keras.layers.GRUCell(2)])
    >>> layer(np.ones((3, 5, 6), np.float32)).shape
    TensorShape([3, 2])
    """

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, zero_output_for_mask=False, **kwargs):
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell)
        _check_cell(cell, "Argument `cell` should")
        if stateful:
            raise NotImplementedError(f"{type(self).__name__}: tapegrad.keras has no "
                                      "stateful recurrent layers.")
        super().__init__(**kwargs)
        size = getattr(cell, "state_size", None)
        if not isinstance(size, (list, tuple, int)):
            raise ValueError("state_size must be an integer, or a list/tuple of integers "
                             "(one for each state tensor).")
        self.cell = cell
        self.return_sequences, self.return_state = return_sequences, return_state
        self.go_backwards, self.stateful, self.unroll = go_backwards, stateful, unroll
        self.zero_output_for_mask = zero_output_for_mask
        self.supports_masking = True

    def _saved_children(self):
        return [("cell", self.cell)] if isinstance(self.cell, Layer) else []

    @property
    def state_size(self):
        size = self.cell.state_size
        return [size] if isinstance(size, int) else list(size)

    def build(self, sequences_shape, initial_state_shape=None):
        if isinstance(self.cell, Layer) and not self.cell.built:
            self.cell.build((sequences_shape[0],) + tuple(sequences_shape[2:]))
            self.cell.built = True
        self.built = True

    def get_initial_state(self, batch_size):
        state = initial_state(self.cell, batch_size, self.compute_dtype)
        return list(state) if isinstance(state, (list, tuple)) else [state]

    def call(self, sequences, initial_state=None, mask=None, training=None):
        x = self._floating(sequences)
        batch, steps = x.shape[0], x.shape[1]
        if initial_state is None:
            states = self.get_initial_state(batch)
        else:
            states = list(initial_state) if isinstance(initial_state, (list, tuple)) else [
                initial_state]
            states = tf.nest.map_structure(lambda s: tf.cast(s, x.dtype), states)
        order = range(steps - 1, -1, -1) if self.go_backwards else range(steps)
        keep = None if mask is None else tf.cast(mask, "bool")
        output, outputs = None, []
        try:
            for t in order:
                new_output, new_states = call_cell(self.cell, x[:, t, :], states, training)
                if keep is not None:  # a masked step carries the states over; its output
                    k = keep[:, t:t + 1]  # is the previous one (zeros at first) or zeros
                    new_states = tf.nest.map_structure(lambda n, s: tf.where(k, n, s),
                                                       new_states, states)
                    other = (tf.zeros_like(new_output) if self.zero_output_for_mask or
                             output is None else output)
                    new_output = tf.where(k, new_output, other)
                output, states = new_output, new_states
                outputs.append(output)
        finally:
            reset_masks(self.cell)
        result = tf.stack(outputs, axis=1) if self.return_sequences else output
        return [result, *states] if self.return_state else result

    def compute_mask(self, inputs, previous_mask=None):
        mask = previous_mask if self.return_sequences else None
        return [mask] + [None] * len(self.state_size) if self.return_state else mask

    def get_config(self):
        from tapegrad.keras.serialization import serialize_keras_object
        if type(self) is not RNN:   # LSTM, GRU, SimpleRNN: their arguments
            return super().get_config()
        base = {"name": self.name, "trainable": self.trainable, "dtype": self._dtype_config()}
        return {**base, "return_sequences": self.return_sequences,
                "return_state": self.return_state, "go_backwards": self.go_backwards,
                "stateful": self.stateful, "unroll": self.unroll,
                "zero_output_for_mask": self.zero_output_for_mask,
                "cell": serialize_keras_object(self.cell)}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        if cls is not RNN:
            return cls(**config)
        from tapegrad.keras.serialization import deserialize_keras_object
        config = dict(config)
        cell = config.pop("cell")
        if not isinstance(cell, Layer):
            cell = deserialize_keras_object(cell, custom_objects)
        return cls(cell, **config)


class _Builtin(RNN):
    """An RNN of one of tapegrad's cells, made from the layer's arguments (the cell's and
    the loop's), with the cell's weights and settings readable on the layer, as Keras."""

    _cell_class = _cell_name = None

    def __init__(self, units, activation="tanh", *, dropout=0.0, recurrent_dropout=0.0, seed=None,
                 return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, zero_output_for_mask=False,
                 activity_regularizer=None, use_cudnn="auto", **kwargs):
        if use_cudnn not in ("auto", True, False):   # no cuDNN here: checked, then unused
            raise ValueError("Invalid valid received for argument `use_cudnn`. Expected one "
                             f"of {{'auto', True, False}}. Received: use_cudnn={use_cudnn}")
        loop = {k: kwargs.pop(k) for k in ("name", "trainable", "dtype", "input_shape",
                                           "batch_input_shape", "input_dim") if k in kwargs}
        cell = self._cell_class(units, activation=activation, dropout=dropout, recurrent_dropout=recurrent_dropout,
                                seed=seed, dtype=loop.get("dtype"),
                                trainable=loop.get("trainable", True),
                                name=self._cell_name, **kwargs)
        super().__init__(cell, return_sequences=return_sequences, return_state=return_state,
                         go_backwards=go_backwards, stateful=stateful, unroll=unroll,
                         zero_output_for_mask=zero_output_for_mask,
                         activity_regularizer=activity_regularizer, **loop)
        self.input_spec = InputSpec(ndim=3)

    def __getattr__(self, name):
        # kernel, units, activation, dropout, ...: the cell's (only once it exists)
        if name in _CELL_ATTRIBUTES and "cell" in self.__dict__:
            return getattr(self.__dict__["cell"], name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


_CELL_ATTRIBUTES = frozenset((
    "units", "activation", "recurrent_activation", "use_bias", "kernel", "recurrent_kernel",
    "bias", "kernel_initializer", "recurrent_initializer", "bias_initializer",
    "kernel_regularizer", "recurrent_regularizer", "bias_regularizer", "kernel_constraint",
    "recurrent_constraint", "bias_constraint", "dropout", "recurrent_dropout", "seed",
    "implementation", "unit_forget_bias", "reset_after"))


class SimpleRNN(_Builtin):
    """``h_t = activation(x_t @ kernel + bias + h_{t-1} @ recurrent_kernel)``: an RNN of a
    ``SimpleRNNCell``."""

    _cell_class, _cell_name = SimpleRNNCell, "simple_rnn_cell"


class LSTM(_Builtin):
    """Long short-term memory: states ``[h, c]``; an RNN of an ``LSTMCell``."""

    _cell_class, _cell_name = LSTMCell, "lstm_cell"


class GRU(_Builtin):
    """Gated recurrent unit: an RNN of a ``GRUCell`` (``reset_after`` by default)."""

    _cell_class, _cell_name = GRUCell, "gru_cell"


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
            extra = [None] * (2 * len(self.forward_layer.state_size))
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
