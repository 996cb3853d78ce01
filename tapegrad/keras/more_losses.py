"""More of ``tf.keras.losses``: percentage and logarithmic errors, log-cosh, Poisson, cosine
similarity, the hinges, the focal crossentropies, the Dice and Tversky overlaps, with Keras
3's formulas (the TensorFlow backend's order of operations), defaults and names.
``losses.py`` re-exports them and makes their classes.

>>> from tapegrad import keras
>>> round(float(keras.losses.Hinge()([[0.0, 1.0]], [[0.5, 0.5]])), 4)
1.0
"""
import numpy as np

from tapegrad.keras import _tf as tf
from tapegrad.keras import backend
from tapegrad.keras.loss_utils import (_get_logits, _same_shape, binary_crossentropy_terms,
                                       squeeze_or_expand_to_same_rank)


def _pred_true(y_true, y_pred):
    """y_pred as a tensor, y_true in its dtype, ranks fixed up (Keras's preamble)."""
    y_pred = tf.convert_to_tensor(y_pred)
    y_true = tf.cast(tf.convert_to_tensor(y_true), y_pred.dtype)
    return squeeze_or_expand_to_same_rank(y_true, y_pred)


def mean_absolute_percentage_error(y_true, y_pred):
    """100 * mean(|(y_true - y_pred) / max(|y_true|, epsilon)|) over the last axis."""
    y_true, y_pred = _pred_true(y_true, y_pred)
    eps = tf.convert_to_tensor(backend.epsilon(), dtype=y_pred.dtype)
    diff = tf.abs((y_true - y_pred) / tf.maximum(tf.abs(y_true), eps))
    return 100.0 * tf.reduce_mean(diff, axis=-1)


def mean_squared_logarithmic_error(y_true, y_pred):
    """mean((log(max(y_pred, eps) + 1) - log(max(y_true, eps) + 1)) ** 2) over the last axis."""
    y_true, y_pred = _pred_true(y_true, y_pred)
    eps = tf.convert_to_tensor(backend.epsilon())  # float32 as in Keras, also for float64
    # keras.ops.maximum promotes (float64 with float32 is float64, float16 with it float32),
    # where TensorFlow's tf.maximum raises: the promotion is written out
    dt = np.result_type(y_pred.dtype, eps.dtype)
    y_pred, y_true, eps = tf.cast(y_pred, dt), tf.cast(y_true, dt), tf.cast(eps, dt)
    first_log = tf.math.log(tf.maximum(y_pred, eps) + 1.0)
    second_log = tf.math.log(tf.maximum(y_true, eps) + 1.0)
    return tf.reduce_mean(tf.square(first_log - second_log), axis=-1)


def log_cosh(y_true, y_pred):
    """mean(log(cosh(y_pred - y_true))) over the last axis, as x + softplus(-2x) - log 2
    (no overflow for large errors)."""
    y_true, y_pred = _pred_true(y_true, y_pred)
    log2 = tf.cast(tf.math.log(2.0), y_pred.dtype)
    x = y_pred - y_true
    return tf.reduce_mean(x + tf.nn.softplus(x * -2.0) - log2, axis=-1)


def poisson(y_true, y_pred):
    """mean(y_pred - y_true * log(y_pred + epsilon)) over the last axis."""
    y_pred = tf.convert_to_tensor(y_pred)
    y_true = tf.cast(tf.convert_to_tensor(y_true), y_pred.dtype)
    eps = tf.convert_to_tensor(backend.epsilon(), dtype=y_pred.dtype)
    return tf.reduce_mean(y_pred - y_true * tf.math.log(y_pred + eps), axis=-1)


def l2_normalize(x, axis=-1):
    """Keras's ``ops.normalize`` of order 2: x * min(rsqrt(sum(x ** 2)), 1 / epsilon)."""
    if x.ndim == 0:
        x = tf.expand_dims(x, 0)
    inv_norm = tf.math.rsqrt(tf.reduce_sum(tf.square(x), axis=axis, keepdims=True))
    return x * tf.minimum(inv_norm, 1.0 / backend.epsilon())


