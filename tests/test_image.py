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
