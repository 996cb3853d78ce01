"""The Keras guides "The Functional API", "Making new layers and models via subclassing"
and "Transfer learning & fine-tuning", run with ``import tapegrad as tf`` on synthetic
data: models of several inputs and outputs by name, shared layers and nested models,
``layers.average``, a feature extractor from ``layer.output``, ``Model.from_config`` with
custom objects, ``add_weight`` / ``add_loss`` / ``build`` / ``get_config``, the guide's
VAE, a frozen base model with BatchNormalization in inference mode, and the
preprocessing layers ``Rescaling``, ``Normalization`` and ``RandomFlip``."""
import os

import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras
from tapegrad.keras import layers, ops
from tapegrad.testing import check_grads

from _keras_programs import CustomDense, Sampling


def test_functional_multi_input_multi_output_model_by_name(tmp_path):
    keras.utils.set_random_seed(0)
    num_tags, num_words, num_departments = 6, 50, 4
    title_input = keras.Input(shape=(None,), name="title")
    body_input = keras.Input(shape=(None,), name="body")
    tags_input = keras.Input(shape=(num_tags,), name="tags")
    title_features = layers.GlobalAveragePooling1D()(layers.Embedding(num_words, 8)(title_input))
    body_features = layers.GlobalAveragePooling1D()(layers.Embedding(num_words, 8)(body_input))
    x = layers.concatenate([title_features, body_features, tags_input])
    priority_pred = layers.Dense(1, name="priority")(x)
    department_pred = layers.Dense(num_departments, name="department")(x)
    model = keras.Model(inputs=[title_input, body_input, tags_input],
                        outputs={"priority": priority_pred, "department": department_pred})
    model.compile(optimizer=keras.optimizers.RMSprop(1e-3),
                  loss={"priority": keras.losses.BinaryCrossentropy(from_logits=True),
                        "department": keras.losses.CategoricalCrossentropy(from_logits=True)},
                  loss_weights={"priority": 1.0, "department": 0.2})
    rng = np.random.default_rng(0)
    inputs = {"title": rng.integers(num_words, size=(32, 5)),
              "body": rng.integers(num_words, size=(32, 12)),
              "tags": rng.integers(2, size=(32, num_tags)).astype("float32")}
    targets = {"priority": rng.random(size=(32, 1)),
               "department": rng.integers(2, size=(32, num_departments))}
    history = model.fit(inputs, targets, epochs=2, batch_size=16, verbose=0)
    h = history.history
    assert set(h) == {"loss", "priority_loss", "department_loss"}
    np.testing.assert_allclose(h["loss"], np.array(h["priority_loss"]) +
                               0.2 * np.array(h["department_loss"]), rtol=1e-5)
    # inputs given by name in any order are the list of inputs in the model's order
    shuffled = {k: inputs[k] for k in ("tags", "body", "title")}
    by_name = model.predict(shuffled, verbose=0)
    by_list = model.predict([inputs["title"], inputs["body"], inputs["tags"]], verbose=0)
    np.testing.assert_array_equal(by_name["department"], by_list["department"])
    with pytest.raises(ValueError, match="Missing data for input"):
        model({"title": inputs["title"], "body": inputs["body"]})
    model.save(tmp_path / "ticket.keras")
    loaded = keras.models.load_model(tmp_path / "ticket.keras")
    np.testing.assert_allclose(loaded.predict(inputs, verbose=0)["priority"],
                               model.predict(inputs, verbose=0)["priority"], rtol=1e-6)