def cosine_similarity(y_true, y_pred, axis=-1):
    """-sum(l2_normalize(y_true) * l2_normalize(y_pred)) over ``axis`` (a loss: -1 is best)."""
    y_true, y_pred = _pred_true(y_true, y_pred)
    return -tf.reduce_sum(l2_normalize(y_true, axis) * l2_normalize(y_pred, axis), axis=axis)


def _hinge_labels(y_true):
    """Labels that are all 0 or 1 become -1 or 1 (Keras's convert_binary_labels_to_hinge);
    a select on the whole-tensor test, so it traces."""
    binary = tf.reduce_all(tf.logical_or(tf.equal(y_true, 0), tf.equal(y_true, 1)))
    return tf.where(binary, 2.0 * y_true - 1.0, y_true)


def hinge(y_true, y_pred):
    """mean(max(1 - y_true * y_pred, 0)) over the last axis; 0/1 labels become -1/1."""
    y_pred = tf.convert_to_tensor(y_pred)
    y_true = _hinge_labels(tf.cast(tf.convert_to_tensor(y_true), y_pred.dtype))
    return tf.reduce_mean(tf.maximum(1.0 - y_true * y_pred, 0.0), axis=-1)


def squared_hinge(y_true, y_pred):
    """mean(max(1 - y_true * y_pred, 0) ** 2) over the last axis; 0/1 labels become -1/1."""
    y_pred = tf.convert_to_tensor(y_pred)
    y_true = _hinge_labels(tf.cast(tf.convert_to_tensor(y_true), y_pred.dtype))
    return tf.reduce_mean(tf.square(tf.maximum(1.0 - y_true * y_pred, 0.0)), axis=-1)


def categorical_hinge(y_true, y_pred):
    """max(max((1 - y_true) * y_pred) - sum(y_true * y_pred) + 1, 0) over the last axis."""
    y_pred = tf.convert_to_tensor(y_pred)
    y_true = tf.cast(tf.convert_to_tensor(y_true), y_pred.dtype)
    pos = tf.reduce_sum(y_true * y_pred, axis=-1)
    neg = tf.reduce_max((1.0 - y_true) * y_pred, axis=-1)
    return tf.maximum(neg - pos + 1.0, tf.cast(0.0, y_pred.dtype))


def binary_focal_crossentropy(y_true, y_pred, apply_class_balancing=False, alpha=0.25,
                              gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1):
    """(1 - p_t) ** gamma * binary crossentropy, averaged over ``axis``; p_t is the predicted
    probability of the true label, and ``apply_class_balancing`` weighs by alpha / 1 - alpha.
    From logits, the crossentropy is the stable one of the logits (as Keras's TensorFlow
    backend computes it from the sigmoid's remembered logits)."""
    y_pred = tf.convert_to_tensor(y_pred)
    y_true = tf.cast(y_true, y_pred.dtype)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    _same_shape(y_true, y_pred)
    if from_logits:
        logits = y_pred
        y_pred = tf.sigmoid(logits)
    else:
        logits, from_logits = _get_logits(y_pred, False, "Sigmoid", "binary_crossentropy")
    bce = binary_crossentropy_terms(y_true, logits if from_logits else y_pred, from_logits)
    p_t = y_true * y_pred + (1 - y_true) * (1 - y_pred)
    focal_bce = tf.pow(1.0 - p_t, gamma) * bce
    if apply_class_balancing:
        focal_bce = (y_true * alpha + (1 - y_true) * (1 - alpha)) * focal_bce
    return tf.reduce_mean(focal_bce, axis=axis)


def categorical_focal_crossentropy(y_true, y_pred, alpha=0.25, gamma=2.0, from_logits=False,
                                   label_smoothing=0.0, axis=-1):
    """sum(alpha * (1 - p) ** gamma * -y_true * log(p)) over ``axis``, with p the predicted
    probabilities normalised to sum 1 and clipped to [epsilon, 1 - epsilon]."""
    if isinstance(axis, bool):
        raise ValueError(f"`axis` must be of type `int`. Received: axis={axis} of type "
                         f"{type(axis)}")
    y_pred = tf.convert_to_tensor(y_pred)
    y_true = tf.cast(y_true, y_pred.dtype)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / y_true.shape[-1]
    if from_logits:
        y_pred = tf.nn.softmax(y_pred, axis=axis)
    eps = backend.epsilon()
    output = tf.clip_by_value(y_pred / tf.reduce_sum(y_pred, axis=axis, keepdims=True), eps,
                              1.0 - eps)
    cce = -y_true * tf.math.log(output)
    weighting = tf.pow(1.0 - output, gamma) * alpha
    return tf.reduce_sum(weighting * cce, axis=axis)



