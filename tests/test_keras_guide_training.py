"""The Keras guides "Customizing what happens in fit()" and "Writing a training loop from
scratch", run with ``import tapegrad as tf`` on small synthetic data: a ``train_step``
override on a functional model subclass (``CustomModel(inputs, outputs)``) using
``compute_loss`` and ``self.metrics``, metrics of one's own, sample weights, a
``test_step``, the GAN of the guide with ``keras.random.SeedGenerator``, and the loops
written by hand, eager and under ``tf.function``."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras
from tapegrad.keras import layers


def _data(n=64, d=8, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.random((n, d)).astype("float32")
    return x, (x @ np.linspace(-1, 1, d).astype("float32"))[:, None] + 0.5


def update_metrics(model, loss, y, y_pred, sample_weight=None):
    """The guide's metric loop: the loss tracker takes the loss, the compiled metrics the
    targets and predictions; the logs are every metric's result."""
    for metric in model.metrics:
        if metric.name == "loss":
            metric.update_state(loss)
        else:
            metric.update_state(y, y_pred, sample_weight=sample_weight)
    return {m.name: m.result() for m in model.metrics}


class CustomModel(keras.Model):
    """The guide's first example: compute_loss, then every metric in self.metrics."""

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(y=y, y_pred=y_pred)
        trainable_vars = self.trainable_variables
        gradients = tape.gradient(loss, trainable_vars)
        self.optimizer.apply(gradients, trainable_vars)
        return update_metrics(self, loss, y, y_pred)


def _functional(cls, d=8, seed=0):
    keras.utils.set_random_seed(seed)
    inputs = keras.Input(shape=(d,))
    return cls(inputs, keras.layers.Dense(1)(inputs))


def test_a_subclass_called_with_inputs_and_outputs_is_a_functional_model():
    model = _functional(CustomModel)
    assert isinstance(model, CustomModel) and isinstance(model, keras.Model)
    assert type(model).__mro__[1].__name__ == "Functional"  # as Keras injects it
    assert len(model.layers) == 2 and model.output_shape == (None, 1)
    again = _functional(CustomModel)  # the class keeps working after the injection
    assert again(np.ones((3, 8))).shape == (3, 1)


def test_custom_train_step_logs_the_compiled_loss_and_metrics():
    x, y = _data()
    model = _functional(CustomModel)
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    assert [m.name for m in model.metrics] == ["loss", "compile_metrics"]
    history = model.fit(x, y, epochs=3, batch_size=16, verbose=0)
    assert set(history.history) == {"loss", "mae"}  # the container's dict is merged in
    assert history.history["loss"][-1] < history.history["loss"][0]
    # the same model with Keras's own train_step logs the same names
    plain = _functional(keras.Model)
    plain.compile(optimizer="adam", loss="mse", metrics=["mae"])
    assert set(plain.fit(x, y, epochs=1, verbose=0).history) == {"loss", "mae"}
    loss, mae = model.evaluate(x, y, verbose=0)
    pred = model.predict(x, verbose=0)
    np.testing.assert_allclose(mae, np.mean(np.abs(pred - y)), rtol=1e-5)
    np.testing.assert_allclose(loss, np.mean((pred - y) ** 2), rtol=1e-5)
    assert model.evaluate(x, y, verbose=0, return_dict=True) == {"loss": loss, "mae": mae}


def test_compile_metrics_container_before_and_without_metrics():
    model = _functional(keras.Model)
    model.compile(optimizer="adam", loss="mse")
    assert [m.name for m in model.metrics] == ["loss"]  # no metrics given: no container
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    with pytest.raises(ValueError, match="not yet been built"):
        model.metrics[1].result()


