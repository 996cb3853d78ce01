"""``tf.keras.metrics``: running means over batches, in Variables (``total``, ``count``), with
``update_state``, ``result`` and ``reset_state``.

>>> from tapegrad import keras
>>> m = keras.metrics.Accuracy()
>>> m.update_state([1, 2, 3], [1, 2, 0]); round(float(m.result()), 4)
0.6667
"""

from tapegrad.keras import _tf as tf
from tapegrad.keras import backend, losses, masking
from tapegrad.keras.metric_base import Metric  # noqa: F401  (the base class lives there)


class Mean(Metric):
    """The (weighted) mean of the values seen; each sample's values are averaged first."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable(name="total")
        self.count = self.add_variable(name="count")

    def update_state(self, values, sample_weight=None):
        values = tf.cast(values, self.dtype)
        if sample_weight is None:
            if values.ndim > 1:
                values = tf.reduce_mean(values, axis=list(range(1, values.ndim)))
            self.total.assign_add(tf.reduce_sum(values))
            n = values.shape[0] if values.ndim else 1
            self.count.assign_add(tf.cast(n, self.dtype))
            return
        # Keras's reduce_to_samplewise_values: weigh the values at the weights' rank
        # (per timestep, for a mask), then average each sample's values and weights
        sw = tf.cast(sample_weight, self.dtype)
        values, sw = losses.squeeze_or_expand_to_same_rank(values, sw)
        if values.ndim > sw.ndim:
            values = tf.reduce_mean(values, axis=list(range(sw.ndim, values.ndim)))
        sw = tf.broadcast_to(sw, values.shape)
        values = values * sw
        if sw.ndim > 1:
            sw = tf.reduce_mean(sw, axis=list(range(1, sw.ndim)))
        if values.ndim > 1:
            values = tf.reduce_mean(values, axis=list(range(1, values.ndim)))
        self.total.assign_add(tf.reduce_sum(values))
        self.count.assign_add(tf.reduce_sum(sw))

    def result(self):
        return tf.math.divide_no_nan(self.total, self.count)


class Sum(Metric):
    def __init__(self, name="sum", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable(name="total")

    def update_state(self, values, sample_weight=None):
        values = tf.cast(values, self.dtype)
        if sample_weight is not None:
            values = values * tf.cast(sample_weight, self.dtype)
        self.total.assign_add(tf.reduce_sum(values))

    def result(self):
        return tf.identity(self.total)


class MeanMetricWrapper(Mean):
    """The running mean of ``fn(y_true, y_pred)``."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name or getattr(fn, "__name__", "mean"), dtype=dtype)
        self._fn, self._fn_kwargs = fn, kwargs

    def get_config(self):
        """The name and dtype, and the function's arguments (``threshold``, ...)."""
        config = {**super().get_config(), **self._fn_kwargs}
        if type(self) is MeanMetricWrapper:
            config["fn"] = self._fn
        return config

    def update_state(self, y_true, y_pred, sample_weight=None):
        mask = masking.get_keras_mask(y_pred)  # Keras: masked entries count for nothing
        if mask is not None:
            sample_weight = masking.apply_mask(sample_weight, mask, self.dtype, "sum")
        y_pred = tf.convert_to_tensor(y_pred)
        y_true = tf.convert_to_tensor(y_true)
        if y_true.dtype.kind == "f" or y_pred.dtype.kind == "f":
            y_true, y_pred = losses.squeeze_or_expand_to_same_rank(y_true, y_pred)
        super().update_state(self._fn(y_true, y_pred, **self._fn_kwargs), sample_weight)


def accuracy(y_true, y_pred):
    y_pred = tf.convert_to_tensor(y_pred)
    y_true = tf.cast(y_true, y_pred.dtype)
    return tf.cast(tf.equal(y_true, y_pred), backend.floatx())


def binary_accuracy(y_true, y_pred, threshold=0.5):
    y_pred = tf.convert_to_tensor(y_pred)
    y_true = tf.cast(y_true, y_pred.dtype)
    y_pred = tf.cast(y_pred > threshold, y_true.dtype)
    return tf.reduce_mean(tf.cast(tf.equal(y_true, y_pred), backend.floatx()), axis=-1)


def categorical_accuracy(y_true, y_pred):
    return tf.cast(tf.equal(tf.argmax(y_true, axis=-1), tf.argmax(y_pred, axis=-1)),
                   backend.floatx())


def sparse_categorical_accuracy(y_true, y_pred):
    y_pred = tf.convert_to_tensor(y_pred)
    y_true = tf.convert_to_tensor(y_true)
    if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1:
        y_true = tf.squeeze(y_true, -1)
    pred = tf.argmax(y_pred, axis=-1)
    return tf.cast(tf.equal(tf.cast(y_true, pred.dtype), pred), backend.floatx())


