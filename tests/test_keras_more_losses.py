"""Keras's percentage, logarithmic, log-cosh, Poisson, cosine, hinge and focal losses and
their metrics: values against Keras 3's formulas written in NumPy, names, reductions and
lookups, gradients, and a focal-loss model trained with ``fit``."""
import math

import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras
from tapegrad.testing import check_grads

EPS = 1e-7
EPS32 = np.float32(EPS)
RNG = np.random.default_rng(0)
Y_TRUE = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.5, 0.5, 0.0]])
Y_PRED = np.array([[0.2, 0.7, 0.1], [0.6, 0.3, 0.1], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4]])
LOGITS = np.array([[-5.0, 3.0, 0.0], [10.0, -10.0, 0.0], [0.0, 0.0, 0.0], [1e-8, -1e-8, 3.0]])


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _bce(t, p):
    p = np.clip(p, EPS, 1 - EPS)
    return -(t * np.log(p) + (1 - t) * np.log(1 - p))


def _hinge_labels(t):
    return 2 * t - 1 if np.isin(t, (0.0, 1.0)).all() else t


def _normalize(x):
    return x * np.minimum(1 / np.sqrt((x * x).sum(-1, keepdims=True)), 1 / EPS)


# Keras 3's formulas (keras/src/losses/losses.py), per sample, in NumPy
REFERENCE = {
    "mean_absolute_percentage_error":
        lambda t, p: 100 * np.mean(np.abs((t - p) / np.maximum(np.abs(t), EPS)), -1),
    "mean_squared_logarithmic_error":
        lambda t, p: np.mean((np.log(np.maximum(p, EPS32) + 1)       # Keras's float32 epsilon
                              - np.log(np.maximum(t, EPS32) + 1)) ** 2, -1),
    # x + softplus(-2x) - log 2, with Keras's log 2 computed in float32
    "log_cosh": lambda t, p: np.mean((p - t) + np.logaddexp(0, -2 * (p - t))
                                     - float(np.log(np.float32(2))), -1),
    "poisson": lambda t, p: np.mean(p - t * np.log(p + EPS), -1),
    "cosine_similarity": lambda t, p: -np.sum(_normalize(t) * _normalize(p), -1),
    "hinge": lambda t, p: np.mean(np.maximum(1 - _hinge_labels(t) * p, 0), -1),
    "squared_hinge": lambda t, p: np.mean(np.maximum(1 - _hinge_labels(t) * p, 0) ** 2, -1),
    "categorical_hinge":
        lambda t, p: np.maximum(np.max((1 - t) * p, -1) - np.sum(t * p, -1) + 1, 0),
    "binary_focal_crossentropy":
        lambda t, p: np.mean((1 - (t * p + (1 - t) * (1 - p))) ** 2 * _bce(t, p), -1),
    "categorical_focal_crossentropy":
        lambda t, p: np.sum(0.25 * (1 - np.clip(p / p.sum(-1, keepdims=True), EPS, 1 - EPS)) ** 2
                            * -t * np.log(np.clip(p / p.sum(-1, keepdims=True), EPS, 1 - EPS)),
                            -1),
}
CLASSES = {"mean_absolute_percentage_error": "MeanAbsolutePercentageError",
           "mean_squared_logarithmic_error": "MeanSquaredLogarithmicError",
           "log_cosh": "LogCosh", "poisson": "Poisson", "cosine_similarity": "CosineSimilarity",
           "hinge": "Hinge", "squared_hinge": "SquaredHinge",
           "categorical_hinge": "CategoricalHinge",
           "binary_focal_crossentropy": "BinaryFocalCrossentropy",
           "categorical_focal_crossentropy": "CategoricalFocalCrossentropy"}


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_functions_and_classes_compute_kerass_formulas(name):
    fn = getattr(keras.losses, name)
    want = REFERENCE[name](Y_TRUE, Y_PRED)
    np.testing.assert_allclose(fn(Y_TRUE, Y_PRED).numpy(), want, rtol=1e-12, atol=1e-15)
    got32 = fn(Y_TRUE.astype(np.float32), Y_PRED.astype(np.float32))
    assert got32.dtype == tf.float32
    np.testing.assert_allclose(got32.numpy(), want, rtol=2e-5, atol=1e-6)
    cls = getattr(keras.losses, CLASSES[name])
    loss = cls()
    assert loss.name == name and loss.reduction == "sum_over_batch_size"
    assert keras.losses.get(name) is fn and type(keras.losses.get(CLASSES[name])) is cls
    np.testing.assert_allclose(float(loss(Y_TRUE, Y_PRED)), want.mean(), rtol=1e-5)
    np.testing.assert_allclose(float(cls(reduction="sum")(Y_TRUE, Y_PRED)), want.sum(), rtol=1e-5)
    np.testing.assert_allclose(cls(reduction=None)(Y_TRUE, Y_PRED).numpy(), want, rtol=1e-5)
    sw = np.array([1.0, 0.0, 2.0, 0.5])
    np.testing.assert_allclose(float(loss(Y_TRUE, Y_PRED, sample_weight=sw)),
                               np.sum(want * sw) / 4, rtol=1e-5)
    check_grads(lambda p: fn(Y_TRUE, p), [Y_PRED], order=1)


