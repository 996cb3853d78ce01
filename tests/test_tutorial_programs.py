"""Programs of the keras.io examples and the TensorFlow tutorials, run with ``import
tapegrad as tf`` on small synthetic data: the convolutional VAE (``fit(x)`` hands
``train_step`` the lone batch), the MNIST convnet, timeseries classification with Conv1D
and callbacks, WGAN-GP's gradient penalty (a nested tape on interpolated images), the
custom-training walkthrough, DeepDream, neural style transfer (Gram matrices, total
variation, a clipped Variable image), integrated gradients, a physics-informed network, an
actor-critic episode and ``tf.TensorArray``."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras
from tapegrad.keras import layers, ops
from tapegrad.testing import check_grads

from _keras_programs import Sampling


@pytest.fixture
def float64_keras():
    keras.backend.set_floatx("float64")
    yield
    keras.backend.set_floatx("float32")


class VAE(keras.Model):
    """keras.io's "Variational AutoEncoder": its own train_step over ``data`` = x."""

    def __init__(self, encoder, decoder, **kwargs):
        super().__init__(**kwargs)
        self.encoder, self.decoder = encoder, decoder
        self.total_loss_tracker = keras.metrics.Mean(name="total_loss")
        self.reconstruction_loss_tracker = keras.metrics.Mean(name="reconstruction_loss")
        self.kl_loss_tracker = keras.metrics.Mean(name="kl_loss")

    @property
    def metrics(self):
        return [self.total_loss_tracker, self.reconstruction_loss_tracker,
                self.kl_loss_tracker]

    def train_step(self, data):
        with tf.GradientTape() as tape:
            z_mean, z_log_var, z = self.encoder(data)
            reconstruction = self.decoder(z)
            reconstruction_loss = ops.mean(ops.sum(
                keras.losses.binary_crossentropy(data, reconstruction), axis=(1, 2)))
            kl_loss = -0.5 * (1 + z_log_var - ops.square(z_mean) - ops.exp(z_log_var))
            kl_loss = ops.mean(ops.sum(kl_loss, axis=1))
            total_loss = reconstruction_loss + kl_loss
        grads = tape.gradient(total_loss, self.trainable_weights)
        self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
        self.total_loss_tracker.update_state(total_loss)
        self.reconstruction_loss_tracker.update_state(reconstruction_loss)
        self.kl_loss_tracker.update_state(kl_loss)
        return {"loss": self.total_loss_tracker.result(),
                "reconstruction_loss": self.reconstruction_loss_tracker.result(),
                "kl_loss": self.kl_loss_tracker.result()}


def test_convolutional_vae_trains_on_images_alone():
    keras.utils.set_random_seed(0)
    latent_dim = 2
    encoder_inputs = keras.Input(shape=(12, 12, 1))
    x = layers.Conv2D(4, 3, activation="relu", strides=2, padding="same")(encoder_inputs)
    x = layers.Conv2D(8, 3, activation="relu", strides=2, padding="same")(x)
    x = layers.Dense(8, activation="relu")(layers.Flatten()(x))
    z_mean = layers.Dense(latent_dim, name="z_mean")(x)
    z_log_var = layers.Dense(latent_dim, name="z_log_var")(x)
    z = Sampling()([z_mean, z_log_var])
    encoder = keras.Model(encoder_inputs, [z_mean, z_log_var, z], name="encoder")
    latent_inputs = keras.Input(shape=(latent_dim,))
    x = layers.Reshape((3, 3, 8))(layers.Dense(3 * 3 * 8, activation="relu")(latent_inputs))
    x = layers.Conv2DTranspose(8, 3, activation="relu", strides=2, padding="same")(x)
    x = layers.Conv2DTranspose(4, 3, activation="relu", strides=2, padding="same")(x)
    decoder = keras.Model(latent_inputs, layers.Conv2DTranspose(
        1, 3, activation="sigmoid", padding="same")(x), name="decoder")
    digits = (np.random.default_rng(0).random((32, 12, 12, 1)) > 0.7).astype("float32")
    vae = VAE(encoder, decoder)
    vae.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-2))
    history = vae.fit(digits, epochs=4, batch_size=16, verbose=0)
    h = history.history
    assert set(h) == {"loss", "reconstruction_loss", "kl_loss"}
    np.testing.assert_allclose(h["loss"], np.add(h["reconstruction_loss"], h["kl_loss"]),
                               rtol=1e-5)
    assert h["loss"][-1] < h["loss"][0]
    z_mean, z_log_var, z = vae.encoder.predict(digits, verbose=0)
    assert z_mean.shape == z.shape == (32, 2)
    assert vae.decoder.predict(np.zeros((1, 2)), verbose=0).shape == (1, 12, 12, 1)


