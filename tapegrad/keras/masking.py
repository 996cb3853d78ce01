"""Keras masks: a boolean tensor attached to a layer's output (``Embedding(mask_zero=True)``,
``Masking``) saying which timesteps are real. Layers that support masking pass it on (or
compute a new one with ``compute_mask``), layers whose ``call`` takes ``mask=`` receive it,
and losses and metrics weigh the masked entries out, as in Keras 3.

tapegrad's tensors have no room for Keras's ``_keras_mask`` attribute, so masks live in a
table by tensor id, each entry dropped when its tensor is.

>>> import numpy as np
>>> from tapegrad import keras
>>> emb = keras.layers.Embedding(5, 2, mask_zero=True)
>>> out = emb(np.array([[3, 1, 0, 0]]))
>>> get_keras_mask(out).numpy().tolist()
[[True, True, False, False]]
"""
import weakref

from tapegrad.keras import _tf as tf

_TABLE = {}  # id(tensor) -> (weakref to the tensor, mask)


def get_keras_mask(x):
    """The mask attached to tensor ``x``, or None."""
    if not _TABLE:
        return None
    entry = _TABLE.get(id(x))
    return entry[1] if entry is not None and entry[0]() is x else None


def set_keras_mask(x, mask):
    """Attach ``mask`` to tensor ``x`` (None removes it)."""
    key = id(x)
    if mask is None:
        _TABLE.pop(key, None)
        return
    try:
        ref = weakref.ref(x, lambda _, key=key: _TABLE.pop(key, None))
    except TypeError:  # not a tensor (a Python number): nothing to attach to
        return
    _TABLE[key] = (ref, mask)


def active():
    """Whether any tensor has a mask now (else layers skip the masking work)."""
    return bool(_TABLE)


def previous_mask(args, kwargs):
    """The mask a call receives: its ``mask=`` argument, else the masks of the first
    argument (a structure of masks for a list of tensors; None when there are none)."""
    given = kwargs.get("mask")
    if given is not None:
        return given
    if not args or not _TABLE:
        return None
    first = args[0]
    if isinstance(first, (list, tuple)):
        masks = [get_keras_mask(t) for t in first]
        return masks if any(m is not None for m in masks) else None
    return get_keras_mask(first)


def attach_output_masks(layer, inputs, outputs, mask):
    """After a call: the outputs' masks from ``layer.compute_mask`` (unless the call set
    them already), as Keras's ``_set_mask_metadata``."""
    flat = tf.nest.flatten(outputs)
    if all(get_keras_mask(t) is not None for t in flat):
        return
    masks = layer.compute_mask(inputs, mask)
    if masks is None:
        return
    for t, m in zip(flat, tf.nest.flatten(masks) if isinstance(masks, (list, tuple))
                    else [masks] * len(flat)):
        if get_keras_mask(t) is None and m is not None:
            set_keras_mask(t, m)


def apply_mask(sample_weight, mask, dtype, reduction):
    """Keras's merge of a mask into sample weights: masked entries weigh 0; for a mean
    (``sum_over_batch_size``) the others weigh total / valid, so the mean is over the
    valid entries."""
    if mask is None:
        return sample_weight
    from tapegrad.keras.losses import squeeze_or_expand_to_same_rank
    if reduction in ("mean", "sum_over_batch_size"):
        total = tf.cast(tf.size(mask), dtype)
        valid = tf.reduce_sum(tf.cast(mask, dtype))
        weight = tf.math.divide_no_nan(total, valid)
        float_mask = tf.where(tf.cast(mask, "bool"), weight, tf.zeros_like(weight))
    else:
        float_mask = tf.cast(mask, dtype)
    if sample_weight is None:
        return float_mask
    sample_weight = tf.cast(tf.convert_to_tensor(sample_weight), dtype)
    float_mask, sample_weight = squeeze_or_expand_to_same_rank(float_mask, sample_weight)
    return sample_weight * float_mask
