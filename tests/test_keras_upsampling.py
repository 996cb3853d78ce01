"""UpSampling2D(interpolation='bilinear'), the U-Net decoder's layer: Keras 3.15's values
(tests/data/keras_upsampling_reference.npz, from benchmarks/keras_upsampling_reference.py)
and gradients checked by central differences."""
import pathlib

import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras
from tapegrad.testing import check_grads

REF = np.load(pathlib.Path(__file__).parent / "data" / "keras_upsampling_reference.npz")


def test_bilinear_upsampling_gives_keras_values():
    x = REF["x"]
    last = keras.layers.UpSampling2D((2, 3), interpolation="bilinear")(x)
    first = keras.layers.UpSampling2D(2, data_format="channels_first",
                                      interpolation="bilinear")(x)
    np.testing.assert_array_equal(last.numpy(), REF["last"])
    np.testing.assert_array_equal(first.numpy(), REF["first"])


def test_bilinear_upsampling_differentiates_and_compiles():
    layer = keras.layers.UpSampling2D(2, interpolation="bilinear", dtype="float64")
    x = np.random.default_rng(1).normal(size=(1, 3, 4, 2))
    check_grads(lambda t: layer(t), (tf.constant(x),), order=2)
    f = tf.function(lambda t: layer(t))
    np.testing.assert_array_equal(f(tf.constant(x)).numpy(), layer(tf.constant(x)).numpy())


def test_unknown_interpolation_says_what_is_implemented():
    with pytest.raises(NotImplementedError, match="'bicubic' is not implemented"):
        keras.layers.UpSampling2D(interpolation="bicubic")
