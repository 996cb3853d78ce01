"""Float to integer casts of NaN, ±inf and out-of-range values give TensorFlow 2.21's CPU
results (tests/data/tf_cast_reference.npz, written by benchmarks/tf_cast_reference.py),
eagerly and in generated code, with no NumPy warnings; ``saturate_cast`` of NaN too.

TensorFlow's kernels have two paths: the reference holds each value cast inside a tensor
of a multiple of 64 elements ("block", the vector path, tapegrad's rule for every element)
and alone ("one"). The two agree for int32, int64 and uint64; for the narrow types and
uint32 TensorFlow wraps where it is alone (README, "Differences from TensorFlow").
"""
import pathlib
import warnings

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.primitives.casting import cast_array

REF = np.load(pathlib.Path(__file__).parent / "data" / "tf_cast_reference.npz",
              allow_pickle=False)
SOURCES = ("float16", "float32", "float64")
TARGETS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
PAIRS = [(s, d) for s in SOURCES for d in TARGETS]


@pytest.fixture(autouse=True)
def _warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


@pytest.mark.parametrize("src,dst", PAIRS)
def test_cast_gives_tensorflows_integers(src, dst):
    x = REF[f"{src}/x"]
    want = REF[f"{src}/{dst}/block"]
    got = tf.cast(tf.constant(x), dst).numpy()
    assert got.dtype == np.dtype(dst)
    np.testing.assert_array_equal(got, want)
    compiled = tf.function(lambda v: tf.cast(v, dst))
    np.testing.assert_array_equal(compiled(tf.constant(x)).numpy(), want)
    # one element at a time (and as 0-d values) gives the same: the rule is per value
    for i in range(0, x.size, 7):
        assert tf.cast(tf.constant(x[i]), dst).numpy() == want[i]
        assert cast_array(x[i], dst) == want[i] and isinstance(cast_array(x[i], dst),
                                                               np.integer)


@pytest.mark.parametrize("src,dst", [(s, d) for s, d in PAIRS
                                     if d in ("int32", "int64", "uint64")])
def test_where_tensorflow_is_consistent_it_agrees_with_itself(src, dst):
    np.testing.assert_array_equal(REF[f"{src}/{dst}/one"], REF[f"{src}/{dst}/block"])


def test_tensorflows_scalar_path_wraps_the_narrow_types():
    # documents the difference: alone, TensorFlow's NaN -> int8 is 0 and 300.0 -> 44
    x = REF["float32/x"]
    one, block = REF["float32/int8/one"], REF["float32/int8/block"]
    nan, big = np.flatnonzero(np.isnan(x))[0], np.flatnonzero(x == 256.0)[0]
    assert (one[nan], block[nan]) == (0, -128)
    assert (one[big], block[big]) == (0, 127)


@pytest.mark.parametrize("src,dst", PAIRS)
def test_saturate_cast_of_nan_and_everything_within_the_limits(src, dst):
    x = REF[f"{src}/x"]
    want = REF[f"{src}/{dst}/saturate"]
    got = tf.dtypes.saturate_cast(tf.constant(x), dst).numpy()
    # TensorFlow's int64 and uint64 upper limits overflow (README): compare below them
    keep = np.isnan(x) | (x.astype(np.float64) < 2.0 ** 62) if dst in ("int64", "uint64") \
        else np.ones(x.shape, bool)
    np.testing.assert_array_equal(got[keep], want[keep])
    assert np.isnan(x[keep]).any()


def test_other_casts_are_unchanged():
    x = np.array([1.5, -2.5, np.nan], np.float32)
    for dst in ("float64", "float16", "complex64", "bool"):
        np.testing.assert_array_equal(cast_array(x, dst), x.astype(dst))
    i = np.array([300, -1, 70000], np.int64)
    np.testing.assert_array_equal(cast_array(i, "uint8"), i.astype(np.uint8))  # wraps
    z = np.array([np.nan + 1j, 2.7 - 5j], np.complex64)
    np.testing.assert_array_equal(cast_array(z, "int32"), [-2 ** 31, 2])  # the real part
