"""``keras.applications``: each architecture built with ``weights=None`` has Keras 3.15's
layers (names, classes, output shapes, in ``model.layers`` order), parameter counts and
model name; every family's ``preprocess_input`` gives Keras's numbers (and, on a NumPy
array, writes over it as Keras does); ``decode_predictions`` reads a local class index;
``weights="imagenet"`` and bad arguments raise Keras's error types. A saliency map
(``tape.gradient`` of a class score with respect to the image) runs eagerly and in
``tf.function`` and is checked against central differences. Reference data:
tests/data/keras_applications_reference.npz, written by
benchmarks/keras_applications_reference.py (TensorFlow is never imported here). Models
are built at small input sizes (the reference's 224x224 cases, all checked once by hand,
are not built here)."""
import json
import pathlib
import re

import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras
from tapegrad.keras import applications
from tapegrad.keras.applications import imagenet_utils

DATA = np.load(pathlib.Path(__file__).parent / "data" / "keras_applications_reference.npz",
               allow_pickle=False)
MANIFEST = json.loads(str(DATA["manifest"]))
MODELS = {case["name"]: case for case in MANIFEST["models"]}
BUILT = ["vgg16_top32", "vgg19_notop", "resnet50_notop_max",
         "resnet101_notop", "mobilenetv2_a050_96", "mobilenetv2_a140_33",
         "mobilenetv2_a035_avg", "densenet121_notop", "densenet121_top40",
         "efficientnetb0_notop"]


def _snake(name):
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2",
                                                          name)).lower()


def _name(name, cls):
    """A layer's name without the counter of an automatic name ("zero_padding2d_3")."""
    base = _snake(cls)
    return base if re.fullmatch(rf"{base}(_\d+)?", name) else name


def _build(case):
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in case["kwargs"].items()}
    return getattr(applications, case["ctor"])(weights=None, **kwargs)


@pytest.mark.parametrize("name", BUILT)
def test_architecture_matches_keras(name):
    case = MODELS[name]
    model = _build(case)
    assert model.name == case["model_name"]
    assert model.count_params() == case["count_params"]
    assert sum(int(np.prod(w.shape)) for w in model.trainable_weights) == case["trainable"]
    assert len(model.weights) == case["n_weights"]
    assert list(model.input.shape) == case["input_shape"]
    assert list(model.output.shape) == case["output_shape"]
    ours = [[_name(la.name, type(la).__name__), type(la).__name__, list(la.output.shape)]
            for la in model.layers]
    theirs = [[_name(n, c), c, s] for n, c, s in case["layers"]]
    assert len(ours) == len(theirs)
    assert ours == theirs


def test_every_reference_case_has_a_constructor():
    for case in MANIFEST["models"]:
        assert callable(getattr(applications, case["ctor"]))
    assert applications.resnet50.ResNet50 is applications.ResNet50
    assert applications.vgg19.preprocess_input is applications.vgg16.preprocess_input


@pytest.mark.parametrize("case", MANIFEST["preprocess"], ids=lambda c: c["case"])
def test_preprocess_input_matches_keras(case):
    x = DATA[f"image/{case['image']}"].copy()
    module = getattr(applications, case["family"])
    arg = x if case["kind"] == "numpy" else tf.constant(x)
    out = module.preprocess_input(arg, data_format=case["data_format"])
    out = out.numpy() if hasattr(out, "numpy") else np.asarray(out)
    expected = DATA[f"pre/{case['case']}"]
    assert out.dtype == expected.dtype and out.shape == expected.shape
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-5)
    if case["kind"] == "numpy":  # what Keras leaves in the caller's array
        np.testing.assert_allclose(x, DATA[f"pre/{case['case']}/after"], rtol=1e-6,
                                   atol=1e-5)


def test_preprocess_input_errors_and_modes():
    x = np.full((1, 2, 2, 3), 255.0)
    with pytest.raises(ValueError, match="Expected mode"):
        imagenet_utils.preprocess_input(x, mode="keras")
    with pytest.raises(ValueError, match="Expected data_format"):
        imagenet_utils.preprocess_input(x, data_format="NHWC")
    torch = imagenet_utils.preprocess_input(x.copy(), mode="torch")
    np.testing.assert_allclose(torch[0, 0, 0], (1 - np.array([0.485, 0.456, 0.406]))
                               / np.array([0.229, 0.224, 0.225]))
    # a tensor is never changed; a float tensor keeps its dtype
    t = tf.constant(x.astype(np.float32))
    out = applications.resnet.preprocess_input(t)
    assert out.dtype == tf.float32 and (t.numpy() == 255.0).all()