def test_mnist_convnet_and_timeseries_conv1d_with_callbacks(tmp_path):
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x_train = np.expand_dims(rng.random((48, 14, 14)).astype("float32"), -1)
    y_train = keras.utils.to_categorical(rng.integers(0, 4, 48), 4)
    model = keras.Sequential([
        keras.Input(shape=(14, 14, 1)),
        layers.Conv2D(4, kernel_size=(3, 3), activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Conv2D(8, kernel_size=(3, 3), activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Flatten(), layers.Dropout(0.5), layers.Dense(4, activation="softmax")])
    model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])
    history = model.fit(x_train, y_train, batch_size=16, epochs=2, validation_split=0.25,
                        verbose=0)
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    loss, acc = model.evaluate(x_train, y_train, verbose=0)
    pred = model.predict(x_train, verbose=0)
    assert acc == pytest.approx(np.mean(pred.argmax(1) == y_train.argmax(1)))

    series = rng.normal(size=(40, 30, 1)).astype("float32")
    labels = (series.mean((1, 2)) > 0).astype(int)
    inputs = keras.layers.Input(series.shape[1:])
    x = inputs
    for _ in range(2):
        x = keras.layers.ReLU()(keras.layers.BatchNormalization()(
            keras.layers.Conv1D(filters=4, kernel_size=3, padding="same")(x)))
    outputs = keras.layers.Dense(2, activation="softmax")(
        keras.layers.GlobalAveragePooling1D()(x))
    net = keras.models.Model(inputs=inputs, outputs=outputs)
    best = str(tmp_path / "best_model.keras")
    callbacks = [keras.callbacks.ModelCheckpoint(best, save_best_only=True, monitor="val_loss"),
                 keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.5,
                                                   patience=20, min_lr=0.0001),
                 keras.callbacks.EarlyStopping(monitor="val_loss", patience=50)]
    net.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
                metrics=["sparse_categorical_accuracy"])
    history = net.fit(series, labels, batch_size=16, epochs=3, callbacks=callbacks,
                      validation_split=0.2, verbose=0)
    reloaded = keras.models.load_model(best)
    best_epoch = int(np.argmin(history.history["val_loss"]))
    val_loss = reloaded.evaluate(series[32:], labels[32:], verbose=0)[0]
    assert val_loss == pytest.approx(history.history["val_loss"][best_epoch], rel=1e-5)


def _critic(img_shape=(6, 6, 1)):
    img_input = layers.Input(shape=img_shape)
    x = layers.ZeroPadding2D((1, 1))(img_input)
    x = layers.LeakyReLU(0.2)(layers.Conv2D(4, (3, 3), strides=(2, 2), padding="same")(x))
    x = layers.Flatten()(layers.Conv2D(4, (3, 3), strides=(2, 2), padding="same")(x))
    return keras.models.Model(img_input, layers.Dense(1)(x), name="discriminator")


def gradient_penalty(discriminator, real_images, fake_images, alpha):
    """keras.io WGAN-GP's penalty: (|d critic / d image| - 1)^2 on interpolated images."""
    interpolated = real_images + alpha * (fake_images - real_images)
    with tf.GradientTape() as gp_tape:
        gp_tape.watch(interpolated)
        pred = discriminator(interpolated, training=True)
    grads = gp_tape.gradient(pred, [interpolated])[0]
    norm = tf.sqrt(tf.reduce_sum(tf.square(grads), axis=[1, 2, 3]))
    return tf.reduce_mean((norm - 1.0) ** 2)


