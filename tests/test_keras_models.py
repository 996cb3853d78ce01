"""tapegrad.keras models: Sequential, functional and subclassed models, weights, summary,
saving, and the compile / fit / evaluate / predict loop."""
import io
import json
import zipfile

import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras
from tapegrad.keras import layers


def _data(n=64, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3)).astype("float32")
    y = (x @ np.array([[1.0], [-2.0], [0.5]]) + 0.3).astype("float32")
    return x, y


def test_sequential_with_and_without_input():
    a = keras.Sequential([keras.Input((3,)), layers.Dense(4), layers.Dense(1)])
    assert a.built and len(a.weights) == 4 and a.output_shape == (None, 1)
    b = keras.Sequential([layers.Dense(4), layers.Dense(1)])
    assert not b.built and b.weights == []
    assert b(np.ones((2, 3))).shape == (2, 1) and b.built and len(b.weights) == 4
    c = keras.Sequential()
    with pytest.warns(UserWarning, match="Do not pass an `input_shape`"):
        c.add(layers.Dense(2, input_shape=(5,)))
    assert c.built and c.weights[0].shape == (5, 2)
    assert [type(x).__name__ for x in a.layers] == ["Dense", "Dense"]
    with pytest.raises(ValueError, match="Only instances of `keras.Layer`"):
        keras.Sequential([3])


def test_model_weight_lists_and_get_set_weights():
    m = keras.Sequential([keras.Input((3,)), layers.Dense(4), layers.BatchNormalization(),
                          layers.Dense(1)])
    names = [w.name for w in m.weights]
    assert names == ["kernel", "bias", "gamma", "beta", "moving_mean", "moving_variance",
                     "kernel", "bias"]
    assert len(m.trainable_variables) == 6 and len(m.non_trainable_variables) == 2
    assert m.variables == m.weights
    ws = m.get_weights()
    m2 = keras.Sequential([keras.Input((3,)), layers.Dense(4), layers.BatchNormalization(),
                           layers.Dense(1)])
    m2.set_weights(ws)
    x = np.random.default_rng(0).normal(size=(5, 3))
    np.testing.assert_array_equal(m(x).numpy(), m2(x).numpy())
    with pytest.raises(ValueError, match="expecting 8 weights"):
        m2.set_weights(ws[:-1])
    m.layers[0].trainable = False
    assert len(m.trainable_variables) == 4


def test_functional_model_multi_input_and_graph_replay():
    a, b = keras.Input((3,), name="a"), keras.Input((2,), name="b")
    h = layers.Concatenate()([layers.Dense(4, activation="relu")(a), b])
    out = layers.Dense(1)(h) * 2.0
    m = keras.Model(inputs=[a, b], outputs=out)
    assert isinstance(m, keras.Model) and len(m.layers) == 6
    xa, xb = np.ones((5, 3), "float32"), np.ones((5, 2), "float32")
    y = m([xa, xb])
    # Keras's order: deepest first, so input "b" (one layer nearer the output) comes after
    # the first Dense, as keras 3.15 lists them
    assert [type(la).__name__ for la in m.layers[:5]] == [
        "InputLayer", "Dense", "InputLayer", "Concatenate", "Dense"]
    assert m.layers[0].name == "a" and m.layers[2].name == "b"
    d1, d2 = m.layers[1], m.layers[4]
    hid = np.concatenate([np.maximum(xa @ d1.kernel.numpy() + d1.bias.numpy(), 0), xb], 1)
    np.testing.assert_allclose(y.numpy(), 2 * (hid @ d2.kernel.numpy() + d2.bias.numpy()),
                               rtol=1e-5)
    with pytest.raises(ValueError, match="incompatible with the layer"):
        m([np.ones((5, 4)), xb])
    with pytest.raises(ValueError, match="Graph disconnected"):
        keras.Model(keras.Input((3,)), out)