def test_decode_predictions(tmp_path, monkeypatch):
    path = tmp_path / "imagenet_class_index.json"
    path.write_text(json.dumps({str(i): [f"n{i:08d}", f"label_{i}"] for i in range(1000)}))
    preds = np.zeros((2, 1000), np.float32)
    preds[0, [3, 9, 5]] = [0.5, 0.3, 0.2]
    preds[1, 999] = 1.0
    top = applications.vgg16.decode_predictions(preds, top=2, class_index_path=str(path))
    assert top[0] == [("n00000003", "label_3", np.float32(0.5)),
                      ("n00000009", "label_9", np.float32(0.3))]
    assert top[1][0][:2] == ("n00000999", "label_999") and len(top[1]) == 2
    assert len(applications.mobilenet_v2.decode_predictions(
        tf.constant(preds), class_index_path=path)[0]) == 5
    with pytest.raises(ValueError, match=r"shape \(samples, 1000\)"):
        imagenet_utils.decode_predictions(np.zeros((2, 10)), class_index_path=path)
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match="class_index_path="):
        imagenet_utils.decode_predictions(preds)
    keras_home = tmp_path / "home"
    (keras_home / "models").mkdir(parents=True)
    (keras_home / "models" / "imagenet_class_index.json").write_text(path.read_text())
    monkeypatch.setenv("KERAS_HOME", str(keras_home))
    assert imagenet_utils.decode_predictions(preds, top=1)[1][0][1] == "label_999"


@pytest.mark.parametrize("ctor", ["VGG16", "VGG19", "ResNet50", "ResNet101", "ResNet152",
                                  "MobileNetV2", "DenseNet121", "DenseNet169",
                                  "DenseNet201", "EfficientNetB0", "EfficientNetB7"])
def test_imagenet_weights_cannot_be_downloaded(ctor):
    with pytest.raises(ValueError, match=r"cannot be downloaded.*weights='/path/to/file"):
        getattr(applications, ctor)()  # weights="imagenet" is Keras's default
    with pytest.raises(ValueError, match="The `weights` argument should be either"):
        getattr(applications, ctor)(weights="/no/such/file.weights.h5")
    with pytest.raises(ValueError, match="`classes` should be 1000"):
        getattr(applications, ctor)(weights="imagenet", classes=10)


def test_input_shape_checks():
    with pytest.raises(ValueError, match="at least 32x32"):
        applications.VGG16(weights=None, include_top=False, input_shape=(16, 16, 3))
    with pytest.raises(ValueError, match="static `input_shape`"):
        applications.ResNet50(weights=None, input_shape=(None, None, 3))
    with pytest.raises(ValueError, match="tuple of three integers"):
        applications.DenseNet121(weights=None, include_top=False, input_shape=(32, 32))
    with pytest.raises(ValueError, match=r"`input_shape` should be \(224, 224, 3\)"):
        applications.VGG16(input_shape=(32, 32, 3))
    with pytest.raises(ValueError, match="alpha must be one of"):
        applications.MobileNetV2(weights="imagenet", input_shape=(96, 96, 3), alpha=0.3)
    with pytest.warns(UserWarning, match="1 or 3 input channels"):
        model = applications.MobileNetV2(weights=None, include_top=False, alpha=0.35,
                                         input_shape=(32, 32, 4))
    assert model.input.shape == (None, 32, 32, 4)


def test_local_weights_file_and_input_tensor(tmp_path):
    model = applications.MobileNetV2(weights=None, include_top=False, alpha=0.35,
                                     input_shape=(32, 32, 3))
    path = str(tmp_path / "mobilenet.weights.h5")
    model.save_weights(path)
    again = applications.MobileNetV2(weights=path, include_top=False, alpha=0.35,
                                     input_shape=(32, 32, 3))
    for a, b in zip(model.get_weights(), again.get_weights()):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="Only `None` and `softmax`"):
        applications.MobileNetV2(weights=path, alpha=0.35, input_shape=(32, 32, 3),
                                 classifier_activation="relu")
    # input_tensor: a symbolic tensor computed from an Input; the model starts there
    image = keras.Input((32, 32, 3))
    scaled = keras.layers.Rescaling(1 / 127.5, offset=-1)(image)
    net = applications.MobileNetV2(weights=None, include_top=False, alpha=0.35,
                                   input_tensor=scaled, pooling="avg")
    assert net.input is image and net.output.shape == (None, 1280)
    assert type(net.layers[1]).__name__ == "Rescaling"


