"""Keras layers PReLU, Attention, AdditiveAttention, TimeDistributed, the noise layers
(GaussianNoise, GaussianDropout, AlphaDropout, SpatialDropout1D/2D/3D) and
ActivityRegularization, and Keras 3's activity-regularizer rule (one loss per output,
divided by the batch size). Expected values are written out in NumPy from Keras 3.15's
definitions (checked against Keras 3.15 with the TensorFlow backend when these layers were
written); gradients by central differences."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras
from tapegrad.testing import check_grads

RNG = np.random.default_rng(8)
Q = RNG.standard_normal((2, 3, 4)).astype("float32")
V = RNG.standard_normal((2, 5, 4)).astype("float32")
K = RNG.standard_normal((2, 5, 4)).astype("float32")
QM = np.array([[1, 1, 0], [1, 0, 1]], bool)
VM = np.array([[1, 1, 1, 0, 0], [1, 0, 1, 1, 1]], bool)


def _softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _attend(scores, v, q_mask=None, keep=None):
    if keep is not None:
        scores = np.where(keep, scores, scores - 1e9)
    w = _softmax(scores)
    out = w @ v
    if q_mask is not None:
        out = np.where(q_mask[..., None], out, 0.0)
    return out, w


# ---- PReLU -----------------------------------------------------------------------------
def test_prelu_values_shared_axes_and_gradient():
    x = RNG.standard_normal((2, 4, 4, 3)).astype("float32")
    layer = keras.layers.PReLU(shared_axes=[1, 2])
    layer(x)
    assert [tuple(w.shape) for w in layer.weights] == [(1, 1, 3)]
    assert np.all(layer.get_weights()[0] == 0)  # Keras's default alpha: zeros
    alpha = np.array([[[0.1, 0.2, -0.3]]], "float32")
    layer.set_weights([alpha])
    np.testing.assert_array_equal(layer(x).numpy(), np.maximum(x, 0) - alpha * np.maximum(-x, 0))
    with pytest.raises(ValueError):  # the channel axis is fixed by the build
        layer(np.ones((2, 4, 4, 5), "float32"))
    full = keras.layers.PReLU(alpha_initializer="ones")
    full(x)
    assert tuple(full.alpha.shape) == (4, 4, 3)
    check_grads(lambda a, z: tf.nn.relu(z) - a * tf.nn.relu(-z),
                [alpha.astype("float64"), x[0].astype("float64") + 0.05], order=1)


def test_prelu_trains_alpha():
    x = np.linspace(-2, 2, 16, dtype="float32").reshape(8, 2)
    y = np.where(x > 0, x, 0.5 * x)
    model = keras.Sequential([keras.Input((2,)), keras.layers.PReLU()])
    model.compile(optimizer=keras.optimizers.SGD(0.5), loss="mse")
    model.fit(x, y, epochs=60, verbose=0)
    np.testing.assert_allclose(model.layers[0].get_weights()[0], 0.5, atol=1e-3)


# ---- Attention -------------------------------------------------------------------------
def test_dot_attention_matches_its_definition():
    out, w = keras.layers.Attention()([Q, V, K], return_attention_scores=True)
    ref, ref_w = _attend(Q @ K.transpose(0, 2, 1), V)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w.numpy(), ref_w, rtol=1e-5, atol=1e-6)
    # key defaults to value
    np.testing.assert_allclose(keras.layers.Attention()([Q, V]).numpy(),
                               _attend(Q @ V.transpose(0, 2, 1), V)[0], rtol=1e-5, atol=1e-6)


def test_attention_masks_and_causal_mask():
    layer = keras.layers.Attention()
    out = layer([Q, V], mask=[QM, VM])
    keep = VM[:, None, :]
    ref, _ = _attend(Q @ V.transpose(0, 2, 1), V, q_mask=QM, keep=keep)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-6)
    q5 = RNG.standard_normal((2, 5, 4)).astype("float32")
    out, w = layer([q5, V], use_causal_mask=True, return_attention_scores=True)
    causal = np.tri(5, 5, dtype=bool)[None]
    ref, ref_w = _attend(q5 @ V.transpose(0, 2, 1), V, keep=causal)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-6)
    assert np.all(w.numpy()[:, np.triu_indices(5, 1)[0], np.triu_indices(5, 1)[1]] == 0)


def test_attention_scale_and_concat_scores():
    layer = keras.layers.Attention(use_scale=True, score_mode="concat")
    layer([Q, V, K])
    assert [w.name for w in layer.weights] == ["scale", "concat_score_weight"]
    layer.set_weights([np.float32(0.7), np.float32(1.3)])
    s = 1.3 * np.tanh(0.7 * (Q[:, :, None, :] + K[:, None, :, :])).sum(-1)
    np.testing.assert_allclose(layer([Q, V, K]).numpy(), _attend(s, V)[0], rtol=1e-5,
                               atol=1e-6)
    with pytest.raises(ValueError, match="score_mode"):
        keras.layers.Attention(score_mode="general")
    with pytest.raises(ValueError, match="list of inputs"):
        keras.layers.Attention()(Q)


def test_additive_attention():
    layer = keras.layers.AdditiveAttention()
    layer([Q, V, K])
    scale = layer.get_weights()[0]
    assert scale.shape == (4,)
    s = (scale * np.tanh(Q[:, :, None, :] + K[:, None, :, :])).sum(-1)
    np.testing.assert_allclose(layer([Q, V, K]).numpy(), _attend(s, V)[0], rtol=1e-5,
                               atol=1e-6)
    plain = keras.layers.AdditiveAttention(use_scale=False)
    out = plain([Q, V], mask=[QM, VM])
    s = np.tanh(Q[:, :, None, :] + V[:, None, :, :]).sum(-1)
    np.testing.assert_allclose(out.numpy(), _attend(s, V, QM, VM[:, None, :])[0], rtol=1e-5,
                               atol=1e-6)
    assert plain.weights == []


def test_attention_gradient_and_functional_model():
    def f(q, v):
        return keras.layers.Attention(dtype="float64")([q, v])
    check_grads(f, [Q[:1].astype("float64"), V[:1].astype("float64")], order=1)
    qi, vi = keras.Input((3, 4)), keras.Input((5, 4))
    model = keras.Model([qi, vi], keras.layers.Attention()([qi, vi]))
    assert tuple(model([Q, V]).shape) == (2, 3, 4)


# ---- TimeDistributed ---------------------------------------------------------------------
def test_time_distributed_dense_is_per_step():
    x = RNG.standard_normal((2, 4, 5)).astype("float32")
    layer = keras.layers.TimeDistributed(keras.layers.Dense(3))
    out = layer(x)
    kernel, bias = layer.get_weights()
    assert kernel.shape == (5, 3)
    ref = np.stack([x[:, t] @ kernel + bias for t in range(4)], axis=1)
    np.testing.assert_array_equal(out.numpy(), ref)
    assert layer.compute_output_shape((None, 4, 5)) == (None, 4, 3)


def test_time_distributed_conv_in_a_trained_model_saves_and_loads(tmp_path):
    x = RNG.standard_normal((6, 3, 6, 6, 2)).astype("float32")
    y = RNG.standard_normal((6, 3, 4)).astype("float32")
    model = keras.Sequential([
        keras.Input((3, 6, 6, 2)),
        keras.layers.TimeDistributed(keras.layers.Conv2D(4, 3, activation="relu")),
        keras.layers.TimeDistributed(keras.layers.GlobalAveragePooling2D()),
    ])
    model.compile(optimizer="adam", loss="mse")
    model.fit(x, y, epochs=2, verbose=0)
    path = tmp_path / "td.keras"
    model.save(path)
    again = keras.models.load_model(path)
    np.testing.assert_array_equal(again.predict(x, verbose=0), model.predict(x, verbose=0))


def test_time_distributed_errors():
    with pytest.raises(ValueError, match="Layer` instance"):
        keras.layers.TimeDistributed(lambda z: z)
    with pytest.raises(ValueError, match="at least 3 dimensions"):
        keras.layers.TimeDistributed(keras.layers.Dense(2))(np.ones((2, 3), "float32"))


# ---- noise layers ------------------------------------------------------------------------
NOISE = [lambda: keras.layers.GaussianNoise(0.5), lambda: keras.layers.GaussianDropout(0.3),
         lambda: keras.layers.AlphaDropout(0.2), lambda: keras.layers.SpatialDropout1D(0.5)]


@pytest.mark.parametrize("make", NOISE)
def test_noise_layers_are_the_identity_in_inference(make):
    x = RNG.standard_normal((4, 6, 8)).astype("float32")
    layer = make()
    assert layer(x).numpy() is not None
    np.testing.assert_array_equal(layer(x).numpy(), x)
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)


def test_noise_statistics_while_training():
    z = RNG.standard_normal((400, 500)).astype("float32")
    gn = keras.layers.GaussianNoise(0.5)(z, training=True).numpy() - z
    assert abs(gn.mean()) < 0.01 and abs(gn.std() - 0.5) < 0.01
    gd = keras.layers.GaussianDropout(0.3)(np.ones_like(z), training=True).numpy()
    assert abs(gd.mean() - 1) < 0.01 and abs(gd.std() - np.sqrt(0.3 / 0.7)) < 0.01
    ad = keras.layers.AlphaDropout(0.2)(z, training=True).numpy()  # keeps mean 0, variance 1
    assert abs(ad.mean()) < 0.01 and abs(ad.std() - 1) < 0.01


@pytest.mark.parametrize("layer, shape, kept", [
    (lambda: keras.layers.SpatialDropout1D(0.5), (8, 6, 16), (8, 1, 16)),
    (lambda: keras.layers.SpatialDropout2D(0.5), (8, 3, 3, 16), (8, 1, 1, 16)),
    (lambda: keras.layers.SpatialDropout2D(0.5, data_format="channels_first"), (8, 16, 3, 3),
     (8, 16, 1, 1)),
    (lambda: keras.layers.SpatialDropout3D(0.5), (8, 2, 2, 2, 16), (8, 1, 1, 1, 16)),
])
def test_spatial_dropout_drops_whole_feature_maps(layer, shape, kept):
    out = layer()(np.ones(shape, "float32"), training=True).numpy()
    assert set(np.unique(out)) <= {0.0, 2.0} and len(np.unique(out)) == 2
    axes = tuple(i for i, (a, b) in enumerate(zip(shape, kept)) if a != b)
    np.testing.assert_array_equal(out, np.broadcast_to(out.max(axis=axes, keepdims=True), shape))
    with pytest.raises(ValueError):
        layer()(np.ones(shape[:-1], "float32"), training=True)


def test_seeded_noise_layers_repeat_and_bad_rates_raise():
    x = np.ones((3, 4), "float32")
    a = keras.layers.GaussianNoise(0.2, seed=3)(x, training=True).numpy()
    b = keras.layers.GaussianNoise(0.2, seed=3)(x, training=True).numpy()
    np.testing.assert_array_equal(a, b)
    layer = keras.layers.GaussianNoise(0.2, seed=3)
    assert not np.array_equal(layer(x, training=True).numpy(), layer(x, training=True).numpy())
    for bad in (lambda: keras.layers.GaussianNoise(1.5), lambda: keras.layers.GaussianDropout(-0.1),
                lambda: keras.layers.SpatialDropout2D(2.0)):
        with pytest.raises(ValueError, match="between 0 and 1"):
            bad()


def test_noise_layer_gradient_is_the_noise():
    x = tf.constant(RNG.standard_normal((5, 7)).astype("float32"))
    layer = keras.layers.GaussianDropout(0.3, seed=1)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = layer(x, training=True)
        total = tf.reduce_sum(y)
    g = tape.gradient(total, x).numpy()
    np.testing.assert_allclose(g * x.numpy(), y.numpy(), rtol=1e-6, atol=1e-6)


# ---- activity regularization ------------------------------------------------------------
def test_activity_regularizer_is_divided_by_the_batch_size():
    x = RNG.standard_normal((4, 5)).astype("float32")
    layer = keras.layers.ActivityRegularization(l1=0.1, l2=0.2)
    np.testing.assert_array_equal(layer(x).numpy(), x)
    (loss,) = layer.losses
    np.testing.assert_allclose(float(loss), (0.1 * np.abs(x).sum() + 0.2 * (x * x).sum()) / 4,
                               rtol=1e-6)
    dense = keras.layers.Dense(3, kernel_initializer="ones", activity_regularizer="l2")
    y = dense(x).numpy()
    np.testing.assert_allclose(float(dense.losses[0]), 0.01 * (y * y).sum() / 4, rtol=1e-6)
    empty = keras.layers.ActivityRegularization(l1=0.1)
    empty(np.zeros((0, 3), "float32"))
    assert float(empty.losses[0]) == 0.0  # divide_no_nan: an empty batch adds 0, not nan


def test_activity_regularizer_enters_the_training_loss():
    inp = keras.Input((5,))
    out = keras.layers.Dense(1, kernel_initializer="ones",
                             activity_regularizer=keras.regularizers.L1(0.5))(inp)
    model = keras.Model(inp, out)
    model.compile(loss="mse", optimizer="sgd")
    x = RNG.standard_normal((4, 5)).astype("float32")
    pred = x.sum(1, keepdims=True)
    expected = (pred ** 2).mean() + 0.5 * np.abs(pred).sum() / 4
    np.testing.assert_allclose(model.evaluate(x, np.zeros((4, 1)), verbose=0), expected,
                               rtol=1e-5)


def test_attention_dropout_with_a_seed_repeats_across_layers_not_across_calls():
    def layer():
        return keras.layers.Attention(dropout=0.5, seed=4)
    a, b = layer(), layer()
    first = a([Q, V], training=True).numpy()
    np.testing.assert_array_equal(first, b([Q, V], training=True).numpy())
    assert not np.array_equal(first, a([Q, V], training=True).numpy())
    np.testing.assert_array_equal(a([Q, V]).numpy(), keras.layers.Attention()([Q, V]).numpy())
