"""tapegrad.keras losses and metrics: names, errors and Keras's logits of softmax outputs
(the values themselves are compared with Keras in test_keras_reference)."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras


def test_unknown_names_and_bad_arguments():
    with pytest.raises(ValueError, match="Could not interpret loss identifier: nope"):
        keras.losses.get("nope")
    with pytest.raises(ValueError, match="Invalid value for argument `reduction`"):
        keras.losses.MeanSquaredError(reduction="average")
    with pytest.raises(ValueError, match="Could not interpret metric identifier"):
        keras.metrics.get("nope")
    with pytest.raises(ValueError, match="must have the same shape"):
        keras.losses.BinaryCrossentropy()(np.ones((2, 3)), np.full((2, 4), 0.5))
    with pytest.raises(ValueError, match="Argument `output` must have rank"):
        keras.losses.SparseCategoricalCrossentropy()(np.zeros((3, 2)), np.full((4, 5), 0.2))
    with pytest.raises(tf.errors.InvalidArgumentError, match="outside the valid range"):
        keras.losses.SparseCategoricalCrossentropy(from_logits=True)(
            np.array([0, 7]), np.zeros((2, 3)))
    for name in ("mse", "mae", "huber", "kld", "binary_crossentropy",
                 "categorical_crossentropy", "sparse_categorical_crossentropy"):
        assert callable(keras.losses.get(name))


def test_softmax_outputs_are_scored_from_their_logits():
    logits = tf.constant([[30.0, -30.0, 0.0]])
    probs = keras.activations.softmax(logits)
    target = np.array([[0.0, 1.0, 0.0]], "float32")
    cce = keras.losses.CategoricalCrossentropy()
    exact = float(tf.nn.softmax_cross_entropy_with_logits(target, logits)[0])
    assert float(cce(target, probs)) == pytest.approx(exact, rel=1e-6)  # 60, not -log(1e-7)
    assert float(cce(target, probs.numpy())) == pytest.approx(-np.log(1e-7), rel=1e-5)
    with pytest.warns(UserWarning, match="received `from_logits=True`, but the `output` "
                                         "argument was produced by a Softmax"):
        keras.losses.CategoricalCrossentropy(from_logits=True)(target, probs)
    sig = keras.layers.Activation("sigmoid")(tf.constant([[40.0]]))
    assert float(keras.losses.BinaryCrossentropy()([[0.0]], sig)) == pytest.approx(40.0)


def test_reductions_and_sample_weights():
    y_true = np.array([[0.0, 1.0], [2.0, 2.0]], "float32")
    y_pred = np.array([[1.0, 1.0], [0.0, 2.0]], "float32")
    per_sample = np.array([0.5, 2.0])
    assert keras.losses.MeanSquaredError(reduction=None)(y_true, y_pred).numpy().tolist() == \
        per_sample.tolist()
    assert float(keras.losses.MeanSquaredError(reduction="sum")(y_true, y_pred)) == 2.5
    assert float(keras.losses.MeanSquaredError()(y_true, y_pred)) == 1.25
    weighted = keras.losses.MeanSquaredError()(y_true, y_pred, sample_weight=[2.0, 0.0])
    assert float(weighted) == 0.5
    assert float(keras.losses.MeanSquaredError(reduction="mean_with_sample_weight")(
        y_true, y_pred, sample_weight=[2.0, 0.0])) == 0.5
    # Keras returns the (empty) per-sample losses of an empty batch unreduced
    assert keras.losses.MeanSquaredError()(np.zeros((0, 2)), np.zeros((0, 2))).shape == (0,)


def test_metrics_state_and_reset():
    m = keras.metrics.Mean()
    m.update_state([1.0, 2.0, 3.0])
    m.update_state(7.0, sample_weight=3.0)
    assert float(m.result()) == pytest.approx((6 + 21) / 6)
    assert all(isinstance(v, tf.Variable) for v in m.variables)
    m.reset_state()
    assert float(m.result()) == 0.0
    acc = keras.metrics.BinaryAccuracy(threshold=0.7)
    acc.update_state([[1], [0], [1]], [[0.8], [0.75], [0.6]])
    assert float(acc.result()) == pytest.approx(1 / 3)
    sca = keras.metrics.SparseCategoricalAccuracy()
    sca.update_state([[1], [2]], [[0.1, 0.8, 0.1], [0.6, 0.3, 0.1]])
    assert float(sca.result()) == 0.5
