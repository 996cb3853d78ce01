"""``SimpleRNN``, ``LSTM`` and ``GRU`` as Keras 3 computes them (a NumPy transcription of
its cells in float64, masks, ``go_backwards``, states), and the "Working with RNNs" guide's
models trained, compared eager against ``tf.function``, saved and reloaded."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras
from tapegrad.keras import layers
from tapegrad.testing import check_grads


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


def _reference(layer, x, mask=None):
    """Keras 3's cell equations in NumPy: the final output and the sequence."""
    w = [v.numpy().astype(np.float64) for v in layer.weights]
    kernel, recurrent = w[0], w[1]
    bias = w[2] if len(w) > 2 else None
    u = layer.units
    h = np.zeros((x.shape[0], u))
    c = np.zeros_like(h)
    seq = []
    steps = range(x.shape[1] - 1, -1, -1) if layer.go_backwards else range(x.shape[1])
    for t in steps:
        xt = x[:, t]
        if isinstance(layer, layers.LSTM):
            z = xt @ kernel + h @ recurrent + bias
            i, f, g, o = np.split(z, 4, axis=1)
            c_new = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
            h_new = _sigmoid(o) * np.tanh(c_new)
        elif isinstance(layer, layers.GRU):
            mx = xt @ kernel + bias[0]
            inner = h @ recurrent + bias[1]
            z = _sigmoid(mx[:, :u] + inner[:, :u])
            r = _sigmoid(mx[:, u:2 * u] + inner[:, u:2 * u])
            h_new = z * h + (1 - z) * np.tanh(mx[:, 2 * u:] + r * inner[:, 2 * u:])
            c_new = c
        else:
            h_new = np.tanh(xt @ kernel + bias + h @ recurrent)
            c_new = c
        if mask is not None:  # a masked step keeps the state and the output
            keep = mask[:, t:t + 1]
            h_new, c_new = np.where(keep, h_new, h), np.where(keep, c_new, c)
        h, c = h_new, c_new
        seq.append(h)
    return h, np.stack(seq, axis=1), c


@pytest.fixture
def float64():
    keras.backend.set_floatx("float64")
    yield
    keras.backend.set_floatx("float32")


