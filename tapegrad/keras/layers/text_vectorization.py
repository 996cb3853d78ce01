"""Keras's ``TextVectorization``: raw strings to token indices (or multi-hot, count or
TF-IDF vectors) through a ``StringLookup`` (keras/layers/string_lookup.py).

Each string is standardized ("lower_and_strip_punctuation": ASCII letters lowered, ASCII
punctuation removed, as Keras), split (at ASCII whitespace, into UTF-8 characters, or not at
all: then the input's last axis holds the tokens) and, with ``ngrams``, extended by its
n-grams joined with a space (all unigrams first, then the bigrams, ...). In "int" mode the
indices are padded with 0 (the mask, ``""``) to the longest row, or cut or padded to
``output_sequence_length``; the other modes count the tokens of each row over the
vocabulary. ``adapt`` orders tokens by count, ties by the larger token first, Keras's order.
The layer computes eagerly on string tensors (they do not trace).

>>> from tapegrad import keras
>>> vectorize = keras.layers.TextVectorization(output_sequence_length=4)
>>> vectorize.adapt(["The cat sat.", "the dog ran", "a cat"])
>>> vectorize.get_vocabulary()
['', '[UNK]', 'the', 'cat', 'sat', 'ran', 'dog', 'a']
>>> vectorize(["the cat ran!", "a bird"]).numpy()
array([[2, 3, 5, 0],
       [7, 1, 0, 0]])
"""
import re
import string

import numpy as np

from tapegrad.errors import FailedPreconditionError
from tapegrad.keras import _tf as tf
from tapegrad.keras import backend
from tapegrad.keras.layers.base import Layer
from tapegrad.keras.layers.string_lookup import StringLookup
from tapegrad.ops.ragged import RaggedTensor

STANDARDIZE = ("lower_and_strip_punctuation", "lower", "strip_punctuation")
SPLIT = ("whitespace", "character")
MODES = ("int", "one_hot", "multi_hot", "count", "tf_idf")
# ASCII punctuation, the characters Keras's standardization removes
PUNCTUATION = "[" + re.escape(string.punctuation) + "]"