@pytest.fixture(scope="module")
def float64():
    before = keras.backend.floatx()
    keras.backend.set_floatx("float64")
    yield
    keras.backend.set_floatx(before)


@pytest.mark.parametrize("ctor,kwargs", [
    ("MobileNetV2", {"alpha": 0.35, "input_shape": (32, 32, 3), "classes": 4}),
    ("VGG16", {"include_top": False, "input_shape": (32, 32, 3), "pooling": "avg"})])
def test_saliency_map_eager_function_and_numeric(ctor, kwargs, float64):
    keras.utils.set_random_seed(3)
    model = getattr(applications, ctor)(weights=None, **kwargs)
    image = tf.constant(np.random.default_rng(0).uniform(0, 255, (1, 32, 32, 3)))
    image = applications.mobilenet_v2.preprocess_input(image)

    def saliency(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            score = model(x)[:, 1]
        return score, tape.gradient(score, x)

    score, grad = saliency(image)
    score_f, grad_f = tf.function(saliency)(image)
    assert grad.shape == image.shape and grad.dtype == tf.float64
    assert float(tf.reduce_sum(tf.abs(grad))) > 0
    np.testing.assert_allclose(score_f.numpy(), score.numpy(), rtol=1e-12)
    np.testing.assert_allclose(grad_f.numpy(), grad.numpy(), rtol=1e-9, atol=1e-14)
    rng, h = np.random.default_rng(1), 1e-7  # small: ReLU kinks and max-pool near-ties
    for _ in range(2):  # directional derivatives against central differences
        v = rng.normal(size=image.shape)
        up = model(image + h * v)[:, 1].numpy()
        down = model(image - h * v)[:, 1].numpy()
        np.testing.assert_allclose((up - down) / (2 * h), np.sum(grad.numpy() * v),
                                   rtol=1e-5, atol=1e-9)


def test_transfer_learning_frozen_base():
    keras.utils.set_random_seed(0)
    base = applications.MobileNetV2(weights=None, include_top=False, alpha=0.35,
                                    input_shape=(32, 32, 3))
    base.trainable = False
    inputs = keras.Input((32, 32, 3))
    x = base(applications.mobilenet_v2.preprocess_input(inputs), training=False)
    outputs = keras.layers.Dense(2)(keras.layers.GlobalAveragePooling2D()(x))
    model = keras.Model(inputs, outputs)
    assert len(model.trainable_weights) == 2
    frozen = [w.numpy().copy() for w in base.weights]
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    rng = np.random.default_rng(0)
    model.fit(rng.uniform(0, 255, (8, 32, 32, 3)).astype("float32"),
              rng.integers(0, 2, 8), epochs=1, batch_size=4, verbose=0)
    for before, w in zip(frozen, base.weights):
        np.testing.assert_array_equal(before, w.numpy())
    # fine-tuning from a layer index, as the Keras tutorial does
    base.trainable = True
    for layer in base.layers[:100]:
        layer.trainable = False
    assert base.layers[100].name == MODELS["mobilenetv2"]["layers"][100][0]


def test_probe_sizes_keep_unknown_spatial_sizes_unknown():
    # a stride-2 pooling of an image of unknown size: unknown (2 and 3 pixels both pool
    # to 1, which read as a known size once)
    image = keras.Input((None, None, 3))
    assert keras.layers.MaxPooling2D(2)(image).shape == (None, None, None, 3)
    assert keras.layers.Conv2D(2, 7, strides=2)(image).shape == (None, None, None, 2)
    assert keras.layers.GlobalAveragePooling2D()(image).shape == (None, 3)
    seq = keras.Input((None, 4))
    assert keras.layers.Conv1D(2, 3)(seq).shape == (None, None, 2)
