"""Files of every released format version keep loading and computing the same values.

``tests/data/saved_v<N>.tgz`` was written by the tapegrad that released format version N,
from ``released_model`` below (run this file as a script to write the current version's
file). A change to the loader that breaks an old file fails here.
"""
import os
import sys

import numpy as np
import pytest

import tapegrad as tf

DATA = os.path.join(os.path.dirname(__file__), "data")
VERSIONS = [1]


def released_model():
    """The function saved in every fixture: control flow, indices, variables, updates."""
    rng = np.random.RandomState(11)
    w = tf.Variable(rng.rand(4, 3), name="w")
    steps = tf.Variable(0.0, name="steps", trainable=False)

    def model(x):
        h = tf.tanh(tf.matmul(x, w))
        y = tf.cond(tf.reduce_sum(h) > 1.0, lambda: h * 2.0, lambda: tf.exp(h))
        _, z = tf.while_loop(lambda i, z: tf.reduce_sum(z) < 30.0,
                             lambda i, z: (i + 1, z * 1.5 + 0.1), (0, y), maximum_iterations=9)
        picked = tf.gather(z, [2, 0], axis=0)[:, ::-1]
        padded = tf.pad(picked, [[1, 0], [0, 2]], constant_values=-1.0)
        steps.assign_add(1.0)
        return {"e": tf.einsum("ij,ij->i", z, y), "p": padded,
                "a": tf.argmax(tf.concat([h, y], axis=1), axis=1),
                "t": tf.transpose(tf.cast(z, tf.float32)), "s": tf.sort(h, axis=-1)}
    x = tf.constant(rng.rand(3, 4))
    return model, x, (w, steps)


def write_current(directory=DATA):
    model, x, _ = released_model()
    path = os.path.join(directory, f"saved_v{tf.saved.VERSION}.tgz")
    tf.saved.save(tf.function(model).get_concrete_function(x), path)
    return path


@pytest.mark.parametrize("version", VERSIONS)
def test_released_formats_load_and_compute_the_same(version):
    m = tf.saved.load(os.path.join(DATA, f"saved_v{version}.tgz"))
    model, x, (w, steps) = released_model()
    got, want = m(x), model(x)
    assert sorted(got) == sorted(want)
    for k in want:
        assert got[k].dtype == want[k].dtype and got[k].shape == want[k].shape
        np.testing.assert_allclose(got[k].numpy(), want[k].numpy(), rtol=1e-12)
    np.testing.assert_array_equal(m.variables[0].numpy(), w.numpy())
    assert float(m.variables[1].numpy()) == float(steps.numpy()) == 1.0


def test_every_released_version_has_a_fixture():
    assert tf.saved.VERSION in VERSIONS
    assert sorted(f for f in os.listdir(DATA) if f.startswith("saved_v")) == sorted(
        f"saved_v{v}.tgz" for v in VERSIONS)


if __name__ == "__main__":  # python tests/test_saved_versions.py: write the current version
    print(write_current(sys.argv[1] if len(sys.argv) > 1 else DATA))
