"""Depthwise, separable, 3-D and transposed convolutions, 3-D pooling and
GroupNormalization: outputs and gradients as Keras 3 computes them (the cases of
tests/data/keras_reference_conv.npz, written by real Keras, see
benchmarks/keras_reference_conv.py), derivatives by central differences, configs that
round-trip (Keras's own included), .keras files, ``fit`` of a MobileNet-style block and of
a 3-D CNN, and Keras's errors. TensorFlow is never imported here."""
import json
import pathlib

import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras
from tapegrad.testing import check_grads

DATA = np.load(pathlib.Path(__file__).parent / "data" / "keras_reference_conv.npz",
               allow_pickle=False)
MANIFEST = json.loads(str(DATA["manifest"]))
L = keras.layers


def _close(actual, expected, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=rtol, atol=atol)


def _built(case):
    p = f"layer/{case['name']}"
    layer = getattr(L, case["class"])(**case["config"])
    x = DATA[f"{p}/input"]
    layer(x)
    layer.set_weights([DATA[f"{p}/weight{i}"] for i in range(len(case["weight_names"]))])
    return layer, x


@pytest.mark.parametrize("case", MANIFEST["layers"], ids=lambda c: c["name"])
def test_layer_values_and_gradients_match_keras(case):
    p = f"layer/{case['name']}"
    layer, x = _built(case)
    assert [w.name for w in layer.weights] == case["weight_names"]
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        out = layer(xt)
        loss = tf.reduce_sum(out * DATA[f"{p}/cotangent"])
    assert out.dtype == tf.float32
    _close(out, DATA[f"{p}/output"])
    grads = tape.gradient(loss, [xt] + layer.weights)
    _close(grads[0], DATA[f"{p}/dinput"], rtol=1e-4, atol=1e-4)
    for i, g in enumerate(grads[1:]):
        _close(g, DATA[f"{p}/dweight{i}"], rtol=1e-4, atol=1e-4)
    # the symbolic call (a functional model) gives the same shape
    assert tuple(layer(keras.Input(batch_shape=x.shape)).shape) == tuple(out.shape)


@pytest.mark.parametrize("case", MANIFEST["layers"], ids=lambda c: c["name"])
def test_keras_configs_load_and_ours_round_trip(case):
    """The config Keras wrote for the built layer (initializer dicts, its dtype policy)
    makes the same layer here; ours round-trips through JSON and computes the same."""
    layer, x = _built(case)
    from_keras = getattr(L, case["class"]).from_config(case["built_config"])
    from_keras(x)
    from_keras.set_weights(layer.get_weights())
    np.testing.assert_array_equal(from_keras(x), layer(x))
    config = keras.saving.serialize_keras_object(layer)
    again = keras.saving.deserialize_keras_object(json.loads(json.dumps(config)))
    assert type(again) is type(layer)
    assert keras.saving.serialize_keras_object(again) == config
    ours, theirs = layer.get_config(), case["built_config"]
    for key in set(ours) & set(theirs) - {"dtype", "name"}:
        value = json.loads(json.dumps(ours[key]))
        if isinstance(value, dict):
            continue  # serialized objects: checked by the round trip above
        assert value == theirs[key], key


CASES = {c["name"]: c for c in MANIFEST["layers"]}
NUMERIC = ["depthwise2d_same_strided", "depthwise1d_cf_strided", "separable2d_dilated_cf",
           "separable1d", "conv1d_transpose_same_op", "conv3d_cf_groups",
           "conv3d_transpose_same_cf", "avgpool3d_same", "groupnorm_image",
           "groupnorm_axis2"]


@pytest.mark.parametrize("name", NUMERIC)
def test_derivatives_numerically(name):
    """float64, by central differences: first and second derivatives in the input (the
    layers are compositions of primitives, so they differentiate again), and the first in
    every weight (the variables moved along a random direction)."""
    case = CASES[name]
    layer = getattr(L, case["class"])(**{**case["config"], "dtype": "float64"})
    x = DATA[f"layer/{name}/input"][:1].astype("float64")
    layer(x)
    layer.set_weights([DATA[f"layer/{name}/weight{i}"].astype("float64")
                       for i in range(len(case["weight_names"]))])
    if "activation" in case["config"]:  # relu's kink: keep the points away from it
        layer.activation = keras.activations.get("softplus")

    def f(x):
        return tf.reduce_sum(tf.sin(layer(x)))

    check_grads(f, [x], modes=("rev", "fwd"), order=2)
    if not layer.weights:
        return
    rng = np.random.default_rng(1)
    dirs = [rng.normal(size=w.shape) for w in layer.weights]
    with tf.GradientTape() as tape:
        value = f(x)
    grads = tape.gradient(value, layer.weights)
    analytic = sum(np.vdot(g, d) for g, d in zip(grads, dirs))
    start, eps = layer.get_weights(), 1e-6

    def at(t):
        layer.set_weights([w + t * d for w, d in zip(start, dirs)])
        return float(f(x))

    numeric = (at(eps) - at(-eps)) / (2 * eps)
    layer.set_weights(start)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-7)