def test_wgan_gradient_penalty_differentiates_through_the_nested_tape(float64_keras):
    keras.utils.set_random_seed(0)
    critic = _critic()
    rng = np.random.default_rng(0)
    real, fake = (tf.constant(a) for a in rng.normal(size=(2, 3, 6, 6, 1)))
    alpha = tf.constant(rng.random((3, 1, 1, 1)))

    # the penalty's gradient in the critic's weights (second derivatives of the critic,
    # through the nested tape) against a central difference along a random direction
    variables = critic.trainable_variables
    with tf.GradientTape() as tape:
        gp = gradient_penalty(critic, real, fake, alpha)
    # (the last bias does not move d critic / d image: its gradient is unconnected)
    grads = tape.gradient(gp, variables, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    directions = [rng.normal(size=v.shape) for v in variables]
    start = [v.numpy() for v in variables]

    def penalty_at(step):
        for v, w, d in zip(variables, start, directions):
            v.assign(w + step * d)
        return float(gradient_penalty(critic, real, fake, alpha))
    h = 1e-5
    numeric = (penalty_at(h) - penalty_at(-h)) / (2 * h)
    for v, w in zip(variables, start):
        v.assign(w)
    analytic = sum(float(np.sum(g.numpy() * d)) for g, d in zip(grads, directions))
    assert analytic == pytest.approx(numeric, rel=1e-6)
    d_optimizer = keras.optimizers.Adam(learning_rate=1e-2, beta_1=0.5, beta_2=0.9)
    before = gradient_penalty(critic, real, fake, alpha)
    for _ in range(20):
        with tf.GradientTape() as tape:
            gp = gradient_penalty(critic, real, fake, alpha)
        grads = tape.gradient(gp, critic.trainable_variables)
        d_optimizer.apply_gradients(zip(grads, critic.trainable_variables))
    assert float(gradient_penalty(critic, real, fake, alpha)) < float(before)


def test_custom_training_walkthrough_eager_and_compiled():
    """The "Custom training: walkthrough" tutorial (penguins/iris): grad(), SGD steps,
    epoch Mean / SparseCategoricalAccuracy metrics, then predictions."""
    rng = np.random.default_rng(0)
    features = rng.normal(size=(96, 4)).astype("float32")
    labels = ((features[:, 0] + features[:, 1] > 0).astype("int64")
              + (features[:, 2] > 0.5).astype("int64"))
    ds = tf.data.Dataset.from_tensor_slices((features, labels)).batch(32)

    def make():
        keras.utils.set_random_seed(0)
        return tf.keras.Sequential([
            tf.keras.layers.Dense(10, activation=tf.nn.relu, input_shape=(4,)),
            tf.keras.layers.Dense(10, activation=tf.nn.relu), tf.keras.layers.Dense(3)])
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def grad(model, inputs, targets):
        with tf.GradientTape() as tape:
            loss_value = loss_object(y_true=targets, y_pred=model(inputs, training=True))
        return loss_value, tape.gradient(loss_value, model.trainable_variables)
    results = []
    for compiled in (False, True):
        model = make()
        optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)

        def step(x, y, model=model, optimizer=optimizer):
            loss_value, grads = grad(model, x, y)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss_value
        step = tf.function(step) if compiled else step
        losses = []
        for _ in range(6):
            epoch_loss_avg = tf.keras.metrics.Mean()
            for x, y in ds:
                epoch_loss_avg.update_state(step(x, y))
            losses.append(float(epoch_loss_avg.result()))
        assert optimizer.iterations.numpy() == 18
        results.append((losses, model.get_weights()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5)
    assert results[0][0][-1] < results[0][0][0]
    test_accuracy = tf.keras.metrics.Accuracy()
    for x, y in ds:
        prediction = tf.math.argmax(model(x, training=False), axis=1, output_type=tf.int64)
        test_accuracy(prediction, y)
    logits = model(features, training=False).numpy()
    assert float(test_accuracy.result()) == pytest.approx(np.mean(logits.argmax(1) == labels))


def _conv_features(seed=0):
    keras.utils.set_random_seed(seed)
    inp = keras.Input((None, None, 3))
    c1 = layers.Conv2D(4, 3, padding="same", activation="relu", name="block1_conv1")(inp)
    c2 = layers.Conv2D(4, 3, padding="same", activation="relu", name="block2_conv1")(
        layers.MaxPooling2D()(c1))
    base = keras.Model(inp, c2)
    base.trainable = False
    return base


def test_deepdream_gradient_ascent_raises_the_activations():
    base = _conv_features()
    dream_model = tf.keras.Model(inputs=base.input, outputs=[
        base.get_layer(name).output for name in ["block1_conv1", "block2_conv1"]])

    def calc_loss(img, model):
        layer_activations = model(tf.expand_dims(img, axis=0))
        return tf.reduce_sum([tf.math.reduce_mean(act) for act in layer_activations])
    img = tf.constant(np.random.default_rng(0).random((12, 12, 3)).astype("float32") * 2 - 1)
    start = float(calc_loss(img, dream_model))
    for _ in range(5):
        with tf.GradientTape() as tape:
            tape.watch(img)
            loss = calc_loss(img, dream_model)
        gradients = tape.gradient(loss, img)
        gradients /= tf.math.reduce_std(gradients) + 1e-8
        img = tf.clip_by_value(img + gradients * 0.01, -1, 1)
    assert float(calc_loss(img, dream_model)) > start
    assert float(tf.reduce_max(tf.abs(img))) <= 1.0
    dream = tf.cast(255 * (img + 1.0) / 2.0, tf.uint8)
    assert dream.dtype == tf.uint8 and dream.shape == (12, 12, 3)
    # the octave loop resizes the image to float shapes cast back to integers
    shape = tf.cast(tf.cast(tf.shape(img)[:-1], tf.float32) * 1.3, tf.int32)
    assert tf.image.resize(img, shape).shape == (15, 15, 3)
    shift = tf.random.uniform(shape=[2], minval=-3, maxval=3, dtype=tf.int32)
    rolled = tf.roll(img, shift=shift, axis=[0, 1])
    np.testing.assert_array_equal(rolled.numpy(), np.roll(img.numpy(), shift.numpy(), (0, 1)))


def gram_matrix(input_tensor):
    result = tf.linalg.einsum("bijc,bijd->bcd", input_tensor, input_tensor)
    input_shape = tf.shape(input_tensor)
    return result / tf.cast(input_shape[1] * input_shape[2], tf.float32)


def test_style_transfer_steps_eager_equal_compiled():
    base = _conv_features()
    extractor = tf.keras.Model(base.input, [base.get_layer("block1_conv1").output,
                                            base.output])
    rng = np.random.default_rng(0)
    content = tf.constant(rng.random((1, 12, 12, 3)).astype("float32"))
    style_targets = [gram_matrix(f) for f in extractor(tf.constant(
        rng.random((1, 12, 12, 3)).astype("float32")))]
    content_target = extractor(content)[1]
    x = content.numpy()
    np.testing.assert_allclose(gram_matrix(content).numpy()[0],
                               x[0].reshape(-1, 3).T @ x[0].reshape(-1, 3) / 144, rtol=1e-5)

    def run(compiled):
        image = tf.Variable(content)
        opt = tf.keras.optimizers.Adam(learning_rate=0.02, beta_1=0.99, epsilon=1e-1)

        def train_step(image):
            with tf.GradientTape() as tape:
                feats = extractor(image)
                style_loss = tf.add_n([tf.reduce_mean((gram_matrix(f) - t) ** 2)
                                       for f, t in zip(feats, style_targets)]) * 1e-2 / 2
                content_loss = tf.reduce_mean((feats[1] - content_target) ** 2) * 1e4
                loss = style_loss + content_loss + 30 * tf.image.total_variation(image)
            grad = tape.gradient(loss, image)
            opt.apply_gradients([(grad, image)])
            image.assign(tf.clip_by_value(image, clip_value_min=0.0, clip_value_max=1.0))
            return loss
        step = tf.function(train_step) if compiled else train_step
        return [float(step(image)[0]) for _ in range(4)], image.numpy()
    eager_losses, eager_image = run(False)
    compiled_losses, compiled_image = run(True)
    np.testing.assert_allclose(eager_losses, compiled_losses, rtol=1e-5)
    np.testing.assert_allclose(eager_image, compiled_image, rtol=1e-5, atol=1e-6)
    assert eager_image.min() >= 0.0 and eager_image.max() <= 1.0
    assert not np.array_equal(eager_image, content.numpy())


def test_image_filters_match_their_definitions_and_differentiate():
    rng = np.random.default_rng(0)
    img = rng.normal(size=(2, 5, 6, 3))
    tv = tf.image.total_variation(img).numpy()
    expected = (np.abs(np.diff(img, axis=1)).sum((1, 2, 3))
                + np.abs(np.diff(img, axis=2)).sum((1, 2, 3)))
    np.testing.assert_allclose(tv, expected, rtol=1e-12)
    assert tf.image.total_variation(img[0]).shape == ()
    dy, dx = tf.image.image_gradients(img)
    np.testing.assert_array_equal(dy.numpy()[:, :-1], np.diff(img, axis=1))
    np.testing.assert_array_equal(dy.numpy()[:, -1], 0.0)
    np.testing.assert_array_equal(dx.numpy()[:, :, :-1], np.diff(img, axis=2))
    edges = tf.image.sobel_edges(img).numpy()
    assert edges.shape == (2, 5, 6, 3, 2)
    p = np.pad(img, [(0, 0), (1, 1), (1, 1), (0, 0)], mode="reflect")
    sobel_y = (p[:, 2:, :-2] + 2 * p[:, 2:, 1:-1] + p[:, 2:, 2:]
               - p[:, :-2, :-2] - 2 * p[:, :-2, 1:-1] - p[:, :-2, 2:])
    sobel_x = (p[:, :-2, 2:] + 2 * p[:, 1:-1, 2:] + p[:, 2:, 2:]
               - p[:, :-2, :-2] - 2 * p[:, 1:-1, :-2] - p[:, 2:, :-2])
    np.testing.assert_allclose(edges[..., 0], sobel_y, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(edges[..., 1], sobel_x, rtol=1e-12, atol=1e-12)
    check_grads(lambda x: tf.image.sobel_edges(x) ** 2, [img[:1]], order=2)
    check_grads(tf.image.total_variation, [img], order=1)
    with pytest.raises(ValueError, match="3 or 4"):
        tf.image.total_variation(np.ones((2, 2)))


def test_integrated_gradients_satisfy_completeness(float64_keras):
    keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((6, 6, 3)),
                                 tf.keras.layers.Conv2D(4, 3, activation="softplus"),
                                 tf.keras.layers.GlobalAveragePooling2D(),
                                 tf.keras.layers.Dense(5)])
    baseline = tf.zeros(shape=(6, 6, 3), dtype=tf.float64)
    image = tf.constant(np.random.default_rng(0).random((6, 6, 3)))

    def interpolate_images(baseline, image, alphas):
        alphas_x = alphas[:, tf.newaxis, tf.newaxis, tf.newaxis]
        baseline_x = tf.expand_dims(baseline, axis=0)
        input_x = tf.expand_dims(image, axis=0)
        return baseline_x + alphas_x * (input_x - baseline_x)

    def compute_gradients(images, target_class_idx):
        with tf.GradientTape() as tape:
            tape.watch(images)
            probs = tf.nn.softmax(model(images), axis=-1)[:, target_class_idx]
        return tape.gradient(probs, images)

    @tf.function
    def one_batch(baseline, image, alpha_batch, target_class_idx):
        return compute_gradients(interpolate_images(baseline, image, alpha_batch),
                                 target_class_idx)

    def integrated_gradients(baseline, image, target_class_idx, m_steps=300,
                             batch_size=64):
        alphas = tf.linspace(start=0.0, stop=1.0, num=m_steps + 1)
        batches = []
        for alpha in tf.range(0, len(alphas), batch_size):
            to = tf.minimum(alpha + batch_size, len(alphas))
            batches.append(one_batch(baseline, image, tf.cast(alphas[alpha:to], tf.float64),
                                     target_class_idx))
        grads = tf.concat(batches, axis=0)
        avg = tf.math.reduce_mean((grads[:-1] + grads[1:]) / tf.constant(2.0, tf.float64),
                                  axis=0)
        return (image - baseline) * avg
    ig = integrated_gradients(baseline, image, target_class_idx=3)
    probs = tf.nn.softmax(model(tf.stack([baseline, image])), axis=-1)[:, 3].numpy()
    # completeness: the attributions add up to the change of the output along the path
    assert float(tf.reduce_sum(ig)) == pytest.approx(probs[1] - probs[0], rel=1e-4)


