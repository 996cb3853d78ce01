"""Real TensorFlow/Keras programs (session 14's probe: saliency maps and FGSM, ESPCN's
sub-pixel upsampling and ViT's patches, CNN Jacobians in tf.function, a subclassed Model's
own train_step/test_step, callbacks, schedules with gradient clipping, a convolutional
autoencoder of many layer kinds, tf.custom_gradient, Hessian-vector products, graph control
flow, a multi-input multi-output functional model, DeepDream, a physics-informed network,
custom Loss/Metric/Layer classes, custom RNN cells), run as written with
``import tapegrad as tf`` and compared with what TensorFlow 2.21 / Keras 3.15 computed for
the same fixed weights (tests/data/real_programs_s14.json, made by
benchmarks/real_programs_s14_reference.py from the same program text).

Tolerances as in session 13's test: rtol 2e-4 and an atol of 2e-5 times the result's
largest magnitude (at least 1). Beside the programs, focused tests of what they found."""
import json
import os

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.testing import check_grads

import _real_programs_s14 as programs

with open(os.path.join(os.path.dirname(__file__), "data", "real_programs_s14.json")) as _f:
    REF = json.load(_f)["results"]


def _decode(entry):
    if entry["dtype"] == "str":
        return np.array(entry["data"], dtype=str).reshape(entry["shape"])
    data = np.array(entry["data"])
    if entry["dtype"].startswith("complex"):
        data = data[..., 0] + 1j * data[..., 1] if data.size else data
    return data.astype(entry["dtype"]).reshape(entry["shape"])


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", programs.NAMES + tuple(
    pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=why))
    for n, why in programs.XFAIL.items()))
def test_program_matches_tensorflow(name):
    got = programs.run(tf, name)
    keys = sorted(k.split("/", 1)[1] for k in REF if k.startswith(name + "/"))
    assert sorted(got) == keys
    for key in keys:
        want, have = _decode(REF[f"{name}/{key}"]), np.asarray(got[key])
        assert have.shape == want.shape, key
        if want.dtype.kind in "fc":
            assert have.dtype == want.dtype, key
            scale = float(np.max(np.abs(want))) if want.size else 1.0
            np.testing.assert_allclose(have, want, rtol=2e-4, atol=2e-5 * max(scale, 1.0),
                                       err_msg=key)
        else:
            np.testing.assert_array_equal(have, want, err_msg=key)


def test_loop_state_with_a_none_dimension():
    # deep_dream's loop: a tf.function whose input_signature leaves a size None carries
    # the tensor through a staged loop; the loop's program takes the traced size (a new
    # size traces again), where it raised TypeError on the symbolic size
    def f(x):
        for _ in tf.range(3):
            x = tf.tanh(x) * 0.5 + x * x
        return x

    traced = tf.function(f, input_signature=[tf.TensorSpec([None, 2], tf.float64)])
    rng = np.random.default_rng(0)
    for n in (3, 1, 4):
        x = tf.constant(rng.uniform(-0.5, 0.5, size=(n, 2)))
        np.testing.assert_allclose(traced(x).numpy(), f(x).numpy(), rtol=1e-12)
    while_traced = tf.function(
        lambda x: tf.while_loop(lambda i, y: i < 4, lambda i, y: (i + 1, tf.sin(y) * y),
                                (0, x))[1],
        input_signature=[tf.TensorSpec([None], tf.float64)])
    np.testing.assert_allclose(while_traced(tf.constant([0.3, -0.2], tf.float64)).numpy(),
                               _iterate(np.array([0.3, -0.2])), rtol=1e-12)
    check_grads(traced, [rng.uniform(-0.5, 0.5, size=(2, 2))], order=2)
    check_grads(while_traced, [np.array([0.3, -0.2, 0.5])], order=2)


def _iterate(y):
    for _ in range(4):
        y = np.sin(y) * y
    return y


def test_keras_ops_on_keras_tensors():
    # multi_io_functional's gated unit: keras.ops and keras.activations on a functional
    # model's KerasTensors record nodes (they raised TypeError); tf.* refuses them with
    # ValueError, as TensorFlow does
    keras = tf.keras
    inputs = keras.Input((4,))
    first, second = keras.ops.split(inputs, 2, axis=-1)
    gated = first * keras.activations.sigmoid(second) + keras.ops.mean(inputs, axis=-1,
                                                                         keepdims=True)
    out = keras.ops.where(gated > 0, gated, 0.1 * gated)
    model = keras.Model(inputs, [out, keras.ops.concatenate([first, abs(second)], axis=-1)])
    assert keras.ops.shape(inputs) == (None, 4) and tuple(out.shape) == (None, 2)
    x = tf.constant(np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32))

    def eager(x):
        a, b = x[:, :2], x[:, 2:]
        g = a * tf.sigmoid(b) + tf.reduce_mean(x, axis=-1, keepdims=True)
        return tf.where(g > 0, g, 0.1 * g)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        got, both = model(x)
        want = eager(x)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    np.testing.assert_allclose(both.numpy(), tf.concat([x[:, :2], tf.abs(x[:, 2:])], -1))
    np.testing.assert_allclose(tape.gradient(got, x).numpy(), tape.gradient(want, x).numpy(),
                               rtol=1e-6)
    with pytest.raises(ValueError):
        tf.nn.relu(inputs)
    with pytest.raises(ValueError):
        np.asarray(inputs)