def test_depthwise_kernel_layout_is_tf_nn_depthwise_conv2d():
    x = np.random.default_rng(0).normal(size=(2, 5, 6, 3)).astype("float32")
    layer = L.DepthwiseConv2D(3, depth_multiplier=2, use_bias=False, padding="same")
    out = layer(x)
    ref = tf.nn.depthwise_conv2d(x, layer.kernel, [1, 1, 1, 1], "SAME")
    np.testing.assert_array_equal(out, ref)
    # channel c * M + m is input channel c convolved with its filter m
    k = layer.kernel.numpy()
    one = tf.nn.conv2d(x[..., 1:2], k[:, :, 1:2, 0:1], 1, "SAME")
    _close(out[..., 2:3], one, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", [c["name"] for c in MANIFEST["fits"]])
def test_fit_matches_keras(name):
    """A MobileNet-style block (Adam) and a 3-D CNN (SGD): 3 steps of fit, as in Keras."""
    p = f"fit/{name}"
    model = (_mobilenet_block if name == "mobilenet" else _cnn3d)()
    case = {c["name"]: c for c in MANIFEST["fits"]}[name]
    assert [w.name for w in model.weights] == case["weight_names"]
    model.set_weights([DATA[f"{p}/init{i}"] for i in range(len(model.weights))])
    loss = "sparse_categorical_crossentropy" if name == "mobilenet" else "mse"
    opt = keras.optimizers.Adam(0.01) if name == "mobilenet" else keras.optimizers.SGD(0.05)
    model.compile(optimizer=opt, loss=loss)
    hist = model.fit(DATA[f"{p}/x"], DATA[f"{p}/y"], batch_size=4, epochs=1,
                     steps_per_epoch=3, shuffle=False, verbose=0)
    _close(hist.history["loss"], DATA[f"{p}/loss"], rtol=1e-4)
    for i, w in enumerate(model.get_weights()):
        _close(w, DATA[f"{p}/final{i}"], rtol=1e-3, atol=1e-4)
    _close(model.predict(DATA[f"{p}/x"], verbose=0), DATA[f"{p}/predict"], rtol=1e-3,
           atol=1e-4)


def _mobilenet_block():
    return keras.Sequential([
        keras.Input((8, 8, 3)),
        L.Conv2D(4, 3, strides=2, padding="same", use_bias=False),
        L.BatchNormalization(),
        L.ReLU(6.0),
        L.DepthwiseConv2D(3, padding="same", use_bias=False),
        L.BatchNormalization(),
        L.ReLU(6.0),
        L.Conv2D(6, 1, use_bias=False),
        L.SeparableConv2D(6, 3, padding="same", depth_multiplier=2),
        L.GroupNormalization(groups=3),
        L.Activation("relu"),
        L.GlobalAveragePooling2D(),
        L.Dense(3, activation="softmax")])


def _cnn3d():
    return keras.Sequential([
        keras.Input((6, 6, 6, 2)),
        L.Conv3D(4, 3, padding="same", activation="relu"),
        L.MaxPooling3D(2),
        L.Conv3DTranspose(3, 2, strides=2, activation="tanh"),
        L.AveragePooling3D(3),
        L.Flatten(),
        L.Dense(1)])


def test_models_save_load_and_compile(tmp_path):
    """.keras files keep the new layers; a compiled training step equals the eager one."""
    x = np.random.default_rng(3).normal(size=(4, 8, 8, 3)).astype("float32")
    for make, data in ((_mobilenet_block, x),
                       (_cnn3d, np.random.default_rng(4).normal(size=(2, 6, 6, 6, 2)))):
        model = make()
        path = tmp_path / f"{make.__name__}.keras"
        model.save(path)
        loaded = keras.models.load_model(path)
        np.testing.assert_array_equal(loaded.predict(data, verbose=0),
                                      model.predict(data, verbose=0))
    model = _mobilenet_block()
    y = np.array([0, 1, 2, 1])

    def step(xs):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(
                y, model(xs, training=True)))
        return tape.gradient(loss, model.trainable_weights)

    eager = step(x)
    compiled = tf.function(step)(x)
    assert len(eager) == len(compiled) == 14
    for a, b in zip(eager, compiled):
        _close(a, b, rtol=1e-5, atol=1e-6)


