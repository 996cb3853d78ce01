"""Keras 3's confusion-matrix metrics: ``TruePositives`` ... ``FalseNegatives``,
``Precision``, ``Recall``, ``AUC`` (ROC and PR curves), and ``MeanIoU``.

Counts are weighted sums kept in Variables, one per threshold, with Keras's rules: a
prediction is positive where it is strictly greater than the threshold, a label where it
is nonzero; ``top_k`` keeps each row's k largest predictions (the others become -1e10),
``class_id`` keeps one column.

>>> from tapegrad import keras
>>> m = keras.metrics.Precision()
>>> m.update_state([0, 1, 1, 1], [1.0, 1.0, 0.2, 0.6]); round(float(m.result()), 4)
0.6667
"""
import warnings

import numpy as np

from tapegrad.keras import _tf as tf
from tapegrad.keras import backend, losses
from tapegrad.keras.metric_base import Metric

_NEG_INF = -1e10


def _thresholds(thresholds, default):
    t = default if thresholds is None else thresholds
    single = not isinstance(t, (list, tuple, np.ndarray))
    t = [float(t)] if single else [float(v) for v in np.ravel(t)]
    for v in t:
        if not 0 <= v <= 1 and v != _NEG_INF:
            raise ValueError("Threshold values must be in [0, 1]. "
                             f"Received: {thresholds}")
    return t, single


def _filter_top_k(x, k):
    top = tf.math.top_k(x, k=k).indices
    keep = tf.reduce_sum(tf.one_hot(top, x.shape[-1], dtype=x.dtype), axis=-2)
    return x * keep + _NEG_INF * (1 - keep)


def confusion_counts(y_true, y_pred, thresholds, sample_weight=None, top_k=None,
                     class_id=None, multi_label=False, dtype="float32"):
    """The weighted ``(tp, fp, tn, fn)`` of one batch, shaped ``(len(thresholds),)``
    (``(len(thresholds), labels)`` with ``multi_label``)."""
    y_true = tf.cast(y_true, dtype)
    y_pred = tf.cast(y_pred, dtype)
    y_pred, y_true = losses.squeeze_or_expand_to_same_rank(y_pred, y_true)
    if sample_weight is not None:
        sw = tf.expand_dims(tf.cast(sample_weight, dtype), -1)
        _, sw = losses.squeeze_or_expand_to_same_rank(y_true, sw, expand_rank_1=False)
    if top_k is not None:
        y_pred = _filter_top_k(y_pred, top_k)
    if class_id is not None:
        if y_pred.ndim == 1:
            raise ValueError("When class_id is provided, y_pred must be a 2D array with "
                             "shape (num_samples, num_classes), found shape: "
                             f"{tuple(y_pred.shape)}")
        y_true, y_pred = y_true[..., class_id:class_id + 1], y_pred[..., class_id:class_id + 1]
        if sample_weight is not None and sw.ndim and sw.shape[-1] != 1:
            sw = sw[..., class_id:class_id + 1]
    weights = None if sample_weight is None else tf.broadcast_to(sw, y_pred.shape)
    if multi_label:  # (samples, labels): counts per threshold and label
        y_pred = tf.reshape(y_pred, (-1, y_pred.shape[-1]))
        y_true = tf.reshape(y_true, (-1, y_true.shape[-1]))
        weights = None if weights is None else tf.reshape(weights, (-1, weights.shape[-1]))
        thr = tf.reshape(tf.constant(np.asarray(thresholds, dtype)), (-1, 1, 1))
        axis = 1
    else:
        y_pred, y_true = tf.reshape(y_pred, (-1,)), tf.reshape(y_true, (-1,))
        weights = None if weights is None else tf.reshape(weights, (-1,))
        thr = tf.reshape(tf.constant(np.asarray(thresholds, dtype)), (-1, 1))
        axis = 1
    pred_pos = y_pred > thr
    label_pos = tf.not_equal(y_true, 0) & tf.ones_like(pred_pos)
    w = tf.ones_like(y_pred) if weights is None else weights

    def count(label, pred):
        return tf.reduce_sum(tf.where(label & pred, w, tf.zeros_like(w)), axis=axis)
    pred_neg, label_neg = tf.logical_not(pred_pos), tf.logical_not(label_pos)
    return (count(label_pos, pred_pos), count(label_neg, pred_pos),
            count(label_neg, pred_neg), count(label_pos, pred_neg))


