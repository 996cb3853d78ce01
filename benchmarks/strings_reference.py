"""TensorFlow 2.21's results for string tensors and ``tf.strings``, for tests/test_strings.py:
one expression over ``tf`` and ``np`` per case, evaluated here with TensorFlow and there with
tapegrad (an exception's type is its result). Run in the bench environment:

    /work/venv-bench/bin/python -m benchmarks.strings_reference
"""
import json
import pathlib

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "strings.json"

S = "tf.constant([['Hello, World!', '  ÉtÉ  '], ['a\\tb\\n', '']])"
W = "tf.constant(['the cat sat', 'a  dog', ''])"
CASES = [
    # conversion: bytes values, dtype string
    "tf.constant('abc')", "tf.constant(b'x\\xff')", "tf.constant(['a', 'b c'])",
    "tf.constant('été')", "tf.constant([['a'], [b'b']])", "tf.constant(['a\\x00'])",
    "tf.convert_to_tensor(np.array(['a', 'bb']))", "tf.convert_to_tensor(np.array([b'a']))",
    "tf.convert_to_tensor(np.array(['a', b'b'], dtype=object))",
    "tf.convert_to_tensor(np.array(['a', 1], dtype=object))", "tf.constant(['a', 1])",
    "tf.constant([1.0, 'a'])", "tf.constant(1, dtype=tf.string)",
    "tf.constant(['a'], dtype=tf.float32)", "tf.convert_to_tensor('a', dtype=tf.int32)",
    "tf.constant([], dtype=tf.string)", "tf.constant('ab', shape=[2])",
    "tf.convert_to_tensor(['a'], dtype_hint=tf.float32)",
    "tf.convert_to_tensor([1], dtype_hint=tf.string)",
    "tf.convert_to_tensor([], dtype_hint=tf.string)",
    "tf.constant(['x'], dtype=tf.string).dtype == tf.string",
    # comparison and concatenation; the rest of arithmetic refuses strings
    "tf.constant(['a', 'b']) == 'a'", "tf.constant(['a', 'b']) != 'a'",
    "tf.constant(['a', 'b']) == tf.constant(['a', 'c'])",
    "tf.equal(tf.constant([['a'], ['b']]), tf.constant(['a', 'b']))",
    "tf.constant(['a', 'b']) == 1", "tf.equal(tf.constant(['a']), tf.constant([1]))",
    "tf.constant(['a']) == tf.constant([1.0])", "tf.constant([1.0]) == 'a'",
    "tf.constant(1.0) + 'a'", "'a' + tf.constant(1.0)", "tf.add(tf.constant(1), 'a')",
    "tf.constant(1.0) - 'a'", "tf.constant(1.0) / 'a'", "tf.constant(1.0) < 'a'",
    "tf.maximum(tf.constant(1.0), 'a')", "tf.exp('a')", "tf.matmul('ab', [[1.0]])",
    "tf.constant('a') + tf.constant(1.0)",
    "tf.constant(['a', 'b']) + tf.constant(['x', 'y'])", "tf.constant(['a', 'b']) + 'x'",
    "'x' + tf.constant(['a'])", "tf.add(tf.constant('a'), tf.constant('b'))",
    "np.array(['x']) + tf.constant(['a'])", "tf.constant(['a']) + 1",
    "tf.constant(['a']) - tf.constant(['b'])", "tf.constant(['a']) * 2",
    "-tf.constant(['a'])", "abs(tf.constant(['a']))", "tf.reduce_sum(tf.constant(['a']))",
    "tf.constant('a') < tf.constant('b')", "tf.maximum(tf.constant(['a']), tf.constant(['b']))",
    "tf.cast(tf.constant(['1']), tf.float32)", "tf.cast(tf.constant([1]), tf.string)",
    "tf.cast(tf.constant(['a']), tf.string)", "tf.ones_like(tf.constant(['a']))",
    "tf.zeros_like(tf.constant(['a', 'b']))", "tf.zeros([2], tf.string)",
    # shapes, gathers and the like move strings as they are
    "tf.shape(tf.constant([['a', 'b']]))", "tf.size(tf.constant(['a', 'b']))",
    "tf.rank(tf.constant(['a']))", "tf.reshape(tf.constant([['a', 'b']]), [2])",
    "tf.gather(tf.constant(['a', 'b', 'c']), [2, 0])",
    "tf.concat([tf.constant(['a']), tf.constant(['b'])], 0)",
    "tf.stack([tf.constant('a'), tf.constant('b')])", "tf.constant(['a', 'b', 'c'])[1]",
    "tf.constant(['a', 'b', 'c'])[1:]", "tf.constant([['a', 'b'], ['c', 'd']])[:, 0]",
    "tf.expand_dims(tf.constant(['a', 'b']), -1)", "tf.squeeze(tf.constant([['a'], ['b']]), -1)",
    "tf.transpose(tf.constant([['a', 'b']]))",
    "tf.where([True, False], tf.constant(['a', 'b']), tf.constant(['c', 'd']))",
    "tf.tile(tf.constant(['a']), [3])", "tf.identity(tf.constant(['a']))",
    "tf.fill([2], 'x')", "tf.reverse(tf.constant(['a', 'b']), [0])",
    "tf.pad(tf.constant(['a', 'b']), [[1, 0]])", "tf.broadcast_to(tf.constant('a'), [2])",
    "tf.split(tf.constant(['a', 'b']), 2)", "tf.unstack(tf.constant(['a', 'b']))",
    "tf.unique(tf.constant(['a', 'b', 'a']))",
    "tf.boolean_mask(tf.constant(['b', 'a']), [True, False])",
    "tf.one_hot(tf.constant(['a']), 2)",
    # tf.strings
    f"tf.strings.lower({S})", f"tf.strings.lower({S}, encoding='utf-8')",
    f"tf.strings.upper({S})", f"tf.strings.upper({S}, encoding='utf-8')",
    f"tf.strings.length({S})", f"tf.strings.length({S}, unit='UTF8_CHAR')",
    f"tf.strings.length({S}, unit='X')", f"tf.strings.strip({S})",
    "tf.strings.strip(tf.constant(['\\x0b a \\r\\x0c']))",
    f"tf.strings.regex_replace({S}, '[aeiou]', '_')",
    f"tf.strings.regex_replace({S}, 'l', 'L', replace_global=False)",
    f"tf.strings.regex_replace({S}, r'(\\w+)', r'<\\1>')",
    f"tf.strings.regex_replace({S}, r'\\s+', ' ')",
    f"tf.strings.regex_replace({S}, '(', 'x')",
    "tf.strings.regex_replace(tf.constant(['a.b!c']), "
    "r'[!\"#$%&()\\*\\+,-\\./:;<=>?@\\[\\\\\\]^_`{|}~\\']', '')",
    f"tf.strings.regex_full_match({S}, '[A-Za-z, !]+')",
    "tf.strings.regex_full_match(tf.constant(['abc']), 'b')",
    f"tf.strings.join([{S}[0], {S}[1]], separator='|')",
    f"tf.strings.join(['a', {S}[1]], separator='-')", "tf.strings.join(['a', 'b'])",
    "tf.strings.join([tf.constant(['a', 'b']), tf.constant([['x'], ['y']])])",
    f"tf.strings.reduce_join({S}, axis=-1, separator=' ')", f"tf.strings.reduce_join({S})",
    f"tf.strings.reduce_join({S}, axis=0, keepdims=True, separator=',')",
    f"tf.strings.reduce_join({S}, axis=5)",
    "tf.strings.substr(tf.constant(['hello', 'ab']), 1, 3)",
    "tf.strings.substr(tf.constant(['hello', 'abc']), -3, 2)",
    "tf.strings.substr(tf.constant(['été', 'abc']), 1, 2, unit='UTF8_CHAR')",
    "tf.strings.substr(tf.constant(['hello', 'ab']), [0, 1], [2, 1])",
    "tf.strings.substr(tf.constant(['abc']), 5, 1)",
    "tf.strings.to_number(tf.constant(['1.5', '-2', '1e3', ' 4 ']))",
    "tf.strings.to_number(tf.constant(['1', '-2']), out_type=tf.int32)",
    "tf.strings.to_number(tf.constant(['3']), out_type=tf.int64)",
    "tf.strings.to_number(tf.constant(['0.1']), out_type=tf.float64)",
    "tf.strings.to_number(tf.constant(['x']))",
    "tf.strings.to_number(tf.constant(['1.5']), tf.int32)",
    "tf.strings.as_string(tf.constant([1.5, -2.0, 1e10, 1 / 3]))",
    "tf.strings.as_string(tf.constant([1, -2]))", "tf.strings.as_string(tf.constant([True]))",
    "tf.strings.as_string(tf.constant([1.5, 1 / 3]), precision=2)",
    "tf.strings.as_string(tf.constant([1.5, 1 / 3]), scientific=True)",
    "tf.strings.as_string(tf.constant([1, 22]), width=4, fill='0')",
    "tf.strings.as_string(tf.constant([1, 22]), width=3)",
    "tf.strings.as_string(tf.constant(['a']))",
    "tf.strings.split(tf.constant('a b  c'))", f"tf.strings.split({W})",
    "tf.strings.split(tf.constant(['a,,b', 'c']), sep=',')",
    "tf.strings.split(tf.constant(['a b c d']), maxsplit=1)",
    "tf.strings.split(tf.constant([['a b'], ['c']]))",
    f"tf.strings.split({W}).to_tensor()", f"tf.strings.split({W}).to_tensor('<pad>')",
    f"tf.strings.split({W}).flat_values", f"tf.strings.split({W}).row_splits",
    f"tf.strings.split({W}).shape.as_list()", f"tf.strings.split({W})[0]",
    "tf.strings.unicode_split(tf.constant('été'), 'UTF-8')",
    "tf.strings.unicode_split(tf.constant(['ab', 'é']), 'UTF-8')",
    "tf.strings.ngrams(tf.constant(['a', 'b', 'c']), 2)",
    "tf.strings.ngrams(tf.constant(['a', 'b', 'c']), (1, 2))",
    "tf.strings.ngrams(tf.constant([['a', 'b', 'c'], ['d', 'e', 'f']]), 2)",
    "tf.strings.ngrams(tf.strings.split(['a b c', 'd']), 2)",
    "tf.strings.ngrams(tf.strings.split(['a b c', 'd']), (1, 2), separator='_')",
    "tf.strings.ngrams(tf.strings.split([['a b c'], ['d e']]), 2)",
    "tf.strings.ngrams(tf.constant(['a', 'b', 'c']), 2, pad_values='#')",
    "tf.strings.ngrams(tf.constant(['a', 'b', 'c']), 3, pad_values=('<', '>'), "
    "padding_width=1)",
    "tf.strings.ngrams(tf.strings.split(['a b c', 'd']), 3, preserve_short_sequences=True)",
    "tf.strings.ngrams(tf.constant('a'), 2)", "tf.strings.ngrams(tf.constant(['a']), 2)",
    "tf.strings.ngrams(tf.constant([1, 2]), 2)",
    "tf.strings.lower(tf.constant([1]))", "tf.strings.length(tf.constant([1.0]))",
    "tf.strings.lower('AB')", "tf.strings.upper(['ab', 'c'])",
    "tf.strings.length(tf.constant('ab'))",
    # tf.data of strings
    "list(tf.data.Dataset.from_tensor_slices(['a b', 'c']))",
    "list(tf.data.Dataset.from_tensor_slices(['a b', 'c', 'd']).batch(2))",
    "list(tf.data.Dataset.from_tensor_slices(['a b', 'c']).map(tf.strings.upper))",
    "list(tf.data.Dataset.from_tensor_slices((['a', 'b'], [1, 2])).batch(2))",
    "list(tf.data.Dataset.from_tensor_slices(['a b', 'c']).map(lambda s: tf.strings.length(s)))",
]


