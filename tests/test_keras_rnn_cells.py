"""keras.layers.RNN and the recurrent cells: Keras 3.15's values (reference data made by
benchmarks/keras_rnn_reference.py), user-written cells, stacks, dropout masks, saved files.
"""
import os
import re

import numpy as np
import pytest

import tapegrad as tf
from benchmarks.keras_rnn_reference import cases
from tapegrad import keras
from tapegrad.keras.layers.base import variable_path
from tapegrad.keras.model_file import weight_paths
from tapegrad.testing import check_grads

L = keras.layers
DATA = os.path.join(os.path.dirname(__file__), "data")
REF = np.load(os.path.join(DATA, "keras_rnn_cells_reference.npz"))

@pytest.fixture
def float64_keras():
    keras.backend.set_floatx("float64")
    yield
    keras.backend.set_floatx("float32")


CASES = cases(L)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_paths_and_masks_match_keras(name):
    x, mask = REF["x"], REF["mask"]
    layer = CASES[name]()
    layer(x)
    n = len(layer.weights)
    layer.set_weights([REF[f"{name}/w{i}"] for i in range(n)])
    def plain(path):   # names without the counters that differ with what ran before
        return re.sub(r"_\d+(?=/)", "", str(path))
    assert [plain(variable_path(w)) for w in layer.weights] == [
        plain(p) for p in REF[f"{name}/paths"]]
    for key, kwargs in (("out", {}), ("masked", {"mask": mask})):
        got = tf.nest.flatten(layer(x, **kwargs))
        want = [REF[f"{name}/{key}{i}"] for i in range(len(got))]
        assert f"{name}/{key}{len(got)}" not in REF   # as many outputs as Keras
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w, rtol=2e-5, atol=2e-6)


def test_layers_equal_an_rnn_of_their_cell_bit_for_bit():
    x = np.random.default_rng(0).normal(size=(4, 6, 3)).astype("float32")
    for layer, cell in ((L.LSTM(5, return_sequences=True), L.LSTMCell(5)),
                        (L.GRU(5, return_sequences=True), L.GRUCell(5)),
                        (L.SimpleRNN(5, return_sequences=True), L.SimpleRNNCell(5))):
        rnn = L.RNN(cell, return_sequences=True)
        layer(x)
        rnn(x)
        rnn.set_weights(layer.get_weights())
        np.testing.assert_array_equal(layer(x).numpy(), rnn(x).numpy())
        assert isinstance(layer.cell, type(cell)) and layer.units == 5
        assert layer.kernel is layer.cell.kernel


