"""``model.save`` / ``keras.models.load_model`` (.keras files): tutorial models saved and
reloaded give identical predictions and continue training identically; configs of every
layer round-trip; custom classes load through registration or ``custom_objects``; bad
files and unsafe configs fail with Keras's errors."""
import io
import json
import warnings
import zipfile

import numpy as np
import pytest

from tapegrad import keras


def _data(seed=0, n=32, d=8, classes=3):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)).astype("float32"), rng.integers(0, classes, n)


def _same_predictions(a, b, x):
    pa, pb = a.predict(x, verbose=0), b.predict(x, verbose=0)
    for u, v in zip(np.atleast_1d(pa) if isinstance(pa, list) else [pa],
                    np.atleast_1d(pb) if isinstance(pb, list) else [pb]):
        np.testing.assert_array_equal(u, v)


def test_sequential_classifier_round_trip_continues_training(tmp_path):
    x, y = _data()
    keras.utils.set_random_seed(0)
    model = keras.Sequential([
        keras.Input(shape=(8,)),
        keras.layers.Dense(16, activation="relu",
                           kernel_regularizer=keras.regularizers.L2(1e-3)),
        keras.layers.BatchNormalization(),
        keras.layers.Dense(3, activation="softmax")])
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=3e-3, beta_1=0.8),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    path = tmp_path / "classifier.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    _same_predictions(model, loaded, x)
    assert [type(x).__name__ for x in loaded.layers] == [
        "Dense", "BatchNormalization", "Dense"]
    assert loaded.optimizer.beta_1 == 0.8 and loaded.optimizer.name == model.optimizer.name
    for a, b in zip(model.optimizer.variables, loaded.optimizer.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())  # Adam's moments, iterations
    h1 = model.fit(x, y, epochs=2, batch_size=8, shuffle=False, verbose=0).history
    h2 = loaded.fit(x, y, epochs=2, batch_size=8, shuffle=False, verbose=0).history
    assert h1 == h2
    _same_predictions(model, loaded, x)
    assert model.evaluate(x, y, verbose=0) == loaded.evaluate(x, y, verbose=0)
    bare = keras.saving.load_model(path, compile=False)
    assert not bare.compiled and bare.optimizer is None
    _same_predictions(loaded, loaded, x)


def test_archive_layout_is_keras_3(tmp_path):
    model = keras.Sequential([keras.layers.Dense(4), keras.layers.Dense(1)])  # no Input
    model(np.ones((2, 3), "float32"))
    path = tmp_path / "m.keras"
    model.save(path)
    with zipfile.ZipFile(path) as z:
        assert sorted(z.namelist()) == ["config.json", "metadata.json", "model.weights.npz"]
        config = json.loads(z.read("config.json"))
        metadata = json.loads(z.read("metadata.json"))
        with np.load(io.BytesIO(z.read("model.weights.npz")), allow_pickle=False) as w:
            assert sorted(w.files) == ["layers/dense/vars/0", "layers/dense/vars/1",
                                       "layers/dense_1/vars/0", "layers/dense_1/vars/1"]
    assert metadata["keras_version"] == keras.__version__
    assert (config["module"], config["class_name"]) == ("keras", "Sequential")
    dense = config["config"]["layers"][0]
    assert dense["class_name"] == "Dense" and dense["config"]["units"] == 4
    assert config["config"]["build_input_shape"] == [None, 3]
    loaded = keras.models.load_model(path)  # built from build_input_shape
    _same_predictions(model, loaded, np.ones((2, 3), "float32"))


@keras.saving.register_keras_serializable(package="tests")
class Scale(keras.layers.Layer):
    """A custom layer with a constructor argument and a weight (no get_config: Keras 3
    makes one from the constructor's arguments)."""

    def __init__(self, factor=2.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1],), initializer="random_normal",
                                 name="w")

    def call(self, x):
        return x * self.w * self.factor


def test_functional_multi_input_output_shared_layer_and_custom_layer(tmp_path):
    a, b = keras.Input((3,), name="a"), keras.Input((3,), name="b")
    shared = keras.layers.Dense(4, activation="tanh")
    h = keras.layers.Concatenate()([shared(a), shared(b), Scale(0.5)(a)])
    outputs = [keras.layers.Dense(2, name="reg")(h),
               keras.layers.Dense(1, activation="sigmoid", name="cls")(h)]
    model = keras.Model(inputs=[a, b], outputs=outputs)
    model.compile(optimizer="rmsprop", loss=["mse", "binary_crossentropy"],
                  loss_weights=[1.0, 0.5])
    rng = np.random.default_rng(3)
    xa, xb = rng.normal(size=(6, 3)).astype("float32"), rng.normal(size=(6, 3)).astype(
        "float32")
    ys = [rng.normal(size=(6, 2)).astype("float32"), rng.integers(0, 2, (6, 1))]
    model.fit([xa, xb], ys, epochs=1, verbose=0)
    path = tmp_path / "two_heads.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    assert [x.name for x in loaded.layers] == [x.name for x in model.layers]
    for p, q in zip(model.predict([xa, xb], verbose=0), loaded.predict([xa, xb], verbose=0)):
        np.testing.assert_array_equal(p, q)
    assert loaded.evaluate([xa, xb], ys, verbose=0) == model.evaluate([xa, xb], ys,
                                                                      verbose=0)


