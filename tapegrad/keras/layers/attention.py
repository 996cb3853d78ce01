"""``EinsumDense`` and ``MultiHeadAttention``, the Transformer block's layers, with Keras 3's
weights (``query``, ``key``, ``value`` and ``attention_output`` sublayers, kernels of shape
``(dim, heads, key_dim)`` and ``(heads, value_dim, dim)``), masks and defaults.

>>> import numpy as np
>>> from tapegrad import keras
>>> mha = keras.layers.MultiHeadAttention(num_heads=2, key_dim=3)
>>> out, scores = mha(np.ones((1, 4, 5)), np.ones((1, 6, 7)), return_attention_scores=True)
>>> out.shape, scores.shape
(TensorShape([1, 4, 5]), TensorShape([1, 2, 4, 6]))
"""
import math

from tapegrad.keras import _tf as tf
from tapegrad.keras import activations, initializers, masking
from tapegrad.keras.layers.activation import Softmax
from tapegrad.keras.layers.base import Layer
from tapegrad.keras.layers.core import Dropout


class EinsumDense(Layer):
    """``activation(einsum(equation, inputs, kernel) + bias)``: the equation names the
    input's, the kernel's and the output's axes (``"abc,cde->abde"``); ``output_shape``
    gives the output's sizes after the batch axis (None: the input's size)."""
    _config_omits = ("lora_rank",)
    _config_extra = {"quantization_config": None}

    def __init__(self, equation, output_shape, activation=None, bias_axes=None,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, lora_rank=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.equation = equation
        self.partial_output_shape = (output_shape,) if isinstance(output_shape, int) else \
            tuple(output_shape)
        self.bias_axes = bias_axes
        self.activation = activations.get(activation)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint

    def build(self, input_shape):
        inputs, rest = self.equation.split(",")
        kernel_spec, out_spec = rest.split("->")
        if "." in self.equation:
            raise NotImplementedError("EinsumDense: tapegrad.keras takes equations without "
                                      "an ellipsis.")
        if len(inputs) != len(input_shape):
            raise ValueError(f"EinsumDense: the equation {self.equation!r} names "
                             f"{len(inputs)} input axes; the input has shape {input_shape}.")
        given = self.partial_output_shape
        if len(given) != len(out_spec) - 1:
            raise ValueError(f"EinsumDense: output_shape {given} must give the "
                             f"{len(out_spec) - 1} output sizes after the batch axis of "
                             f"{self.equation!r}.")
        sizes = dict(zip(inputs, input_shape))
        for c, s in zip(out_spec[1:], given):
            if s is not None:
                sizes[c] = s
        self.full_output_shape = tuple(sizes.get(c) for c in out_spec)
        self.kernel = self.add_weight(name="kernel", shape=tuple(sizes[c] for c in kernel_spec),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = None
        if self.bias_axes:
            first = min(out_spec.find(c) for c in self.bias_axes)
            shape = tuple(sizes[c] if c in self.bias_axes else 1 for c in out_spec[first:])
            while shape and shape[0] == 1:  # Keras keeps no leading broadcast axes
                shape = shape[1:]
            self.bias = self.add_weight(name="bias", shape=shape,
                                        initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)

    def call(self, inputs, training=None):
        x = tf.einsum(self.equation, self._floating(inputs), self.kernel)
        if self.bias is not None:
            x = x + self.bias
        return self.activation(x)

    def get_config(self):
        return {**super().get_config(), "output_shape": self.partial_output_shape,
                "activation": activations.serialize(self.activation)}


class MultiHeadAttention(Layer):
    """Scaled dot-product attention of ``query`` over ``value`` (``key`` defaults to
    ``value``) in ``num_heads`` heads, as Keras 3 computes it: the query scaled by
    ``1 / sqrt(key_dim)``, a masked softmax over the keys (``attention_mask``, True where a
    query may attend; ``use_causal_mask``), dropout on the scores while training, and the
    heads' outputs projected back to the query's last size (or ``output_shape``)."""
    _config_extra = {"sliding_window": None, "use_gate": False}

    def get_config(self):
        return {**super().get_config(), "value_dim": self.value_dim}  # key_dim's if None

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True,
                 output_shape=None, attention_axes=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 seed=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.num_heads, self.key_dim = num_heads, key_dim
        self.value_dim = value_dim if value_dim is not None else key_dim
        self.dropout, self.use_bias, self.seed = dropout, use_bias, seed
        self._output_shape = output_shape
        if attention_axes not in (None, 1, (1,), [1]):
            raise NotImplementedError("MultiHeadAttention: tapegrad.keras attends over the "
                                      "sequence axis (attention_axes=None) only.")
        self.attention_axes = attention_axes
        self._sub = dict(kernel_initializer=kernel_initializer,
                         bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer,
                         bias_regularizer=bias_regularizer,
                         kernel_constraint=kernel_constraint, bias_constraint=bias_constraint)
        self._softmax = Softmax(axis=-1)
        self._dropout_layer = Dropout(rate=dropout, seed=seed)
        self.supports_masking = True

    def _dense(self, equation, output_shape, bias_axes, name):
        layer = EinsumDense(equation, output_shape=output_shape, name=name,
                            bias_axes=bias_axes if self.use_bias else None, **self._sub)
        # the attention layer handles its inputs' masks: no "destroys the mask" warning
        object.__setattr__(layer, "_masks_inside", True)
        return layer

    def _build_heads(self, query_shape, value_shape, key_shape):
        h = self.num_heads
        self._query_dense = self._dense("abc,cde->abde", (None, h, self.key_dim), "de",
                                        "query")
        self._query_dense.build(query_shape)
        self._key_dense = self._dense("abc,cde->abde", (None, h, self.key_dim), "de", "key")
        self._key_dense.build(key_shape)
        self._value_dense = self._dense("abc,cde->abde", (None, h, self.value_dim), "de",
                                        "value")
        self._value_dense.build(value_shape)
        out = self._output_shape
        out = (query_shape[-1],) if out is None else ((out,) if isinstance(out, int) else
                                                      tuple(out))
        self._output_dense = self._dense("abcd,cde->abe", (None,) + out, "e",
                                         "attention_output")
        self._output_dense.build(tuple(query_shape[:-1]) + (h, self.value_dim))

    def call(self, query, value, key=None, query_mask=None, value_mask=None, key_mask=None,
             attention_mask=None, return_attention_scores=False, training=None,
             use_causal_mask=False):
        key = value if key is None else key
        # the padding masks of Embedding(mask_zero=True) inputs, as Keras reads them
        query_mask = masking.get_keras_mask(query) if query_mask is None else query_mask
        value_mask = masking.get_keras_mask(value) if value_mask is None else value_mask
        if key_mask is None and key is not value:
            key_mask = masking.get_keras_mask(key)
        query, value, key = (self._floating(t) for t in (query, value, key))
        for name, t in (("query", query), ("value", value), ("key", key)):
            if t.ndim != 3:
                raise NotImplementedError(f"MultiHeadAttention: tapegrad.keras takes "
                                          f"(batch, sequence, features) inputs; the {name} "
                                          f"has shape {tuple(t.shape)}.")
        if "_query_dense" not in self.__dict__:
            self._build_heads(tuple(query.shape), tuple(value.shape), tuple(key.shape))
        mask = self._attention_mask(query, value, query_mask, value_mask, key_mask,
                                    attention_mask, use_causal_mask)
        q = self._query_dense(query)
        k, v = self._key_dense(key), self._value_dense(value)
        if mask is not None:
            mask = tf.expand_dims(mask, -3) if mask.ndim == 3 else mask
        scale = 1.0 / math.sqrt(float(self.key_dim))
        if not (self.dropout > 0 or return_attention_scores):
            # Keras's dot_product_attention path: the logits scaled after the product, a
            # masked logit set to -0.7 * the dtype's largest (so a fully masked query
            # attends to every key alike, where the scores' path gives zeros)
            logits = tf.einsum("BTNH,BSNH->BNTS", q, k) * tf.cast(scale, q.dtype)
            if mask is not None:
                big = -0.7 * (65500.0 if q.dtype.name == "float16" else 3.38953e38)
                logits = tf.where(mask, logits, tf.cast(big, q.dtype))
            probs = tf.nn.softmax(logits, axis=-1)
            return self._output_dense(tf.einsum("BNTS,BSNH->BTNH", probs, v))
        scores = tf.einsum("aecd,abcd->acbe", k, q * tf.cast(scale, q.dtype))
        scores = self._softmax(scores, mask=mask)  # (batch, heads, queries, keys)
        dropped = self._dropout_layer(scores, training=training) if self.dropout else scores
        out = self._output_dense(tf.einsum("acbe,aecd->abcd", dropped, v))
        return (out, scores) if return_attention_scores else out

    @staticmethod
    def _attention_mask(query, value, query_mask, value_mask, key_mask, attention_mask,
                        use_causal_mask):
        """Keras's combination: the query mask by row, the value and key masks by column,
        the causal mask, and ``attention_mask``, joined with ``and``."""
        mask = None

        def join(m):
            m = tf.cast(m, "bool")
            return m if mask is None else tf.logical_and(mask, m)
        if query_mask is not None:
            mask = join(tf.expand_dims(query_mask, -1))
        for m in (value_mask, key_mask):
            if m is not None:
                mask = join(tf.expand_dims(m, -2))
        if use_causal_mask:
            n_q, n_v = query.shape[1], value.shape[1]
            rows = tf.range(n_q)[:, None]
            cols = tf.range(n_v)[None, :]
            mask = join(tf.expand_dims(rows >= cols, 0))
        if attention_mask is not None:
            mask = join(attention_mask)
        return mask

    def compute_output_shape(self, query_shape, value_shape=None, key_shape=None):
        out = self._output_shape
        if out is None:
            return tuple(query_shape)
        return tuple(query_shape[:-1]) + ((out,) if isinstance(out, int) else tuple(out))