class _ConfusionMetric(Metric):
    _kinds = ("tp", "fp", "tn", "fn")

    def __init__(self, thresholds=None, top_k=None, class_id=None, default=0.5, name=None,
                 dtype=None):
        super().__init__(name=name, dtype=dtype)
        if top_k is not None and thresholds is None:
            default = _NEG_INF
        self.init_thresholds = thresholds
        self.thresholds, self._single = _thresholds(thresholds, default)
        self.top_k, self.class_id = top_k, class_id
        n = len(self.thresholds)
        names = {"tp": "true_positives", "fp": "false_positives", "tn": "true_negatives",
                 "fn": "false_negatives"}
        self._counts = {k: self.add_variable((n,), name=names[k]) for k in self._kinds}
        for k, v in self._counts.items():
            setattr(self, names[k], v)

    def update_state(self, y_true, y_pred, sample_weight=None):
        counts = dict(zip(("tp", "fp", "tn", "fn"), confusion_counts(
            y_true, y_pred, self.thresholds, sample_weight, self.top_k, self.class_id,
            dtype=self.dtype)))
        for k, v in self._counts.items():
            v.assign_add(counts[k])

    def _out(self, value):
        return value[0] if self._single else value

    def get_config(self):
        return {**super().get_config(), "thresholds": self.init_thresholds,
                "top_k": self.top_k, "class_id": self.class_id}


def _counter(cls_name, kind, doc):
    class Counter(_ConfusionMetric):
        _kinds = (kind,)

        def __init__(self, thresholds=None, name=None, dtype=None):
            super().__init__(thresholds=thresholds, name=name, dtype=dtype)

        def result(self):
            return self._out(tf.identity(self._counts[kind]))

        def get_config(self):
            return {"name": self.name, "dtype": self.dtype,
                    "thresholds": self.init_thresholds}
    Counter.__name__ = Counter.__qualname__ = cls_name
    Counter.__doc__ = doc
    return Counter


TruePositives = _counter("TruePositives", "tp", "The weighted count of true positives.")
FalsePositives = _counter("FalsePositives", "fp", "The weighted count of false positives.")
TrueNegatives = _counter("TrueNegatives", "tn", "The weighted count of true negatives.")
FalseNegatives = _counter("FalseNegatives", "fn", "The weighted count of false negatives.")


class Precision(_ConfusionMetric):
    """tp / (tp + fp), 0 where nothing is predicted positive."""
    _kinds = ("tp", "fp")

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(thresholds, top_k, class_id, name=name, dtype=dtype)

    def result(self):
        tp, fp = self._counts["tp"], self._counts["fp"]
        return self._out(tf.math.divide_no_nan(tp, tp + fp))


class Recall(_ConfusionMetric):
    """tp / (tp + fn), 0 where there are no positive labels."""
    _kinds = ("tp", "fn")

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(thresholds, top_k, class_id, name=name, dtype=dtype)

    def result(self):
        tp, fn = self._counts["tp"], self._counts["fn"]
        return self._out(tf.math.divide_no_nan(tp, tp + fn))