class Residual(keras.Model):
    def __init__(self, width=8, **kwargs):
        super().__init__(**kwargs)
        self.width = width
        self.inner = keras.layers.Dense(width, activation="relu")
        self.proj = keras.layers.Dense(width)
        self.head = keras.layers.Dense(1)

    def call(self, x, training=None):
        h = self.proj(x)
        return self.head(h + self.inner(h))


def test_subclassed_model_with_custom_objects(tmp_path):
    x, _ = _data(1, 10, 5)
    model = Residual(width=6)
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, x[:, :1], epochs=1, verbose=0)
    path = tmp_path / "residual.keras"
    model.save(path)
    with pytest.raises(TypeError, match="Could not locate class 'Residual'"):
        keras.models.load_model(path)
    loaded = keras.models.load_model(path, custom_objects={"Residual": Residual})
    assert isinstance(loaded, Residual) and loaded.width == 6
    _same_predictions(model, loaded, x)


def test_channels_first_cnn_round_trip(tmp_path):
    rng = np.random.default_rng(2)
    images = rng.normal(size=(3, 2, 10, 10)).astype("float32")
    model = keras.Sequential([
        keras.Input((2, 10, 10)),
        keras.layers.Conv2D(4, 3, padding="same", activation="relu",
                            data_format="channels_first"),
        keras.layers.MaxPooling2D(data_format="channels_first"),
        keras.layers.Conv2DTranspose(2, 2, strides=2, data_format="channels_first"),
        keras.layers.GlobalAveragePooling2D(data_format="channels_first"),
        keras.layers.Dropout(0.3),
        keras.layers.Dense(5, kernel_initializer="he_normal", activation="softmax")])
    path = tmp_path / "cnn.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    assert loaded.layers[0].data_format == "channels_first"
    _same_predictions(model, loaded, images)


LAYERS = [
    keras.layers.Dense(3, activation="gelu", use_bias=False,
                       kernel_initializer=keras.initializers.HeUniform(seed=1)),
    keras.layers.Conv1D(2, 3, padding="causal", dilation_rate=2),
    keras.layers.Conv2D(4, (3, 2), strides=2, padding="same", groups=2),
    keras.layers.Conv2DTranspose(3, 3, strides=2, output_padding=1, padding="same"),
    keras.layers.MaxPooling2D(3, strides=1, padding="same"),
    keras.layers.AveragePooling1D(2),
    keras.layers.GlobalMaxPooling2D(keepdims=True),
    keras.layers.BatchNormalization(momentum=0.9, epsilon=1e-4, axis=1),
    keras.layers.LayerNormalization(axis=[1, 2], epsilon=1e-5),
    keras.layers.Embedding(10, 4),
    keras.layers.Dropout(0.25, seed=3),
    keras.layers.Reshape((4, -1)),
    keras.layers.ZeroPadding2D(((1, 0), (2, 1))),
    keras.layers.UpSampling2D((2, 3)),
    keras.layers.LeakyReLU(negative_slope=0.2),
    keras.layers.ReLU(max_value=6.0),
    keras.layers.Softmax(axis=1),
    keras.layers.Activation("swish"),
    keras.layers.Concatenate(axis=1),
    keras.layers.Permute((2, 1)),
    keras.layers.RepeatVector(3),
    keras.layers.Flatten(),
]


OTHERS = [keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1),
          keras.losses.Huber(delta=2.0), keras.metrics.BinaryAccuracy(threshold=0.7),
          keras.metrics.Mean(name="m"), keras.optimizers.Nadam(0.01, beta_2=0.9),
          keras.optimizers.schedules.ExponentialDecay(0.1, 10, 0.5),
          keras.initializers.RandomNormal(stddev=0.3, seed=2), keras.regularizers.L1(0.1)]


@pytest.mark.parametrize("obj", OTHERS, ids=lambda x: type(x).__name__)
def test_other_configs_round_trip(obj):
    config = keras.saving.serialize_keras_object(obj)
    again = keras.saving.deserialize_keras_object(json.loads(json.dumps(config)))
    assert type(again) is type(obj)
    assert keras.saving.serialize_keras_object(again) == config


@pytest.mark.parametrize("layer", LAYERS, ids=lambda x: type(x).__name__)
def test_layer_configs_round_trip(layer):
    config = keras.saving.serialize_keras_object(layer)
    json.dumps(config)  # plain JSON
    again = keras.saving.deserialize_keras_object(json.loads(json.dumps(config)))
    assert type(again) is type(layer)
    assert keras.saving.serialize_keras_object(again) == config


