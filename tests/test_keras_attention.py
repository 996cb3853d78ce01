"""``MultiHeadAttention`` and ``EinsumDense`` as Keras 3 computes them (checked against a
NumPy transcription of its equations), and keras.io's "Text classification with
Transformer" block trained, compared eager against ``tf.function``, saved and reloaded."""
import numpy as np
import pytest

from tapegrad import keras
from tapegrad.keras import layers, ops
from tapegrad.testing import check_grads


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _reference(mha, q, v, k=None, mask=None, fast=True):
    """Keras 3's MultiHeadAttention in NumPy from the layer's weights."""
    k = v if k is None else k
    wq, bq, wk, bk, wv, bv, wo, bo = [w.numpy().astype(np.float64) for w in mha.weights]
    Q = np.einsum("abc,cde->abde", q, wq) + bq
    K = np.einsum("abc,cde->abde", k, wk) + bk
    V = np.einsum("abc,cde->abde", v, wv) + bv
    # Keras casts the Python scale with tf.cast, which rounds it to float32 first
    scale = np.float64(np.float32(1 / np.sqrt(mha.key_dim)))
    logits = np.einsum("BTNH,BSNH->BNTS", Q, K) * scale
    if mask is not None:
        m = np.broadcast_to(mask[:, None], logits.shape)
        logits = np.where(m, logits, -0.7 * 3.38953e38)
    probs = _softmax(logits)
    if mask is not None and not fast:  # the scores' path: a fully masked row is zeros
        probs = np.where(m, probs, 0.0)
    attended = np.einsum("BNTS,BSNH->BTNH", probs, V)
    return np.einsum("abcd,cde->abe", attended, wo) + bo, probs


def _mha(**kwargs):
    keras.utils.set_random_seed(0)
    return layers.MultiHeadAttention(**kwargs)


def test_weights_shapes_and_order_are_keras():
    mha = _mha(num_heads=2, key_dim=3)
    out, scores = mha(np.ones((2, 4, 5)), np.ones((2, 6, 7)), return_attention_scores=True)
    assert out.shape == (2, 4, 5) and scores.shape == (2, 2, 4, 6)
    assert [tuple(w.shape) for w in mha.weights] == [(5, 2, 3), (2, 3), (7, 2, 3), (2, 3),
                                                     (7, 2, 3), (2, 3), (2, 3, 5), (5,)]
    assert [layer.name for layer in mha._layers if isinstance(layer, layers.EinsumDense)] \
        == ["query", "key", "value", "attention_output"]
    other = _mha(num_heads=3, key_dim=2, value_dim=4, output_shape=6, use_bias=False)
    assert other(np.ones((1, 2, 5)), np.ones((1, 3, 5))).shape == (1, 2, 6)
    assert [tuple(w.shape) for w in other.weights] == [(5, 3, 2), (5, 3, 2), (5, 3, 4),
                                                       (3, 4, 6)]


@pytest.mark.parametrize("scores", [False, True])
def test_values_masks_and_causal_attention_match_the_equations(scores):
    rng = np.random.default_rng(0)
    keras.backend.set_floatx("float64")
    try:
        mha = _mha(num_heads=2, key_dim=3)
        q, v, k = rng.normal(size=(2, 4, 5)), rng.normal(size=(2, 6, 5)), rng.normal(
            size=(2, 6, 5))
        mha(q, v, k)
        for w in mha.weights:
            w.assign(rng.normal(0, 0.5, w.shape))
        mask = rng.random((2, 4, 6)) > 0.3
        mask[0, 1] = False  # a query that may attend to nothing
        causal = np.broadcast_to(np.tril(np.ones((4, 6), bool)), (2, 4, 6))
        for kwargs, m in (({}, None), ({"attention_mask": mask}, mask),
                          ({"use_causal_mask": True}, causal),
                          ({"attention_mask": mask, "use_causal_mask": True}, mask & causal)):
            got = mha(q, v, k, return_attention_scores=scores, **kwargs)
            out, probs = _reference(mha, q, v, k, m, fast=not scores)
            np.testing.assert_allclose((got[0] if scores else got).numpy(), out, rtol=1e-10,
                                       atol=1e-12)
            if scores:
                np.testing.assert_allclose(got[1].numpy(), probs, rtol=1e-10, atol=1e-12)
        check_grads(lambda q, v: mha(q, v, attention_mask=mask, return_attention_scores=scores),
                    [q, v], order=1)
    finally:
        keras.backend.set_floatx("float32")