def test_focal_losses_from_logits_and_their_options():
    bfc = keras.losses.binary_focal_crossentropy
    p = _sigmoid(LOGITS)
    # from logits: the probabilities for p_t, the stable crossentropy of the logits
    bce = np.maximum(LOGITS, 0) - LOGITS * Y_TRUE + np.log1p(np.exp(-np.abs(LOGITS)))
    p_t = Y_TRUE * p + (1 - Y_TRUE) * (1 - p)
    np.testing.assert_allclose(bfc(Y_TRUE, LOGITS, from_logits=True).numpy(),
                               np.mean((1 - p_t) ** 2 * bce, -1), rtol=1e-12)
    weight = Y_TRUE * 0.4 + (1 - Y_TRUE) * 0.6
    got = bfc(Y_TRUE, Y_PRED, apply_class_balancing=True, alpha=0.4, gamma=3.0,
              label_smoothing=0.0).numpy()
    pt = Y_TRUE * Y_PRED + (1 - Y_TRUE) * (1 - Y_PRED)
    np.testing.assert_allclose(got, np.mean(weight * (1 - pt) ** 3 * _bce(Y_TRUE, Y_PRED), -1),
                               rtol=1e-12)
    smooth = Y_TRUE * 0.8 + 0.1
    np.testing.assert_allclose(bfc(Y_TRUE, Y_PRED, label_smoothing=0.2).numpy(),
                               REFERENCE["binary_focal_crossentropy"](smooth, Y_PRED), rtol=1e-12)
    cfc = keras.losses.categorical_focal_crossentropy
    np.testing.assert_allclose(cfc(Y_TRUE, LOGITS, from_logits=True).numpy(),
                               REFERENCE["categorical_focal_crossentropy"](Y_TRUE,
                                                                           _softmax(LOGITS)),
                               rtol=1e-10)
    cfg = keras.losses.BinaryFocalCrossentropy(from_logits=True, gamma=1.5).get_config()
    assert cfg["gamma"] == 1.5 and cfg["from_logits"] and cfg["alpha"] == 0.25
    with pytest.raises(TypeError, match="unexpected keyword argument 'beta'"):
        keras.losses.CategoricalFocalCrossentropy(beta=1.0)
    with pytest.raises(ValueError, match="must have the same shape"):
        bfc(np.ones((2, 3)), np.full((2, 4), 0.5))


