"""Keras's ``StringLookup``: string tokens to vocabulary indices (or back, ``invert``), or to
one-hot, multi-hot, count or TF-IDF vectors: ``IntegerLookup`` (keras/layers/lookup.py, the
same index layout, ``adapt`` order and output modes) over string tokens, the OOV token
"[UNK]". Tokens are kept as UTF-8 bytes (TensorFlow's string values) and looked up with a
dictionary, eagerly (string tensors do not trace).

>>> from tapegrad import keras
>>> lookup = keras.layers.StringLookup(vocabulary=["a", "b", "c", "d"])
>>> lookup([["a", "c", "d"], ["d", "z", "b"]]).numpy()
array([[1, 3, 4],
       [4, 0, 2]])
>>> lookup.get_vocabulary()
['[UNK]', 'a', 'b', 'c', 'd']
"""
import numpy as np

from tapegrad.errors import InvalidArgumentError
from tapegrad.keras import _tf as tf
from tapegrad.keras.layers.lookup import IntegerLookup


def string_array(values, what="inputs"):
    """``values`` (strings, a string tensor or array, or a list of them) as an object array
    of bytes; numbers raise TensorFlow's error for a cast of them to strings."""
    if isinstance(values, (list, tuple)) and not values:
        return np.empty(0, dtype=object)
    t = tf.convert_to_tensor(values)
    if t.dtype.kind != "O":
        tf.cast(t, tf.string)  # raises TensorFlow's UnimplementedError
    return np.asarray(t.numpy(), dtype=object)


class StringLookup(IntegerLookup):
    """String tokens to indices in a vocabulary (given, read from a file of one token a
    line, or learned by ``adapt``)."""

    _kind = "StringLookup"

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token="[UNK]",
                 vocabulary=None, idf_weights=None, invert=False, output_mode="int",
                 pad_to_max_tokens=False, sparse=False, encoding="utf-8", name=None,
                 **kwargs):
        kwargs.pop("vocabulary_dtype", None)
        oov_method = kwargs.pop("oov_method", "floormod")
        salt = kwargs.pop("salt", None)
        if num_oov_indices > 1:
            raise NotImplementedError(
                "StringLookup(num_oov_indices > 1) is not implemented in tapegrad: Keras "
                "spreads unknown strings over the OOV indices by their FarmHash fingerprint.")
        if encoding.lower().replace("-", "") != "utf8":
            raise NotImplementedError("StringLookup: tapegrad encodes strings as UTF-8 only, "
                                      f"got encoding={encoding!r}")
        super().__init__(max_tokens=max_tokens, num_oov_indices=num_oov_indices,
                         mask_token=mask_token, oov_token=oov_token, vocabulary=vocabulary,
                         idf_weights=idf_weights, invert=invert, output_mode=output_mode,
                         sparse=sparse, pad_to_max_tokens=pad_to_max_tokens,
                         oov_method=oov_method, salt=salt, name=name, **kwargs)
        self.encoding = encoding

    @property
    def dtype(self):
        """The inputs' dtype: string (the int outputs of ``invert`` take strings back)."""
        return "int64" if self.invert else "string"

    # ---- the token hooks -------------------------------------------------------------------
    def _tokens(self, values, what):
        return string_array(values, what)

    def _token(self, t):
        return t.decode("utf-8") if isinstance(t, bytes) else str(t)

    def _key(self, token):
        return token.encode("utf-8") if isinstance(token, str) else token

    def _read_file(self, path):
        """One token a line (Keras's vocabulary file), the line ends removed."""
        with open(path, "rb") as f:
            return [line.rstrip(b"\r\n") for line in f]

    def _inputs(self, inputs):
        if self.invert:
            return super()._inputs(inputs)
        t = tf.convert_to_tensor(inputs)
        return t if t.dtype.kind == "O" else tf.cast(t, tf.string)

    # ---- the lookup (NumPy: a dictionary of the tokens) -------------------------------------
    def _lookup(self, x):
        if getattr(x, "_symbolic", False):
            raise NotImplementedError("StringLookup inside tf.function: tapegrad's generated "
                                      "programs compute no strings; call the layer eagerly.")
        start = self._token_start_index()
        values = np.asarray(x.numpy(), dtype=object) if not self.invert else x.numpy()
        if self.invert:
            table = np.array([self._key(self.oov_token)] * start + list(self._vocab),
                             dtype=object)
            if self.mask_token is not None and self._oov_start_index():
                table[0] = self._key(self.mask_token)
            ids = np.asarray(values, dtype=np.int64)
            inside = (ids >= 0) & (ids < len(table))
            out = np.full(ids.shape, self._key(self.oov_token), dtype=object)
            out[inside] = table[ids[inside]]
            if self.mask_token is not None and not self._oov_start_index():
                out[ids == 0] = self._key(self.mask_token)
            return tf.Tensor._wrap(out)
        index = {t: i + start for i, t in enumerate(self._vocab.tolist())}
        oov = self._oov_start_index() if self.num_oov_indices else -1
        flat = values.reshape(-1).tolist()
        ids = np.array([index.get(t, oov) for t in flat], dtype=np.int64).reshape(values.shape)
        if self.mask_token is not None:
            mask_value = 0 if self.output_mode == "int" else np.iinfo(np.int64).max
            ids[values == self._key(self.mask_token)] = mask_value
        if self.num_oov_indices == 0 and (ids == -1).any():
            found = [self._token(t) for t in values[ids == -1].tolist()]
            raise InvalidArgumentError("When `num_oov_indices=0` all inputs should be in "
                                       f"vocabulary, found OOV values {found}, consider "
                                       "setting `num_oov_indices=1`.")
        return tf.constant(ids)

    def get_config(self):
        config = super().get_config()
        config.pop("vocabulary_dtype", None)
        return {**config, "encoding": self.encoding}
