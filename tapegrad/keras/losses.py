"""``tf.keras.losses`` (also ``tf.losses``): loss classes and functions with Keras 3's
formulas, ``from_logits``, ``label_smoothing`` and reductions.

A loss function returns one value per sample (the mean or sum over the last axis); a loss
object reduces those, by default to their mean (``"sum_over_batch_size"``).

>>> from tapegrad import keras
>>> float(keras.losses.MeanSquaredError()([[0.0, 1.0]], [[1.0, 1.0]]))
0.5
"""
import math
import warnings

from tapegrad.keras import _tf as tf
from tapegrad.keras import backend, masking
from tapegrad.keras.loss_utils import (_get_logits, _same_shape, binary_crossentropy_terms,  # noqa: F401
                                       squeeze_or_expand_to_same_rank)

_REDUCTIONS = ("sum_over_batch_size", "sum", None, "none", "mean", "mean_with_sample_weight")


def _pair(y_true, y_pred):
    if type(y_pred) is not tf.Tensor:
        y_pred = tf.convert_to_tensor(y_pred)
    if y_pred.dtype.kind != "f":
        y_pred = tf.cast(y_pred, backend.floatx())
    if type(y_true) is not tf.Tensor or y_true.dtype != y_pred.dtype:
        y_true = tf.cast(tf.convert_to_tensor(y_true), y_pred.dtype)
    return squeeze_or_expand_to_same_rank(y_true, y_pred)


# -- the functions -------------------------------------------------------------------------
def mean_squared_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return tf.reduce_mean(tf.square(y_true - y_pred), axis=-1)