class AUC(Metric):
    """The area under the ROC or PR curve, from counts at ``num_thresholds`` thresholds
    (Keras's: ``i / (n - 1)`` for the inner ones, ``-epsilon`` and ``1 + epsilon`` at the
    ends), summed by ``'interpolation'`` (trapezoids; for PR, Davis & Goadrich's
    interpolation), ``'minoring'`` or ``'majoring'``."""

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation",
                 name=None, dtype=None, thresholds=None, multi_label=False, num_labels=None,
                 label_weights=None, from_logits=False):
        super().__init__(name=name, dtype=dtype)
        self.curve, self.summation_method = str(curve).upper(), str(summation_method).lower()
        if self.curve not in ("ROC", "PR"):
            raise ValueError(f'Invalid AUC curve value: "{curve}". Expected values are '
                             "['ROC', 'PR']")
        if self.summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError(f'Invalid AUC summation method value: "{summation_method}". '
                             "Expected values are ['interpolation', 'majoring', 'minoring']")
        eps = backend.epsilon()
        if thresholds is not None:
            inner = sorted(float(t) for t in np.ravel(thresholds))
        else:
            if num_thresholds <= 1:
                raise ValueError("Argument `num_thresholds` must be an integer > 1. "
                                 f"Received: num_thresholds={num_thresholds}")
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        self.thresholds = [0.0 - eps] + inner + [1.0 + eps]
        self.num_thresholds = len(self.thresholds)
        self.multi_label, self.from_logits = multi_label, from_logits
        self.label_weights = None if label_weights is None else tf.constant(
            np.asarray(label_weights, self.dtype))
        self._num_labels = num_labels
        self._built = False
        if not multi_label or num_labels is not None:
            self._build(num_labels)

    def _build(self, num_labels):
        shape = (self.num_thresholds,) + ((num_labels,) if self.multi_label else ())
        self.true_positives = self.add_variable(shape, name="true_positives")
        self.false_positives = self.add_variable(shape, name="false_positives")
        self.true_negatives = self.add_variable(shape, name="true_negatives")
        self.false_negatives = self.add_variable(shape, name="false_negatives")
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = tf.convert_to_tensor(y_pred)
        if not self._built:
            self._build(y_pred.shape[-1])
        if self.from_logits:
            y_pred = tf.sigmoid(y_pred)
        label_weights = None if self.multi_label else self.label_weights
        if label_weights is not None:  # per label, folded into the sample weights
            lw = tf.broadcast_to(label_weights, tf.convert_to_tensor(y_pred).shape)
            sample_weight = lw if sample_weight is None else lw * tf.cast(
                tf.reshape(sample_weight, tuple(np.shape(sample_weight)) + (1,) * (
                    y_pred.ndim - len(np.shape(sample_weight)))), self.dtype)
        tp, fp, tn, fn = confusion_counts(y_true, y_pred, self.thresholds, sample_weight,
                                          multi_label=self.multi_label, dtype=self.dtype)
        self.true_positives.assign_add(tp)
        self.false_positives.assign_add(fp)
        self.true_negatives.assign_add(tn)
        self.false_negatives.assign_add(fn)

    def _by_label(self, terms):
        if not self.multi_label:
            return tf.reduce_sum(terms)
        by_label = tf.reduce_sum(terms, axis=0)
        if self.label_weights is None:
            return tf.reduce_mean(by_label)
        return tf.math.divide_no_nan(tf.reduce_sum(by_label * self.label_weights),
                                     tf.reduce_sum(self.label_weights))

    def _interpolate_pr_auc(self):
        n = self.num_thresholds
        tp, fp, fn = self.true_positives, self.false_positives, self.false_negatives
        dtp = tp[:n - 1] - tp[1:]
        p = tp + fp
        dp = p[:n - 1] - p[1:]
        slope = tf.math.divide_no_nan(dtp, tf.maximum(dp, 0))
        intercept = tp[1:] - slope * p[1:]
        ratio = tf.where((p[:n - 1] > 0) & (p[1:] > 0),
                         tf.math.divide_no_nan(p[:n - 1], tf.maximum(p[1:], 0)),
                         tf.ones_like(p[1:]))
        terms = tf.math.divide_no_nan(slope * (dtp + intercept * tf.math.log(ratio)),
                                      tf.maximum(tp[1:] + fn[1:], 0))
        return self._by_label(terms)

    def result(self):
        if not self._built:
            return tf.constant(0.0, self.dtype)
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self._interpolate_pr_auc()
        n = self.num_thresholds
        tp, fp = self.true_positives, self.false_positives
        tn, fn = self.true_negatives, self.false_negatives
        recall = tf.math.divide_no_nan(tp, tp + fn)
        if self.curve == "ROC":
            x, y = tf.math.divide_no_nan(fp, fp + tn), recall
        else:
            x, y = recall, tf.math.divide_no_nan(tp, tp + fp)
        if self.summation_method == "interpolation":
            heights = (y[:n - 1] + y[1:]) / 2.0
        elif self.summation_method == "minoring":
            heights = tf.minimum(y[:n - 1], y[1:])
        else:
            heights = tf.maximum(y[:n - 1], y[1:])
        return self._by_label((x[:n - 1] - x[1:]) * heights)

    def reset_state(self):
        if self._built:
            super().reset_state()

    def get_config(self):
        return {**super().get_config(), "num_thresholds": self.num_thresholds,
                "curve": self.curve, "summation_method": self.summation_method,
                "multi_label": self.multi_label, "from_logits": self.from_logits}