def test_physics_informed_network_residual_and_training(float64_keras):
    """A PINN for Burgers' equation u_t + u u_x = nu u_xx: derivatives of the network in
    its inputs from nested and persistent tapes, trained with Adam."""
    keras.utils.set_random_seed(0)
    pinn = tf.keras.Sequential([tf.keras.Input((2,)),
                                tf.keras.layers.Dense(8, activation="tanh"),
                                tf.keras.layers.Dense(8, activation="tanh"),
                                tf.keras.layers.Dense(1)])
    nu = 0.01 / np.pi

    def derivatives(X):
        with tf.GradientTape(persistent=True) as tape:
            t, x = X[:, 0:1], X[:, 1:2]
            tape.watch(t)
            tape.watch(x)
            u = pinn(tf.stack([t[:, 0], x[:, 0]], axis=1))
            u_x = tape.gradient(u, x)
        u_t = tape.gradient(u, t)
        u_xx = tape.gradient(u_x, x)
        del tape
        return u, u_t, u_x, u_xx
    X = tf.constant(np.random.default_rng(0).uniform(-1, 1, (16, 2)))
    u, u_t, u_x, u_xx = derivatives(X)
    h = 1e-4
    # (a float64 shift: TensorFlow adds no float32 tensor to the float64 X)
    f = lambda dt, dx: pinn(X + tf.constant([[dt, dx]], tf.float64)).numpy()  # noqa: E731
    np.testing.assert_allclose(u_t.numpy(), (f(h, 0) - f(-h, 0)) / (2 * h), rtol=1e-6)
    np.testing.assert_allclose(u_x.numpy(), (f(0, h) - f(0, -h)) / (2 * h), rtol=1e-6)
    np.testing.assert_allclose(u_xx.numpy(), (f(0, h) - 2 * u.numpy() + f(0, -h)) / h ** 2,
                               rtol=1e-4, atol=1e-6)
    x0 = np.linspace(-1, 1, 12)[:, None]
    X0 = tf.constant(np.concatenate([np.zeros_like(x0), x0], 1))
    u0 = -np.sin(np.pi * x0)
    opt = tf.keras.optimizers.Adam(1e-2)

    def loss_fn():
        u, u_t, u_x, u_xx = derivatives(X)
        residual = u_t + u * u_x - nu * u_xx
        return tf.reduce_mean(tf.square(residual)) + tf.reduce_mean(tf.square(pinn(X0) - u0))

    @tf.function
    def train_step():
        with tf.GradientTape() as tape:
            loss = loss_fn()
        grads = tape.gradient(loss, pinn.trainable_variables)
        opt.apply_gradients(zip(grads, pinn.trainable_variables))
        return loss
    eager_loss = float(loss_fn())
    losses = [float(train_step()) for _ in range(30)]
    assert losses[0] == pytest.approx(eager_loss, rel=1e-12)
    assert losses[-1] < 0.5 * losses[0]


