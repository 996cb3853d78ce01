"""Keras 3.15's results for ``StringLookup`` and ``TextVectorization`` (vocabularies,
indices, vectors, errors) and for small text models that hold a TextVectorization, for
tests/test_keras_text.py: one expression per case over ``keras``, ``tf`` and ``np`` (and
this module's helpers), evaluated here with Keras on TensorFlow and there with tapegrad
(an exception's type is its result). Run in the bench environment:

    KERAS_BACKEND=tensorflow /work/venv-bench/bin/python -m benchmarks.keras_text_reference
"""
import json
import os
import pathlib

from benchmarks.strings_reference import encode

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "keras_text.json"

CORPUS = ["The cat sat.", "the dog ran far!", "A cat ran", "dogs and cats", "The end",
          "a dog sat on the mat", "Été, ÉTÉ l'été: naïve café", "tabs\tand\nnew  lines"]
LABELS = [1, 0, 1, 0, 0, 1, 1, 0]


def adapted(layer, data=None, **kwargs):
    """``layer`` after ``layer.adapt(data)`` (the corpus by default)."""
    layer.adapt(CORPUS if data is None else data, **kwargs)
    return layer


def vocab(layer, data=None, **kwargs):
    return adapted(layer, data, **kwargs).get_vocabulary()


def fix_weights(model, seed):
    """Every weight of ``model`` from ``seed`` (as tests/_real_programs_s13.py)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    model.set_weights([(rng.normal(size=tuple(w.shape)) * 0.3).astype(np.float32)
                       for w in model.get_weights()])


def sequential_text_model(tf, keras, np):
    """Input(shape=(1,), string) -> TextVectorization -> Embedding -> pooling -> Dense,
    fit with SGD on raw strings, then predict."""
    vec = adapted(keras.layers.TextVectorization(max_tokens=20, output_sequence_length=6))
    model = keras.Sequential([keras.Input(shape=(1,), dtype="string"), vec,
                              keras.layers.Embedding(20, 4),
                              keras.layers.GlobalAveragePooling1D(),
                              keras.layers.Dense(1, activation="sigmoid")])
    fix_weights(model, 3)
    model.compile(loss="binary_crossentropy", optimizer=keras.optimizers.SGD(0.5))
    x, y = tf.constant(CORPUS)[:, None], np.array(LABELS, np.float32)  # (not NumPy: Keras)
    history = model.fit(x, y, batch_size=4, epochs=3, verbose=0, shuffle=False)
    return [np.array(history.history["loss"]), model.predict(x, verbose=0)]


def functional_multi_hot_model(tf, keras, np):
    """Input(shape=(), string) -> TextVectorization(multi_hot) -> Dense, functional, fit."""
    inputs = keras.Input(shape=(), dtype="string")
    vec = adapted(keras.layers.TextVectorization(output_mode="multi_hot", ngrams=2))
    outputs = keras.layers.Dense(1)(vec(inputs))
    model = keras.Model(inputs, outputs)
    fix_weights(model, 4)
    model.compile(loss=keras.losses.BinaryCrossentropy(from_logits=True),
                  optimizer=keras.optimizers.SGD(0.1))
    text = np.array(CORPUS, dtype=object)  # (Keras refuses NumPy str arrays in fit)
    history = model.fit(text, np.array(LABELS, np.float32), batch_size=3,
                        epochs=2, verbose=0, shuffle=False)
    return [np.array(history.history["loss"]), model.predict(text, verbose=0)]


def dataset_map_model(tf, keras, np):
    """tf.data of strings mapped through a TextVectorization, into an int model's fit."""
    vec = adapted(keras.layers.TextVectorization(output_sequence_length=5),
                  tf.data.Dataset.from_tensor_slices(CORPUS).batch(3))
    ds = tf.data.Dataset.from_tensor_slices((CORPUS, np.array(LABELS, np.float32)))
    ds = ds.batch(4).map(lambda text, label: (vec(text), label))
    model = keras.Sequential([keras.Input((5,), dtype="int64"),
                              keras.layers.Embedding(vec.vocabulary_size(), 3),
                              keras.layers.Flatten(), keras.layers.Dense(1)])
    fix_weights(model, 5)
    model.compile(loss=keras.losses.BinaryCrossentropy(from_logits=True),
                  optimizer=keras.optimizers.SGD(0.2))
    history = model.fit(ds, epochs=2, verbose=0)
    return [np.array(history.history["loss"]), [b for b, _ in ds][1]]