def test_autoencoder_of_shared_encoder_and_decoder_models():
    keras.utils.set_random_seed(0)
    encoder_input = keras.Input(shape=(12, 12, 1), name="img")
    x = layers.Conv2D(4, 3, activation="relu")(encoder_input)
    x = layers.MaxPooling2D(2)(x)
    x = layers.Conv2D(4, 3, activation="relu")(x)
    encoder_output = layers.GlobalMaxPooling2D()(x)
    encoder = keras.Model(encoder_input, encoder_output, name="encoder")
    decoder_input = keras.Input(shape=(4,), name="encoded_img")
    x = layers.Reshape((2, 2, 1))(decoder_input)
    x = layers.Conv2DTranspose(4, 3, activation="relu")(x)
    x = layers.UpSampling2D(3)(x)
    decoder_output = layers.Conv2DTranspose(1, 3, activation="relu")(x)
    decoder = keras.Model(decoder_input, decoder_output, name="decoder")
    autoencoder_input = keras.Input(shape=(12, 12, 1), name="img")
    autoencoder = keras.Model(autoencoder_input, decoder(encoder(autoencoder_input)),
                              name="autoencoder")
    assert autoencoder.output_shape == (None, 14, 14, 1)
    img = np.random.default_rng(0).random((2, 12, 12, 1)).astype("float32")
    np.testing.assert_allclose(autoencoder(img).numpy(), decoder(encoder(img)).numpy(),
                               rtol=1e-6)
    assert len(autoencoder.trainable_weights) == len(encoder.trainable_weights) + len(
        decoder.trainable_weights)


def test_ensemble_average_and_other_merge_functions():
    def get_model():
        inputs = keras.Input(shape=(5,))
        return keras.Model(inputs, layers.Dense(1)(inputs))
    models = [get_model() for _ in range(3)]
    inputs = keras.Input(shape=(5,))
    ys = [m(inputs) for m in models]
    x = np.random.default_rng(0).random((4, 5)).astype("float32")
    outs = [m(x).numpy() for m in models]
    for fn, expected in ((layers.average, sum(outs) / 3), (layers.maximum, np.maximum(
            np.maximum(outs[0], outs[1]), outs[2])), (layers.minimum, np.minimum(
                np.minimum(outs[0], outs[1]), outs[2]))):
        np.testing.assert_allclose(keras.Model(inputs, fn(ys))(x).numpy(), expected,
                                   rtol=1e-6)
    np.testing.assert_allclose(keras.Model(inputs, layers.subtract(ys[:2]))(x).numpy(),
                               outs[0] - outs[1], rtol=1e-6)


def test_feature_extraction_from_layer_outputs():
    keras.utils.set_random_seed(0)
    inputs = keras.Input(shape=(10, 10, 3), name="img")
    x = layers.Conv2D(4, 3, activation="relu")(inputs)
    block_1_output = layers.MaxPooling2D(2)(x)
    x = layers.Conv2D(4, 3, activation="relu", padding="same")(block_1_output)
    block_2_output = layers.add([x, block_1_output])
    x = layers.GlobalAveragePooling2D()(block_2_output)
    outputs = layers.Dense(3)(layers.Dropout(0.5)(x))
    model = keras.Model(inputs, outputs, name="toy_resnet")
    features_list = [layer.output for layer in model.layers]
    assert features_list[0] is inputs and model.layers[1].input is inputs
    extractor = keras.Model(inputs=model.input, outputs=features_list)
    img = np.random.default_rng(0).random((2, 10, 10, 3)).astype("float32")
    features = extractor(img)
    assert [f.shape for f in features] == [(2, 10, 10, 3), (2, 8, 8, 4), (2, 4, 4, 4),
                                           (2, 4, 4, 4), (2, 4, 4, 4), (2, 4), (2, 4), (2, 3)]
    np.testing.assert_allclose(features[-1].numpy(), model(img).numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="never been called"):
        _ = layers.Dense(2).output


