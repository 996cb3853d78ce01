"""tf.image against values TensorFlow computed (tests/data/tf_image_reference.json, written by
benchmarks/tf_reference_image.py), plus derivatives, traces, NaN locality and errors."""
import json
import pathlib

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.testing import check_grads

REF = json.loads((pathlib.Path(__file__).parent / "data" / "tf_image_reference.json").read_text())


@pytest.mark.parametrize("case", REF["resize"], ids=lambda c: f"{c['method']}-{c['dtype']}-"
                         f"{np.array(c['input']).shape}-{c['size']}")
def test_resize_matches_tensorflow(case):
    x = np.array(case["input"], case["dtype"])
    y = tf.image.resize(x, case["size"], method=case["method"])
    want = np.array(case["output"], case["output_dtype"])
    assert y.dtype == want.dtype and y.shape == want.shape
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-6, atol=1e-6)


def test_resize_preserve_aspect_ratio_matches_tensorflow():
    case = REF["resize_aspect"][0]
    y = tf.image.resize(np.array(case["input"], np.float32), case["size"],
                        preserve_aspect_ratio=True)
    np.testing.assert_allclose(y.numpy(), np.array(case["output"]), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", REF["adjust_contrast"], ids=lambda c: c["dtype"])
def test_adjust_contrast_matches_tensorflow(case):
    y = tf.image.adjust_contrast(np.array(case["input"], case["dtype"]), case["factor"])
    want = np.array(case["output"], case["output_dtype"])
    assert y.dtype == want.dtype
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", REF["standardize"], ids=lambda c: c["dtype"])
def test_per_image_standardization_matches_tensorflow(case):
    y = tf.image.per_image_standardization(np.array(case["input"], case["dtype"]))
    want = np.array(case["output"], case["output_dtype"])
    assert y.dtype == want.dtype
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-6, atol=1e-6)


def test_image_ops_differentiate():
    rng = np.random.default_rng(0)
    img = rng.normal(size=(2, 4, 5, 2))
    check_grads(lambda x: tf.image.resize(x, [7, 3]), [img])
    check_grads(lambda x: tf.image.resize(x, [2, 8], method="nearest"), [img])
    check_grads(lambda x: tf.image.adjust_contrast(x, 1.7), [img])
    check_grads(lambda x: tf.image.per_image_standardization(x), [img])
    assert tf.image.resize(img, [3, 3]).dtype == tf.float64  # float64 stays (a difference)


def test_resize_in_a_compiled_augmentation_step():
    @tf.function
    def augment(x):
        return tf.image.per_image_standardization(tf.image.resize(x, [6, 6]))

    x = tf.constant(np.random.default_rng(2).uniform(size=(3, 4, 4, 1)).astype(np.float32))
    np.testing.assert_allclose(augment(x).numpy(), tf.image.per_image_standardization(
        tf.image.resize(x, [6, 6])).numpy(), rtol=1e-5, atol=1e-6)


def test_a_nan_pixel_reaches_only_its_neighbours():
    x = np.zeros((6, 6, 1), np.float32)
    x[0, 0, 0] = np.nan
    y = tf.image.resize(x, [12, 12]).numpy()[..., 0]
    assert np.isnan(y[0, 0]) and not np.isnan(y[6:, 6:]).any()


def test_image_errors_as_tensorflow():
    with pytest.raises(ValueError, match="'images' must have either 3 or 4 dimensions."):
        tf.image.resize(tf.zeros([4, 4]), [2, 2])
    with pytest.raises(ValueError, match="Resize method is not implemented: foo"):
        tf.image.resize(tf.zeros([4, 4, 1]), [2, 2], method="foo")
    with pytest.raises(ValueError, match="'size' must be a 1-D Tensor of 2 elements"):
        tf.image.resize(tf.zeros([4, 4, 1]), [2, 2, 2])
    with pytest.raises(tf.errors.UnimplementedError):
        tf.image.resize(tf.zeros([4, 4, 1]), [2, 2], method=tf.image.ResizeMethod.BICUBIC)
    with pytest.raises(ValueError, match="three-dimensional"):
        tf.image.per_image_standardization(tf.zeros([4, 4]))


@pytest.mark.parametrize("case", REF["convert"], ids=lambda c: f"{c['dtype']}-{c['to']}")
def test_convert_image_dtype_matches_tensorflow(case):
    y = tf.image.convert_image_dtype(np.array(case["input"], case["dtype"]), case["to"])
    assert y.dtype == np.dtype(case["to"])
    np.testing.assert_allclose(y.numpy(), np.array(case["output"]), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("case", REF["gray"], ids=lambda c: c["dtype"])
def test_rgb_to_grayscale_matches_tensorflow(case):
    y = tf.image.rgb_to_grayscale(np.array(case["input"], case["dtype"]))
    assert y.dtype == np.dtype(case["dtype"])
    np.testing.assert_allclose(y.numpy(), np.array(case["output"]), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", REF["central_crop"], ids=lambda c: str(c["fraction"]))
def test_central_crop_matches_tensorflow(case):
    y = tf.image.central_crop(np.array(case["input"], np.float32), case["fraction"])
    np.testing.assert_array_equal(y.numpy(), np.array(case["output"], np.float32))


def test_flips_in_an_augmentation_pipeline():
    img = np.arange(2 * 3 * 4 * 1, dtype=np.float32).reshape(2, 3, 4, 1)
    np.testing.assert_array_equal(tf.image.flip_left_right(img).numpy(), img[:, :, ::-1])
    np.testing.assert_array_equal(tf.image.flip_up_down(img[0]).numpy(), img[0, ::-1])
    assert tf.image.grayscale_to_rgb(img).shape == (2, 3, 4, 3)
    tf.random.set_seed(0)
    ds = tf.data.Dataset.from_tensor_slices(np.repeat(img[:1], 64, axis=0)).map(
        lambda x: tf.image.random_flip_left_right(x))
    out = [x.numpy() for x in ds]
    flipped = sum(bool(np.array_equal(o, img[0, :, ::-1])) for o in out)
    kept = sum(bool(np.array_equal(o, img[0])) for o in out)
    assert flipped + kept == 64 and 10 < flipped < 54
    batch = tf.image.random_flip_up_down(np.repeat(img[:1], 32, axis=0)).numpy()
    assert all(np.array_equal(b, img[0]) or np.array_equal(b, img[0, ::-1]) for b in batch)
    check_grads(lambda x: tf.image.rgb_to_grayscale(tf.image.flip_left_right(x)),
                [np.random.default_rng(3).normal(size=(2, 2, 3))])
    with pytest.raises(ValueError, match="central_fraction must be within"):
        tf.image.central_crop(img, 0.0)
    with pytest.raises(ValueError, match="Dimension must be 3"):
        tf.image.rgb_to_grayscale(img)
