"""Helpers the loss functions share (``losses.py``, ``more_losses.py``): Keras's rank
fix-up, its logits of softmax and sigmoid outputs, its shape check, and the elementwise
binary crossentropy.

>>> from tapegrad.keras import _tf as tf
>>> a, b = squeeze_or_expand_to_same_rank(tf.ones([3, 1]), tf.ones([3]))
>>> tuple(a.shape), tuple(b.shape)
((3, 1), (3, 1))
"""
import warnings

from tapegrad.keras import _tf as tf
from tapegrad.keras import backend


def squeeze_or_expand_to_same_rank(x1, x2, expand_rank_1=True):
    """Keras's rank fix-up: a trailing axis of size 1 is dropped (or added to a vector)."""
    r1, r2 = x1.ndim, x2.ndim
    if r1 == r2 + 1 and x1.shape[-1] == 1:
        if r2 == 1 and expand_rank_1:
            x2 = tf.expand_dims(x2, -1)
        else:
            x1 = tf.squeeze(x1, -1)
    if r2 == r1 + 1 and x2.shape[-1] == 1:
        if r1 == 1 and expand_rank_1:
            x1 = tf.expand_dims(x1, -1)
        else:
            x2 = tf.squeeze(x2, -1)
    return x1, x2


def _get_logits(output, from_logits, op, fn_name):
    """Keras's TensorFlow backend: the output of a Keras softmax or sigmoid is replaced by
    the logits it was computed from (the stable form of the crossentropy)."""
    from tapegrad.keras.activations import logits_of
    logits = logits_of(output)
    if logits is None:
        return output, from_logits
    if from_logits:
        warnings.warn(f'"`{fn_name}` received `from_logits=True`, but the `output` argument '
                      f"was produced by a {op} activation and thus does not represent "
                      "logits. Was this intended?", stacklevel=3)
    return logits, True


def _same_shape(target, output):
    if tuple(target.shape) != tuple(output.shape):
        raise ValueError("Arguments `target` and `output` must have the same shape. "
                         f"Received: target.shape={tuple(target.shape)}, "
                         f"output.shape={tuple(output.shape)}")


def binary_crossentropy_terms(y_true, y_pred, from_logits):
    """The elementwise binary crossentropy: the stable form of logits, or of probabilities
    clipped to [epsilon, 1 - epsilon] as Keras does."""
    if from_logits:
        return tf.nn.sigmoid_cross_entropy_with_logits(labels=y_true, logits=y_pred)
    eps = backend.epsilon()
    out = tf.clip_by_value(y_pred, eps, 1.0 - eps)
    return -(y_true * tf.math.log(out) + (1 - y_true) * tf.math.log(1 - out))
