"""A short row broadcast over many rows (a channels-last bias) is computed eagerly on rows
merged r at a time (primitives/families.py, ``_merged_rows``, by util/rows.py's rule, which
generated code follows too): the same bits, dtype and shape as NumPy's own broadcast, on both
sides of each of its eager thresholds, with NaN, inf and signed zeros."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.primitives import families as F

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # inf - inf, 0 / 0
RNG = np.random.default_rng(5)
UFUNCS = [np.add, np.subtract, np.multiply, np.true_divide]


def _values(shape, dtype):
    if np.dtype(dtype).kind in "iu":
        return RNG.integers(-9, 10, shape).astype(dtype)
    x = RNG.standard_normal(shape).astype(dtype)
    flat = x.reshape(-1)
    special = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-30][:flat.size]
    flat[RNG.permutation(flat.size)[:len(special)]] = special
    return x


def _same(a, b):
    assert a.shape == b.shape and a.dtype == b.dtype and a.flags.c_contiguous
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))  # bits, NaN included


@pytest.mark.parametrize("ufunc", UFUNCS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("shape, row_shape, tiled", [
    ((64, 28, 28, 6), (6,), True),            # LeNet's first bias: rows of 6 -> of 168
    ((64, 10, 10, 16), (1, 1, 16), True),     # rows of EAGER_K, a row of rank 3
    ((4096, 8), (8,), True),                  # EAGER_ROWS rows exactly
    ((4095, 8), (8,), False),                 # one row fewer
    ((4096, 17), (17,), False),               # rows longer than EAGER_K
    ((2048, 32), (32,), False),               # (generated code merges these: not eager)
    ((4097, 3), (3,), True),                  # 4097 = 17 * 241: 17 rows at a time
    ((4099, 3), (3,), False),                 # a prime count of rows: no divisor fits
    ((8192, 1), (1,), False),                 # rows of one: NumPy broadcasts a scalar
    ((8, 1024, 6), (1024, 1), False),         # broadcast along the last axis
    ((4096, 6), (1, 1, 6), False),            # the row has more axes than the array
])
def test_merged_rows_equal_numpy_broadcasting(ufunc, dtype, shape, row_shape, tiled):
    x, row = _values(shape, dtype), _values(row_shape, dtype)
    if ufunc is np.true_divide and np.dtype(dtype).kind == "i":
        row[row == 0] = 3
    for a, b in ((x, row), (row, x)):  # the row on either side
        got = F._merged_rows(ufunc, a, b)
        assert (got is not None) == tiled
        if got is not None:
            _same(got, ufunc(a, b))
        # through the primitive, eager
        op = {np.add: tf.add, np.subtract: tf.subtract, np.multiply: tf.multiply,
              np.true_divide: tf.divide}[ufunc]
        if np.dtype(dtype).kind == "f":
            _same(np.asarray(op(tf.constant(a), tf.constant(b)).numpy()), ufunc(a, b))


def test_mixed_dtypes_and_layouts_keep_numpys_result():
    x = _values((64, 28, 28, 6), np.float32)
    row = _values((6,), np.float64)
    _same(F._merged_rows(np.add, x, row), x + row)  # promoted to float64, as NumPy
    xt = np.asfortranarray(x)
    assert F._merged_rows(np.add, xt, row) is None  # not C-ordered: NumPy's own broadcast
    assert F._merged_rows(np.add, x, x) is None or np.array_equal(F._merged_rows(np.add, x, x),
                                                                 x + x)


def test_eager_equals_compiled_for_a_bias():
    x = tf.constant(_values((64, 28, 28, 6), np.float32))
    b = tf.constant(_values((6,), np.float32))
    f = tf.function(lambda x, b: tf.nn.relu(x + b) * b - b)
    eager = (tf.nn.relu(x + b) * b - b).numpy()
    _same(np.asarray(f(x, b).numpy()), eager)
    _same(eager, np.maximum(x.numpy() + b.numpy(), 0) * b.numpy() - b.numpy())