class MinimalRNNCell(L.Layer):
    """The cell of Keras's RNN documentation, as users write it."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.state_size = units

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units),
                                      initializer="uniform", name="kernel")
        self.recurrent_kernel = self.add_weight(shape=(self.units, self.units),
                                                initializer="uniform",
                                                name="recurrent_kernel")

    def call(self, inputs, states):
        prev_output = states[0]
        h = keras.ops.matmul(inputs, self.kernel)
        output = h + keras.ops.matmul(prev_output, self.recurrent_kernel)
        return output, [output]


def test_a_users_cell_alone_and_stacked_in_a_model_that_trains(float64_keras):
    x = np.random.default_rng(1).normal(size=(8, 5, 3))
    y = np.random.default_rng(2).normal(size=(8, 1))
    inp = keras.Input((None, 3))
    h = L.RNN([MinimalRNNCell(4), MinimalRNNCell(6)], return_sequences=True)(inp)
    out = L.Dense(1)(L.RNN(MinimalRNNCell(2))(h))
    model = keras.Model(inp, out)
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    first = model.evaluate(x, y, verbose=0)
    model.fit(x, y, epochs=5, verbose=0)
    assert model.evaluate(x, y, verbose=0) < first
    # the step is the documented recurrence
    first_cell = model.layers[1].cell.cells[0]
    k1, r1 = first_cell.kernel.numpy(), first_cell.recurrent_kernel.numpy()
    h1 = np.zeros((8, 4))
    for t in range(5):
        h1 = x[:, t] @ k1 + h1 @ r1
    one = L.RNN(MinimalRNNCell(4))
    one(x)
    one.cell.kernel.assign(k1)
    one.cell.recurrent_kernel.assign(r1)
    np.testing.assert_allclose(one(x).numpy(), h1, rtol=1e-12)


@pytest.mark.parametrize("make", [lambda: L.LSTMCell(3), lambda: L.GRUCell(3),
                                  lambda: L.GRUCell(3, reset_after=False),
                                  lambda: L.SimpleRNNCell(3),
                                  lambda: L.LSTMCell(3, implementation=1)])
def test_gradients_through_an_rnn_of_each_cell(make, float64_keras):
    x = tf.constant(np.random.default_rng(3).normal(size=(2, 4, 3)))
    layer = L.RNN(make(), return_sequences=True)
    layer(x)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.sin(layer(x)))
    assert all(g is not None for g in tape.gradient(y, layer.trainable_weights))
    check_grads(lambda x: tf.reduce_sum(tf.sin(layer(x))), (x,), order=1)
    # in the weights too: each weight as the argument
    for v in layer.trainable_weights:
        w0 = tf.constant(v.numpy())

        def loss(w, v=v):
            v.assign(w)
            return tf.reduce_sum(tf.sin(layer(x)))
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.sin(layer(x)))
        g = tape.gradient(y, v).numpy()
        u = np.random.default_rng(5).normal(size=g.shape)
        eps = 1e-6
        fd = (loss(w0 + eps * u).numpy() - loss(w0 - eps * u).numpy()) / (2 * eps)
        v.assign(w0)
        np.testing.assert_allclose(np.sum(g * u), fd, rtol=1e-6, atol=1e-8)


def test_dropout_keeps_one_mask_for_every_step_of_a_call():
    keras.utils.set_random_seed(0)
    layer = L.SimpleRNN(64, activation=None, dropout=0.5, return_sequences=True,
                        kernel_initializer="identity", recurrent_initializer="zeros")
    x = np.ones((2, 6, 64), "float32")
    a = layer(x, training=True).numpy()
    assert set(np.unique(a)) == {0.0, 2.0}
    np.testing.assert_array_equal(a, np.broadcast_to(a[:, :1], a.shape))  # same every step
    b = layer(x, training=True).numpy()
    assert not np.array_equal(a, b)   # a fresh mask per call
    np.testing.assert_array_equal(layer(x).numpy(), x)   # inference: no dropout
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)


def test_recurrent_dropout_gives_each_gate_a_mask_and_only_while_training():
    x = np.random.default_rng(4).normal(size=(3, 5, 4)).astype("float32")
    plain, dropped = L.LSTM(6), L.LSTM(6, dropout=0.3, recurrent_dropout=0.4, seed=1)
    plain(x)
    dropped(x)
    dropped.set_weights(plain.get_weights())
    assert dropped.cell.implementation == 1 and dropped.cell._mask_count == 4
    np.testing.assert_allclose(dropped(x).numpy(), plain(x).numpy(), rtol=2e-6, atol=1e-6)
    assert not np.allclose(dropped(x, training=True).numpy(), plain(x).numpy())
    masks = dropped.cell
    assert masks.__dict__.get("_dropout_mask") is None   # cleared when the call ends

    @tf.function
    def step(x):
        return dropped(x, training=True)
    assert step(x).shape == (3, 6)
    assert masks.__dict__.get("_recurrent_mask") is None


def test_dropout_trains_a_model_in_fit():
    x = np.random.default_rng(5).normal(size=(16, 5, 2)).astype("float32")
    y = x.sum(axis=(1, 2))[:, None]
    model = keras.Sequential([keras.Input((5, 2)), L.GRU(8, dropout=0.1, recurrent_dropout=0.1),
                              L.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    hist = model.fit(x, y, epochs=3, verbose=0)
    assert np.isfinite(hist.history["loss"]).all()


def test_saved_paths_are_keras_and_files_from_before_cells_still_load(tmp_path):
    ref = np.load(os.path.join(DATA, "keras_files", "recurrent_s8_predictions.npz"))
    model = keras.models.load_model(os.path.join(DATA, "keras_files", "recurrent_s8.keras"))
    np.testing.assert_array_equal(model.predict(ref["x"], verbose=0), ref["pred"])
    paths = set(weight_paths(model))
    assert "layers/lstm/cell/vars/0" in paths and "layers/gru/cell/vars/2" in paths
    model.save(tmp_path / "again.keras")
    again = keras.models.load_model(tmp_path / "again.keras")
    np.testing.assert_array_equal(again.predict(ref["x"], verbose=0), ref["pred"])


def test_rnn_of_a_user_cell_saves_and_loads(tmp_path):
    x = np.random.default_rng(6).normal(size=(4, 3, 2)).astype("float32")
    model = keras.Sequential([keras.Input((3, 2)),
                              L.RNN([L.LSTMCell(3), L.SimpleRNNCell(2)], go_backwards=True)])
    want = model.predict(x, verbose=0)
    assert {"layers/rnn/cell/cells/lstm_cell/vars/0",
            "layers/rnn/cell/cells/simple_rnn_cell/vars/0"} <= set(weight_paths(model))
    model.save(tmp_path / "m.keras")
    np.testing.assert_array_equal(keras.models.load_model(tmp_path / "m.keras").predict(
        x, verbose=0), want)


def test_bad_cells_and_arguments_get_keras_errors():
    with pytest.raises(ValueError, match="`call` method"):
        L.RNN(object())

    class NoState:
        def call(self, x, s):
            return x, s
    with pytest.raises(ValueError, match="state_size"):
        L.RNN(NoState())
    with pytest.raises(ValueError, match="positive integer"):
        L.LSTMCell(0)
    with pytest.raises(NotImplementedError, match="stateful"):
        L.RNN(L.GRUCell(2), stateful=True)


def test_nest_maps_several_structures_as_tf():
    assert tf.nest.map_structure(lambda a, b: a + b, [1, (2, 3)], [10, (20, 30)]) == [
        11, (22, 33)]
    assert tf.nest.map_structure(lambda a, b: a * b, [1, 2], (3, 4), check_types=False) == [3, 8]
    with pytest.raises(TypeError, match="same nested structure"):
        tf.nest.map_structure(lambda a, b: a, [1, 2], (1, 2))
    with pytest.raises(ValueError, match="same nested structure"):
        tf.nest.assert_same_structure([1, 2], [1, (2, 3)])
    with pytest.raises(ValueError, match="same nested structure"):
        tf.nest.assert_same_structure({"a": 1}, {"b": 1})
    with pytest.raises(ValueError, match="Structure had 2 atoms"):
        tf.nest.pack_sequence_as([1, 2], [1])


def test_a_file_keras_wrote_loads_with_the_same_predictions():
    pytest.importorskip("h5py")   # Keras writes its weights as HDF5
    ref = np.load(os.path.join(DATA, "keras_files", "keras315_recurrent_predictions.npz"))
    model = keras.models.load_model(os.path.join(DATA, "keras_files",
                                                 "keras315_recurrent.keras"))
    np.testing.assert_allclose(model.predict(ref["x"], verbose=0), ref["pred"], rtol=1e-5,
                               atol=1e-6)
