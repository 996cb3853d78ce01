"""``tf.nn.weighted_cross_entropy_with_logits`` and ``tf.nn.log_poisson_loss``, in the
numerically stable forms TensorFlow documents, composed of differentiable ops, and
``tf.nn.compute_average_loss``, the per-example losses of a custom loop averaged."""
import math

import numpy as np

from tapegrad.ops import array_ops
from tapegrad.ops import math_ops
from tapegrad.ops._convert import tensor
from tapegrad.ops.nn_ops import relu

__all__ = ["weighted_cross_entropy_with_logits", "log_poisson_loss", "compute_average_loss"]


def _same_shape(a, b, names):
    if tuple(a.shape) != tuple(b.shape):
        raise ValueError(f"`{names[0]}` and `{names[1]}` must have the same shape, received "
                         f"({tuple(a.shape)} vs {tuple(b.shape)}).")


def weighted_cross_entropy_with_logits(labels, logits, pos_weight, name=None):
    """Sigmoid cross-entropy whose positive term is weighted by ``pos_weight``:
    ``labels * -log(sigmoid(logits)) * pos_weight + (1 - labels) * -log(1 - sigmoid(logits))``,
    computed without overflow for large ``|logits|``.

    >>> import tapegrad as tf
    >>> loss = tf.nn.weighted_cross_entropy_with_logits([1.0], [0.0], pos_weight=2.0)
    >>> round(float(loss[0]), 4)
    1.3863
    """
    logits = tensor(logits)
    labels = tensor(labels, logits.dtype)
    _same_shape(logits, labels, ("logits", "labels"))
    log_weight = math_ops.add(math_ops.multiply(math_ops.subtract(tensor(pos_weight, logits.dtype), 1), labels), 1)
    softplus_neg = math_ops.add(math_ops.log1p(math_ops.exp(math_ops.negative(math_ops.abs(logits)))), relu(math_ops.negative(logits)))
    return math_ops.add(math_ops.multiply(math_ops.subtract(1, labels), logits), math_ops.multiply(log_weight, softplus_neg))


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """The negative log-likelihood of ``targets`` under a Poisson distribution of log-rate
    ``log_input``: ``exp(log_input) - log_input * targets``, plus Stirling's approximation
    of ``log(targets!)`` where ``targets > 1`` when ``compute_full_loss``.

    >>> import tapegrad as tf
    >>> round(float(tf.nn.log_poisson_loss([1.0], [1.0])[0]), 4)
    1.7183
    """
    log_input = tensor(log_input)
    targets = tensor(targets, log_input.dtype)
    _same_shape(log_input, targets, ("log_input", "targets"))
    result = math_ops.subtract(math_ops.exp(log_input), math_ops.multiply(log_input, targets))
    if compute_full_loss:
        # Stirling's term is computed on safe targets (1 where targets <= 1), then masked
        above = math_ops.greater(targets, 1)
        safe = math_ops.where(above, targets, array_ops.ones_like(targets))
        stirling = math_ops.add(math_ops.subtract(math_ops.multiply(safe, math_ops.log(safe)), safe),
                         math_ops.multiply(0.5, math_ops.log(math_ops.multiply(2 * math.pi, safe))))
        result = math_ops.add(result, math_ops.where(above, stirling, array_ops.zeros_like(targets)))
    return result


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """The sum of the (weighted) per-example losses over the global batch size: the loss
    of a custom training loop, averaged as in a distribution strategy of one replica
    (``global_batch_size`` defaults to the first dimension)."""
    losses = tensor(per_example_loss)
    if losses.ndim == 0:
        raise ValueError("Invalid value passed for `per_example_loss`. Expected a tensor "
                         f"with at least rank 1. Received per_example_loss={losses!r} with "
                         "rank 0")
    if sample_weight is not None:
        weight = tensor(sample_weight, losses.dtype)
        if 0 < weight.ndim == losses.ndim - 1:  # one weight per example of a row of losses
            weight = array_ops.expand_dims(weight, -1)
        losses = losses * weight
    if global_batch_size is None:
        global_batch_size = losses.shape[0]
    elif np.dtype(getattr(global_batch_size, "dtype", type(global_batch_size))).kind not in "iu":
        raise TypeError(f"`global_batch_size` must be an integer, got {global_batch_size!r}")
    total = math_ops.reduce_sum(losses)
    if np.dtype(losses.dtype).kind != "f":  # TensorFlow divides integers into float64
        return tensor(total, "float64") / tensor(global_batch_size, "float64")
    return math_ops.divide_no_nan(total, tensor(global_batch_size, losses.dtype))
