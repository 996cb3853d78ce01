"""``Attention`` (Luong-style dot-product scores) and ``AdditiveAttention`` (Bahdanau-style),
Keras 3's layers: called on ``[query, value]`` or ``[query, value, key]`` (key defaults to
value), with optional ``mask=[query_mask, value_mask]``, ``use_causal_mask`` and
``return_attention_scores``.

>>> import numpy as np
>>> from tapegrad import keras
>>> q, v = np.ones((2, 3, 4), "float32"), np.ones((2, 5, 4), "float32")
>>> keras.layers.Attention()([q, v]).shape
TensorShape([2, 3, 4])
"""
import numpy as np

from tapegrad.keras import _tf as tf
from tapegrad.keras import random as krandom
from tapegrad.keras.layers.base import Layer


class Attention(Layer):
    """softmax(scores) @ value, scores = query @ key^T (``score_mode="dot"``, times a learned
    scalar with ``use_scale``) or ``sum(tanh(query + key))`` times a learned scalar
    (``"concat"``); masked value positions get ``scores - 1e9`` before the softmax, masked
    query positions a zero output. ``dropout`` applies to the attention weights while
    training."""

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        if score_mode not in ("dot", "concat"):
            raise ValueError("Invalid value for argument score_mode. Expected one of "
                             f"{{'dot', 'concat'}}. Received: score_mode={score_mode}")
        self.use_scale, self.score_mode, self.dropout, self.seed = (use_scale, score_mode,
                                                                    dropout, seed)
        # a generator of its own, as the noise layers: an int seed passed straight to
        # keras.random would draw the same dropout mask on every call
        self.seed_generator = krandom.SeedGenerator(seed) if seed is not None else None
        self.supports_masking = True

    def _validate(self, inputs, mask=None):
        name = type(self).__name__
        if not isinstance(inputs, list):
            raise ValueError(f"{name} layer must be called on a list of inputs, namely "
                             f"[query, value] or [query, value, key]. Received: "
                             f"inputs={inputs}.")
        if not 2 <= len(inputs) <= 3:
            raise ValueError(f"{name} layer accepts inputs list of length 2 or 3, namely "
                             "[query, value] or [query, value, key]. Received length: "
                             f"{len(inputs)}.")
        if mask is not None:
            if not isinstance(mask, list):
                raise ValueError(f"{name} layer mask must be a list, namely [query_mask, "
                                 f"value_mask]. Received: mask={mask}.")
            if not 2 <= len(mask) <= 3:
                raise ValueError(f"{name} layer accepts mask list of length 2 or 3. "
                                 f"Received: inputs={inputs}, mask={mask}.")

    def build(self, input_shape):
        self._validate(list(input_shape))
        self.scale = self.concat_score_weight = None
        if self.use_scale:
            self.scale = self.add_weight(name="scale", shape=(), initializer="ones")
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight(name="concat_score_weight", shape=(),
                                                       initializer="ones")

    def _scores(self, query, key):
        if self.score_mode == "dot":
            scores = tf.matmul(query, key, transpose_b=True)
            return scores if self.scale is None else scores * self.scale
        q, k = tf.expand_dims(query, -2), tf.expand_dims(key, -3)
        inner = q + k if self.scale is None else self.scale * (q + k)
        return self.concat_score_weight * tf.reduce_sum(tf.tanh(inner), axis=-1)

    def call(self, inputs, mask=None, training=False, return_attention_scores=False,
             use_causal_mask=False):
        self._validate(inputs, mask)
        q, v = inputs[0], inputs[1]
        k = inputs[2] if len(inputs) > 2 else v
        q_mask = mask[0] if mask else None
        v_mask = mask[1] if mask else None
        scores = self._scores(q, k)
        keep = None if v_mask is None else tf.expand_dims(tf.cast(v_mask, "bool"), -2)
        if use_causal_mask:
            tq, tv = scores.shape[-2], scores.shape[-1]
            causal = tf.constant(np.tri(tq, tv, dtype=bool)[None])  # j <= i
            keep = causal if keep is None else tf.logical_and(keep, causal)
        if keep is not None:
            big = 65504.0 if scores.dtype.name == "float16" else 1.0e9
            scores = tf.where(tf.logical_not(keep), scores - big, scores)
        weights = tf.nn.softmax(scores, axis=-1)
        if training and self.dropout > 0:
            weights = krandom.dropout(weights, self.dropout, seed=self.seed_generator)
        out = tf.matmul(weights, v)
        if q_mask is not None:
            out = tf.where(tf.expand_dims(tf.cast(q_mask, "bool"), -1), out,
                           tf.zeros_like(out))
        return (out, weights) if return_attention_scores else out

    def compute_mask(self, inputs, mask=None):
        if mask is None or mask[0] is None:
            return None
        return tf.convert_to_tensor(mask[0])

    def compute_output_shape(self, input_shape):
        return (*input_shape[0][:-1], input_shape[1][-1])


class AdditiveAttention(Attention):
    """Attention with scores ``sum(scale * tanh(query + key), -1)``: ``scale`` a learned
    vector over the feature axis (``use_scale=True``, the default) or 1."""
    _config_omits = ("score_mode",)  # Keras's config drops it

    def __init__(self, use_scale=True, dropout=0.0, **kwargs):
        super().__init__(use_scale=use_scale, dropout=dropout, **kwargs)

    def build(self, input_shape):
        self._validate(list(input_shape))
        self.scale = None
        if self.use_scale:
            self.scale = self.add_weight(name="scale", shape=(input_shape[0][-1],),
                                         initializer="glorot_uniform")

    def _scores(self, query, key):
        q, k = tf.expand_dims(query, -2), tf.expand_dims(key, -3)
        t = tf.tanh(q + k)
        return tf.reduce_sum(t if self.scale is None else self.scale * t, axis=-1)