class MeanIoU(Metric):
    """The mean over classes of intersection / union, from a running confusion matrix of
    ``num_classes``; classes absent from both labels and predictions are left out. As in
    Keras the matrix is int64 by default: class values and sample weights are truncated to
    integers (Keras warns for float weights; pass ``dtype="float32"`` to keep them), and
    class values outside ``[0, num_classes)`` or equal to ``ignore_class`` count for
    nothing."""

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None,
                 sparse_y_true=True, sparse_y_pred=True, axis=-1):
        super().__init__(name=name, dtype=dtype or "int64")
        self.num_classes, self.ignore_class = num_classes, ignore_class
        self.sparse_y_true, self.sparse_y_pred, self.axis = sparse_y_true, sparse_y_pred, axis
        self.total_cm = self.add_variable((num_classes, num_classes),
                                          name="total_confusion_matrix")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = tf.convert_to_tensor(y_true), tf.convert_to_tensor(y_pred)
        if not self.sparse_y_true:
            y_true = tf.argmax(y_true, axis=self.axis)
        if not self.sparse_y_pred:
            y_pred = tf.argmax(y_pred, axis=self.axis)
        y_true = tf.reshape(tf.cast(y_true, self.dtype), (-1,))
        y_pred = tf.reshape(tf.cast(y_pred, self.dtype), (-1,))
        if sample_weight is None:
            w = tf.ones_like(y_true)
        else:
            sample_weight = tf.convert_to_tensor(sample_weight)
            if sample_weight.dtype.kind == "f" and np.dtype(self.dtype).kind in "iu":
                warnings.warn("You are passing weight as `float`, but dtype is `int`. This "
                              "may result in an incorrect weight due to type casting "
                              "Consider using integer weights.", stacklevel=2)
            w = tf.cast(sample_weight, self.dtype)
            w = tf.broadcast_to(tf.reshape(w, (-1,)) if w.ndim > 1 else w, y_true.shape)
        k = self.num_classes
        keep = (y_true >= 0) & (y_true < k) & (y_pred >= 0) & (y_pred < k)
        if self.ignore_class is not None:
            keep = keep & tf.not_equal(y_true, tf.cast(self.ignore_class, y_true.dtype))
        zero = tf.zeros_like(y_true)
        index = tf.cast(tf.where(keep, y_true, zero), "int64") * k + tf.cast(
            tf.where(keep, y_pred, zero), "int64")
        cm = tf.math.unsorted_segment_sum(tf.where(keep, w, tf.zeros_like(w)), index, k * k)
        self.total_cm.assign_add(tf.reshape(cm, (k, k)))

    def result(self):
        k = self.num_classes
        cm = self.total_cm
        rows = tf.cast(tf.reduce_sum(cm, axis=0), "float32")
        cols = tf.cast(tf.reduce_sum(cm, axis=1), "float32")
        diag = tf.cast(tf.gather(tf.reshape(cm, (-1,)), list(range(0, k * k, k + 1))),
                       "float32")
        denominator = rows + cols - diag
        valid = denominator > 1e-9
        iou = tf.where(valid, diag / (denominator + backend.epsilon()), tf.zeros_like(diag))
        return tf.math.divide_no_nan(tf.reduce_sum(iou),
                                     tf.reduce_sum(tf.cast(valid, "float32")))

    def get_config(self):
        return {**super().get_config(), "num_classes": self.num_classes,
                "ignore_class": self.ignore_class, "sparse_y_true": self.sparse_y_true,
                "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}
