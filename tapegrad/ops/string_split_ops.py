"""``tf.strings`` that cut strings into pieces: ``split``, ``unicode_split`` and ``ngrams``.
A scalar's pieces are a 1-D tensor; the pieces of a tensor's elements have different
counts, so they come as a ``tf.RaggedTensor`` (ops/ragged.py) of one more dimension.

>>> import tapegrad as tf
>>> tf.strings.split(["a b", "c"]).to_list()
[[b'a', b'b'], [b'c']]
"""
import numpy as np

from tapegrad.core.tensor import Tensor, convert_to_tensor
from tapegrad.errors import InvalidArgumentError
from tapegrad.ops.ragged import RaggedTensor
from tapegrad.ops.string_ops import _separator, builtins_len, strings

__all__ = ["split", "unicode_split", "ngrams"]

_wrap = Tensor._wrap


def _split_one(sep, maxsplit):
    if sep is None or sep == b"":
        return lambda b: b.split(None, maxsplit)
    return lambda b: b.split(sep, maxsplit)


def _ragged(pieces, shape):
    """The lists ``pieces`` (one per element of ``shape``) as a RaggedTensor of rank
    ``len(shape) + 1``: the element lists the innermost rows, ``shape`` the uniform rest
    (kept as row_splits of equal rows, TensorFlow's ragged rank)."""
    flat = np.empty(sum(map(builtins_len, pieces)), dtype=object)
    flat[:] = [p for row in pieces for p in row]
    splits = np.concatenate([[0], np.cumsum([builtins_len(p) for p in pieces])])
    out = RaggedTensor(_wrap(flat), splits)
    for n in reversed(shape[1:]):
        rows = out.nrows() // n
        out = RaggedTensor(out, np.arange(rows + 1, dtype=np.int64) * n)
    return out


def split(input, sep=None, maxsplit=-1, name=None):
    """Split each string at ``sep`` (at runs of whitespace where None), at most
    ``maxsplit`` times: a 1-D tensor of a scalar, a RaggedTensor otherwise.

    >>> import tapegrad as tf
    >>> tf.strings.split("a b  c").numpy().tolist()
    [b'a', b'b', b'c']
    >>> tf.strings.split(["a b", "c"]).to_list()
    [[b'a', b'b'], [b'c']]
    """
    x = strings(input, "StringSplitV2")
    sep_b = None if sep is None else _separator(sep)
    cut = _split_one(sep_b, int(maxsplit))
    return _pieces(x, cut)


def _pieces(x, cut):
    if x.ndim == 0:
        found = cut(x._value[()])
        out = np.empty(builtins_len(found), dtype=object)
        out[:] = found
        return _wrap(out)
    return _ragged([cut(b) for b in x._value.reshape(-1)], tuple(x.shape))


def unicode_split(input, input_encoding, errors="replace", replacement_char=65533,
                  name=None):
    """Each string split into its UTF-8 characters (a 1-D tensor of a scalar, a
    RaggedTensor otherwise)."""
    x = strings(input, "UnicodeDecode")
    if input_encoding.upper().replace("-", "") != "UTF8":
        raise NotImplementedError("tf.strings.unicode_split: tapegrad decodes UTF-8 only, "
                                  f"got input_encoding={input_encoding!r}")
    return _pieces(x, lambda b: [c.encode("utf-8") for c in
                                 b.decode("utf-8", "replace")])


def _grams(row, widths, sep, pad, padding_width, preserve):
    """The n-grams of one token list ``row`` for each width in ``widths``, in order."""
    out, shortest = [], min(widths)
    for w in widths:
        p = 0 if pad is None else (w - 1 if padding_width is None else padding_width)
        left, right = (pad, pad) if pad is None or isinstance(pad, bytes) else pad
        seq = [left] * p + row + [right] * p
        out += [sep.join(seq[i:i + w]) for i in range(builtins_len(seq) - w + 1)]
    if preserve and row and not out:
        p = 0 if pad is None else (shortest - 1 if padding_width is None else padding_width)
        out = [sep.join([left] * p + row + [right] * p)]
    return out


def ngrams(data, ngram_width, separator=" ", pad_values=None, padding_width=None,
           preserve_short_sequences=False, name=None):
    """The n-grams of each row of strings (the last axis of a tensor, or a RaggedTensor's
    rows) joined with ``separator``: all of the first width, then the next, ...

    >>> import tapegrad as tf
    >>> tf.strings.ngrams(["a", "b", "c"], (1, 2)).numpy().tolist()
    [b'a', b'b', b'c', b'a b', b'b c']
    >>> tf.strings.ngrams(tf.strings.split(["a b c", "d"]), 2).to_list()
    [[b'a b', b'b c'], []]
    """
    widths = (int(ngram_width),) if np.ndim(ngram_width) == 0 else tuple(
        int(w) for w in ngram_width)
    if any(w < 1 for w in widths):
        raise InvalidArgumentError(f"ngram_width must be at least 1, got {widths} "
                                   "[Op:StringNGrams]")
    sep = _separator(separator)
    pad = None if pad_values is None else (
        _separator(pad_values) if isinstance(pad_values, (str, bytes)) else
        tuple(_separator(v) for v in pad_values))

    def grams(row):
        return _grams(row, widths, sep, pad, padding_width, preserve_short_sequences)
    if isinstance(data, RaggedTensor):
        return _ragged_grams(data, grams)
    x = data if isinstance(data, Tensor) else convert_to_tensor(data)
    if x.dtype.kind != "O":  # (TensorFlow converts data to a string tensor first)
        raise ValueError("Tensor conversion requested dtype string for Tensor with dtype "
                         f"{x.dtype.name}")
    x = strings(x, "StringNGrams")
    if x.ndim == 0:
        raise ValueError("Data must have rank>0")
    rows = [grams(r) for r in x._value.reshape(-1, x.shape[-1]).tolist()]
    width = builtins_len(rows[0]) if rows else 0
    if any(builtins_len(r) != width for r in rows):  # (preserved short rows): ragged
        return _ragged(rows, tuple(x.shape)[:-1])
    out = np.empty((builtins_len(rows), width), dtype=object)
    out[...] = rows if width else out
    return _wrap(out.reshape(tuple(x.shape)[:-1] + (width,)))


def _ragged_grams(rt, grams):
    values = rt.values
    if isinstance(values, RaggedTensor):
        return RaggedTensor(_ragged_grams(values, grams), rt.row_splits)
    strings(values, "StringNGrams")
    flat, s = values._value.tolist(), rt.row_splits.numpy()
    rows = [grams(flat[s[i]:s[i + 1]]) for i in range(rt.nrows())]
    return _ragged(rows, (rt.nrows(),))