@pytest.mark.parametrize("cls", [layers.SimpleRNN, layers.LSTM, layers.GRU])
@pytest.mark.parametrize("backwards", [False, True])
def test_cells_match_the_equations(cls, backwards, float64):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 5, 4))
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [0, 1, 1, 0, 1]], bool)
    layer = cls(6, return_sequences=True, go_backwards=backwards)
    layer(x)
    for v in layer.weights:
        v.assign(rng.normal(0, 0.4, v.shape))
    last, seq, _ = _reference(layer, x)
    np.testing.assert_allclose(layer(x).numpy(), seq, rtol=1e-10, atol=1e-12)
    _, masked, _ = _reference(layer, x, mask)
    np.testing.assert_allclose(layer(x, mask=mask).numpy(), masked, rtol=1e-10, atol=1e-12)
    final = cls(6, return_state=True, go_backwards=backwards)
    final(x)
    final.set_weights(layer.get_weights())
    out, *states = final(x)
    np.testing.assert_allclose(out.numpy(), last, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(states[0].numpy(), last, rtol=1e-10, atol=1e-12)
    assert len(states) == (2 if cls is layers.LSTM else 1)
    check_grads(lambda v: final(v)[0], [x[:2, :3]], order=1)


def test_weights_shapes_and_initial_biases_are_keras():
    x = np.ones((2, 3, 4), "float32")
    lstm, gru, rnn = layers.LSTM(5), layers.GRU(5), layers.SimpleRNN(5)
    for layer in (lstm, gru, rnn):
        layer(x)
    assert [tuple(w.shape) for w in lstm.weights] == [(4, 20), (5, 20), (20,)]
    assert [tuple(w.shape) for w in gru.weights] == [(4, 15), (5, 15), (2, 15)]
    assert [tuple(w.shape) for w in rnn.weights] == [(4, 5), (5, 5), (5,)]
    np.testing.assert_array_equal(lstm.bias.numpy(), [0] * 5 + [1] * 5 + [0] * 10)
    r = lstm.recurrent_kernel.numpy()
    np.testing.assert_allclose(r @ r.T, np.eye(5), atol=1e-5)  # orthonormal rows
    classic = layers.GRU(5, reset_after=False)
    classic(x)
    assert [tuple(w.shape) for w in classic.weights] == [(4, 15), (5, 15), (15,)]
    with pytest.raises(NotImplementedError, match="stateful"):
        layers.LSTM(3, stateful=True)


def test_initial_state_continues_a_sequence():
    keras.utils.set_random_seed(0)
    x = np.random.default_rng(0).normal(size=(2, 6, 3)).astype("float32")
    layer = layers.LSTM(4, return_state=True)
    whole, h, c = layer(x)
    first, h1, c1 = layer(x[:, :3])
    rest, _, _ = layer(x[:, 3:], initial_state=[h1, c1])
    np.testing.assert_allclose(rest.numpy(), whole.numpy(), rtol=1e-5, atol=1e-6)


def test_working_with_rnns_models_train_save_and_reload(tmp_path):
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.integers(1, 20, (48, 7))
    x[:24, 5:] = 0  # padded
    y = (x == 3).any(axis=1).astype("int64")
    model = keras.Sequential([keras.Input((7,)), layers.Embedding(20, 8, mask_zero=True),
                              layers.LSTM(16, return_sequences=True), layers.GRU(8),
                              layers.Dense(2)])
    model.compile(optimizer=keras.optimizers.Adam(1e-2), metrics=["accuracy"],
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(x, y, batch_size=16, epochs=10, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    # the padding is masked: the padded rows give what their 5 real steps alone give
    h = tf.constant(x[:24, :5])
    for layer in model.layers:
        h = layer(h)
    np.testing.assert_allclose(model.predict(x, verbose=0)[:24], h.numpy(), rtol=1e-5,
                               atol=1e-6)
    path = str(tmp_path / "rnn.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0),
                               rtol=1e-5, atol=1e-6)
    step = tf.function(lambda v: model(v))
    np.testing.assert_allclose(step(tf.constant(x)).numpy(), model(x).numpy(), rtol=1e-5,
                               atol=1e-6)
    inputs = keras.Input(shape=(None,), dtype="int32")
    encoded = layers.Embedding(input_dim=20, output_dim=4)(inputs)
    output, state_h, state_c = layers.LSTM(6, return_state=True)(encoded)
    decoded = layers.LSTM(6)(encoded, initial_state=[state_h, state_c])
    seq2seq = keras.Model(inputs, layers.Dense(3)(decoded))
    assert seq2seq(x[:2]).shape == (2, 3)


@pytest.mark.parametrize("mode", ["concat", "sum", "ave", "mul"])
def test_bidirectional_is_a_forward_and_a_backward_copy(mode, tmp_path):
    keras.utils.set_random_seed(0)
    x = np.random.default_rng(0).normal(size=(2, 5, 3)).astype("float32")
    bi = layers.Bidirectional(layers.LSTM(4, return_sequences=True), merge_mode=mode)
    out = bi(x).numpy()
    assert [w.shape for w in bi.weights] == [(3, 16), (4, 16), (16,)] * 2
    fw = bi.forward_layer(x).numpy()
    bw = bi.backward_layer(x).numpy()[:, ::-1]  # back in time order
    assert bi.backward_layer.go_backwards and not bi.forward_layer.go_backwards
    expected = {"concat": np.concatenate([fw, bw], -1), "sum": fw + bw, "ave": (fw + bw) / 2,
                "mul": fw * bw}[mode]
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-7)
    model = keras.Sequential([keras.Input((5, 3)), bi])
    model.save(tmp_path / "bi.keras")
    loaded = keras.models.load_model(tmp_path / "bi.keras")
    np.testing.assert_allclose(loaded(x).numpy(), out, rtol=1e-6, atol=1e-7)
    states = layers.Bidirectional(layers.GRU(2, return_state=True))(x)
    assert [tuple(s.shape) for s in states] == [(2, 4), (2, 2), (2, 2)]
    with pytest.raises(ValueError, match="Invalid merge mode"):
        layers.Bidirectional(layers.LSTM(2), merge_mode="max")
    assert loaded.layers[0].forward_layer.name == bi.forward_layer.name