def test_padding_masks_of_embeddings_reach_the_attention():
    keras.utils.set_random_seed(0)
    inp = keras.Input((6,), dtype="int32")
    emb = layers.Embedding(10, 4, mask_zero=True)
    mha = layers.MultiHeadAttention(2, 3)
    model = keras.Model(inp, mha(emb(inp), emb(inp)))
    x = np.array([[1, 2, 3, 0, 0, 0], [4, 5, 6, 7, 8, 9]])
    keep = x != 0
    e = emb(x).numpy()
    expected = mha(e, e, attention_mask=keep[:, :, None] & keep[:, None, :]).numpy()
    np.testing.assert_allclose(model(x).numpy(), expected, rtol=1e-6)


def test_einsum_dense():
    keras.utils.set_random_seed(0)
    layer = layers.EinsumDense("abc,cd->abd", output_shape=(None, 4), bias_axes="d",
                               activation="relu")
    x = np.random.default_rng(0).normal(size=(2, 5, 3)).astype("float32")
    out = layer(x)
    assert out.shape == (2, 5, 4) and [tuple(w.shape) for w in layer.weights] == [(3, 4), (4,)]
    np.testing.assert_allclose(out.numpy(), np.maximum(x @ layer.kernel.numpy()
                                                       + layer.bias.numpy(), 0), rtol=1e-5,
                               atol=1e-7)
    dense = layers.EinsumDense("ab,bc->ac", output_shape=4, bias_axes="c")
    assert dense(np.ones((2, 3))).shape == (2, 4)
    with pytest.raises(ValueError, match="output_shape"):
        layers.EinsumDense("ab,bc->ac", output_shape=(4, 5))(np.ones((2, 3)))


class TransformerBlock(layers.Layer):
    def __init__(self, embed_dim, num_heads, ff_dim, rate=0.1, **kwargs):
        super().__init__(**kwargs)
        self.att = layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
        self.ffn = keras.Sequential([layers.Dense(ff_dim, activation="relu"),
                                     layers.Dense(embed_dim)])
        self.layernorm1 = layers.LayerNormalization(epsilon=1e-6)
        self.layernorm2 = layers.LayerNormalization(epsilon=1e-6)
        self.dropout1 = layers.Dropout(rate)
        self.dropout2 = layers.Dropout(rate)

    def call(self, inputs):
        attn_output = self.dropout1(self.att(inputs, inputs))
        out1 = self.layernorm1(inputs + attn_output)
        return self.layernorm2(out1 + self.dropout2(self.ffn(out1)))


class TokenAndPositionEmbedding(layers.Layer):
    def __init__(self, maxlen, vocab_size, embed_dim, **kwargs):
        super().__init__(**kwargs)
        self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
        self.pos_emb = layers.Embedding(input_dim=maxlen, output_dim=embed_dim)

    def call(self, x):
        positions = self.pos_emb(ops.arange(start=0, stop=ops.shape(x)[-1], step=1))
        return self.token_emb(x) + positions


def _classifier(vocab_size=30, maxlen=8, embed_dim=8):
    keras.utils.set_random_seed(0)
    inputs = layers.Input(shape=(maxlen,))
    x = TokenAndPositionEmbedding(maxlen, vocab_size, embed_dim)(inputs)
    x = TransformerBlock(embed_dim, num_heads=2, ff_dim=16)(x)
    x = layers.Dropout(0.1)(layers.GlobalAveragePooling1D()(x))
    x = layers.Dropout(0.1)(layers.Dense(8, activation="relu")(x))
    return keras.Model(inputs=inputs, outputs=layers.Dense(2, activation="softmax")(x))


def test_text_classification_with_a_transformer(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 30, (64, 8))
    y = (x == 7).any(axis=1).astype("int64")  # does the text hold word 7?
    model = _classifier()
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    history = model.fit(x, y, batch_size=16, epochs=15, validation_data=(x[:16], y[:16]),
                        verbose=0)
    assert history.history["loss"][-1] < 0.3 * history.history["loss"][0]
    assert history.history["accuracy"][-1] > 0.9
    compiled = _classifier()
    compiled.compile(optimizer=keras.optimizers.Adam(1e-2),
                     loss="sparse_categorical_crossentropy", jit_compile=True)
    eager = _classifier()
    eager.compile(optimizer=keras.optimizers.Adam(1e-2), loss="sparse_categorical_crossentropy")
    keras.utils.set_random_seed(1)
    a = eager.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0).history["loss"]
    keras.utils.set_random_seed(1)
    b = compiled.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0).history["loss"]
    np.testing.assert_allclose(a, b, rtol=1e-5)
    path = str(tmp_path / "transformer.keras")
    model.save(path)
    loaded = keras.models.load_model(path, custom_objects={
        "TransformerBlock": TransformerBlock,
        "TokenAndPositionEmbedding": TokenAndPositionEmbedding})
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0),
                               rtol=1e-5, atol=1e-7)
