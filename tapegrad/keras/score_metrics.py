"""``FBetaScore``, ``F1Score`` and ``R2Score``: Keras 3's running scores of 2-D
``(batch, classes)`` targets, their state built at the first update (its width is the
number of classes).

>>> import numpy as np
>>> from tapegrad import keras
>>> f1 = keras.metrics.F1Score(threshold=0.5)
>>> f1.update_state(np.array([[1, 1, 1], [1, 0, 0], [1, 1, 0]]),
...                 np.array([[0.2, 0.6, 0.7], [0.2, 0.6, 0.6], [0.6, 0.8, 0.0]]))
>>> [round(float(v), 4) for v in f1.result()]
[0.5, 0.8, 0.6667]
"""
import warnings

from tapegrad.keras import _tf as tf
from tapegrad.keras import backend
from tapegrad.keras.loss_utils import squeeze_or_expand_to_same_rank
from tapegrad.keras.metric_base import Metric


def _two_d(cls, y_true_shape, y_pred_shape):
    if len(y_pred_shape) != 2 or len(y_true_shape) != 2:
        raise ValueError(f"{cls} expects 2D inputs with shape (batch_size, output_dim). "
                         f"Received input shapes: y_pred.shape={tuple(y_pred_shape)} and "
                         f"y_true.shape={tuple(y_true_shape)}.")
    return y_pred_shape[-1]


class FBetaScore(Metric):
    """The F-beta score, ``(1 + beta^2) P R / (beta^2 P + R)``, per class (``average=None``)
    or averaged: ``'micro'`` (counts over all classes), ``'macro'`` (the mean of the
    classes' scores) or ``'weighted'`` (weighted by each class's support). Predictions are
    1 above ``threshold``, or (``threshold=None``) at each row's maximum (if nonzero)."""

    def __init__(self, average=None, beta=1.0, threshold=None, name="fbeta_score",
                 dtype=None):
        super().__init__(name=name, dtype=dtype)
        if average not in (None, "micro", "macro", "weighted"):
            raise ValueError("Invalid `average` argument value. Expected one of: {None, "
                             f"'micro', 'macro', 'weighted'}}. Received: average={average}")
        if not isinstance(beta, float):
            raise ValueError("Invalid `beta` argument value. It should be a Python float. "
                             f"Received: beta={beta} of type '{type(beta)}'")
        if beta <= 0.0:
            raise ValueError(f"Invalid `beta` argument value. It should be > 0. Received: "
                             f"beta={beta}")
        if threshold is not None:
            if not isinstance(threshold, float):
                raise ValueError("Invalid `threshold` argument value. It should be a Python "
                                 f"float. Received: threshold={threshold} of type "
                                 f"'{type(threshold)}'")
            if threshold > 1.0 or threshold <= 0.0:
                raise ValueError("Invalid `threshold` argument value. It should verify 0 < "
                                 f"threshold <= 1. Received: threshold={threshold}")
        self.average, self.beta, self.threshold = average, beta, threshold
        self.axis = None if average == "micro" else 0
        self._built = False

    def _build(self, y_true_shape, y_pred_shape):
        classes = _two_d("FBetaScore", y_true_shape, y_pred_shape)
        shape = () if self.average == "micro" else (classes,)
        self.true_positives = self.add_variable(shape, name="true_positives")
        self.false_positives = self.add_variable(shape, name="false_positives")
        self.false_negatives = self.add_variable(shape, name="false_negatives")
        self.intermediate_weights = self.add_variable(shape, name="intermediate_weights")
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = tf.cast(tf.convert_to_tensor(y_true), self.dtype)
        y_pred = tf.cast(tf.convert_to_tensor(y_pred), self.dtype)
        if not self._built:
            self._build(y_true.shape, y_pred.shape)
        if self.threshold is None:
            top = tf.reduce_max(y_pred, axis=-1, keepdims=True)
            y_pred = tf.logical_and(y_pred >= top, tf.abs(y_pred) > 1e-9)
        else:
            y_pred = y_pred > self.threshold
        y_pred = tf.cast(y_pred, self.dtype)
        if sample_weight is not None:
            sample_weight = tf.expand_dims(tf.cast(sample_weight, self.dtype), 1)

        def total(v):
            return tf.reduce_sum(v if sample_weight is None else v * sample_weight,
                                 axis=self.axis)

        self.true_positives.assign(self.true_positives + total(y_pred * y_true))
        self.false_positives.assign(self.false_positives + total(y_pred * (1 - y_true)))
        self.false_negatives.assign(self.false_negatives + total((1 - y_pred) * y_true))
        self.intermediate_weights.assign(self.intermediate_weights + total(y_true))

    def result(self):
        eps = backend.epsilon()
        tp = self.true_positives
        precision = tp / (tp + self.false_positives + eps)
        recall = tp / (tp + self.false_negatives + eps)
        b2 = self.beta ** 2
        score = precision * recall / (b2 * precision + recall + eps) * (1 + b2)
        if self.average == "weighted":
            w = self.intermediate_weights
            return tf.reduce_sum(score * (w / (tf.reduce_sum(w) + eps)))
        if self.average is not None:
            return tf.reduce_mean(score)
        return score

    def reset_state(self):
        if self._built:
            super().reset_state()

    def get_config(self):
        return {**super().get_config(), "average": self.average, "beta": self.beta,
                "threshold": self.threshold}