def test_edge_values():
    # log-cosh stays finite for errors where cosh overflows; exact zeros give zeros
    big = keras.losses.log_cosh([[0.0]], [[1000.0]]).numpy()
    assert big[0] == pytest.approx(1000.0 - math.log(2.0))
    assert keras.losses.log_cosh([[1.0, 2.0]], [[1.0, 2.0]]).numpy().tolist() == [0.0]
    assert np.isfinite(keras.losses.mean_absolute_percentage_error([[0.0]], [[1.0]]).numpy()).all()
    assert np.isfinite(keras.losses.poisson([[1.0]], [[0.0]]).numpy()).all()
    # cosine similarity of a zero vector is 0, not NaN (the norm is capped at 1 / epsilon)
    with np.errstate(divide="ignore"):
        zero = keras.losses.cosine_similarity([[0.0, 0.0]], [[1.0, 2.0]]).numpy()
    assert zero.tolist() == [0.0]
    # hinge labels: 0/1 become -1/1, other labels pass as they are
    assert keras.losses.hinge([[0.0, 1.0]], [[0.0, 0.0]]).numpy().tolist() == [1.0]
    assert keras.losses.hinge([[-1.0, 2.0]], [[0.5, 0.5]]).numpy().tolist() == [0.75]


def test_metrics_follow_the_wrapper_pattern():
    names = {"MeanAbsolutePercentageError": "mean_absolute_percentage_error",
             "MeanSquaredLogarithmicError": "mean_squared_logarithmic_error",
             "LogCoshError": "logcosh", "Poisson": "poisson", "Hinge": "hinge",
             "SquaredHinge": "squared_hinge", "CategoricalHinge": "categorical_hinge",
             "CosineSimilarity": "cosine_similarity"}
    for cls_name, name in names.items():
        m = getattr(keras.metrics, cls_name)()
        assert m.name == name
        m.update_state(Y_TRUE[:2], Y_PRED[:2])
        m.update_state(Y_TRUE[2:], Y_PRED[2:])
        fn = REFERENCE["log_cosh" if name == "logcosh" else name]
        # the mean of the batches' values (hinge labels are converted batch by batch)
        per_batch = np.concatenate([fn(Y_TRUE[:2], Y_PRED[:2]), fn(Y_TRUE[2:], Y_PRED[2:])])
        want = per_batch.mean() * (-1 if name == "cosine_similarity" else 1)
        np.testing.assert_allclose(float(m.result()), want, rtol=1e-5)
        m.reset_state()
        assert float(m.result()) == 0.0
    assert type(keras.metrics.get("mape")) is keras.metrics.MeanAbsolutePercentageError
    assert type(keras.metrics.get("LogCoshError")) is keras.metrics.LogCoshError
    assert keras.losses.get("msle") is keras.losses.mean_squared_logarithmic_error


def test_a_focal_loss_model_trains_with_fit():
    tf.random.set_seed(1)
    x = RNG.standard_normal((64, 4)).astype(np.float32)
    y = (x[:, :1] + x[:, 1:2] > 0).astype(np.float32)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="tanh"),
                              keras.layers.Dense(1)])
    loss = keras.losses.BinaryFocalCrossentropy(from_logits=True, apply_class_balancing=True)
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss=loss,
                  metrics=[keras.metrics.Hinge()])
    before = float(loss(y, model(x)))
    hist = model.fit(x, y, batch_size=64, epochs=30, shuffle=False, verbose=0)
    assert hist.history["loss"][0] == pytest.approx(before, rel=1e-5)  # one batch: the loss
    assert hist.history["loss"][-1] < 0.3 * before
    assert set(hist.history) == {"loss", "hinge"}

    # the same step by hand with a GradientTape, under tf.function
    opt = keras.optimizers.SGD(0.1)

    @tf.function
    def step(xb, yb):
        with tf.GradientTape() as t:
            value = keras.losses.CategoricalFocalCrossentropy(from_logits=True)(
                tf.concat([yb, 1 - yb], axis=1), tf.concat([model(xb), -model(xb)], axis=1))
        grads = t.gradient(value, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return value
    first = float(step(x, y))
    for _ in range(5):
        last = float(step(x, y))
    assert np.isfinite(first) and last < first