def test_bad_paths_files_and_configs(tmp_path):
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    with pytest.raises(ValueError, match="Invalid filepath extension for saving"):
        model.save(tmp_path / "model.tf")
    with pytest.raises(ValueError, match="File not found: filepath="):
        keras.models.load_model(tmp_path / "missing.keras")
    with pytest.raises(ValueError, match="File format not supported"):
        keras.models.load_model(tmp_path / "missing.pb")
    (tmp_path / "junk.keras").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="File format not supported"):
        keras.models.load_model(tmp_path / "junk.keras")
    lam = keras.Sequential([keras.Input((2,)), keras.layers.Lambda(lambda t: 2 * t)])
    with pytest.raises(ValueError, match="cannot save a Python lambda"):
        lam.save(tmp_path / "lambda.keras")

    path = tmp_path / "good.keras"
    model.save(path)
    with zipfile.ZipFile(path) as z:
        parts = {n: z.read(n) for n in z.namelist()}

    def rewrite(name, **replace):
        out = tmp_path / name
        with zipfile.ZipFile(out, "w") as z:
            for n, data in {**parts, **replace}.items():
                if data is not None:
                    z.writestr(n, data)
        return out

    config = json.loads(parts["config.json"])
    config["config"]["layers"][1] = {"class_name": "__lambda__", "config": {
        "value": "code"}, "module": "builtins"}
    with pytest.raises(ValueError, match="deserialization of a Python lambda"):
        keras.models.load_model(rewrite("lam.keras", **{"config.json": json.dumps(config)}))
    config = json.loads(parts["config.json"])
    config["config"]["layers"][1]["module"] = "os"
    config["config"]["layers"][1]["class_name"] = "system"
    with pytest.raises(TypeError, match="Could not locate class 'system'"):
        keras.models.load_model(rewrite("os.keras", **{"config.json": json.dumps(config)}))
    config = json.loads(parts["config.json"])
    config["config"]["layers"][1]["config"]["units"] = 2
    with pytest.raises(ValueError, match="has shape"):
        keras.models.load_model(rewrite("shape.keras", **{"config.json": json.dumps(config)}))
    pickled = io.BytesIO()
    with zipfile.ZipFile(pickled, "w") as w:
        member = io.BytesIO()
        np.save(member, np.array([{"a": 1}], dtype=object), allow_pickle=True)
        w.writestr("layers/dense/vars/0.npy", member.getvalue())
    with pytest.raises(ValueError, match="allow_pickle"):
        keras.models.load_model(rewrite("pickle.keras",
                                        **{"model.weights.npz": pickled.getvalue()}))
    with pytest.raises(ValueError, match="HDF5"):
        keras.models.load_model(rewrite("h5.keras", **{"model.weights.npz": None,
                                                       "model.weights.h5": b"\x89HDF"}))


def test_loading_files_written_by_keras():
    """Files real Keras 3 saved (benchmarks/keras_files.py): the model and its weights
    come back (HDF5 weights need h5py), and the optimizer's state: its variables are in
    Keras's order (tests/test_keras_optimizer_order.py)."""
    pytest.importorskip("h5py")
    import pathlib
    folder = pathlib.Path(__file__).parent / "data" / "keras_files"
    ref = np.load(folder / "predictions.npz", allow_pickle=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        seq = keras.models.load_model(folder / "sequential.keras")
    names = [v.name for v in seq.optimizer.variables]
    assert names[:4] == ["iteration", "learning_rate", "dense_kernel_momentum",
                         "dense_kernel_velocity"]
    assert int(seq.optimizer.iterations.numpy()) == 2  # two epochs of one batch
    assert (seq.optimizer.variables[2].numpy() != 0).all()
    np.testing.assert_allclose(seq.predict(ref["x"], verbose=0), ref["sequential"],
                               rtol=1e-5, atol=1e-6)
    assert seq.compiled and type(seq.optimizer).__name__ == "Adam"
    two = keras.models.load_model(folder / "two_inputs.keras", compile=False)
    y, c = two.predict([ref["xa"], ref["xb"]], verbose=0)
    np.testing.assert_allclose(y, ref["y"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c, ref["c"], rtol=1e-5, atol=1e-6)


def test_keras_file_without_h5py_says_so(tmp_path, monkeypatch):
    import builtins
    import pathlib
    real_import = builtins.__import__

    def no_h5py(name, *args, **kwargs):
        if name == "h5py":
            raise ImportError("no h5py")
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_h5py)
    folder = pathlib.Path(__file__).parent / "data" / "keras_files"
    with pytest.raises(ValueError, match="reading it needs h5py"):
        keras.models.load_model(folder / "sequential.keras")
