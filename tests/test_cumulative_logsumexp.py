"""tf.math.cumulative_logsumexp against TensorFlow 2.21
(tests/data/tf_cumulative_logsumexp_reference.json, made by benchmarks/tf_binning_reference.py):
values, gradients (also against central differences, to second order) and errors."""
import json
import pathlib
import re

import numpy as np
import pytest

import tapegrad as tf
from benchmarks.tf_binning_reference import cumulative_cases
from tapegrad.testing import check_grads

REF = json.loads((pathlib.Path(__file__).parent / "data" /
                  "tf_cumulative_logsumexp_reference.json").read_text())
CASES = {c[0]: c[1:] for c in cumulative_cases()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_tensorflow(name):
    x, axis, exclusive, reverse = CASES[name]
    t_x = tf.constant(x)
    with tf.GradientTape() as t:
        t.watch(t_x)
        y = tf.math.cumulative_logsumexp(t_x, axis=axis, exclusive=exclusive, reverse=reverse)
        w = tf.cast(tf.reshape(tf.range(tf.size(y)), y.shape), y.dtype)
        # (the reference's where(finite, y * w, 0), without multiplying -inf by 0)
        loss = tf.reduce_sum(tf.where(tf.math.is_finite(y), y, 0.0) * w)
    want_y, want_g = (np.array(v, np.float64) for v in REF[name])
    assert y.dtype == x.dtype
    tol = 1e-5 if x.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(y.numpy(), want_y, rtol=tol, atol=tol)
    np.testing.assert_allclose(t.gradient(loss, t_x).numpy(), want_g, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("exclusive,reverse", [(False, False), (True, False), (False, True)])
def test_derivatives_match_central_differences(exclusive, reverse):
    x = np.random.default_rng(1).normal(size=(4, 6))

    def f(t):
        y = tf.math.cumulative_logsumexp(t, axis=1, exclusive=exclusive, reverse=reverse)
        return tf.where(tf.math.is_finite(y), y, 0.0)
    check_grads(f, [x], modes=("rev", "fwd"), order=2)


def test_no_underflow_far_from_the_maximum():
    y = tf.math.cumulative_logsumexp(tf.constant([0.0, 0.0, 1000.0], tf.float64))
    np.testing.assert_allclose(y.numpy(), [0.0, np.log(2.0), 1000.0])


@pytest.mark.parametrize("case", ["int", "axis"])
def test_errors_match_tensorflow(case):
    kind, message = REF["errors"][case]
    message = re.sub(r" name: .*$", "", re.sub(r"^\{\{function_node [^}]*\}\} ", "", message))
    with pytest.raises(Exception) as info:
        tf.math.cumulative_logsumexp([1, 2] if case == "int" else [1.0, 2.0],
                                     axis=2 if case == "axis" else 0)
    assert type(info.value).__name__ == kind
    assert str(info.value).startswith(message.replace(" [Op:CumulativeLogsumexp]", "").strip())