def _wrapped(cls_name, fn, default, params=()):
    def __init__(self, name=default, dtype=None, **kwargs):
        kw = dict(params)
        kw.update(kwargs)
        MeanMetricWrapper.__init__(self, fn, name=name, dtype=dtype, **kw)
    return type(cls_name, (MeanMetricWrapper,), {
        "__init__": __init__, "__doc__": f"The running mean of ``{fn.__name__}``."})


Accuracy = _wrapped("Accuracy", accuracy, "accuracy")
BinaryAccuracy = _wrapped("BinaryAccuracy", binary_accuracy, "binary_accuracy",
                          (("threshold", 0.5),))
CategoricalAccuracy = _wrapped("CategoricalAccuracy", categorical_accuracy,
                               "categorical_accuracy")
SparseCategoricalAccuracy = _wrapped("SparseCategoricalAccuracy", sparse_categorical_accuracy,
                                     "sparse_categorical_accuracy")
MeanSquaredError = _wrapped("MeanSquaredError", losses.mean_squared_error,
                            "mean_squared_error")
MeanAbsoluteError = _wrapped("MeanAbsoluteError", losses.mean_absolute_error,
                             "mean_absolute_error")
MeanAbsolutePercentageError = _wrapped("MeanAbsolutePercentageError",
                                       losses.mean_absolute_percentage_error,
                                       "mean_absolute_percentage_error")
MeanSquaredLogarithmicError = _wrapped("MeanSquaredLogarithmicError",
                                       losses.mean_squared_logarithmic_error,
                                       "mean_squared_logarithmic_error")
LogCoshError = _wrapped("LogCoshError", losses.log_cosh, "logcosh")
Poisson = _wrapped("Poisson", losses.poisson, "poisson")
Hinge = _wrapped("Hinge", losses.hinge, "hinge")
SquaredHinge = _wrapped("SquaredHinge", losses.squared_hinge, "squared_hinge")
CategoricalHinge = _wrapped("CategoricalHinge", losses.categorical_hinge, "categorical_hinge")


def cosine_similarity(y_true, y_pred, axis=-1):
    """The metric's sign: sum(l2_normalize(y_true) * l2_normalize(y_pred)) (1 is best)."""
    return -losses.cosine_similarity(y_true, y_pred, axis=axis)


CosineSimilarity = _wrapped("CosineSimilarity", cosine_similarity, "cosine_similarity",
                            (("axis", -1),))


def _in_top_k(targets, predictions, k):
    """TensorFlow's ``in_top_k``: fewer than ``k`` classes score strictly higher than the
    target (so ties at the boundary are in); False for a row holding a non-finite score
    and for a target outside the classes. Its kernel takes float32 scores only: float64,
    float16 and integer scores are refused with TensorFlow's error (a Python list of floats
    converts to float32)."""
    predictions = tf.convert_to_tensor(predictions)
    if predictions.dtype != "float32":
        tf.math.in_top_k(targets, predictions, k)  # raises TensorFlow's InTopKV2 error
    n = predictions.shape[-1]
    targets = tf.cast(targets, "int32")
    inside = (targets >= 0) & (targets < n)
    safe = tf.where(inside, targets, tf.zeros_like(targets))
    target_score = tf.gather(predictions, safe, axis=1, batch_dims=1)
    higher = tf.reduce_sum(tf.cast(predictions > tf.expand_dims(target_score, -1), "int32"),
                           axis=-1)
    finite = tf.reduce_all(tf.math.is_finite(predictions), axis=-1)
    return inside & finite & (higher < k)