class F1Score(FBetaScore):
    """The F-1 score, the harmonic mean of precision and recall (``FBetaScore`` with
    ``beta=1``)."""

    def __init__(self, average=None, threshold=None, name="f1_score", dtype=None):
        super().__init__(average=average, beta=1.0, threshold=threshold, name=name,
                         dtype=dtype)

    def get_config(self):
        config = super().get_config()
        del config["beta"]
        return config


class R2Score(Metric):
    """The coefficient of determination, ``1 - SS_res / SS_tot`` per output column, then
    ``'uniform_average'`` (their mean), ``'variance_weighted_average'`` or None (each);
    ``num_regressors > 0`` adjusts it for that many predictors."""

    def __init__(self, class_aggregation="uniform_average", num_regressors=0,
                 name="r2_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        allowed = (None, "uniform_average", "variance_weighted_average")
        if class_aggregation not in allowed:
            raise ValueError("Invalid value for argument `class_aggregation`. Expected one "
                             f"of {allowed}. Received: class_aggregation={class_aggregation}")
        if num_regressors < 0:
            raise ValueError("Invalid value for argument `num_regressors`. Expected a value "
                             f">= 0. Received: num_regressors={num_regressors}")
        self.class_aggregation, self.num_regressors = class_aggregation, num_regressors
        self.num_samples = self.add_variable((), name="num_samples")
        self._built = False

    def _build(self, y_true_shape, y_pred_shape):
        classes = _two_d("R2Score", y_true_shape, y_pred_shape)
        self.squared_sum = self.add_variable((classes,), name="squared_sum")
        self.sum = self.add_variable((classes,), name="sum")
        self.total_mse = self.add_variable((classes,), name="residual")
        self.count = self.add_variable((classes,), name="count")
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = tf.cast(tf.convert_to_tensor(y_true), self.dtype)
        y_pred = tf.cast(tf.convert_to_tensor(y_pred), self.dtype)
        y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
        if not self._built:
            self._build(y_true.shape, y_pred.shape)
        w = tf.constant(1.0, self.dtype) if sample_weight is None else tf.cast(
            tf.convert_to_tensor(sample_weight), self.dtype)
        if w.ndim == 1:
            w = tf.expand_dims(w, 1)
        w = tf.broadcast_to(w, y_true.shape)
        weighted = y_true * w
        self.sum.assign(self.sum + tf.reduce_sum(weighted, axis=0))
        self.squared_sum.assign(self.squared_sum + tf.reduce_sum(y_true * weighted, axis=0))
        self.total_mse.assign(self.total_mse
                              + tf.reduce_sum(tf.square(y_true - y_pred) * w, axis=0))
        self.count.assign(self.count + tf.reduce_sum(w, axis=0))
        self.num_samples.assign(self.num_samples + tf.cast(tf.size(y_true), self.dtype))

    def result(self):
        mean = self.sum / self.count
        total = self.squared_sum - self.sum * mean
        raw = 1 - self.total_mse / total
        raw = tf.where(tf.math.is_inf(raw), tf.zeros_like(raw), raw)  # Keras: inf -> 0
        if self.class_aggregation == "uniform_average":
            score = tf.reduce_mean(raw)
        elif self.class_aggregation == "variance_weighted_average":
            score = tf.reduce_sum(total * raw) / tf.reduce_sum(total)
        else:
            score = raw
        if self.num_regressors == 0:
            return score
        n, p = tf.cast(self.num_samples, "float32"), float(self.num_regressors)
        try:  # Keras's warnings, where the count is known (not while tracing)
            known = float(n)
        except TypeError:
            known = None
        if known is not None and p > known - 1:
            warnings.warn("More independent predictors than datapoints in adjusted R2 "
                          "score. Falling back to standard R2 score.", stacklevel=2)
        elif known is not None and p == known - 1:
            warnings.warn("Division by zero in Adjusted R2 score. Falling back to standard "
                          "R2 score.", stacklevel=2)
        usable = n - 1.0 > p
        den = tf.where(usable, n - p - 1.0, tf.ones_like(n))  # no 0 in the unused branch
        return tf.where(usable, 1.0 - (1.0 - score) * (n - 1.0) / den, score)

    def reset_state(self):
        self.num_samples.assign(tf.zeros((), self.dtype))
        if self._built:
            for v in (self.squared_sum, self.sum, self.total_mse, self.count):
                v.assign(tf.zeros(v.shape, v.dtype))

    def get_config(self):
        return {**super().get_config(), "class_aggregation": self.class_aggregation,
                "num_regressors": self.num_regressors}
