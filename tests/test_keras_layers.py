"""tapegrad.keras layers: shapes, weights, training flag, derivatives and Keras's errors."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras
from tapegrad.keras import layers
from tapegrad.testing import check_grads


@pytest.fixture
def float64():
    keras.backend.set_floatx("float64")
    yield
    keras.backend.set_floatx("float32")


def test_import_forms_are_one_package():
    import tapegrad.keras as k2
    from tapegrad.keras import layers as l2
    assert k2 is keras is tf.keras and l2 is layers
    assert tf.optimizers is keras.optimizers and tf.losses is keras.losses
    assert tf.metrics is keras.metrics and tf.initializers is keras.initializers


def test_dense_builds_on_first_call_with_keras_names_and_shapes():
    d = layers.Dense(4, activation="relu")
    assert not d.built and d.weights == []
    y = d(np.ones((2, 3)))
    assert d.built and y.shape == (2, 4) and y.dtype == np.float32
    assert [w.name for w in d.weights] == ["kernel", "bias"]
    assert [tuple(w.shape) for w in d.weights] == [(3, 4), (4,)]
    np.testing.assert_array_equal(d.bias.numpy(), 0)
    k = d.kernel.numpy()
    limit = np.sqrt(6 / 7)  # glorot uniform, fan_in + fan_out = 7
    assert np.all(np.abs(k) <= limit) and k.std() > 0
    x = np.random.default_rng(0).normal(size=(2, 3)).astype("float32")
    np.testing.assert_allclose(d(x).numpy(), np.maximum(x @ k, 0), rtol=1e-6)


def test_dense_on_rank_3_input_acts_on_last_axis():
    d = layers.Dense(2)
    x = np.random.default_rng(1).normal(size=(2, 5, 3)).astype("float32")
    y = d(x)
    np.testing.assert_allclose(y.numpy(), x @ d.kernel.numpy() + d.bias.numpy(), rtol=1e-5)


def test_wrong_rank_and_channel_count_raise_keras_messages():
    with pytest.raises(ValueError, match="expected min_ndim=2, found ndim=1"):
        layers.Dense(3)(np.ones(3))
    d = layers.Dense(3)
    d(np.ones((2, 4)))
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 4, "
                                         r"but received input with shape \(2, 5\)"):
        d(np.ones((2, 5)))
    with pytest.raises(ValueError, match="expected ndim=4, found ndim=3"):
        layers.ZeroPadding2D()(np.ones((1, 2, 3)))
    bn = layers.BatchNormalization()
    bn(np.ones((2, 3)))
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 3"):
        bn(np.ones((2, 5)))


def test_unknown_activation_name():
    with pytest.raises(ValueError, match="Could not interpret activation function identifier: "
                                         "nope"):
        layers.Dense(2, activation="nope")
    assert keras.activations.get("swish") is keras.activations.silu
    for name in ("relu", "tanh", "sigmoid", "softmax", "gelu", "swish", "linear", "elu",
                 "selu", "softplus", "leaky_relu", "relu6", "softsign", "mish",
                 "hard_sigmoid", "exponential", "log_softmax", "silu"):
        y = keras.activations.get(name)(tf.constant([[-1.0, 0.5, 2.0]]))
        assert y.shape == (1, 3) and np.all(np.isfinite(y.numpy())), name


def test_set_weights_checks_count_and_shapes():
    d = layers.Dense(3)
    d(np.ones((1, 4)))
    with pytest.raises(ValueError, match="weight shape \\(4, 3\\) is not compatible with "
                                         "provided weight shape \\(4, 2\\)"):
        d.set_weights([np.ones((4, 2)), np.ones(3)])
    with pytest.raises(ValueError, match="with a weight list of length 1, but the layer was "
                                         "expecting 2 weights"):
        d.set_weights([np.ones((4, 3))])
    before = d.get_weights()
    with pytest.raises(ValueError):
        d.set_weights([np.zeros((4, 3)), np.ones(2)])
    # nothing is assigned when any shape is wrong
    assert all((a == b).all() for a, b in zip(before, d.get_weights()))
    d.set_weights([np.full((4, 3), 2.0), np.ones(3)])
    np.testing.assert_array_equal(d(np.ones((1, 4))).numpy(), 9.0)


def test_subclassed_layer_with_add_weight_and_training_flag():
    class Noisy(layers.Layer):
        def __init__(self, units, **kw):
            super().__init__(**kw)
            self.units = units

        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], self.units), name="w",
                                     initializer="ones")
            self.count = self.add_weight(shape=(), name="count", initializer="zeros",
                                         trainable=False)

        def call(self, x, training=None):
            seen.append(training)
            return tf.matmul(x, self.w)

    seen = []
    layer = Noisy(2)
    layer(np.ones((1, 3)))
    layer(np.ones((1, 3)), training=True)
    assert seen == [None, True]
    assert [w.name for w in layer.trainable_weights] == ["w"]
    assert [w.name for w in layer.non_trainable_weights] == ["count"]
    layer.trainable = False
    assert layer.trainable_weights == [] and len(layer.non_trainable_weights) == 2


def test_training_flag_propagates_to_nested_layers():
    seen = []

    class Probe(layers.Layer):
        def call(self, x, training=None):
            seen.append(training)
            return x

    class Outer(keras.Model):
        def __init__(self):
            super().__init__()
            self.probe = Probe()

        def call(self, x):
            return self.probe(x)

    m = Outer()
    m(np.ones((1, 2)), training=True)
    m(np.ones((1, 2)), training=False)
    m(np.ones((1, 2)))
    assert seen == [True, False, None]


def test_dropout_is_identity_unless_training():
    x = np.ones((200, 50), np.float32)
    drop = layers.Dropout(0.25)
    np.testing.assert_array_equal(drop(x).numpy(), x)
    y = drop(x, training=True).numpy()
    kept = y != 0
    assert 0.7 < kept.mean() < 0.8
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)
    with pytest.raises(ValueError, match="Expected a float value between 0 and 1"):
        layers.Dropout(1.5)


def test_batch_normalization_training_and_inference():
    rng = np.random.default_rng(0)
    x = rng.normal(2.0, 3.0, size=(64, 3)).astype("float32")
    bn = layers.BatchNormalization(momentum=0.9)
    y = bn(x, training=True).numpy()
    np.testing.assert_allclose(y.mean(0), 0, atol=1e-5)
    np.testing.assert_allclose(y.var(0), x.var(0) / (x.var(0) + 1e-3), rtol=1e-4)
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.1 * x.mean(0), rtol=1e-5)
    np.testing.assert_allclose(bn.moving_variance.numpy(), 0.9 + 0.1 * x.var(0), rtol=1e-5)
    y_inf = bn(x).numpy()
    expect = (x - bn.moving_mean.numpy()) / np.sqrt(bn.moving_variance.numpy() + 1e-3)
    np.testing.assert_allclose(y_inf, expect, rtol=1e-5, atol=1e-6)
    # a frozen BatchNormalization runs in inference mode, as in Keras
    bn.trainable = False
    np.testing.assert_allclose(bn(x, training=True).numpy(), y_inf, rtol=1e-6)


def test_batch_normalization_channels_axis_1():
    x = np.random.default_rng(1).normal(size=(4, 3, 5)).astype("float32")
    bn = layers.BatchNormalization(axis=1)
    y = bn(x, training=True).numpy()
    assert bn.gamma.shape == (3,)
    m, v = x.mean((0, 2), keepdims=True), x.var((0, 2), keepdims=True)
    np.testing.assert_allclose(y, (x - m) / np.sqrt(v + 1e-3), rtol=1e-4, atol=1e-5)


def test_layer_normalization():
    x = np.random.default_rng(2).normal(size=(4, 6)).astype("float32")
    y = layers.LayerNormalization()(x).numpy()
    m, v = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    np.testing.assert_allclose(y, (x - m) / np.sqrt(v + 1e-3), rtol=1e-4, atol=1e-5)


def test_embedding_flatten_reshape_merge_and_spatial_layers():
    e = layers.Embedding(10, 4)
    out = e(np.array([[1, 2], [3, 9]]))
    assert out.shape == (2, 2, 4)
    np.testing.assert_array_equal(out.numpy()[1, 1], e.embeddings.numpy()[9])
    assert np.abs(e.embeddings.numpy()).max() <= 0.05
    x = np.arange(24, dtype="float32").reshape(2, 3, 4)
    assert layers.Flatten()(x).shape == (2, 12)
    assert layers.Reshape((4, 3))(x).shape == (2, 4, 3)
    assert layers.Reshape((-1,))(x).shape == (2, 12)
    a, b = np.ones((2, 3), "float32"), np.full((2, 3), 2.0, "float32")
    np.testing.assert_array_equal(layers.Add()([a, b]).numpy(), 3.0)
    np.testing.assert_array_equal(layers.Multiply()([a, b]).numpy(), 2.0)
    assert layers.Concatenate(axis=0)([a, b]).shape == (4, 3)
    with pytest.raises(ValueError, match="requires inputs with matching shapes"):
        layers.Concatenate()([np.ones((2, 3)), np.ones((3, 3))])
    img = np.arange(8, dtype="float32").reshape(1, 2, 2, 2)
    up = layers.UpSampling2D((2, 3))(img).numpy()
    assert up.shape == (1, 4, 6, 2)
    np.testing.assert_array_equal(up, img.repeat(2, axis=1).repeat(3, axis=2))
    pad = layers.ZeroPadding2D(((1, 0), (2, 1)))(img).numpy()
    assert pad.shape == (1, 3, 5, 2) and pad[0, 0].sum() == 0
    np.testing.assert_array_equal(pad[0, 1:, 2:4], img[0])
    np.testing.assert_allclose(layers.GlobalAveragePooling2D()(img).numpy(), img.mean((1, 2)))
    np.testing.assert_allclose(layers.GlobalMaxPooling2D()(img).numpy(), img.max((1, 2)))


def test_activation_layers():
    x = tf.constant([[-2.0, -0.5, 0.5, 8.0]])
    np.testing.assert_allclose(layers.ReLU(max_value=6.0)(x).numpy(), [[0, 0, 0.5, 6]])
    np.testing.assert_allclose(layers.LeakyReLU()(x).numpy(), [[-0.6, -0.15, 0.5, 8]],
                               rtol=1e-6)
    np.testing.assert_allclose(layers.Softmax()(x).numpy().sum(), 1.0, rtol=1e-6)
    np.testing.assert_allclose(layers.Activation("tanh")(x).numpy(), np.tanh(x.numpy()),
                               rtol=1e-6)
    np.testing.assert_allclose(layers.Lambda(lambda t: t * 2)(x).numpy(), 2 * x.numpy())


def test_initializers_with_seeds():
    from tapegrad.keras import initializers as I
    for cls in (I.GlorotUniform, I.GlorotNormal, I.HeNormal, I.HeUniform, I.LecunNormal,
                I.RandomNormal, I.RandomUniform, I.Orthogonal):
        a = cls(seed=3)((30, 20)).numpy()
        np.testing.assert_array_equal(a, cls(seed=3)((30, 20)).numpy())
        assert not np.array_equal(a, cls(seed=4)((30, 20)).numpy()), cls
    he = I.HeUniform(seed=0)((400, 300)).numpy()
    assert np.abs(he).max() <= np.sqrt(6 / 400) and abs(he.std() - np.sqrt(2 / 400)) < 2e-3
    gn = I.GlorotNormal(seed=0)((400, 300)).numpy()
    assert abs(gn.std() - np.sqrt(2 / 700)) < 2e-3
    q = I.Orthogonal(seed=0)((5, 5)).numpy()
    np.testing.assert_allclose(q @ q.T, np.eye(5), atol=1e-5)
    np.testing.assert_array_equal(I.Constant(3.0)((2,)).numpy(), [3, 3])
    assert I.Zeros()((2, 2)).numpy().sum() == 0 and I.Ones()((2,)).numpy().sum() == 2
    with pytest.raises(ValueError, match="Could not interpret initializer identifier"):
        I.get("nope")
    # the same global seed gives the same model
    tf.random.set_seed(7)
    w1 = layers.Dense(3)
    w1(np.ones((1, 2)))
    tf.random.set_seed(7)
    w2 = layers.Dense(3)
    w2(np.ones((1, 2)))
    np.testing.assert_array_equal(w1.kernel.numpy(), w2.kernel.numpy())


def test_layer_gradients_match_central_differences(float64):
    tf.random.set_seed(0)
    model = keras.Sequential([
        layers.Dense(5, activation="tanh"), layers.LayerNormalization(),
        layers.Dense(4, activation="gelu"), layers.BatchNormalization(),
        layers.Dense(3, activation="softmax")])
    x = np.random.default_rng(0).normal(size=(6, 4))
    model(x, training=True)
    assert model.weights[0].dtype == np.float64
    check_grads(lambda t: model(t, training=True), [x], modes=("rev", "fwd"), order=1)
    check_grads(lambda t: model(t), [x], order=2)


def test_layers_from_float64_inputs_autocast_to_float32():
    d = layers.Dense(2)
    assert d(np.ones((1, 3), np.float64)).dtype == np.float32
    assert d(tf.constant(np.ones((1, 3)))).dtype == np.float32
    assert layers.Embedding(3, 2)(np.array([0, 2])).dtype == np.float32


def test_conv_layers_shapes_and_errors():
    conv = layers.Conv2D(4, 3, padding="same")
    x = np.random.default_rng(0).normal(size=(2, 6, 5, 3)).astype("float32")
    assert conv(x).shape == (2, 6, 5, 4) and conv.kernel.shape == (3, 3, 3, 4)
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 3, "
                                         r"but received input with shape \(2, 6, 5, 2\)"):
        conv(np.ones((2, 6, 5, 2)))
    with pytest.raises(ValueError, match="expected min_ndim=4, found ndim=3"):
        layers.Conv2D(2, 3)(np.ones((6, 5, 3)))
    with pytest.raises(ValueError, match="expected ndim=4, found ndim=3"):
        layers.MaxPooling2D()(np.ones((6, 5, 3)))
    with pytest.raises(ValueError, match="The `padding` argument must be one of"):
        layers.Conv2D(2, 3, padding="full")
    assert layers.Conv2DTranspose(2, 3, strides=2)(x).shape == (2, 13, 11, 2)
    assert layers.Conv1D(2, 3, padding="causal")(np.ones((1, 7, 2))).shape == (1, 7, 2)
    assert layers.AveragePooling2D(2)(x).shape == (2, 3, 2, 3)


def test_cnn_gradients_match_central_differences(float64):
    tf.random.set_seed(1)
    model = keras.Sequential([
        layers.Conv2D(3, 3, padding="same", activation="tanh"), layers.MaxPooling2D(),
        layers.Conv2DTranspose(2, 2, strides=2), layers.AveragePooling2D(2),
        layers.Flatten(), layers.Dense(2)])
    x = np.random.default_rng(3).normal(size=(2, 4, 4, 2))
    model(x)
    check_grads(lambda t: model(t), [x], modes=("rev",), order=1)
