"""tf.nn.pool: dilated pooling (values, derivatives, compiled and batched forms) and
TensorFlow's errors for its arguments."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.testing import check_batching, check_grads

RNG = np.random.default_rng(5)


def ref_dilated(x, window, rates, kind):
    """TensorFlow's documented formula, by brute force: output i reduces x[i + r * z]."""
    spatial = x.shape[1:-1]
    outs = [n - (k - 1) * r for n, k, r in zip(spatial, window, rates)]
    y = np.zeros((x.shape[0],) + tuple(outs) + (x.shape[-1],), x.dtype)
    for pos in np.ndindex(*outs):
        idx = tuple(slice(p, p + (k - 1) * r + 1, r) for p, k, r in zip(pos, window, rates))
        block = x[(slice(None),) + idx].reshape(x.shape[0], -1, x.shape[-1])
        y[(slice(None),) + pos] = block.max(1) if kind == "MAX" else block.mean(1)
    return y


DILATED = [  # (x shape, window, dilations)
    ((2, 9, 3), (3,), (2,)),
    ((2, 7, 7, 2), (2, 2), (2, 2)),
    ((1, 7, 8, 1), (2, 3), (2, 3)),
    ((2, 6, 5, 2), (3, 2), (1, 2)),      # dilated along one axis only
    ((1, 5, 6, 7, 2), (2, 2, 2), (2, 1, 3)),
    ((1, 7, 7, 1), (4, 4), (2, 2)),      # the window spans the whole input
    ((1, 6, 6, 1), (1, 1), (3, 2)),      # a 1-wide window: dilation changes nothing
]


@pytest.mark.parametrize("xs,window,rates", DILATED)
@pytest.mark.parametrize("kind", ["MAX", "AVG"])
def test_dilated_pool_matches_the_formula(xs, window, rates, kind):
    x = RNG.standard_normal(xs)
    x.reshape(-1)[::7] = -np.inf if kind == "MAX" else 0.0
    y = tf.nn.pool(x, list(window), kind, padding="VALID", dilations=list(rates)).numpy()
    want = ref_dilated(x, window, rates, kind)
    assert y.shape == want.shape
    np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12)


def test_dilated_max_pool_of_integers_nan_and_channels_first():
    xi = RNG.integers(-100, 100, (2, 8, 7, 3))
    y = tf.nn.pool(xi, [2, 2], "MAX", dilations=[3, 2])
    assert y.dtype == xi.dtype
    np.testing.assert_array_equal(y.numpy(), ref_dilated(xi, (2, 2), (3, 2), "MAX"))
    x = RNG.standard_normal((1, 9, 1))
    x[0, 4, 0] = np.nan
    y = tf.nn.pool(x, [3], "MAX", dilations=[2]).numpy().ravel()
    assert np.isnan(y[[0, 2, 4]]).all() and not np.isnan(y[[1, 3]]).any()
    xf = RNG.standard_normal((2, 3, 7, 8))           # NCHW
    first = tf.nn.pool(xf, [2, 3], "AVG", dilations=[2, 2], data_format="NCHW").numpy()
    last = tf.nn.pool(np.moveaxis(xf, 1, -1), [2, 3], "AVG", dilations=[2, 2]).numpy()
    np.testing.assert_allclose(first, np.moveaxis(last, -1, 1), atol=1e-12)


@pytest.mark.parametrize("kind", ["MAX", "AVG"])
def test_dilated_pool_derivatives_of_order_two(kind):
    f = lambda x: tf.nn.pool(x * x, [2, 2], kind, dilations=[2, 3])
    check_grads(f, [RNG.standard_normal((1, 6, 8, 2))], modes=("fwd", "rev"), order=2)


def test_dilated_pool_compiled_and_batched_equal_eager():
    x = RNG.standard_normal((3, 2, 7, 7, 2))
    f = lambda v: tf.nn.pool(v, [2, 2], "MAX", dilations=[2, 2]) + tf.nn.pool(
        v, [3, 2], "AVG", dilations=[1, 2])
    eager = np.stack([f(v).numpy() for v in x])
    np.testing.assert_array_equal(tf.function(f)(x[0]).numpy(), eager[0])
    check_batching(f, [x])


E = tf.errors.InvalidArgumentError
X = np.ones((1, 7, 7, 2))
POOL_ERRORS = [
    (ValueError, "'SAME' padding is not implemented",
     lambda: tf.nn.pool(X, [2, 2], "MAX", padding="SAME", dilations=[2, 2])),
    (ValueError, "in conjunction with `dilation_rate > 1`",
     lambda: tf.nn.pool(X, [2, 2], "MAX", strides=[2, 2], dilations=[2, 2])),
    (ValueError, "`strides` > `window_shape`",
     lambda: tf.nn.pool(X, [2, 2], "AVG", strides=[3, 3])),
    (ValueError, "len\\(dilation_rate\\)", lambda: tf.nn.pool(X, [2, 2], "MAX", dilations=[2])),
    (ValueError, "len\\(strides\\)", lambda: tf.nn.pool(X, [2, 2], "MAX", strides=[2])),
    (ValueError, "`dilation_rate` must be positive",
     lambda: tf.nn.pool(X, [2, 2], "MAX", dilations=[0, 1])),
    (ValueError, "`strides` must be positive", lambda: tf.nn.pool(X, [2, 2], "MAX",
                                                                  strides=[0, 1])),
    (ValueError, "must be 1, 2, or 3", lambda: tf.nn.pool(X, [2, 2, 2, 2], "MAX")),
    (ValueError, "must have rank 4", lambda: tf.nn.pool(X[0], [2, 2], "MAX")),
    (ValueError, "2-D MIN pooling", lambda: tf.nn.pool(X, [2, 2], "MIN")),
    (E, "negative", lambda: tf.nn.pool(X, [5, 5], "MAX", dilations=[2, 2])),  # TF: SIGFPE
    (E, "padding", lambda: tf.nn.pool(X, [2, 2], "MAX", padding="FOO", dilations=[2, 2])),
    (E, "'T'", lambda: tf.nn.pool(np.ones((1, 7, 7, 2), np.int32), [2, 2], "AVG",
                                  dilations=[2, 2])),
]


@pytest.mark.parametrize("err,match,call", POOL_ERRORS)
def test_bad_pool_arguments_get_tensorflows_error(err, match, call):
    with pytest.raises(err, match=match):
        call()