def test_space_depth_patches_and_lrn_derivatives():
    # subpixel_and_patches: depth_to_space, space_to_depth, extract_patches and
    # local_response_normalization were missing; their values and gradients are compared
    # with TensorFlow's there, their derivatives with central differences here (float64:
    # the LRN's own composition, since TensorFlow's LRN refuses float64)
    from tapegrad.ops.rearrange_ops import _lrn
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 4, 6, 8))
    check_grads(lambda t: tf.nn.depth_to_space(t, 2), [x], order=2)
    check_grads(lambda t: tf.nn.space_to_depth(t, 2), [x], order=2)
    for sizes, strides, rates, padding in [([1, 3, 2, 1], [1, 2, 3, 1], [1, 1, 1, 1], "SAME"),
                                          ([1, 2, 2, 1], [1, 1, 2, 1], [1, 2, 1, 1], "VALID")]:
        check_grads(lambda t: tf.image.extract_patches(t, sizes, strides, rates, padding), [x],
                    order=1)
    check_grads(lambda t: _lrn(t, 2, 0.5, 0.3, 0.75), [x], order=2)
    y = tf.constant(x.astype(np.float32))
    np.testing.assert_array_equal(tf.nn.space_to_depth(tf.nn.depth_to_space(y, 2), 2), y)
    patches = tf.image.extract_patches(y, [1, 4, 6, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID")
    np.testing.assert_array_equal(patches.numpy().reshape(2, 4, 6, 8), x.astype(np.float32))


def test_space_depth_patches_and_lrn_errors():
    # the error types TensorFlow 2.21 raises for these inputs
    x = tf.ones((1, 4, 4, 6))
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.nn.depth_to_space(x, 4)   # 6 channels, not divisible by 16
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.nn.space_to_depth(tf.ones((1, 3, 4, 1)), 2)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.nn.depth_to_space(x, 1)
    with pytest.raises(tf.errors.UnimplementedError):
        tf.image.extract_patches(x, [1, 2, 2, 2], [1, 1, 1, 1], [1, 1, 1, 1], "VALID")
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.image.extract_patches(tf.ones((1, 7, 7, 1)), [1, 5, 5, 1], [1, 1, 1, 1],
                                 [1, 2, 2, 1], "VALID")   # the window is 9 pixels wide
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.nn.local_response_normalization(tf.ones((1, 2, 2, 3), tf.float64))
    assert tf.image.extract_patches(x, [1, 5, 5, 1], [1, 1, 1, 1], [1, 1, 1, 1],
                                    "VALID").shape == (1, 0, 0, 150)


@pytest.mark.parametrize("run_eagerly", [False, True])
def test_per_output_losses_count_batches_as_keras_on_tensorflow(run_eagerly):
    # multi_io_functional (12 rows in batches of 5): Keras on TensorFlow logs each
    # output's loss as the mean over the batches (its tf.function sees no static batch
    # size), the total loss as the mean over the rows; with run_eagerly both by rows
    keras = tf.keras
    inputs = keras.Input((3,))
    hidden = keras.layers.Dense(4, activation="tanh")(inputs)
    model = keras.Model(inputs, [keras.layers.Dense(1, name="a")(hidden),
                                 keras.layers.Dense(1, name="b")(hidden)])
    rng = np.random.default_rng(3)
    x = rng.normal(size=(6, 3)).astype(np.float32)
    ya, yb = (rng.normal(size=(6, 1)).astype(np.float32) for _ in range(2))
    model.compile(optimizer=keras.optimizers.SGD(0.0), loss=["mse", "mae"],
                  loss_weights=[0.5, 2.0], run_eagerly=run_eagerly)
    h = model.fit(x, [ya, yb], batch_size=4, epochs=1, verbose=0, shuffle=False)
    pa, pb = model.predict(x, verbose=0)
    batches = [slice(0, 4), slice(4, 6)]
    a = [np.mean((pa[s] - ya[s]) ** 2) for s in batches]
    b = [np.mean(np.abs(pb[s] - yb[s])) for s in batches]
    total = [0.5 * ai + 2.0 * bi for ai, bi in zip(a, b)]
    weights = [4, 2] if run_eagerly else [1, 1]
    np.testing.assert_allclose(h.history["a_loss"], [np.average(a, weights=weights)], rtol=1e-5)
    np.testing.assert_allclose(h.history["b_loss"], [np.average(b, weights=weights)], rtol=1e-5)
    np.testing.assert_allclose(h.history["loss"], [np.average(total, weights=[4, 2])],
                               rtol=1e-5)


def test_image_geometry_and_average_loss_derivatives():
    # subpixel_and_patches: tf.image's rot90, transpose, crops, pads, adjust_brightness,
    # adjust_gamma, psnr and tf.nn.compute_average_loss were missing; their values and
    # gradients are compared with TensorFlow's there, derivatives with differences here
    rng = np.random.default_rng(2)
    img = rng.uniform(0.1, 1.0, size=(2, 5, 6, 3))
    for k in range(4):
        check_grads(lambda t: tf.image.rot90(t, k=k), [img], order=1)
    check_grads(lambda t: tf.image.resize_with_crop_or_pad(tf.image.transpose(t), 7, 3), [img],
                order=1)
    check_grads(lambda t: tf.image.pad_to_bounding_box(
        tf.image.crop_to_bounding_box(t, 1, 2, 3, 4), 2, 0, 6, 5), [img], order=1)
    check_grads(lambda t: tf.image.adjust_gamma(tf.image.adjust_brightness(t, 0.2), 0.7, 1.3),
                [img], order=2)
    check_grads(lambda t, w: tf.nn.compute_average_loss(t * t, sample_weight=w,
                                                        global_batch_size=3),
                [rng.normal(size=(2, 4)), rng.uniform(size=(2,))], order=2)
    x = tf.constant(img.astype(np.float32))
    with tf.GradientTape() as tape:
        tape.watch(x)
        value = tf.image.psnr(x, x * 0.5, max_val=1.0)   # 20 log10(1) - 10 log10(mse)
    mse = np.mean((img * 0.5) ** 2, axis=(1, 2, 3))
    np.testing.assert_allclose(value.numpy(), -10 * np.log10(mse), rtol=1e-5)
    want = -10 / np.log(10) / mse[:, None, None, None] * 2 * 0.25 * img / img[0].size
    np.testing.assert_allclose(tape.gradient(value, x).numpy(), want, rtol=1e-4)


def test_dice_tversky_and_volume_layers():
    # conv_autoencoder_zoo's 3-D U-Net: the Dice and Tversky losses, UpSampling3D,
    # ZeroPadding3D and Cropping3D were missing; values against TensorFlow there,
    # derivatives here (the losses by differences, the layers' adjoints exactly)
    keras = tf.keras
    rng = np.random.default_rng(4)
    y_true = (rng.uniform(size=(2, 3, 4, 1)) > 0.5).astype(np.float64)
    check_grads(lambda p: keras.losses.dice(y_true, p, axis=(1, 2, 3)),
                [rng.uniform(size=(2, 3, 4, 1))], order=2)
    check_grads(lambda p: keras.losses.tversky(y_true, p, alpha=0.7, beta=0.3),
                [rng.uniform(size=(2, 3, 4, 1))], order=2)
    x = tf.constant(rng.normal(size=(1, 2, 3, 2, 2)).astype(np.float32))
    cot = rng.normal(size=(1, 4, 3, 6, 2)).astype(np.float32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        up = keras.layers.UpSampling3D((2, 1, 3))(x)
        loss = tf.reduce_sum(up * cot)
    np.testing.assert_array_equal(up.numpy(), np.repeat(np.repeat(x.numpy(), 2, 1), 3, 3))
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(),
                               cot.reshape(1, 2, 2, 3, 2, 3, 2).sum(axis=(2, 5)), rtol=1e-5,
                               atol=1e-6)
    with tf.GradientTape() as tape:
        tape.watch(x)
        padded = keras.layers.ZeroPadding3D(((1, 0), 2, (0, 1)))(x)
        back = keras.layers.Cropping3D(((1, 0), 2, (0, 1)))(padded)
        loss = tf.reduce_sum(back * x)
    assert padded.shape == (1, 3, 7, 3, 2)
    np.testing.assert_array_equal(back.numpy(), x.numpy())
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), 2 * x.numpy(), rtol=1e-6)
    with pytest.raises(ValueError):
        keras.layers.Cropping3D(((1, 1), 0, 0))(x)