def test_actor_critic_episode_update():
    """keras.io "Actor Critic Method" on a stand-in environment: the tape records a whole
    episode of model calls, then one update from the discounted returns."""
    keras.utils.set_random_seed(0)
    inputs = layers.Input(shape=(4,))
    common = layers.Dense(16, activation="relu")(inputs)
    model = keras.Model(inputs=inputs, outputs=[
        layers.Dense(2, activation="softmax")(common), layers.Dense(1)(common)])
    optimizer = keras.optimizers.Adam(learning_rate=0.01)
    huber_loss = keras.losses.Huber()
    rng = np.random.default_rng(0)
    gamma, eps = 0.99, np.finfo(np.float32).eps.item()
    states = rng.normal(size=(10, 4)).astype("float32")
    before = [w.copy() for w in model.get_weights()]
    with tf.GradientTape() as tape:
        action_probs_history, critic_value_history, rewards_history = [], [], []
        for state in states:
            action_probs, critic_value = model(tf.expand_dims(tf.convert_to_tensor(state), 0))
            critic_value_history.append(critic_value[0, 0])
            action = rng.choice(2, p=np.squeeze(action_probs))
            action_probs_history.append(tf.math.log(action_probs[0, action]))
            rewards_history.append(1.0)
        returns, discounted_sum = [], 0
        for r in rewards_history[::-1]:
            discounted_sum = r + gamma * discounted_sum
            returns.insert(0, discounted_sum)
        returns = np.array(returns)
        returns = ((returns - np.mean(returns)) / (np.std(returns) + eps)).tolist()
        actor_losses, critic_losses = [], []
        for log_prob, value, ret in zip(action_probs_history, critic_value_history, returns):
            actor_losses.append(-log_prob * (ret - value))
            critic_losses.append(huber_loss(ops.expand_dims(value, 0), ops.expand_dims(ret, 0)))
        loss_value = sum(actor_losses) + sum(critic_losses)
    grads = tape.gradient(loss_value, model.trainable_variables)
    assert all(g is not None for g in grads)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    assert all(not np.array_equal(a, b) for a, b in zip(before, model.get_weights()))