def encode(value):
    """A JSON form of ``value``: tensors as dtype, shape and data (bytes as latin-1 text),
    RaggedTensors as their lists, sequences element by element."""
    if hasattr(value, "to_list") and hasattr(value, "row_splits"):
        return {"ragged": _plain(value.to_list())}
    if hasattr(value, "numpy") and hasattr(value, "dtype"):
        import numpy as np
        arr = np.asarray(value.numpy())
        name = "string" if arr.dtype.kind in "OSU" else arr.dtype.name
        return {"dtype": name, "shape": list(arr.shape), "data": _plain(arr.tolist())}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    return {"python": _plain(value.tolist() if hasattr(value, "tolist") else value)}


def _plain(v):
    if isinstance(v, bytes):
        return {"b": v.decode("latin-1")}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def run(tf, np, cases=None):
    """``{case: its encoded result}`` for ``cases`` (this module's by default)."""
    out = {}
    for case in CASES if cases is None else cases:
        try:
            out[case] = encode(eval(case, {"tf": tf, "np": np}))  # noqa: S307
        except Exception as e:  # noqa: BLE001 - the error type is the reference
            out[case] = {"error": type(e).__name__}
    return out


def main():
    import numpy as np
    import tensorflow as tf

    OUT.write_text(json.dumps({"tensorflow_version": tf.__version__,
                               "cases": run(tf, np)}, indent=0, ensure_ascii=True) + "\n")
    print(f"wrote {OUT} (TensorFlow {tf.__version__})")


if __name__ == "__main__":
    main()
