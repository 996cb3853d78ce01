"""Real TensorFlow 2 programs with Keras models, as users write them: a custom training loop,
a GAN step, FGSM, a saliency map, and a model's input Jacobian compiled and saved."""
import numpy as np

import tapegrad as tf


def _blobs(n=128, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, n)
    centres = np.array([[2.0, 0.0], [-1.0, 1.7], [-1.0, -1.7]])
    x = centres[labels] + 0.4 * rng.normal(size=(n, 2))
    return x.astype("float32"), labels


def _classifier():
    return tf.keras.Sequential([
        tf.keras.Input(shape=(2,)),
        tf.keras.layers.Dense(16, activation="relu"),
        tf.keras.layers.Dense(3),
    ])


def test_custom_training_loop():
    tf.random.set_seed(0)
    x, y = _blobs()
    model = _classifier()
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = tf.keras.optimizers.Adam(learning_rate=0.05)
    acc = tf.keras.metrics.SparseCategoricalAccuracy()

    @tf.function
    def train_step(xb, yb):
        with tf.GradientTape() as tape:
            logits = model(xb, training=True)
            loss = loss_fn(yb, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        acc.update_state(yb, logits)
        return loss

    losses = []
    for _ in range(15):
        acc.reset_state()
        for i in range(0, 128, 32):
            losses.append(float(train_step(x[i:i + 32], y[i:i + 32])))
    assert losses[-1] < 0.2 * losses[0]
    assert float(acc.result()) > 0.95
    assert int(optimizer.iterations) == 60
    assert f"{tf.constant(losses[-1]).numpy():.3f}"  # the loss prints


def test_gan_step():
    tf.random.set_seed(1)
    latent = 4
    generator = tf.keras.Sequential([tf.keras.Input((latent,)),
                                     tf.keras.layers.Dense(16, activation="relu"),
                                     tf.keras.layers.Dense(2)])
    discriminator = tf.keras.Sequential([tf.keras.Input((2,)),
                                         tf.keras.layers.Dense(16),
                                         tf.keras.layers.LeakyReLU(0.2),
                                         tf.keras.layers.Dense(1)])
    bce = tf.keras.losses.BinaryCrossentropy(from_logits=True)
    g_opt = tf.keras.optimizers.Adam(1e-3, beta_1=0.5)
    d_opt = tf.keras.optimizers.Adam(1e-3, beta_1=0.5)
    real = tf.constant(np.random.default_rng(2).normal(3.0, 0.5, (64, 2)).astype("float32"))

    @tf.function
    def step(noise):
        with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
            fake = generator(noise, training=True)
            real_out = discriminator(real, training=True)
            fake_out = discriminator(fake, training=True)
            g_loss = bce(tf.ones_like(fake_out), fake_out)
            d_loss = bce(tf.ones_like(real_out), real_out) + bce(tf.zeros_like(fake_out),
                                                                 fake_out)
        g_grads = g_tape.gradient(g_loss, generator.trainable_variables)
        d_grads = d_tape.gradient(d_loss, discriminator.trainable_variables)
        g_opt.apply_gradients(zip(g_grads, generator.trainable_variables))
        d_opt.apply_gradients(zip(d_grads, discriminator.trainable_variables))
        return g_loss, d_loss

    d0 = [w.numpy() for w in discriminator.weights]
    g0 = [w.numpy() for w in generator.weights]
    start = float(tf.reduce_mean(generator(tf.random.normal([256, latent]))[:, 0]))
    for _ in range(300):
        step(tf.random.normal([64, latent]))
    end = float(tf.reduce_mean(generator(tf.random.normal([256, latent]))[:, 0]))
    assert int(g_opt.iterations) == int(d_opt.iterations) == 300
    assert all(not np.allclose(a, w.numpy()) for a, w in zip(d0, discriminator.weights))
    assert all(not np.allclose(a, w.numpy()) for a, w in zip(g0, generator.weights))
    assert abs(end - 3.0) < abs(start - 3.0)  # the fakes move towards the real data


def test_fgsm_adversarial_example():
    tf.random.set_seed(2)
    x, y = _blobs()
    model = _classifier()
    model.compile(optimizer=tf.keras.optimizers.Adam(0.05),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    model.fit(x, y, epochs=10, batch_size=32, verbose=0)
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def create_adversarial_pattern(image, label):
        with tf.GradientTape() as tape:
            tape.watch(image)
            loss = loss_object(label, model(image))
        return tf.sign(tape.gradient(loss, image))

    image = tf.constant(x[:32])
    perturbation = create_adversarial_pattern(image, y[:32])
    clean = model.evaluate(x[:32], y[:32], verbose=0, return_dict=True)
    adversarial = model.evaluate((image + 1.5 * perturbation).numpy(), y[:32], verbose=0,
                                 return_dict=True)
    assert perturbation.shape == image.shape
    assert set(np.unique(perturbation.numpy())) <= {-1.0, 0.0, 1.0}
    assert adversarial["loss"] > 3 * clean["loss"]
    assert adversarial["accuracy"] < clean["accuracy"]


def test_saliency_map_matches_finite_differences():
    tf.random.set_seed(3)
    keras_input = tf.keras.Input(shape=(6, 6, 1))
    h = tf.keras.layers.Conv2D(4, 3, activation="tanh")(keras_input)
    h = tf.keras.layers.GlobalAveragePooling2D()(h)
    model = tf.keras.Model(keras_input, tf.keras.layers.Dense(2)(h))
    images = tf.constant(np.random.default_rng(4).normal(size=(3, 6, 6, 1)).astype("float32"))
    with tf.GradientTape() as tape:
        tape.watch(images)
        score = model(images)[:, 1]
    saliency = tf.reduce_max(tf.abs(tape.gradient(score, images)), axis=-1)
    assert saliency.shape == (3, 6, 6)
    # one pixel's gradient by central differences (float32: a loose tolerance)
    i, r, c = 1, 2, 3
    eps = 1e-2
    up, down = images.numpy().copy(), images.numpy().copy()
    up[i, r, c, 0] += eps
    down[i, r, c, 0] -= eps
    numeric = (model(up)[i, 1].numpy() - model(down)[i, 1].numpy()) / (2 * eps)
    np.testing.assert_allclose(abs(numeric), saliency.numpy()[i, r, c], rtol=2e-2, atol=1e-4)


def test_input_jacobian_of_a_keras_model_compiled_and_saved(tmp_path):
    tf.random.set_seed(4)
    model = tf.keras.Sequential([tf.keras.Input((5,)),
                                 tf.keras.layers.Dense(8, activation="tanh"),
                                 tf.keras.layers.Dense(3)])

    @tf.function
    def jacobian(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = model(x)
        return g.batch_jacobian(y, x)

    xs = tf.constant(np.random.default_rng(5).normal(size=(4, 5)).astype("float32"))
    J = jacobian(xs)
    w1, b1, w2, _ = model.get_weights()
    h = np.tanh(xs.numpy() @ w1 + b1)
    expected = np.einsum("ij,bj,jk->bki", w1, 1 - h ** 2, w2)
    np.testing.assert_allclose(J.numpy(), expected, rtol=1e-5, atol=1e-6)
    path = tmp_path / "jac.tgz"
    tf.saved.save(jacobian.get_concrete_function(xs), str(path))
    loaded = tf.saved.load(str(path))
    np.testing.assert_allclose(loaded(xs).numpy(), J.numpy(), rtol=1e-6)
