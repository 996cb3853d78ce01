"""util/fp_warnings.py: log(0), 1 / 0, sqrt(-1) and inf - inf give TensorFlow's values without
NumPy's RuntimeWarnings, eagerly, in compiled programs, in derivatives and in Keras ops; the
user's own NumPy code still warns.

pytest imports tapegrad while collecting, inside its own ``catch_warnings``, which drops the
filter importing added when it ends: the first test checks, in a fresh interpreter, that
importing installs it; the others install it into the filters of their own test.
"""
import subprocess
import sys
import warnings

import numpy as np

import tapegrad as tf
from tapegrad import keras
from tapegrad.util import fp_warnings


def _quiet(fn):
    """``fn()``'s result, and the RuntimeWarnings it raised (under the filters in force, with
    tapegrad's)."""
    with warnings.catch_warnings(record=True) as caught:
        fp_warnings.install()
        out = fn()
    return out, [w for w in caught if issubclass(w.category, RuntimeWarning)]


def test_importing_tapegrad_silences_its_own_numpy_warnings():
    code = ("import warnings, numpy as np, tapegrad as tf\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    tf.math.log(tf.constant(0.0)); tf.function(lambda x: 1.0 / x)(tf.constant(0.0))\n"
            "    np.log(np.zeros(1))\n"
            "print([str(x.message) for x in w])")
    out = subprocess.run([sys.executable, "-W", "default", "-c", code], capture_output=True,
                         text=True, timeout=120, check=True)
    assert out.stdout.strip() == "['divide by zero encountered in log']"  # NumPy's own only


def _special(x):
    return [tf.math.log(x), 1.0 / x, tf.sqrt(x - 1.0), (x + np.inf) - np.inf, tf.math.log1p(x - 1.0)]


def test_eager_compiled_and_derivatives_are_silent_with_tensorflows_values():
    x = tf.constant([0.0, 0.0])
    eager, w1 = _quiet(lambda: [v.numpy() for v in _special(x)])
    compiled, w2 = _quiet(lambda: [v.numpy() for v in tf.function(_special)(x)])

    def grads():
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(tf.sqrt(x) + tf.math.log(x))
        return t.gradient(y, x).numpy()
    g, w3 = _quiet(grads)
    k, w4 = _quiet(lambda: keras.ops.log(keras.ops.zeros((2,))).numpy())
    assert not (w1 or w2 or w3 or w4), [str(w.message) for w in w1 + w2 + w3 + w4]
    for got in (eager, compiled):
        assert np.all(got[0] == -np.inf) and np.all(got[1] == np.inf)
        assert np.all(np.isnan(got[2])) and np.all(np.isnan(got[3]))
        assert np.all(got[4] == -np.inf)
    assert np.all(g == np.inf) and np.all(k == -np.inf)


def test_the_users_own_numpy_still_warns():
    _, caught = _quiet(lambda: np.log(np.zeros(1)))
    assert [str(w.message) for w in caught] == ["divide by zero encountered in log"]


def test_installed_once():
    with warnings.catch_warnings():
        fp_warnings.install()
        before = len(warnings.filters)
        fp_warnings.install()
        assert len(warnings.filters) == before