def test_functional_probe_does_not_change_weights():
    x = keras.Input((3,))
    bn = layers.BatchNormalization()
    y = bn(x, training=True)
    keras.Model(x, y)
    np.testing.assert_array_equal(bn.moving_mean.numpy(), 0)
    np.testing.assert_array_equal(bn.moving_variance.numpy(), 1)


def test_subclassed_model_tracks_lists_and_attributes():
    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.blocks = []
            for _ in range(3):
                self.blocks.append(layers.Dense(4, activation="relu"))
            self.head = layers.Dense(1)

        def call(self, x, training=None):
            for blk in self.blocks:
                x = blk(x)
            return self.head(x)

    n = Net()
    n(np.ones((2, 3)))
    assert len(n.layers) == 4 and len(n.trainable_variables) == 8
    with pytest.raises(RuntimeError, match="forgot to call `super\\(\\).__init__\\(\\)`"):
        class Bad(keras.Model):
            def __init__(self):
                self.d = layers.Dense(1)
        Bad()


def test_summary_lists_layers_and_counts():
    m = keras.Sequential([keras.Input((3,)), layers.Dense(4), layers.BatchNormalization(),
                          layers.Dense(1)], name="net")
    out = []
    m.summary(print_fn=out.append)
    text = out[0]
    assert 'Model: "net"' in text and "(None, 4)" in text and "(None, 1)" in text
    assert "Total params: 37" in text and "Trainable params: 29" in text
    assert "Non-trainable params: 8" in text


def test_save_and_load_weights_format(tmp_path):
    m = keras.Sequential([keras.Input((3,)), layers.Dense(4), layers.Dense(1)])
    path = tmp_path / "model.weights.h5"
    m.save_weights(path)
    with zipfile.ZipFile(path) as z:
        manifest = json.loads(z.read("manifest.json"))
        arr = np.lib.format.read_array(io.BytesIO(z.read("w0.npy")), allow_pickle=False)
    assert manifest["format"] == "tapegrad.keras.weights" and manifest["version"] == 1
    assert [e["path"] for e in manifest["weights"]][1].endswith("/bias")
    np.testing.assert_array_equal(arr, m.weights[0].numpy())
    m2 = keras.Sequential([keras.Input((3,)), layers.Dense(4), layers.Dense(1)])
    m2.load_weights(path)
    for a, b in zip(m.get_weights(), m2.get_weights()):
        np.testing.assert_array_equal(a, b)
    wrong = keras.Sequential([keras.Input((3,)), layers.Dense(5), layers.Dense(1)])
    before = wrong.get_weights()
    with pytest.raises(ValueError, match="does not fit"):
        wrong.load_weights(path)
    assert all((a == b).all() for a, b in zip(before, wrong.get_weights()))
    bad = tmp_path / "bad.weights.h5"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("manifest.json", json.dumps({"format": "other", "version": 1}))
    with pytest.raises(ValueError, match="unknown weights format"):
        m2.load_weights(bad)


def test_fit_evaluate_predict_on_arrays():
    tf.random.set_seed(0)
    x, y = _data()
    m = keras.Sequential([keras.Input((3,)), layers.Dense(1)])
    m.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
    hist = m.fit(x, y, batch_size=16, epochs=20, verbose=0, validation_data=(x[:8], y[:8]))
    assert set(hist.history) == {"loss", "mae", "val_loss", "val_mae"}
    assert len(hist.history["loss"]) == 20 and hist.history["loss"][-1] < 1e-3
    assert int(m.optimizer.iterations) == 20 * 4
    loss, mae = m.evaluate(x, y, verbose=0)
    np.testing.assert_allclose(loss, np.mean((m.predict(x, verbose=0) - y) ** 2), rtol=1e-4)
    assert m.predict(x, batch_size=10, verbose=0).shape == (64, 1)
    np.testing.assert_allclose(m.layers[0].kernel.numpy().ravel(), [1, -2, 0.5], atol=0.02)