def test_tensor_array_writes_reads_and_gradients():
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    for i in range(3):
        ta = ta.write(i, float(i) ** 2)
    np.testing.assert_array_equal(ta.stack().numpy(), [0.0, 1.0, 4.0])
    assert ta.size().numpy() == 3 and ta.size().dtype == tf.int32
    fixed = tf.TensorArray(tf.float32, size=2, element_shape=(2,)).write(0, [1.0, 2.0])
    np.testing.assert_array_equal(fixed.stack().numpy(), [[1.0, 2.0], [0.0, 0.0]])
    with pytest.raises(tf.errors.OutOfRangeError, match="not resizeable"):
        fixed.write(2, [1.0, 2.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="dtype is float32"):
        fixed.write(1, tf.constant([1.0, 2.0], tf.float64))
    with pytest.raises(ValueError, match="Incompatible shape"):
        fixed.write(1, [1.0])
    with pytest.raises(ValueError, match="Size must be declared"):
        tf.TensorArray(tf.float32)
    rows = tf.TensorArray(tf.float32, size=3).unstack([[1.0, 2], [3, 4], [5, 6]])
    np.testing.assert_array_equal(rows.gather([2, 0]).numpy(), [[5, 6], [1, 2]])
    np.testing.assert_array_equal(rows.concat().numpy(), [1, 2, 3, 4, 5, 6])
    assert tf.TensorArray(tf.float32, size=0, element_shape=(3,)).stack().shape == (0, 3)
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        acc = tf.TensorArray(tf.float32, size=3)
        for i in range(3):
            acc = acc.write(i, x ** (i + 1))
        y = tf.reduce_sum(acc.stack())
    assert float(tape.gradient(y, x)) == pytest.approx(1 + 2 * 2 + 3 * 4)

    @tf.function
    def powers(v):
        out = tf.TensorArray(tf.float32, size=3)
        for i in range(3):
            out = out.write(i, v * i)
        return out.stack()
    np.testing.assert_array_equal(powers(tf.constant(3.0)).numpy(), [0.0, 3.0, 6.0])


def test_stack_and_concat_give_python_numbers_the_tensors_dtype():
    assert tf.stack([tf.constant(1.0), 2]).dtype == tf.float32  # not float64
    assert tf.stack([1, tf.constant(2.0)]).dtype == tf.float32
    assert tf.concat([tf.constant([1.0]), [2.0]], 0).dtype == tf.float32
    with pytest.raises(TypeError, match="Cannot convert 2.5"):
        tf.stack([tf.constant(1), 2.5])
    model = keras.Sequential([keras.Input((3,)), layers.Dense(2), layers.Dense(1)])
    assert model.input.shape == (None, 3) and model.output.shape == (None, 1)
    probe = keras.Model(model.inputs, [layer.output for layer in model.layers])
    outs = probe(np.ones((2, 3)))
    np.testing.assert_allclose(outs[1].numpy(), model(np.ones((2, 3))).numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="never been called"):
        _ = keras.Sequential([layers.Dense(2)]).input
