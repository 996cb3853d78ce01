"""Keras's ``IntegerLookup``: integer tokens to vocabulary indices (or back, ``invert``),
or to one-hot, multi-hot, count or TF-IDF vectors over the vocabulary.

Index layout as in Keras: the mask token's index 0 (``mask_token`` set, ``output_mode``
"int"), then ``num_oov_indices`` out-of-vocabulary indices (an unknown token ``t`` gets
``floormod(t, num_oov_indices)`` among them), then the vocabulary in order. ``adapt``
orders the tokens it sees by count, ties by the larger token first. ``StringLookup``
(keras/layers/string_lookup.py) is this layer over string tokens: it overrides the hooks
that convert, name and look up tokens (``_tokens``, ``_token``, ``_lookup``).

>>> import numpy as np
>>> from tapegrad import keras
>>> lookup = keras.layers.IntegerLookup(vocabulary=[12, 36, 1138, 42])
>>> lookup(np.array([[12, 1138, 42], [42, 1000, 36]])).numpy()
array([[1, 3, 4],
       [4, 0, 2]])
"""
import collections

import numpy as np

from tapegrad.errors import InvalidArgumentError
from tapegrad.keras import _tf as tf
from tapegrad.keras import backend
from tapegrad.keras.layers.base import Layer
from tapegrad.keras.layers.categorical import encode

MODES = ("int", "one_hot", "multi_hot", "count", "tf_idf")


def _int_array(values, what):
    if hasattr(values, "numpy"):
        values = values.numpy()
    values = np.asarray(values)
    if values.dtype.kind == "f":
        values = values.astype(np.int64)  # truncation, as TensorFlow's cast
    if values.dtype.kind not in "iub":
        raise ValueError(f"IntegerLookup: {what} must hold integers, got dtype "
                         f"{values.dtype}")
    return values.astype(np.int64)


