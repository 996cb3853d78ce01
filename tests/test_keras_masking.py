"""Keras masks in tapegrad.keras: Embedding(mask_zero=True) and Masking make them, layers
that support masking pass them on (merges combine them), GlobalAveragePooling1D, Softmax
and the losses and metrics use them, a layer that cannot warns, and nothing is kept once
the tensors are gone. Numbers against Keras: tests/test_keras_reference_extra.py."""
import gc
import os
import warnings

import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras
from tapegrad.keras import masking

TOKENS = np.array([[4, 2, 7, 0, 0], [3, 0, 0, 0, 0], [1, 5, 6, 8, 2]])


def test_embedding_mask_flows_through_a_sequential_and_weighs_the_loss():
    model = keras.Sequential([keras.layers.Embedding(9, 4, mask_zero=True),
                              keras.layers.Dense(8, activation="relu"),
                              keras.layers.Dropout(0.1),
                              keras.layers.LayerNormalization(),
                              keras.layers.Dense(3, activation="softmax")])
    out = model(TOKENS)
    np.testing.assert_array_equal(masking.get_keras_mask(out).numpy(), TOKENS != 0)
    y = np.array([[0, 1, 2, 1, 1], [2, 0, 0, 0, 0], [1, 1, 0, 2, 2]])
    per_step = keras.losses.sparse_categorical_crossentropy(y, out.numpy()).numpy()
    loss = keras.losses.SparseCategoricalCrossentropy()(y, out)
    np.testing.assert_allclose(float(loss), per_step[TOKENS != 0].mean(), rtol=1e-6)
    acc = keras.metrics.SparseCategoricalAccuracy()
    acc.update_state(y, out)
    hits = (out.numpy().argmax(-1) == y)[TOKENS != 0]
    np.testing.assert_allclose(float(acc.result()), hits.mean(), rtol=1e-6)
    # padding changes nothing the model reports: a longer padding gives the same loss
    wide = np.pad(TOKENS, ((0, 0), (0, 3)))
    wide_y = np.pad(y, ((0, 0), (0, 3)), constant_values=2)
    loss_wide = keras.losses.SparseCategoricalCrossentropy()(wide_y, model(wide))
    np.testing.assert_allclose(float(loss_wide), float(loss), rtol=1e-6)


def test_masked_gradients_ignore_padding_in_tf_function():
    model = keras.Sequential([keras.layers.Embedding(9, 3, mask_zero=True),
                              keras.layers.GlobalAveragePooling1D(),
                              keras.layers.Dense(1)])
    model(TOKENS)

    @tf.function
    def grads(tokens):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(tokens))
        # the table's gradient is IndexedSlices, as in TensorFlow: made dense here
        return tf.convert_to_tensor(tape.gradient(loss, model.trainable_variables)[0])
    g = grads(tf.constant(TOKENS)).numpy()
    assert np.all(g[0] == 0)  # the padding row of the table gets no gradient
    eager = keras.layers.GlobalAveragePooling1D()(model.layers[0](TOKENS)).numpy()
    table = model.layers[0].embeddings.numpy()
    expected = np.stack([table[t[t != 0]].mean(0) for t in TOKENS])
    np.testing.assert_allclose(eager, expected, rtol=1e-6)


def test_masking_layer_zeroes_and_masks_steps():
    x = np.array([[[1.0, 2.0], [0.0, 0.0], [3.0, 0.0]],
                  [[-1.0, -1.0], [-1.0, -1.0], [5.0, 6.0]]], "float32")
    out = keras.layers.Masking(mask_value=-1.0)(x)
    np.testing.assert_array_equal(masking.get_keras_mask(out).numpy(),
                                  [[True, True, True], [False, False, True]])
    np.testing.assert_array_equal(out.numpy()[1, :2], 0.0)
    mean = keras.layers.GlobalAveragePooling1D()(out)
    np.testing.assert_allclose(mean.numpy()[1], [5.0, 6.0])


def test_softmax_mask_lambda_mask_and_merges():
    logits = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]], "float32")
    keep = np.array([[True, False, True], [False, False, False]])
    out = keras.layers.Softmax()(logits, mask=keep).numpy()
    e = np.exp(logits[0, [0, 2]] - 3.0)
    np.testing.assert_allclose(out[0], [e[0] / e.sum(), 0.0, e[1] / e.sum()], rtol=1e-6)
    np.testing.assert_array_equal(out[1], 0.0)  # a fully masked row
    emb = keras.layers.Embedding(9, 2, mask_zero=True)
    plain = keras.layers.Embedding(9, 2)
    a, b = emb(TOKENS), plain(TOKENS)
    assert masking.get_keras_mask(keras.layers.Add()([a, b])) is None  # one has none
    np.testing.assert_array_equal(
        masking.get_keras_mask(keras.layers.Concatenate()([a, b])).numpy(),
        np.ones_like(TOKENS, bool))  # the unmasked input counts as all True
    shifted = np.roll(TOKENS, 1, axis=1)
    both = keras.layers.Maximum()([a, emb(shifted)])
    np.testing.assert_array_equal(masking.get_keras_mask(both).numpy(),
                                  (TOKENS != 0) | (shifted != 0))
    flipped = keras.layers.Lambda(lambda t: 2 * t, mask=lambda t, m: tf.logical_not(m))(a)
    np.testing.assert_array_equal(masking.get_keras_mask(flipped).numpy(), TOKENS == 0)
    same = keras.layers.Lambda(lambda t: 2 * t)(a)  # the input's mask, by default
    np.testing.assert_array_equal(masking.get_keras_mask(same).numpy(), TOKENS != 0)


def test_a_layer_without_masking_warns_and_drops_the_mask():
    a = keras.layers.Embedding(9, 2, mask_zero=True)(TOKENS)
    with pytest.warns(UserWarning, match="does not support masking and will therefore "
                                         "destroy the mask"):
        out = keras.layers.Conv1D(2, 2)(a)
    assert masking.get_keras_mask(out) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no mask, no warning
        keras.layers.Conv1D(2, 2)(keras.layers.Embedding(9, 2)(TOKENS))


def test_mask_table_forgets_dead_tensors():
    gc.collect()
    before = len(masking._TABLE)
    for _ in range(5):
        keras.layers.Embedding(9, 2, mask_zero=True)(TOKENS)
    gc.collect()
    assert len(masking._TABLE) == before
    assert masking.get_keras_mask(tf.constant([1.0])) is None


def test_masked_model_saves_and_fits_compiled(tmp_path):
    inp = keras.Input((5,), dtype="int32")
    h = keras.layers.Embedding(9, 4, mask_zero=True)(inp)
    out = keras.layers.Dense(3, activation="softmax")(h)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"], jit_compile=True)
    y = np.array([[0, 1, 2, 0, 0], [2, 0, 0, 0, 0], [1, 1, 0, 2, 2]])
    model.fit(TOKENS, y, epochs=2, verbose=0)
    path = os.path.join(tmp_path, "tagger.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    assert loaded.layers[1].mask_zero
    assert loaded.evaluate(TOKENS, y, verbose=0) == model.evaluate(TOKENS, y, verbose=0)