class TextVectorization(Layer):
    """Strings to token indices or vectors over a vocabulary (given, or learned by
    ``adapt``); see the module docstring."""

    def __init__(self, max_tokens=None, standardize="lower_and_strip_punctuation",
                 split="whitespace", ngrams=None, output_mode="int",
                 output_sequence_length=None, pad_to_max_tokens=False, vocabulary=None,
                 idf_weights=None, sparse=False, ragged=False, encoding="utf-8", name=None,
                 **kwargs):
        frozen = kwargs.pop("vocabulary_size", None)
        super().__init__(name=name, **kwargs)
        if max_tokens is not None and max_tokens < 2:
            raise ValueError("If set, `max_tokens` must be greater than 1. Received: "
                             f"max_tokens={max_tokens}")
        for value, allowed, what in ((standardize, STANDARDIZE, "standardize"),
                                     (split, SPLIT, "split")):
            if value is not None and not callable(value) and value not in allowed:
                raise ValueError(f"Unknown value for `{what}` argument of TextVectorization. "
                                 f"Allowed values are: {allowed}. Received: {what}={value}")
        output_mode = {"binary": "multi_hot", "tf-idf": "tf_idf"}.get(output_mode, output_mode)
        if output_mode not in MODES:
            raise ValueError("Unknown value for `output_mode` argument of TextVectorization. "
                             f"Allowed values are: {MODES}. Received: output_mode="
                             f"{output_mode}")
        if not (ngrams is None or isinstance(ngrams, int) or isinstance(ngrams, tuple)
                and all(isinstance(n, int) for n in ngrams)):
            raise ValueError("`ngrams` must be None, an integer, or a tuple of integers. "
                             f"Received: ngrams={ngrams}")
        if output_mode != "int" and output_sequence_length is not None:
            raise ValueError("`output_sequence_length` must not be set if `output_mode` is "
                             f"not 'int'. Received output_sequence_length="
                             f"{output_sequence_length}.")
        if ragged and output_mode != "int":
            raise ValueError("`ragged` must not be true if `output_mode` is "
                             f"`'{output_mode}'`. `ragged=True` is only supported for "
                             "`output_mode='int'`.")
        if ragged and output_sequence_length is not None:
            raise ValueError("`output_sequence_length` must not be set if ragged is True. "
                             f"Received: output_sequence_length={output_sequence_length}")
        self.max_tokens, self.standardize, self.split = max_tokens, standardize, split
        self.ngrams, self.output_mode = ngrams, output_mode
        self.output_sequence_length, self.pad_to_max_tokens = (output_sequence_length,
                                                               pad_to_max_tokens)
        self.sparse, self.ragged, self.encoding = sparse, ragged, encoding
        self._lookup_layer = StringLookup(
            max_tokens=max_tokens, vocabulary=vocabulary, idf_weights=idf_weights,
            mask_token="" if output_mode == "int" else None, output_mode=output_mode,
            pad_to_max_tokens=pad_to_max_tokens, sparse=sparse, encoding=encoding,
            vocabulary_size=frozen, name=f"{self.name}_lookup")
        self._has_vocabulary = vocabulary is not None

    @property
    def dtype(self):
        return "string"

    @property
    def compute_dtype(self):
        return "string"

    # ---- the vocabulary --------------------------------------------------------------------
    def get_vocabulary(self, include_special_tokens=True):
        """The tokens in index order ("" and "[UNK]" first in "int" mode)."""
        return self._lookup_layer.get_vocabulary(include_special_tokens)

    def vocabulary_size(self):
        return self._lookup_layer.vocabulary_size()

    def set_vocabulary(self, vocabulary, idf_weights=None):
        """Replace the vocabulary (and, for "tf_idf", the IDF weights)."""
        self._lookup_layer.set_vocabulary(vocabulary, idf_weights)
        self._has_vocabulary = True

    def adapt(self, data, batch_size=None, steps=None):
        """Learn the vocabulary from ``data``: strings in an array, a list, a tensor, or a
        ``tf.data`` dataset (batched or not), each string one document."""
        if self._lookup_layer._has_input_vocabulary:
            raise ValueError(f"Cannot adapt layer '{self._lookup_layer.name}' after setting "
                             "a static vocabulary via `vocabulary` argument or "
                             "`set_vocabulary()` method.")
        if isinstance(data, (list, tuple, np.ndarray, str, bytes)) or hasattr(data, "numpy"):
            batches = [data]
        else:
            batches = (b for i, b in enumerate(data) if steps is None or i < steps)
        self._lookup_layer._learn(row for batch in batches
                                  for row in self._tokens(self._strings(batch))[1])
        self._has_vocabulary = True

    # ---- the pipeline ----------------------------------------------------------------------
    def _strings(self, inputs):
        x = tf.convert_to_tensor(inputs)
        if x.dtype.kind != "O":
            raise ValueError("Failed to convert a NumPy array to a Tensor (Unsupported "
                             f"object type {x.dtype.name}): TextVectorization takes strings.")
        if getattr(x, "_symbolic", False):
            raise NotImplementedError("TextVectorization inside tf.function: tapegrad's "
                                      "generated programs compute no strings; call the "
                                      "layer eagerly (tf.data's map does).")
        return x

    def _standardized(self, x):
        if self.standardize is None:
            return x
        if callable(self.standardize):
            return tf.convert_to_tensor(self.standardize(x))
        if self.standardize in ("lower", "lower_and_strip_punctuation"):
            x = tf.strings.lower(x)
        if self.standardize in ("strip_punctuation", "lower_and_strip_punctuation"):
            x = tf.strings.regex_replace(x, PUNCTUATION, "")
        return x

    def _tokens(self, x):
        """``(lead shape, rows)``: the token lists (bytes, n-grams added) of each element of
        the lead shape, the last axis of the result being the tokens."""
        if self.split is not None:
            if x.ndim >= 2:
                if x.shape[-1] != 1:
                    raise ValueError("When using `TextVectorization` to tokenize strings, "
                                     "the input rank must be 1 or the last shape dimension "
                                     f"must be 1. Received: inputs.shape={tuple(x.shape)} "
                                     f"with rank={x.ndim}")
                x = tf.reshape(x, tuple(x.shape)[:-1])
            x = self._standardized(x)
            lead = tuple(x.shape)
            if callable(self.split):
                pieces = self.split(x)
            elif self.split == "whitespace":
                pieces = tf.strings.split(x)
            else:
                pieces = tf.strings.unicode_split(x, "UTF-8")
            rows = _rows(pieces, lead)
        else:
            x = self._standardized(x)
            shape = tuple(x.shape)
            lead = shape[:-1]
            rows = x.numpy().reshape(-1, shape[-1] if shape else 1).tolist()
        if self.ngrams is not None:
            sizes = range(1, self.ngrams + 1) if isinstance(self.ngrams, int) else self.ngrams
            rows = [[b" ".join(row[i:i + n]) for n in sizes for i in range(len(row) - n + 1)]
                    for row in rows]
        return lead, rows

    def call(self, inputs):
        x = self._strings(inputs)
        lookup = self._lookup_layer
        if self.output_mode != "int" and not self.pad_to_max_tokens and \
                lookup._frozen_vocab_size is None:
            raise RuntimeError(f"When using `output_mode={self.output_mode}` and "
                               "`pad_to_max_tokens=False`, you must set the layer's "
                               "vocabulary before calling it. Either pass a `vocabulary` "
                               "argument to the layer, or call `adapt` with some sample "
                               "data.")
        if not self._has_vocabulary and not len(lookup._vocab):
            raise FailedPreconditionError("Table not initialized: call `adapt` or pass a "
                                          "`vocabulary` before calling TextVectorization. "
                                          "[Op:LookupTableFindV2]")
        scalar_split = self.split is None and x.ndim == 0
        lead, rows = self._tokens(x)
        lengths = [len(r) for r in rows]
        flat = np.empty(sum(lengths), dtype=object)
        flat[:] = [t for r in rows for t in r]
        ids = lookup._lookup(tf.Tensor._wrap(flat)).numpy() if flat.size else \
            np.zeros(0, np.int64)
        splits = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        if self.output_mode == "int":
            if self.ragged:
                return _nested(RaggedTensor(tf.constant(ids), splits), lead)
            width = self.output_sequence_length
            if width is None:
                width = max(lengths, default=0)
            out = np.zeros((len(rows), width), np.int64)
            for i, (lo, hi) in enumerate(zip(splits[:-1], splits[1:])):
                n = min(hi - lo, width)
                out[i, :n] = ids[lo:lo + n]
            return tf.constant(out.reshape(() if scalar_split else lead + (width,)))
        depth = lookup.max_tokens if self.pad_to_max_tokens else lookup._frozen_vocab_size
        if self.output_mode == "one_hot":
            if any(n != 1 for n in lengths):
                raise NotImplementedError("TextVectorization(output_mode='one_hot') is "
                                          "implemented in tapegrad for one token a row "
                                          "(split=None, inputs of shape (batch, 1)) only.")
            counts = np.zeros((len(rows), depth), np.int64)
            counts[np.arange(len(rows)), ids] = 1
            return tf.constant(counts.reshape(lead + (depth,)))
        counts = np.zeros((len(rows), depth), np.int64)
        np.add.at(counts, (np.repeat(np.arange(len(rows)), lengths), ids), 1)
        counts = counts.reshape(lead + (depth,))
        if self.output_mode == "multi_hot":
            return tf.constant((counts > 0).astype(np.int64))
        if self.output_mode == "count":
            return tf.constant(counts)
        return tf.constant(counts.astype(backend.floatx()) * lookup._idf)

    def compute_output_shape(self, input_shape):
        shape = tuple(input_shape)
        if self.split is not None and len(shape) >= 2 and shape[-1] == 1:
            shape = shape[:-1]
        if self.output_mode != "int":
            lookup = self._lookup_layer
            depth = lookup.max_tokens if self.pad_to_max_tokens else lookup._frozen_vocab_size
            return (shape if self.split is not None else shape[:-1]) + (depth,)
        if self.split is None:
            return shape[:-1] + (self.output_sequence_length or shape[-1],) if shape else ()
        return shape + (self.output_sequence_length,)

    def get_config(self):
        lookup = self._lookup_layer
        idf = lookup.input_idf_weights
        return {**super().get_config(), "max_tokens": self.max_tokens,
                "standardize": self.standardize, "split": self.split, "ngrams": self.ngrams,
                "output_mode": self.output_mode,
                "output_sequence_length": self.output_sequence_length,
                "pad_to_max_tokens": self.pad_to_max_tokens, "sparse": self.sparse,
                "ragged": self.ragged, "vocabulary": lookup.input_vocabulary,
                "idf_weights": None if idf is None else [float(v) for v in np.ravel(idf)],
                "encoding": self.encoding, "vocabulary_size": self.vocabulary_size()}


def _rows(pieces, lead):
    """The token lists of a split: a RaggedTensor's rows (one per element of ``lead``) or,
    for one string, a 1-D tensor's tokens."""
    if isinstance(pieces, RaggedTensor):
        rows = pieces.to_list()
        for _ in range(len(lead) - 1):
            rows = [r for block in rows for r in block]
        return rows
    values = tf.convert_to_tensor(pieces).numpy()
    if values.ndim == len(lead) + 1:  # a dense split, one row per element
        return values.reshape(-1, values.shape[-1]).tolist() if values.size else \
            [[] for _ in range(int(np.prod(lead, dtype=np.int64)))]
    return [np.ravel(values).tolist()]


def _nested(rt, lead):
    """``rt`` (one row per element of ``lead``) grouped into the lead shape's rows."""
    for n in reversed(lead[1:]):
        rt = RaggedTensor(rt, np.arange(rt.nrows() // n + 1, dtype=np.int64) * n)
    return rt