class IntegerLookup(Layer):
    """Integer tokens to indices in a vocabulary (given, or learned by ``adapt``)."""

    _kind = "IntegerLookup"  # the layer's name in Keras's messages

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=-1,
                 vocabulary=None, vocabulary_dtype="int64", idf_weights=None, invert=False,
                 output_mode="int", sparse=False, pad_to_max_tokens=False,
                 oov_method="floormod", salt=None, name=None, **kwargs):
        frozen = kwargs.pop("vocabulary_size", None)
        kwargs.pop("has_input_vocabulary", None)
        super().__init__(name=name, **kwargs)
        kind = self._kind
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError(f"If `max_tokens` is set for `{kind}`, it must be "
                             f"greater than 1. Received: max_tokens={max_tokens}")
        if num_oov_indices < 0:
            raise ValueError(f"The value of `num_oov_indices` argument for `{kind}` "
                             f"must >= 0. Received: num_oov_indices={num_oov_indices}")
        if vocabulary_dtype != "int64":
            raise ValueError("Only `vocabulary_dtype='int64'` is supported at this time. "
                             f"Received: vocabulary_dtype={vocabulary_dtype}")
        if pad_to_max_tokens and max_tokens is None:
            raise ValueError("If pad_to_max_tokens is True, must set `max_tokens`. "
                             f"Received: max_tokens={max_tokens}")
        if oov_method not in ("floormod", "farmhash"):
            raise ValueError("Unknown value for `oov_method` argument of IntegerLookup. "
                             "Allowed values are: ('floormod', 'farmhash'). Received: "
                             f"oov_method={oov_method}")
        if oov_method == "farmhash" or salt is not None:
            raise NotImplementedError("IntegerLookup(oov_method='farmhash', salt=...) is not "
                                      "implemented in tapegrad (FarmHash of the tokens' "
                                      "strings); use oov_method='floormod'.")
        output_mode = {"binary": "multi_hot", "tf-idf": "tf_idf"}.get(output_mode, output_mode)
        if output_mode not in MODES:
            raise ValueError(f"Unknown value for `output_mode` argument of {kind}. "
                             f"Allowed values are: {MODES}. Received: output_mode="
                             f"{output_mode}")
        if invert and output_mode != "int":
            raise ValueError("`output_mode` must be `'int'` when `invert` is true. "
                             f"Received: output_mode={output_mode}")
        if sparse:
            if output_mode == "int":
                raise ValueError("`sparse` may only be true if `output_mode` is "
                                 "`'one_hot'`, `'multi_hot'`, `'count'` or `'tf_idf'`. "
                                 f"Received: sparse={sparse} and output_mode={output_mode}")
            raise NotImplementedError(f"{kind}(sparse=True) is not implemented in "
                                      "tapegrad (no sparse tensors).")
        if idf_weights is not None and output_mode != "tf_idf":
            raise ValueError("`idf_weights` should only be set if `output_mode` is "
                             f"`'tf_idf'`. Received: idf_weights={idf_weights} and "
                             f"output_mode={output_mode}")
        self.invert, self.max_tokens, self.num_oov_indices = invert, max_tokens, num_oov_indices
        self.mask_token, self.oov_token, self.output_mode = mask_token, oov_token, output_mode
        self.sparse, self.pad_to_max_tokens = sparse, pad_to_max_tokens
        self.vocabulary_dtype, self.oov_method, self.salt = vocabulary_dtype, oov_method, salt
        self.input_vocabulary = vocabulary if vocabulary is None or isinstance(
            vocabulary, str) else [self._token(v) for v in
                                   self._tokens(vocabulary, "vocabulary").reshape(-1)]
        self.input_idf_weights = idf_weights
        self._has_input_vocabulary = vocabulary is not None
        self._vocab, self._idf, self._counts = self._tokens([], "vocabulary"), None, None
        self._frozen_vocab_size = frozen
        if output_mode == "tf_idf" and vocabulary is not None and idf_weights is None:
            raise ValueError("When specifying the `vocabulary` argument, in TF-IDF output "
                             "mode, the `idf_weights` argument must also be provided.")
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)

    # ---- the token hooks (StringLookup overrides them) ------------------------------------
    def _tokens(self, values, what):
        """``values`` as a flat-able NumPy array of tokens (int64 here)."""
        return _int_array(values, what)

    def _token(self, t):
        """A token as ``get_vocabulary`` and ``get_config`` show it."""
        return int(t)

    def _key(self, token):
        """A special token (mask, OOV) as an element of the token array."""
        return token

    def _read_file(self, path):
        raise NotImplementedError(f"{self._kind}: a vocabulary file is not supported in "
                                  "tapegrad; pass the tokens as a list or array.")

    # ---- the index layout ------------------------------------------------------------------
    def _oov_start_index(self):
        return 1 if self.mask_token is not None and self.output_mode == "int" else 0

    def _token_start_index(self):
        return self._oov_start_index() + self.num_oov_indices

    def vocabulary_size(self):
        """The vocabulary's size, mask and OOV indices included."""
        return len(self._vocab) + self._token_start_index()

    def get_vocabulary(self, include_special_tokens=True):
        """The tokens in index order (the mask and OOV tokens first, unless
        ``include_special_tokens=False``)."""
        vocab = ([self.oov_token] * self._token_start_index()
                 + [self._token(t) for t in self._vocab])
        if self.mask_token is not None and self.output_mode == "int":
            vocab[0] = self.mask_token
        return vocab if include_special_tokens else vocab[self._token_start_index():]

    def set_vocabulary(self, vocabulary, idf_weights=None):
        """Replace the vocabulary (and, for ``"tf_idf"``, the IDF weights)."""
        if self.output_mode == "tf_idf":
            if idf_weights is None:
                raise ValueError("`idf_weights` must be set if output_mode is 'tf_idf'.")
        elif idf_weights is not None:
            raise ValueError("`idf_weights` should only be set if output_mode is "
                             f"`'tf_idf'`. Received: output_mode={self.output_mode} and "
                             f"idf_weights={idf_weights}")
        if isinstance(vocabulary, str):
            vocabulary = self._read_file(vocabulary)
        vocabulary = self._tokens(vocabulary, "vocabulary").reshape(-1)
        if vocabulary.size == 0:
            raise ValueError(f"Cannot set an empty vocabulary. Received: "
                             f"vocabulary={vocabulary}")
        start = self._token_start_index()
        special = [self.mask_token] * self._oov_start_index() + \
            [self.oov_token] * self.num_oov_indices
        found_special = list(vocabulary[:start]) == [self._key(t) for t in special]
        tokens = vocabulary[start:] if found_special else vocabulary
        repeated = [self._token(t) for t, c in collections.Counter(tokens.tolist()).items()
                    if c > 1]
        if repeated:
            raise ValueError("The passed vocabulary has at least one repeated term. Please "
                             "uniquify your dataset. The repeated terms are: "
                             f"{repeated}")
        for token, what in ((self.mask_token, "mask_token"),
                            (self.oov_token if self.invert else None, "oov_token")):
            if token is not None and self._key(token) in tokens.tolist():
                raise ValueError(
                    f"Found reserved {'mask' if what == 'mask_token' else 'OOV'} token at "
                    "unexpected location in `vocabulary`. Note that passed `vocabulary` "
                    "does not need to include the OOV and mask tokens. Either remove all "
                    "mask and OOV tokens, or include them only at the start of the "
                    f"vocabulary in precisely this order: {special}. Received: "
                    f"{what}={token} at vocabulary index "
                    f"{np.argwhere(vocabulary == self._key(token))[-1]}")
        if self.max_tokens is not None and start + len(tokens) > self.max_tokens:
            raise ValueError("Attempted to set a vocabulary larger than the maximum vocab "
                             f"size. Received vocabulary size is {start + len(tokens)}; "
                             f"`max_tokens` is {self.max_tokens}.")
        self._vocab = self._tokens(tokens, "vocabulary")
        if self.output_mode == "tf_idf":
            self._idf = self._pad_idf(np.asarray(idf_weights, np.float64), found_special,
                                      len(vocabulary))
        self._record_vocabulary_size()

    def _pad_idf(self, idf, found_special, n_vocab):
        if len(idf) != n_vocab:
            raise ValueError("`idf_weights` must be the same length as vocabulary. "
                             f"len(idf_weights) is {len(idf)}; len(vocabulary) is "
                             f"{n_vocab}")
        front = 0 if found_special else self._token_start_index()
        back = (self.max_tokens - front - len(idf)
                if self.pad_to_max_tokens and self.max_tokens is not None else 0)
        out = np.pad(idf, (front, back), constant_values=(np.mean(idf) if front else 0, 0))
        return out.astype(backend.floatx())

    def _record_vocabulary_size(self):
        if self.output_mode == "int" or self.pad_to_max_tokens:
            self._frozen_vocab_size = self.vocabulary_size()
            return
        size = self.vocabulary_size()
        if self._frozen_vocab_size is not None and self.built and \
                size != self._frozen_vocab_size:
            raise RuntimeError(f"When using `output_mode={self.output_mode}` and "
                               "`pad_to_max_tokens=False`, the vocabulary size cannot be "
                               "changed after the layer is called. Old vocab size is "
                               f"{self._frozen_vocab_size}, new vocab size is {size}")
        self._frozen_vocab_size = size

    # ---- adapt -----------------------------------------------------------------------------
    def adapt(self, data, steps=None):
        """Learn the vocabulary from ``data`` (an array, a list, or batches of them):
        tokens by count, ties by the larger token first, at most ``max_tokens``."""
        if self._has_input_vocabulary:
            raise ValueError(f"Cannot adapt layer '{self.name}' after setting a static "
                             "vocabulary via `vocabulary` argument or `set_vocabulary()` "
                             "method.")
        if isinstance(data, (list, tuple, np.ndarray)) or hasattr(data, "numpy"):
            batches = [data]
        else:
            batches = (b for i, b in enumerate(data) if steps is None or i < steps)
        self._learn(row.tolist() for batch in batches
                    for row in _rows(self._tokens(batch, "adapt's data")))

    def _learn(self, documents):
        """The vocabulary (and IDF weights) from ``documents``, lists of tokens: tokens by
        count, ties by the larger token first (TextVectorization's adapt calls it too)."""
        counts, docs, n_docs = collections.Counter(), collections.Counter(), 0
        for doc in documents:
            counts.update(doc)
            docs.update(set(doc))
            n_docs += 1
        for special in (self.mask_token, self.oov_token):
            counts.pop(self._key(special), None)
        if not counts:
            self._record_vocabulary_size()
            return
        tokens = self._tokens(list(counts), "adapt's data")
        order = np.lexsort((tokens, np.array([counts[t] for t in tokens.tolist()])))[::-1]
        if self.max_tokens:
            order = order[:self.max_tokens - self._token_start_index()]
        self._vocab = tokens[order]
        if self.output_mode == "tf_idf":
            df = np.array([docs[t] for t in self._vocab.tolist()], np.float64)
            idf = np.log(1 + n_docs / (1 + df))
            self._idf = self._pad_idf(np.concatenate([np.full(self._token_start_index(),
                                                              np.mean(idf)), idf]),
                                      True, self._token_start_index() + len(idf))
        self._record_vocabulary_size()

    # ---- the lookup ------------------------------------------------------------------------
    def _lookup(self, x):
        """Indices of the int64 tokens ``x`` (or tokens of indices, ``invert``)."""
        start = self._token_start_index()
        if self.invert:
            keys = np.arange(start, start + len(self._vocab), dtype=np.int64)
            values, default = self._vocab, self.oov_token
        else:
            keys, values = self._vocab, np.arange(start, start + len(self._vocab),
                                                  dtype=np.int64)
            default = self._oov_start_index() if self.num_oov_indices == 1 else -1
        order = np.argsort(keys, kind="stable")
        keys, values = keys[order], values[order]
        if len(keys):
            # the position of x among the sorted keys: how many keys lie at or below it
            pos = tf.reduce_sum(tf.cast(tf.expand_dims(x, -1) >= tf.constant(keys),
                                        tf.int64), axis=-1) - 1
            safe = tf.maximum(pos, 0)
            hit = tf.logical_and(pos >= 0, tf.gather(tf.constant(keys), safe) == x)
            out = tf.where(hit, tf.gather(tf.constant(values), safe),
                           tf.constant(np.int64(default if default is not None else -1)))
        else:
            out = tf.fill(tf.shape(x), np.int64(-1 if default is None else default))
        if self.mask_token is not None:
            mask_key = 0 if self.invert else self.mask_token
            mask_value = self.mask_token if self.invert else (
                0 if self.output_mode == "int" else np.iinfo(np.int64).max)
            out = tf.where(x == np.int64(mask_key), tf.constant(np.int64(mask_value)), out)
        if self.invert:
            return out
        if self.num_oov_indices == 0:
            _check_in_vocabulary(x, out)
        elif self.num_oov_indices > 1:
            oov = tf.math.floormod(x, np.int64(self.num_oov_indices)) + np.int64(
                self._oov_start_index())
            out = tf.where(out == np.int64(-1), oov, out)
        return out

    def call(self, inputs):
        if self.output_mode != "int" and not self.pad_to_max_tokens and \
                self._frozen_vocab_size is None:
            raise RuntimeError(f"When using `output_mode={self.output_mode}` and "
                               "`pad_to_max_tokens=False`, you must set the layer's "
                               "vocabulary before calling it. Either pass a `vocabulary` "
                               "argument to the layer, or call `adapt` with some sample "
                               "data.")
        x = self._inputs(inputs)
        scalar = len(x.shape) == 0
        if scalar:
            x = tf.reshape(x, [1])
        ids = self._lookup(x)
        if self.output_mode == "int":
            return tf.reshape(ids, []) if scalar else ids
        depth = self.max_tokens if self.pad_to_max_tokens else self._frozen_vocab_size
        if self.output_mode == "tf_idf":
            counts = encode(ids, "count", depth, tf.int64)
            return tf.cast(counts, backend.floatx()) * tf.constant(self._idf)
        return encode(ids, self.output_mode, depth, tf.int64)

    def _inputs(self, inputs):
        """The call's inputs as a tensor of the token dtype."""
        return tf.cast(tf.convert_to_tensor(inputs), tf.int64)

    def compute_output_shape(self, input_shape):
        if self.output_mode == "int":
            return tuple(input_shape)
        depth = self.max_tokens if self.pad_to_max_tokens else self._frozen_vocab_size
        shape = tuple(input_shape)
        if self.output_mode == "one_hot":
            if len(shape) > 1 and shape[-1] == 1:
                return shape[:-1] + (depth,)
            return shape + (depth,)
        return shape[:-1] + (depth,)

    def get_config(self):
        idf = self.input_idf_weights
        return {**super().get_config(), "invert": self.invert, "max_tokens": self.max_tokens,
                "num_oov_indices": self.num_oov_indices,
                "oov_token": None if self.oov_token is None else self._token(
                    self._key(self.oov_token)),
                "mask_token": None if self.mask_token is None else self._token(
                    self._key(self.mask_token)),
                "output_mode": self.output_mode, "sparse": self.sparse,
                "pad_to_max_tokens": self.pad_to_max_tokens,
                "vocabulary_dtype": self.vocabulary_dtype,
                "idf_weights": None if idf is None else [float(v) for v in np.ravel(idf)],
                "vocabulary": self.input_vocabulary,
                "vocabulary_size": self._frozen_vocab_size, "oov_method": self.oov_method,
                "salt": self.salt}


def _rows(values):
    """A batch's documents: the rows of a batch of two or more axes, else one."""
    return values.reshape(1, -1) if values.ndim < 2 else values.reshape(values.shape[0], -1)


def _check_in_vocabulary(x, ids):
    """``num_oov_indices=0``: every token must be known (eager: TensorFlow's error)."""
    if getattr(ids, "_symbolic", False):  # inside a trace the tokens are not known
        return
    values = getattr(ids, "_value", None)
    if isinstance(values, np.ndarray) and (values == -1).any():
        found = np.asarray(x._value)[values == -1]
        raise InvalidArgumentError("When `num_oov_indices=0` all inputs should be in "
                                   f"vocabulary, found OOV values {found.tolist()}, "
                                   "consider setting `num_oov_indices=1`.")