TV = "keras.layers.TextVectorization"
SL = "keras.layers.StringLookup"
D = "np.array([['a', 'c', 'd'], ['d', 'z', 'b'], ['b', 'b', 'e']])"
CASES = [
    # StringLookup
    f"{SL}(vocabulary=['a', 'b', 'c', 'd'])({D})", f"vocab({SL}(), {D})",
    f"adapted({SL}(), {D})({D})", f"adapted({SL}(), {D}).vocabulary_size()",
    f"vocab({SL}(), ['x', 'y', 'b', 'a', 'x', 'y'])", f"vocab({SL}(max_tokens=4), {D})",
    f"{SL}(vocabulary=['a', 'b'], mask_token='')(np.array(['', 'a', 'q']))",
    f"{SL}(vocabulary=['a', 'b'], mask_token='').get_vocabulary()",
    f"{SL}(vocabulary=['a', 'b'], invert=True)(np.array([0, 1, 2, 5]))",
    f"{SL}(vocabulary=['a', 'b'], invert=True, mask_token='')(np.array([0, 1, 2]))",
    f"{SL}(vocabulary=['a', 'b'], output_mode='one_hot')(np.array(['a', 'q']))",
    f"{SL}(vocabulary=['a', 'b'], output_mode='multi_hot')(np.array([['a', 'q', 'a']]))",
    f"{SL}(vocabulary=['a', 'b'], output_mode='count')(np.array([['a', 'q', 'a']]))",
    f"{SL}(vocabulary=['a', 'b'], output_mode='tf_idf', idf_weights=[0.5, 0.25])"
    "(np.array([['a', 'q', 'a']]))",
    f"adapted({SL}(output_mode='tf_idf'), {D})({D})",
    f"{SL}(vocabulary=['a', 'b'], output_mode='multi_hot', max_tokens=5, "
    "pad_to_max_tokens=True)(np.array([['a']]))",
    f"{SL}(vocabulary=['a', 'b'])(np.array([1, 2]))",
    f"{SL}(vocabulary=['a', 'b'])(np.array([1.0]))", f"{SL}(output_mode='xx')",
    f"{SL}(vocabulary=[b'a', b'b']).get_vocabulary()",
    f"{SL}(vocabulary=['a', 'b'])(tf.constant(['b']))",
    f"{SL}(vocabulary=['a', 'b'])(['b', 'x'])", f"{SL}(vocabulary=['a', 'b'])('b')",
    f"{SL}(vocabulary=['a', 'b'], oov_token='[OOV]').get_vocabulary()",
    f"{SL}(vocabulary=['a', 'b'], mask_token='').get_vocabulary("
    "include_special_tokens=False)",
    f"{SL}(vocabulary=['a', 'a'])", f"{SL}(vocabulary=['é'])(np.array(['é', 'e']))",
    f"{SL}(vocabulary=['a'], num_oov_indices=0)(np.array(['a', 'b']))",
    f"{SL}(vocabulary=['[UNK]', 'a', 'b']).get_vocabulary()",
    f"{SL}(vocabulary=['a']).adapt({D})",
    f"vocab({SL}(), tf.data.Dataset.from_tensor_slices({D}).batch(2))",
    f"{SL}(vocabulary=['a', 'b'])(np.array(['a'])).dtype == 'int64'",
    f"keras.Sequential([keras.Input(shape=(3,), dtype='string'), "
    f"{SL}(vocabulary=['a', 'b', 'c', 'd'])])({D})",
    # TextVectorization: vocabularies
    f"vocab({TV}())", f"vocab({TV}(max_tokens=5))", f"vocab({TV}(ngrams=2))",
    f"vocab({TV}(ngrams=(2, 3)))", f"vocab({TV}(ngrams=1))",
    f"vocab({TV}(standardize='lower'))", f"vocab({TV}(standardize='strip_punctuation'))",
    f"vocab({TV}(standardize=None))", f"vocab({TV}(split='character'))",
    f"vocab({TV}(split=None))", f"vocab({TV}(standardize=lambda s: tf.strings.upper(s)))",
    f"vocab({TV}(split=lambda s: tf.strings.split(s, sep='a')))",
    f"vocab({TV}(output_mode='multi_hot'))", f"vocab({TV}(), np.array(CORPUS))",
    f"vocab({TV}(), np.array(CORPUS)[:, None])",
    f"vocab({TV}(), tf.data.Dataset.from_tensor_slices(CORPUS))",
    f"vocab({TV}(), tf.data.Dataset.from_tensor_slices(CORPUS).batch(3))",
    f"vocab({TV}(), tf.data.Dataset.from_tensor_slices(CORPUS).batch(1), steps=2)",
    f"vocab({TV}(), tf.constant(CORPUS))", f"vocab({TV}(), ['b a c', 'c b a d'])",
    f"vocab({TV}(split='character', standardize='strip_punctuation'), "
    "[''.join(chr(i) for i in range(32, 127))])",
    f"{TV}(vocabulary=['cat', 'dog']).get_vocabulary()",
    f"{TV}(vocabulary=['', '[UNK]', 'a']).get_vocabulary()",
    f"{TV}(vocabulary=['a', 'b']).get_vocabulary(include_special_tokens=False)",
    f"adapted({TV}()).vocabulary_size()", f"adapted({TV}(output_mode='count')).vocabulary_size()",
    # TextVectorization: outputs
    f"adapted({TV}())(CORPUS)", f"adapted({TV}())(np.array(CORPUS)[:, None])",
    f"adapted({TV}())('the cat')", f"adapted({TV}(output_sequence_length=3))(CORPUS)",
    f"adapted({TV}(output_sequence_length=8))(CORPUS[:2])",
    f"adapted({TV}(max_tokens=5))(CORPUS)", f"adapted({TV}(output_mode='multi_hot'))(CORPUS)",
    f"adapted({TV}(output_mode='count'))(CORPUS)", f"adapted({TV}(output_mode='tf_idf'))(CORPUS)",
    f"adapted({TV}(output_mode='multi_hot', max_tokens=30, pad_to_max_tokens=True))"
    "(CORPUS[:2])",
    f"adapted({TV}(output_mode='count', ngrams=2))(CORPUS[:3])",
    f"adapted({TV}(ngrams=3, output_sequence_length=12))(CORPUS[1:2])",
    f"adapted({TV}(split='character'))(CORPUS[:2])", f"adapted({TV}(split=None))(CORPUS)",
    f"adapted({TV}(split=None))(np.array(CORPUS)[:, None])",
    f"adapted({TV}(split=None, output_mode='multi_hot'))(np.array(CORPUS)[:, None])",
    f"adapted({TV}(output_mode='multi_hot'))('the cat')",
    f"{TV}(vocabulary=['cat', 'dog'])(CORPUS)",
    f"{TV}(output_mode='tf_idf', vocabulary=['a', 'b'], idf_weights=[1.0, 2.0])"
    "(np.array(['a b b', 'c']))",
    f"adapted({TV}())(np.array(['', 'cat']))",
    f"adapted({TV}())(np.array(CORPUS[:2]).reshape(1, 2, 1))",
    f"adapted({TV}(ragged=True))(CORPUS[:3])",
    f"adapted({TV}(output_sequence_length=3)).compute_output_shape((None,))",
    f"list(tf.data.Dataset.from_tensor_slices(CORPUS[:4]).batch(2)"
    f".map(adapted({TV}(output_sequence_length=3))))",
    f"list(tf.data.Dataset.from_tensor_slices(CORPUS[:2])"
    f".map(adapted({TV}(output_sequence_length=3))))",
    f"{TV}.from_config({TV}(vocabulary=['a', 'b'], output_sequence_length=3)"
    ".get_config())(CORPUS[:3])",
    f"{{k: v for k, v in adapted({TV}(max_tokens=10, output_sequence_length=4))"
    ".get_config().items() if k not in ('name', 'dtype')}",
    # TextVectorization: errors
    f"{TV}(output_mode='xx')", f"{TV}(standardize='xx')", f"{TV}(split='xx')",
    f"{TV}(output_mode='multi_hot', output_sequence_length=3)", f"{TV}(ngrams='a')",
    f"{TV}(max_tokens=1)", f"{TV}(sparse=True)",
    f"{TV}(output_mode='tf_idf', vocabulary=['a'])", f"{TV}(vocabulary=['a']).adapt(CORPUS)",
    f"adapted({TV}())(np.array([1, 2]))", f"adapted({TV}())(np.array(CORPUS[:4]).reshape(2, 2))",
    f"{TV}(output_mode='count')(CORPUS)", f"{TV}()(CORPUS)",
    f"{TV}(ragged=True, output_mode='count')",
    # models holding a TextVectorization
    "sequential_text_model(tf, keras, np)", "functional_multi_hot_model(tf, keras, np)",
    "dataset_map_model(tf, keras, np)",
]


def run(tf, keras, np, cases=None):
    """``{case: its encoded result}`` for ``cases`` (this module's by default)."""
    scope = {"tf": tf, "keras": keras, "np": np, **{k: v for k, v in globals().items()
                                                     if not k.startswith("_")}}
    out = {}
    for case in CASES if cases is None else cases:
        try:
            out[case] = encode(eval(case, dict(scope)))  # noqa: S307
        except Exception as e:  # noqa: BLE001 - the error type is the reference
            out[case] = {"error": type(e).__name__}
    return out


def main():
    import keras
    import numpy as np
    import tensorflow as tf

    OUT.write_text(json.dumps({"keras_version": keras.__version__,
                               "cases": run(tf, keras, np)}, indent=0) + "\n")
    print(f"wrote {OUT} (Keras {keras.__version__})")


if __name__ == "__main__":
    main()