def test_keras_errors():
    with pytest.raises(ValueError, match="depth_multiplier"):
        L.DepthwiseConv2D(3, depth_multiplier=0)
    with pytest.raises(ValueError, match="kernel_size` cannot contain 0"):
        L.SeparableConv2D(2, (3, 0))
    with pytest.raises(ValueError, match="Expected a strictly positive value"):
        L.SeparableConv1D(0, 3)
    with pytest.raises(ValueError, match="padding"):
        L.DepthwiseConv1D(3, padding="causal")
    with pytest.raises(ValueError, match="padding"):
        L.Conv1DTranspose(2, 3, padding="causal")
    with pytest.raises(ValueError, match="must be greater than output padding"):
        L.Conv3DTranspose(2, 3, strides=2, output_padding=2)
    with pytest.raises(ValueError, match="invalid value for argument `groups`"):
        L.GroupNormalization(groups=0)
    with pytest.raises(ValueError, match="cannot be more than the number of channels"):
        L.GroupNormalization(groups=8)(np.ones((2, 4)))
    with pytest.raises(ValueError, match="must be a multiple"):
        L.GroupNormalization(groups=3)(np.ones((2, 4)))
    with pytest.raises(ValueError, match="out of bounds"):
        L.GroupNormalization(groups=1, axis=3)(np.ones((2, 4)))
    conv = L.Conv3D(2, 2)
    conv(np.ones((1, 3, 3, 3, 2)))
    with pytest.raises(ValueError):
        conv(np.ones((1, 3, 3, 3, 4)))  # its input spec: 2 channels


def test_group_norm_instance_config_names_the_channels():
    layer = L.GroupNormalization(groups=-1)
    assert layer.get_config()["groups"] == -1
    layer(np.ones((2, 3, 6)))
    assert layer.get_config()["groups"] == 6  # as Keras, which overwrites it in build
    out = L.GroupNormalization(groups=2, dtype="float64")(np.ones((1, 2, 4), "float32"))
    assert out.dtype == tf.float64


@pytest.mark.parametrize("case", MANIFEST["separable"], ids=lambda c: c["name"])
def test_tf_nn_separable_conv2d_matches_tensorflow(case):
    p = f"separable/{case['name']}"
    args = [tf.constant(DATA[f"{p}/{k}"]) for k in ("x", "depthwise", "pointwise")]
    with tf.GradientTape() as tape:
        tape.watch(args)
        y = tf.nn.separable_conv2d(*args, case["strides"], case["padding"],
                                   dilations=case["dilations"])
        loss = tf.reduce_sum(y * DATA[f"{p}/cotangent"])
    _close(y, DATA[f"{p}/output"])
    for k, g in zip(("x", "depthwise", "pointwise"), tape.gradient(loss, args)):
        _close(g, DATA[f"{p}/d{k}"], rtol=1e-4, atol=1e-4)


def test_tf_nn_separable_conv2d_errors():
    x, d = tf.ones((1, 5, 5, 2)), tf.ones((3, 3, 2, 1))
    with pytest.raises(ValueError, match="not compatible with 1"):
        tf.nn.separable_conv2d(x, d, tf.ones((2, 1, 2, 3)), [1, 1, 1, 1], "VALID")
    with pytest.raises(ValueError, match="rank 4"):
        tf.nn.separable_conv2d(x, d, tf.ones((2, 3)), [1, 1, 1, 1], "VALID")


@pytest.mark.parametrize("case", MANIFEST["ops"], ids=lambda c: c["name"])
def test_keras_ops_convolutions_and_pools_match_keras(case):
    """keras.ops.conv, depthwise_conv, separable_conv, conv_transpose, max_pool and
    average_pool, as Keras 3.15 (TensorFlow backend) computes them."""
    p = f"ops/{case['name']}"
    kernels = [DATA[f"{p}/kernel{i}"] for i in range(case["kernels"])]
    out = getattr(keras.ops, case["op"])(DATA[f"{p}/x"], *kernels, **case["kwargs"])
    _close(out, DATA[f"{p}/output"])