def _top_k_matches(y_true, y_pred, k):
    y_true_shape = tuple(y_true.shape)
    if y_pred.ndim > 2:
        y_pred = tf.reshape(y_pred, (-1, y_pred.shape[-1]))
    flat = tf.reshape(y_true, (-1,)) if y_true.ndim > 1 else y_true
    matches = tf.cast(_in_top_k(flat, y_pred, k), backend.floatx())
    return tf.reshape(matches, y_true_shape) if y_true.ndim > 1 else matches


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1 where the one-hot label's class is among the ``k`` highest scores."""
    y_pred = tf.convert_to_tensor(y_pred)
    return _top_k_matches(tf.argmax(tf.cast(y_true, y_pred.dtype), axis=-1), y_pred, k)


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1 where the integer label is among the ``k`` highest scores (ties included)."""
    return _top_k_matches(tf.cast(y_true, "int32"), tf.convert_to_tensor(y_pred), k)


TopKCategoricalAccuracy = _wrapped("TopKCategoricalAccuracy", top_k_categorical_accuracy,
                                   "top_k_categorical_accuracy", (("k", 5),))
SparseTopKCategoricalAccuracy = _wrapped(
    "SparseTopKCategoricalAccuracy", sparse_top_k_categorical_accuracy,
    "sparse_top_k_categorical_accuracy", (("k", 5),))
CategoricalCrossentropy = _wrapped(
    "CategoricalCrossentropy", losses.categorical_crossentropy, "categorical_crossentropy",
    (("from_logits", False), ("label_smoothing", 0.0), ("axis", -1)))
SparseCategoricalCrossentropy = _wrapped(
    "SparseCategoricalCrossentropy", losses.sparse_categorical_crossentropy,
    "sparse_categorical_crossentropy", (("from_logits", False), ("axis", -1)))
BinaryCrossentropy = _wrapped(
    "BinaryCrossentropy", losses.binary_crossentropy, "binary_crossentropy",
    (("from_logits", False), ("label_smoothing", 0.0)))
KLDivergence = _wrapped("KLDivergence", losses.kl_divergence, "kl_divergence")


class RootMeanSquaredError(Mean):
    """sqrt of the running (weighted) mean of the squared errors."""

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = tf.cast(y_true, self.dtype)
        y_pred = tf.cast(y_pred, self.dtype)
        y_true, y_pred = losses.squeeze_or_expand_to_same_rank(y_true, y_pred)
        super().update_state(tf.square(y_pred - y_true), sample_weight)

    def result(self):
        return tf.sqrt(tf.math.divide_no_nan(self.total, self.count))


mse = MSE = losses.mean_squared_error
mae = MAE = losses.mean_absolute_error

_BY_NAME = {"accuracy": Accuracy, "acc": Accuracy, "binary_accuracy": BinaryAccuracy,
            "categorical_accuracy": CategoricalAccuracy,
            "sparse_categorical_accuracy": SparseCategoricalAccuracy,
            "mean_squared_error": MeanSquaredError, "mse": MeanSquaredError,
            "mean_absolute_error": MeanAbsoluteError, "mae": MeanAbsoluteError,
            "mean_absolute_percentage_error": MeanAbsolutePercentageError,
            "mape": MeanAbsolutePercentageError,
            "mean_squared_logarithmic_error": MeanSquaredLogarithmicError,
            "msle": MeanSquaredLogarithmicError, "poisson": Poisson,
            "cosine_similarity": CosineSimilarity, "hinge": Hinge,
            "squared_hinge": SquaredHinge, "categorical_hinge": CategoricalHinge,
            "top_k_categorical_accuracy": TopKCategoricalAccuracy,
            "sparse_top_k_categorical_accuracy": SparseTopKCategoricalAccuracy,
            "categorical_crossentropy": CategoricalCrossentropy,
            "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
            "binary_crossentropy": BinaryCrossentropy, "kl_divergence": KLDivergence}


def get(identifier):
    """A metric from a name (``'mse'``, ``'binary_accuracy'``, ...), an instance, or a
    function of ``(y_true, y_pred)`` (wrapped in a running mean)."""
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier) or {c.__name__: c for c in (
            *_BY_NAME.values(), LogCoshError, RootMeanSquaredError, *_CONFUSION)}.get(
            identifier) or _SNAKE.get(identifier)
        if cls is not None:
            return cls(name=identifier) if identifier in _BY_NAME else cls()
    elif isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    elif callable(identifier):
        return MeanMetricWrapper(identifier)
    raise ValueError(f"Could not interpret metric identifier: {identifier}")


from tapegrad.keras.confusion_metrics import (  # noqa: E402,F401
    AUC, FalseNegatives, FalsePositives, MeanIoU, Precision, Recall, TrueNegatives,
    TruePositives)

from tapegrad.keras.score_metrics import F1Score, FBetaScore, R2Score  # noqa: E402,F401

_CONFUSION = (AUC, F1Score, FBetaScore, R2Score, FalseNegatives, FalsePositives, MeanIoU, Precision, Recall, TrueNegatives,
              TruePositives)
_BY_NAME.update({"auc": AUC, "precision": Precision, "recall": Recall,
                 "true_positives": TruePositives, "false_positives": FalsePositives,
                 "true_negatives": TrueNegatives, "false_negatives": FalseNegatives,
                 "root_mean_squared_error": RootMeanSquaredError})
# Keras's snake-case names of these classes make them with their default names
_SNAKE = {"f1_score": F1Score, "f_beta_score": FBetaScore, "r2_score": R2Score}