def dice(y_true, y_pred, axis=None):
    """1 - 2 sum(y_true * y_pred) / (sum(y_true) + sum(y_pred) + epsilon), over ``axis``
    (all axes by default; ``axis=(1, 2, 3)`` gives one loss per image of a segmentation)."""
    y_pred = tf.convert_to_tensor(y_pred)
    y_true = tf.cast(tf.convert_to_tensor(y_true), y_pred.dtype)
    intersection = tf.reduce_sum(y_true * y_pred, axis=axis)
    total = tf.reduce_sum(y_true, axis=axis) + tf.reduce_sum(y_pred, axis=axis)
    return 1 - (2.0 * intersection) / (total + backend.epsilon())


def tversky(y_true, y_pred, alpha=0.5, beta=0.5, axis=None):
    """1 - TP / (TP + alpha * FN' + beta * FP' + epsilon), with Keras's terms: TP the sum of
    y_true * y_pred, alpha weighing sum((1 - y_pred) * y_true), beta sum(y_pred * (1 - y_true));
    alpha = beta = 0.5 is the Dice loss."""
    y_pred = tf.convert_to_tensor(y_pred)
    y_true = tf.cast(tf.convert_to_tensor(y_true), y_pred.dtype)
    intersection = tf.reduce_sum(y_true * y_pred, axis=axis)
    fp = tf.reduce_sum((1 - y_pred) * y_true, axis=axis)
    fn = tf.reduce_sum(y_pred * (1 - y_true), axis=axis)
    return 1 - intersection / (intersection + fp * alpha + fn * beta + backend.epsilon())

mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error

__all__ = ["mean_absolute_percentage_error", "mean_squared_logarithmic_error", "log_cosh",
           "poisson", "cosine_similarity", "hinge", "squared_hinge", "categorical_hinge",
           "binary_focal_crossentropy", "categorical_focal_crossentropy", "mape", "MAPE",
           "msle", "MSLE", "dice", "tversky"]

# the classes (made in losses.py by its wrapper): name -> (function, keyword defaults)
CLASSES = {
    "MeanAbsolutePercentageError": (mean_absolute_percentage_error, ()),
    "MeanSquaredLogarithmicError": (mean_squared_logarithmic_error, ()),
    "LogCosh": (log_cosh, ()), "Poisson": (poisson, ()),
    "CosineSimilarity": (cosine_similarity, (("axis", -1),)),
    "Hinge": (hinge, ()), "SquaredHinge": (squared_hinge, ()),
    "CategoricalHinge": (categorical_hinge, ()),
    "BinaryFocalCrossentropy": (binary_focal_crossentropy, (
        ("apply_class_balancing", False), ("alpha", 0.25), ("gamma", 2.0),
        ("from_logits", False), ("label_smoothing", 0.0), ("axis", -1))),
    "CategoricalFocalCrossentropy": (categorical_focal_crossentropy, (
        ("alpha", 0.25), ("gamma", 2.0), ("from_logits", False), ("label_smoothing", 0.0),
        ("axis", -1))),
    "Dice": (dice, (("axis", None),)),
    "Tversky": (tversky, (("alpha", 0.5), ("beta", 0.5), ("axis", None))),
}

FUNCTIONS = {f.__name__: f for f in (
    mean_absolute_percentage_error, mean_squared_logarithmic_error, log_cosh, poisson,
    cosine_similarity, hinge, squared_hinge, categorical_hinge, binary_focal_crossentropy,
    categorical_focal_crossentropy, dice, tversky)}
FUNCTIONS.update(mape=mape, MAPE=mape, msle=msle, MSLE=msle)