class MetricsOfItsOwn(keras.Model):
    """The guide's "going lower-level" example: no loss in compile."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.loss_tracker = keras.metrics.Mean(name="loss")
        self.mae_metric = keras.metrics.MeanAbsoluteError(name="mae")
        self.loss_fn = keras.losses.MeanSquaredError()

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.loss_fn(y, y_pred)
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply(gradients, self.trainable_variables)
        self.loss_tracker.update_state(loss)
        self.mae_metric.update_state(y, y_pred)
        return {"loss": self.loss_tracker.result(), "mae": self.mae_metric.result()}

    @property
    def metrics(self):
        return [self.loss_tracker, self.mae_metric]


def test_metrics_of_its_own_are_reset_each_epoch():
    x, y = _data()
    model = _functional(MetricsOfItsOwn)
    model.compile(optimizer="adam")
    seen = []

    class Record(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            seen.append(logs["loss"])
    history = model.fit(x, y, epochs=2, batch_size=32, verbose=0, callbacks=[Record()])
    assert set(history.history) == {"loss", "mae"}
    # each epoch's log is the mean over that epoch's two batches only (reset between)
    np.testing.assert_allclose(history.history["loss"][1], seen[3], rtol=1e-6)
    assert seen[2] != pytest.approx(seen[1])


class WithSampleWeights(keras.Model):
    def train_step(self, data):
        if len(data) == 3:
            x, y, sample_weight = data
        else:
            sample_weight = None
            x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(y=y, y_pred=y_pred, sample_weight=sample_weight)
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply(gradients, self.trainable_variables)
        return update_metrics(self, loss, y, y_pred, sample_weight)


def test_sample_weights_reach_the_custom_train_step():
    x, y = _data()
    sw = np.zeros((64, 1), "float32")  # zero weights: the loss is zero, nothing moves
    model = _functional(WithSampleWeights)
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    before = [w.copy() for w in model.get_weights()]
    history = model.fit(x, y, sample_weight=sw, epochs=1, batch_size=64, verbose=0)
    assert history.history["loss"] == [0.0]
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_array_equal(a, b)


class CustomTest(keras.Model):
    def test_step(self, data):
        x, y = data
        y_pred = self(x, training=False)
        loss = self.compute_loss(y=y, y_pred=y_pred)
        return update_metrics(self, loss, y, y_pred)


def test_custom_test_step_in_evaluate():
    x, y = _data()
    model = _functional(CustomTest)
    model.compile(loss="mse", metrics=["mae"])
    loss, mae = model.evaluate(x, y, batch_size=16, verbose=0)
    pred = model.predict(x, verbose=0)
    np.testing.assert_allclose(loss, np.mean((pred - y) ** 2), rtol=1e-5)
    np.testing.assert_allclose(mae, np.mean(np.abs(pred - y)), rtol=1e-5)


class GAN(keras.Model):
    """The end-to-end GAN of the guide, its ``compile`` overridden."""

    def __init__(self, discriminator, generator, latent_dim):
        super().__init__()
        self.discriminator, self.generator = discriminator, generator
        self.latent_dim = latent_dim
        self.d_loss_tracker = keras.metrics.Mean(name="d_loss")
        self.g_loss_tracker = keras.metrics.Mean(name="g_loss")
        self.seed_generator = keras.random.SeedGenerator(1337)

    @property
    def metrics(self):
        return [self.d_loss_tracker, self.g_loss_tracker]

    def compile(self, d_optimizer, g_optimizer, loss_fn):
        super().compile()
        self.d_optimizer, self.g_optimizer, self.loss_fn = d_optimizer, g_optimizer, loss_fn

    def train_step(self, real_images):
        if isinstance(real_images, tuple):
            real_images = real_images[0]
        batch_size = tf.shape(real_images)[0]
        latent = keras.random.normal(shape=(batch_size, self.latent_dim),
                                     seed=self.seed_generator)
        generated = self.generator(latent)
        combined = tf.concat([generated, real_images], axis=0)
        labels = tf.concat([tf.ones((batch_size, 1)), tf.zeros((batch_size, 1))], axis=0)
        labels += 0.05 * keras.random.uniform(tf.shape(labels), seed=self.seed_generator)
        with tf.GradientTape() as tape:
            d_loss = self.loss_fn(labels, self.discriminator(combined))
        grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
        self.d_optimizer.apply(grads, self.discriminator.trainable_weights)
        latent = keras.random.normal(shape=(batch_size, self.latent_dim),
                                     seed=self.seed_generator)
        misleading_labels = tf.zeros((batch_size, 1))
        with tf.GradientTape() as tape:
            g_loss = self.loss_fn(misleading_labels,
                                  self.discriminator(self.generator(latent)))
        grads = tape.gradient(g_loss, self.generator.trainable_weights)
        self.g_optimizer.apply(grads, self.generator.trainable_weights)
        self.d_loss_tracker.update_state(d_loss)
        self.g_loss_tracker.update_state(g_loss)
        return {"d_loss": self.d_loss_tracker.result(),
                "g_loss": self.g_loss_tracker.result()}


def _gan_nets(latent_dim=8):
    discriminator = keras.Sequential([
        keras.Input(shape=(28, 28, 1)),
        layers.Conv2D(4, (3, 3), strides=(2, 2), padding="same"),
        layers.LeakyReLU(negative_slope=0.2),
        layers.Conv2D(8, (3, 3), strides=(2, 2), padding="same"),
        layers.LeakyReLU(negative_slope=0.2),
        layers.GlobalMaxPooling2D(),
        layers.Dense(1)], name="discriminator")
    generator = keras.Sequential([
        keras.Input(shape=(latent_dim,)),
        layers.Dense(7 * 7 * 8),
        layers.LeakyReLU(negative_slope=0.2),
        layers.Reshape((7, 7, 8)),
        layers.Conv2DTranspose(8, (4, 4), strides=(2, 2), padding="same"),
        layers.LeakyReLU(negative_slope=0.2),
        layers.Conv2DTranspose(8, (4, 4), strides=(2, 2), padding="same"),
        layers.LeakyReLU(negative_slope=0.2),
        layers.Conv2D(1, (7, 7), padding="same", activation="sigmoid")], name="generator")
    return discriminator, generator


def test_the_guides_gan_trains_through_fit_on_a_dataset():
    keras.backend.clear_session()  # the layers' automatic names start again
    keras.utils.set_random_seed(0)
    discriminator, generator = _gan_nets()
    assert [layer.name for layer in discriminator.layers][:2] == ["conv2d", "leaky_re_lu"]
    images = np.random.default_rng(0).random((32, 28, 28, 1)).astype("float32")
    dataset = tf.data.Dataset.from_tensor_slices(images).shuffle(buffer_size=64).batch(16)
    gan = GAN(discriminator=discriminator, generator=generator, latent_dim=8)
    gan.compile(d_optimizer=keras.optimizers.Adam(learning_rate=0.0003),
                g_optimizer=keras.optimizers.Adam(learning_rate=0.0003),
                loss_fn=keras.losses.BinaryCrossentropy(from_logits=True))
    g_before = [w.copy() for w in generator.get_weights()]
    history = gan.fit(dataset, epochs=2, verbose=0)
    assert set(history.history) == {"d_loss", "g_loss"} and len(history.history["d_loss"]) == 2
    assert all(np.isfinite(v) for v in history.history["d_loss"] + history.history["g_loss"])
    assert any(not np.array_equal(a, b) for a, b in zip(g_before, generator.get_weights()))


def test_training_loop_from_scratch_eager_and_compiled_agree():
    """The guide's loop over a tf.data pipeline with SparseCategoricalAccuracy, first
    eagerly, then with the step under tf.function: the same weights after each step."""
    rng = np.random.default_rng(0)
    x_train = rng.random((96, 20)).astype("float32")
    y_train = (x_train[:, :10].sum(1) > x_train[:, 10:].sum(1)).astype("int64") + 2 * (
        x_train[:, 0] > 0.5)
    dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(32)

    def make():
        keras.utils.set_random_seed(1)
        inputs = keras.Input(shape=(20,), name="digits")
        x1 = keras.layers.Dense(16, activation="relu")(inputs)
        x2 = keras.layers.Dense(16, activation="relu")(x1)
        outputs = keras.layers.Dense(4, name="predictions")(x2)
        return keras.Model(inputs=inputs, outputs=outputs), keras.optimizers.Adam(1e-2)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def step(model, optimizer, metric, x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss_value = loss_fn(y, logits)
        grads = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply(grads, model.trainable_weights)
        metric.update_state(y, logits)
        return loss_value
    eager, eager_opt = make()
    compiled, compiled_opt = make()
    eager_acc = keras.metrics.SparseCategoricalAccuracy()
    compiled_acc = keras.metrics.SparseCategoricalAccuracy()
    train_step = tf.function(lambda x, y: step(compiled, compiled_opt, compiled_acc, x, y))
    losses = []
    for _ in range(3):  # epochs
        for x_batch, y_batch in dataset:
            a = step(eager, eager_opt, eager_acc, x_batch, y_batch)
            b = train_step(x_batch, y_batch)
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5)
            losses.append(float(a))
        np.testing.assert_allclose(eager_acc.result().numpy(), compiled_acc.result().numpy())
        eager_acc.reset_state()
        compiled_acc.reset_state()
    for w, v in zip(eager.get_weights(), compiled.get_weights()):
        np.testing.assert_allclose(w, v, rtol=1e-4, atol=1e-6)
    assert np.mean(losses[-3:]) < np.mean(losses[:3])


def test_training_loop_with_losses_added_by_a_layer():
    """The guide's ActivityRegularizationLayer: ``sum(model.losses)`` joins the loss."""
    class ActivityRegularizationLayer(keras.layers.Layer):
        def call(self, inputs):
            self.add_loss(1e-2 * tf.reduce_sum(inputs))
            return inputs
    keras.utils.set_random_seed(0)
    inputs = keras.Input(shape=(6,))
    hidden = keras.layers.Dense(8, activation="relu")(inputs)
    outputs = keras.layers.Dense(3)(ActivityRegularizationLayer()(hidden))
    model = keras.Model(inputs=inputs, outputs=outputs)
    x = np.random.default_rng(0).random((4, 6)).astype("float32")
    y = np.array([0, 1, 2, 1])
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def total(x, y):
        logits = model(x, training=True)
        return loss_fn(y, logits) + sum(model.losses), logits
    value, logits = total(x, y)
    assert len(model.losses) == 1
    hidden_values = keras.Model(inputs, hidden)(x)
    expected = loss_fn(y, logits) + 1e-2 * tf.reduce_sum(hidden_values)
    np.testing.assert_allclose(value.numpy(), expected.numpy(), rtol=1e-6)
