"""``tf.clip_by_global_norm`` and ``tf.linalg.global_norm``, with TensorFlow's arithmetic:
the norm is the square root of twice the summed ``l2_loss`` of the tensors, and the scale
``clip_norm * min(1 / norm, 1 / clip_norm)`` is NaN for an infinite or NaN norm."""
from tapegrad.core.tensor import Tensor
from tapegrad.ops import array_ops, math_ops, nn_ops
from tapegrad.ops._convert import tensor


def _sequence(t_list):
    if isinstance(t_list, Tensor) or not isinstance(t_list, (list, tuple)):
        raise TypeError(f"`t_list` should be a sequence of tensors. Received {type(t_list)}.")
    return list(t_list)


def global_norm(t_list, name=None):
    """sqrt(sum of the squared entries of every tensor); None entries are ignored.

    >>> import tapegrad as tf
    >>> float(tf.linalg.global_norm([tf.constant([3.0]), tf.constant([[4.0]])]))
    5.0
    """
    values = [tensor(t) for t in _sequence(t_list) if t is not None]
    if not values:
        return tensor(0.0)
    half = [nn_ops.l2_loss(v) for v in values]
    return math_ops.sqrt(math_ops.reduce_sum(array_ops.stack(half)) * 2)


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """``(clipped, norm)``: every tensor scaled by ``clip_norm / max(norm, clip_norm)``,
    where ``norm`` is their ``global_norm`` (or ``use_norm``); None entries stay None,
    and an infinite or NaN norm makes every entry NaN, as in TensorFlow.

    >>> import tapegrad as tf
    >>> clipped, norm = tf.clip_by_global_norm([tf.constant([3.0]), tf.constant([4.0])], 1.0)
    >>> [round(float(c), 6) for c in clipped], float(norm)
    ([0.6, 0.8], 5.0)
    """
    t_list = _sequence(t_list)
    norm = global_norm(t_list) if use_norm is None else tensor(use_norm)
    c = array_ops.cast(clip_norm, norm.dtype)
    scale = c * math_ops.minimum(1.0 / norm, 1.0 / c)
    scale = scale + (norm - norm)  # NaN where the norm is not finite
    clipped = [None if t is None else tensor(t) * array_ops.cast(scale, tensor(t).dtype)
               for t in t_list]
    return clipped, norm