def test_fit_on_an_iterable_of_batches_and_early_stopping():
    x, y = _data(32)
    batches = [(x[i:i + 8], y[i:i + 8]) for i in range(0, 32, 8)]
    m = keras.Sequential([layers.Dense(1)])
    m.compile("adam", "mse")
    stop = keras.callbacks.EarlyStopping(monitor="loss", patience=0, min_delta=1e9)
    hist = m.fit(batches, epochs=10, verbose=0, callbacks=[stop])
    assert len(hist.history["loss"]) == 2 and stop.stopped_epoch == 1
    gen = ((x[i:i + 8], y[i:i + 8]) for i in range(0, 32, 8))
    h2 = m.fit(gen, epochs=2, steps_per_epoch=2, verbose=0)
    assert len(h2.history["loss"]) == 2


def test_fit_with_accuracy_picks_the_right_metric_and_a_progress_bar(capsys):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 4)).astype("float32")
    labels = (x[:, 0] > 0).astype("int64")
    m = keras.Sequential([keras.Input((4,)), layers.Dense(2, activation="softmax")])
    m.compile(keras.optimizers.Adam(0.05), "sparse_categorical_crossentropy",
              metrics=["accuracy"])
    m.fit(x, labels, epochs=15, batch_size=8, verbose=1)
    assert type(m.compiled_metrics.metrics[0]).__name__ == "SparseCategoricalAccuracy"
    printed = capsys.readouterr().out
    assert "Epoch 15/15" in printed and "5/5" in printed and "accuracy:" in printed
    assert m.evaluate(x, labels, verbose=0, return_dict=True)["accuracy"] > 0.9


def test_overridden_train_step_and_compile_errors():
    calls = []

    class Custom(keras.Model):
        def __init__(self):
            super().__init__()
            self.d = layers.Dense(1)

        def call(self, x):
            return self.d(x)

        def train_step(self, data):
            x, y = data
            calls.append(x.shape)
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.abs(self(x, training=True) - y))
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            return {"l1": loss}

    x, y = _data(20)
    m = Custom()
    m.compile(optimizer="sgd")
    hist = m.fit(x, y, batch_size=10, epochs=2, verbose=0)
    assert calls == [(10, 3)] * 4 and len(hist.history["l1"]) == 2
    with pytest.raises(ValueError, match="Could not interpret loss identifier: bogus"):
        m.compile(optimizer="sgd", loss="bogus")
    with pytest.raises(ValueError, match="must call `compile\\(\\)`"):
        keras.Sequential([layers.Dense(1)]).fit(x, y, verbose=0)


def test_jit_compiled_fit_matches_eager_fit():
    x, y = _data(32)
    results = []
    for jit in (False, True):
        tf.random.set_seed(3)
        m = keras.Sequential([keras.Input((3,)), layers.Dense(8, activation="tanh"),
                              layers.Dense(1)])
        m.compile(keras.optimizers.Adam(0.01), "mse", jit_compile=jit)
        m.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
        results.append(m.get_weights())
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_fit_on_a_tf_data_dataset():
    x, y = _data(40)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(40, seed=1).batch(8)
    m = keras.Sequential([layers.Dense(1)])
    m.compile(keras.optimizers.SGD(0.1), "mse")
    hist = m.fit(ds, epochs=8, verbose=0, validation_data=ds)
    assert hist.history["loss"][-1] < 0.1 * hist.history["loss"][0]
    assert int(m.optimizer.iterations) == 8 * 5
    assert m.predict(ds.map(lambda a, b: a), verbose=0).shape == (40, 1)
    with pytest.raises(ValueError, match="must not be specified for the given input type"):
        m.fit(ds, batch_size=4, verbose=0)


def test_model_built_on_its_first_call_inside_tf_function():
    x, y = _data(32)
    model = keras.Sequential([layers.Dense(1)])
    opt = keras.optimizers.SGD(0.1)

    @tf.function
    def step(a, b):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(a) - b) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    losses = [float(step(x, y)) for _ in range(30)]
    assert model.built and len(model.weights) == 2
    assert losses[-1] < 0.1 * losses[0]