def test_from_config_with_a_custom_layer():
    inputs = keras.Input((4,))
    model = keras.Model(inputs, CustomDense(10)(inputs))
    config = model.get_config()
    new_model = keras.Model.from_config(config, custom_objects={"CustomDense": CustomDense})
    assert type(new_model.layers[1]) is CustomDense and new_model.layers[1].units == 10
    assert new_model(np.ones((2, 4))).shape == (2, 10)

    class Plain(keras.Model):
        def __init__(self, units=3, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.dense = layers.Dense(units)

        def call(self, x):
            return self.dense(x)

        def get_config(self):
            return {"units": self.units}
    assert Plain.from_config({"units": 5}).units == 5
    with pytest.raises(ValueError, match="Unrecognized keyword arguments"):
        Plain.from_config({"width": 5})  # Keras: the Layer refuses the unknown argument

    class Fixed(keras.Model):
        def __init__(self, units):
            super().__init__()
            self.units = units
    with pytest.raises(TypeError, match="Unable to revive model from config"):
        Fixed.from_config({"width": 5})


def test_subclassing_guide_layers_weights_and_losses():
    class ComputeSum(keras.layers.Layer):
        def __init__(self, input_dim):
            super().__init__()
            self.total = self.add_weight(initializer="zeros", shape=(input_dim,),
                                         trainable=False)

        def call(self, inputs):
            self.total.assign_add(ops.sum(inputs, axis=0))
            return self.total
    my_sum = ComputeSum(2)
    my_sum(ops.ones((2, 2)))
    np.testing.assert_array_equal(my_sum(ops.ones((2, 2))).numpy(), [4.0, 4.0])
    assert (len(my_sum.weights), len(my_sum.non_trainable_weights),
            my_sum.trainable_weights) == (1, 1, [])

    class ActivityRegularizationLayer(keras.layers.Layer):
        def __init__(self, rate=1e-2):
            super().__init__()
            self.rate = rate

        def call(self, inputs):
            self.add_loss(self.rate * ops.mean(inputs))
            return inputs

    class OuterLayer(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.activity_reg = ActivityRegularizationLayer(1e-2)

        def call(self, inputs):
            return self.activity_reg(inputs)
    layer = OuterLayer()
    assert len(layer.losses) == 0
    layer(ops.ones((1, 1)))
    layer(ops.ones((1, 1)))  # the losses are those of the last call only
    assert len(layer.losses) == 1 and float(layer.losses[0]) == pytest.approx(1e-2)

    config = CustomDense(64, name="lin").get_config()
    assert config["units"] == 64 and config["name"] == "lin"
    assert CustomDense.from_config(config).units == 64
    lin = CustomDense(3, dtype="float64")  # float64 for the central differences
    check_grads(lambda x: lin(x), [np.random.default_rng(0).random((2, 4))], order=1)


class VariationalAutoEncoder(keras.Model):
    def __init__(self, original_dim, intermediate_dim=16, latent_dim=4, **kwargs):
        super().__init__(name="autoencoder", **kwargs)
        self.dense_proj = layers.Dense(intermediate_dim, activation="relu")
        self.dense_mean = layers.Dense(latent_dim)
        self.dense_log_var = layers.Dense(latent_dim)
        self.sampling = Sampling()
        self.decoder_proj = layers.Dense(intermediate_dim, activation="relu")
        self.decoder_out = layers.Dense(original_dim, activation="sigmoid")

    def call(self, inputs):
        x = self.dense_proj(inputs)
        z_mean, z_log_var = self.dense_mean(x), self.dense_log_var(x)
        z = self.sampling((z_mean, z_log_var))
        kl_loss = -0.5 * ops.mean(z_log_var - ops.square(z_mean) - ops.exp(z_log_var) + 1)
        self.add_loss(kl_loss)
        return self.decoder_out(self.decoder_proj(z))


def test_the_subclassing_guides_vae_trains_with_its_kl_loss():
    keras.utils.set_random_seed(0)
    x_train = np.random.default_rng(0).random((64, 20)).astype("float32")
    vae = VariationalAutoEncoder(20)
    vae.compile(keras.optimizers.Adam(learning_rate=1e-2), loss=keras.losses.MeanSquaredError())
    history = vae.fit(x_train, x_train, epochs=4, batch_size=32, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    vae(x_train[:8])
    (kl,) = vae.losses  # the KL term of the last call
    assert float(kl) > 0
    # evaluate's loss is the reconstruction error plus that term, for the same draws
    vae.sampling.seed_generator = keras.random.SeedGenerator(7)
    loss = vae.evaluate(x_train, x_train, batch_size=64, verbose=0)
    vae.sampling.seed_generator = keras.random.SeedGenerator(7)
    recon = vae(x_train)
    expected = np.mean((recon.numpy() - x_train) ** 2) + float(vae.losses[0])
    np.testing.assert_allclose(loss, expected, rtol=1e-5)


def test_transfer_learning_frozen_base_keeps_batchnorm_statistics():
    keras.utils.set_random_seed(0)
    inp = keras.Input((8, 8, 3))
    x = layers.Conv2D(4, 3, padding="same")(inp)
    x = layers.BatchNormalization()(x)
    base_model = keras.Model(inp, layers.Activation("relu")(x), name="base")
    base_model.trainable = False
    assert base_model.trainable_weights == [] and len(base_model.non_trainable_weights) == 6
    inputs = keras.Input(shape=(8, 8, 3))
    x = keras.layers.Rescaling(scale=1 / 127.5, offset=-1)(inputs)
    x = base_model(x, training=False)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dropout(0.2)(x)
    model = keras.Model(inputs, keras.layers.Dense(1)(x))
    assert len(model.trainable_weights) == 2
    rng = np.random.default_rng(0)
    xs = (rng.random((16, 8, 8, 3)) * 255).astype("float32")
    ys = rng.integers(0, 2, (16, 1)).astype("float32")
    bn = base_model.layers[2]
    moving = [bn.moving_mean.numpy().copy(), bn.moving_variance.numpy().copy()]
    conv = base_model.layers[1].kernel.numpy().copy()
    model.compile(optimizer=keras.optimizers.Adam(),
                  loss=keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=[keras.metrics.BinaryAccuracy()])
    model.fit(xs, ys, epochs=1, batch_size=8, validation_data=(xs, ys), verbose=0)
    np.testing.assert_array_equal(conv, base_model.layers[1].kernel.numpy())
    # fine-tuning: the base trains, but its BatchNormalization stays in inference mode
    base_model.trainable = True
    model.compile(optimizer=keras.optimizers.Adam(1e-5),
                  loss=keras.losses.BinaryCrossentropy(from_logits=True))
    model.fit(xs, ys, epochs=1, batch_size=8, verbose=0)
    assert not np.array_equal(conv, base_model.layers[1].kernel.numpy())
    np.testing.assert_array_equal(moving[0], bn.moving_mean.numpy())
    np.testing.assert_array_equal(moving[1], bn.moving_variance.numpy())


def test_rescaling_layer():
    layer = layers.Rescaling(1 / 255.0)
    out = layer(np.array([[0, 51, 255]], np.uint8))
    assert out.dtype == tf.float32
    np.testing.assert_allclose(out.numpy(), [[0.0, 0.2, 1.0]], rtol=1e-6)
    shifted = layers.Rescaling(scale=1 / 127.5, offset=-1)(np.array([0.0, 255.0]))
    np.testing.assert_allclose(shifted.numpy(), [-1.0, 1.0], rtol=1e-6)
    assert layers.Rescaling.from_config(layer.get_config()).scale == 1 / 255.0


def test_normalization_adapt_matches_the_population_statistics():
    data = np.random.default_rng(0).normal(3.0, 2.0, (50, 3)).astype("float32")
    data[:, 2] = 10.0  # a constant feature: divided by epsilon, so 0 and not NaN
    norm = layers.Normalization(axis=-1)
    norm.adapt(data)
    assert norm.mean.shape == (1, 3) and [w.name for w in norm.weights] == [
        "mean", "variance", "count"]
    assert norm.trainable_weights == [] and int(norm.count.numpy()) == 50
    np.testing.assert_allclose(norm.mean.numpy()[0], data.mean(0), rtol=1e-6)
    np.testing.assert_allclose(norm.variance.numpy()[0], data.var(0), rtol=1e-5)
    out = norm(data).numpy()
    np.testing.assert_allclose(out[:, :2].mean(0), 0.0, atol=1e-5)
    np.testing.assert_allclose(out[:, :2].std(0), 1.0, rtol=1e-4)
    np.testing.assert_array_equal(out[:, 2], 0.0)
    # adapting on a dataset of batches combines the batches' statistics
    batched = layers.Normalization()
    batched.adapt(tf.data.Dataset.from_tensor_slices(data).batch(16))
    np.testing.assert_allclose(batched.mean.numpy(), norm.mean.numpy(), rtol=1e-5)
    np.testing.assert_allclose(batched.variance.numpy(), norm.variance.numpy(), rtol=1e-4,
                               atol=1e-6)  # float32 rounding of the combined means
    inverse = layers.Normalization(invert=True)
    inverse.adapt(data)
    np.testing.assert_allclose(inverse(out).numpy()[:, :2], data[:, :2], rtol=1e-4,
                               atol=1e-4)  # invert=True undoes the normalization
    given = layers.Normalization(mean=2.0, variance=4.0)
    np.testing.assert_allclose(given(np.array([[4.0, 0.0]])).numpy(), [[1.0, -1.0]])
    whole = layers.Normalization(axis=None)
    whole.adapt(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(whole(np.array([2.0, 3.0])).numpy(), [0.0, 1.5 ** 0.5],
                               rtol=1e-6)
    with pytest.raises(ValueError, match="both `mean` and `variance`"):
        layers.Normalization(mean=1.0)


def test_normalization_in_a_regression_model_saves_and_reloads(tmp_path):
    rng = np.random.default_rng(0)
    features = rng.normal(5.0, 3.0, (64, 4)).astype("float32")
    labels = features @ np.array([1.0, -2.0, 0.5, 0.0], "float32") + 1.0
    normalizer = layers.Normalization(axis=-1)
    normalizer.adapt(features)
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), normalizer, layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.1),
                  loss="mean_absolute_error")
    history = model.fit(features, labels, epochs=10, verbose=0, validation_split=0.2)
    assert history.history["loss"][-1] < history.history["loss"][0] * 0.7
    path = os.path.join(tmp_path, "regression.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    np.testing.assert_allclose(loaded.predict(features[:5], verbose=0),
                               model.predict(features[:5], verbose=0), rtol=1e-6)
    np.testing.assert_array_equal(loaded.layers[0].mean.numpy(), normalizer.mean.numpy())


def test_random_flip_trains_only():
    images = np.arange(2 * 3 * 4 * 1, dtype="float32").reshape(2, 3, 4, 1)
    flip = layers.RandomFlip("horizontal", seed=1)
    np.testing.assert_array_equal(flip(images, training=False).numpy(), images)
    seen = set()
    for _ in range(8):
        out = flip(images).numpy()  # Keras's default: training
        for i in range(2):
            assert (np.array_equal(out[i], images[i])
                    or np.array_equal(out[i], images[i, :, ::-1]))
            seen.add(np.array_equal(out[i], images[i]))
    assert seen == {True, False}
    both = layers.RandomFlip(seed=2)(images[0]).numpy()
    assert any(np.array_equal(both, v) for v in (images[0], images[0, ::-1],
                                                 images[0, :, ::-1], images[0, ::-1, ::-1]))
    with pytest.raises(ValueError, match="unknown mode"):
        layers.RandomFlip("diagonal")
    model = keras.Sequential([keras.Input((3, 4, 1)), layers.RandomFlip("vertical"),
                              layers.Flatten()])
    np.testing.assert_array_equal(model.predict(images, verbose=0), images.reshape(2, -1))