def mean_absolute_error(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return tf.reduce_mean(tf.abs(y_true - y_pred), axis=-1)


def huber(y_true, y_pred, delta=1.0):
    y_true, y_pred = _pair(y_true, y_pred)
    delta = tf.cast(delta, y_pred.dtype)
    error = y_pred - y_true
    abs_error = tf.abs(error)
    return tf.reduce_mean(tf.where(abs_error <= delta, 0.5 * tf.square(error),
                                   delta * abs_error - 0.5 * tf.square(delta)), axis=-1)


def kl_divergence(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    eps = backend.epsilon()
    y_true = tf.clip_by_value(y_true, eps, 1.0)
    y_pred = tf.clip_by_value(y_pred, eps, 1.0)
    return tf.reduce_sum(y_true * tf.math.log(y_true / y_pred), axis=-1)


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    y_pred = tf.convert_to_tensor(y_pred)
    y_true = tf.cast(y_true, y_pred.dtype)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    _same_shape(y_true, y_pred)
    y_pred, from_logits = _get_logits(y_pred, from_logits, "Sigmoid", "binary_crossentropy")
    bce = binary_crossentropy_terms(y_true, y_pred, from_logits)
    return tf.reduce_mean(bce, axis=axis)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    if isinstance(axis, bool):
        raise ValueError(f"`axis` must be of type `int`. Received: axis={axis} of type "
                         f"{type(axis)}")
    y_pred = tf.convert_to_tensor(y_pred)
    y_true = tf.cast(y_true, y_pred.dtype)
    if y_pred.shape[axis] == 1:
        warnings.warn("In loss categorical_crossentropy, expected y_pred.shape to be "
                      "(batch_size, num_classes) with num_classes > 1. Received: "
                      f"y_pred.shape={tuple(y_pred.shape)}. Consider using "
                      "'binary_crossentropy' if you only have 2 classes.", SyntaxWarning,
                      stacklevel=2)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / y_pred.shape[axis]
    _same_shape(y_true, y_pred)
    y_pred, from_logits = _get_logits(y_pred, from_logits, "Softmax",
                                      "categorical_crossentropy")
    if from_logits:
        return tf.nn.softmax_cross_entropy_with_logits(labels=y_true, logits=y_pred,
                                                       axis=axis)
    eps = backend.epsilon()
    out = y_pred / tf.reduce_sum(y_pred, axis, keepdims=True)
    out = tf.clip_by_value(out, eps, 1.0 - eps)
    return -tf.reduce_sum(y_true * tf.math.log(out), axis)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None,
                                    axis=-1):
    y_pred = tf.convert_to_tensor(y_pred)
    y_true = tf.convert_to_tensor(y_true)
    if axis not in (-1, y_pred.ndim - 1):
        raise ValueError("Only axis=-1 is currently supported. Received: axis={axis}")
    if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1:
        y_true = tf.squeeze(y_true, -1)
    if tuple(y_true.shape) != tuple(y_pred.shape[:-1]):
        raise ValueError("Argument `output` must have rank (ndim) `target.ndim - 1`. "
                         f"Received: target.shape={tuple(y_true.shape)}, "
                         f"output.shape={tuple(y_pred.shape)}")
    labels = tf.cast(y_true, "int64") if y_true.dtype.kind == "f" else y_true
    valid = None
    if ignore_class is not None:
        valid = tf.not_equal(labels, ignore_class)
        labels = tf.where(valid, labels, tf.zeros_like(labels))
    logits, from_logits = _get_logits(y_pred, from_logits, "Softmax",
                                      "sparse_categorical_crossentropy")
    if not from_logits:
        eps = backend.epsilon()
        logits = tf.math.log(tf.clip_by_value(logits, eps, 1 - eps))
    res = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    if valid is None:
        return res
    res = tf.where(valid, res, tf.zeros_like(res))
    masking.set_keras_mask(res, valid)  # Keras's: a loss's mean is over the valid entries
    return res


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
kld = KLD = kullback_leibler_divergence = kl_divergence


# -- the classes ---------------------------------------------------------------------------
class Loss:
    """Base class: ``call(y_true, y_pred)`` gives per-sample losses; ``__call__`` weights
    and reduces them."""

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        if reduction not in _REDUCTIONS:
            raise ValueError("Invalid value for argument `reduction`. Expected one of "
                             f"{set(_REDUCTIONS)}. Received: reduction={reduction}")
        self.name = name or tf.module._snake(type(self).__name__)
        self.reduction = reduction
        self.dtype = dtype or backend.floatx()

    def __call__(self, y_true, y_pred, sample_weight=None):
        mask = masking.get_keras_mask(y_pred)  # Keras: masked entries weigh nothing
        if type(y_pred) is tf.Tensor and y_pred.dtype == self.dtype:
            y_true = _as(y_true, self.dtype)
        else:
            y_pred = tf.nest.map_structure(lambda x: _as(x, self.dtype), y_pred)
            y_true = tf.nest.map_structure(lambda x: _as(x, self.dtype), y_true)
        losses = self.call(y_true, y_pred)
        out_mask = masking.get_keras_mask(losses)  # ignore_class masks the losses themselves
        if out_mask is not None:
            mask = out_mask if mask is None else tf.logical_and(tf.cast(mask, "bool"), out_mask)
        if mask is not None:
            sample_weight = masking.apply_mask(sample_weight, mask, self.dtype,
                                               self.reduction)
        return reduce_weighted_values(losses, sample_weight, self.reduction, self.dtype)

    def call(self, y_true, y_pred):
        raise NotImplementedError

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _as(x, dtype):
    t = x if type(x) is tf.Tensor else tf.convert_to_tensor(x)
    return t if t.dtype == dtype else tf.cast(t, dtype)  # dtype == "float32" holds too


def reduce_weighted_values(values, sample_weight=None, reduction="sum_over_batch_size",
                           dtype=None):
    values = _as(values, dtype or values.dtype)
    if sample_weight is not None:
        sw = _as(sample_weight, values.dtype.name)
        values, sw = squeeze_or_expand_to_same_rank(values, sw)
        values = values * sw
    shape = tuple(values._raw_shape) if isinstance(values, tf.Tensor) else tuple(values.shape)
    if reduction in (None, "none") or values.ndim == 0 or shape == (0,):
        return values
    loss = tf.reduce_sum(values)
    if reduction == "sum":
        return loss
    if reduction == "mean_with_sample_weight" and sample_weight is not None:
        divisor = tf.reduce_sum(_as(sample_weight, values.dtype.name))
        return tf.math.divide_no_nan(loss, divisor)
    count = math.prod(shape)
    if type(count) is int and count > 0:
        # a known, nonzero count: a plain division (what divide_no_nan computes then), with
        # no new constant per call, so the tapes of a training loop stay alike
        return loss / float(count)
    return tf.math.divide_no_nan(loss, tf.cast(tf.size(values), values.dtype))


class LossFunctionWrapper(Loss):
    """A loss object around a per-sample loss function ``fn(y_true, y_pred, **kwargs)``."""

    def __init__(self, fn, reduction="sum_over_batch_size", name=None, dtype=None, **kwargs):
        super().__init__(name=name, reduction=reduction, dtype=dtype)
        self.fn, self._fn_kwargs = fn, kwargs

    def call(self, y_true, y_pred):
        if tf.is_tensor(y_true) and tf.is_tensor(y_pred):
            y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        return {**super().get_config(), **self._fn_kwargs}


def _wrapper(cls_name, fn, default_name, params=()):
    def __init__(self, *args, reduction="sum_over_batch_size", name=default_name, dtype=None,
                 **kwargs):
        kw = dict(params)
        for key, value in zip(kw, args):
            kw[key] = value
        for key in list(kwargs):
            if key not in kw:
                raise TypeError(f"{cls_name}.__init__() got an unexpected keyword argument "
                                f"'{key}'")
            kw[key] = kwargs.pop(key)
        LossFunctionWrapper.__init__(self, fn, reduction=reduction, name=name, dtype=dtype,
                                     **kw)
    return type(cls_name, (LossFunctionWrapper,), {
        "__init__": __init__, "__doc__": f"The loss object of ``{fn.__name__}``."})


MeanSquaredError = _wrapper("MeanSquaredError", mean_squared_error, "mean_squared_error")
MeanAbsoluteError = _wrapper("MeanAbsoluteError", mean_absolute_error, "mean_absolute_error")
Huber = _wrapper("Huber", huber, "huber_loss", (("delta", 1.0),))
KLDivergence = _wrapper("KLDivergence", kl_divergence, "kl_divergence")
BinaryCrossentropy = _wrapper("BinaryCrossentropy", binary_crossentropy,
                              "binary_crossentropy",
                              (("from_logits", False), ("label_smoothing", 0.0), ("axis", -1)))
CategoricalCrossentropy = _wrapper("CategoricalCrossentropy", categorical_crossentropy,
                                   "categorical_crossentropy",
                                   (("from_logits", False), ("label_smoothing", 0.0),
                                    ("axis", -1)))
SparseCategoricalCrossentropy = _wrapper(
    "SparseCategoricalCrossentropy", sparse_categorical_crossentropy,
    "sparse_categorical_crossentropy", (("from_logits", False), ("ignore_class", None)))

_BY_NAME = {
    "mean_squared_error": mean_squared_error, "mse": mean_squared_error,
    "mean_absolute_error": mean_absolute_error, "mae": mean_absolute_error,
    "huber": huber, "huber_loss": huber, "kl_divergence": kl_divergence,
    "kld": kl_divergence, "kullback_leibler_divergence": kl_divergence,
    "binary_crossentropy": binary_crossentropy,
    "categorical_crossentropy": categorical_crossentropy,
    "sparse_categorical_crossentropy": sparse_categorical_crossentropy}
_CLASSES = {c.__name__: c for c in (
    MeanSquaredError, MeanAbsoluteError, Huber, KLDivergence, BinaryCrossentropy,
    CategoricalCrossentropy, SparseCategoricalCrossentropy)}


# the rest of Keras's losses: the functions in more_losses.py, their classes here
from tapegrad.keras.more_losses import *  # noqa: E402,F401,F403
from tapegrad.keras import more_losses as _more  # noqa: E402
_MORE = {name: _wrapper(name, fn, fn.__name__, params) for name, (fn, params) in
         _more.CLASSES.items()}
globals().update(_MORE)
_BY_NAME.update(_more.FUNCTIONS)
_CLASSES.update(_MORE)


def get(identifier):
    """A loss from a name (``'mse'``, ``'binary_crossentropy'``, a class name) or callable.

    >>> from tapegrad import keras
    >>> keras.losses.get("mse") is keras.losses.mean_squared_error
    True
    """
    if identifier is None:
        return None
    if isinstance(identifier, str):
        if identifier in _BY_NAME:
            return _BY_NAME[identifier]
        if identifier in _CLASSES:
            return _CLASSES[identifier]()
    elif isinstance(identifier, dict) and identifier.get("class_name") in _CLASSES:
        return _CLASSES[identifier["class_name"]](**identifier.get("config", {}))
    elif callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret loss identifier: {identifier}")


def serialize(loss):
    return {"class_name": type(loss).__name__, "config": loss.get_config()}


def deserialize(config, custom_objects=None):
    return get(config)
