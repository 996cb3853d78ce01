"""Real TensorFlow/Keras programs of session 12's probe (TensorFlow tutorials and guides,
keras.io examples, the usual Stack Overflow answers), written as their authors write them
against a module ``tf``. tests/test_real_programs_s12.py runs them with ``tapegrad``;
benchmarks/real_programs_s12_reference.py runs the same functions with TensorFlow 2.21 /
Keras 3.15 and stores what they return in tests/data/real_programs_s12.json.

Weights come from a seeded NumPy generator (``fix_weights``) and data from NumPy, so both
libraries compute the same numbers; each program returns a dict of NumPy arrays."""
import numpy as np


def fix_weights(model, seed=0, scale=0.3):
    """Set every weight of ``model`` (in ``model.weights`` order) from ``seed``."""
    rng = np.random.default_rng(seed)
    model.set_weights([(rng.normal(size=tuple(w.shape)) * scale).astype(np.float32)
                       for w in model.get_weights()])


def _out(d):
    return {k: np.asarray(v) for k, v in d.items()}


# -- tf.signal.fft on complex tensors (the "FFT" guide snippets, Stack Overflow's
#    "power spectrum loss in TensorFlow") ----------------------------------------------------
def fft_power_spectrum(tf):
    """fft/ifft of a complex signal, fftshift, the power spectrum, and the gradient of a
    spectral loss through rfft with respect to a variable signal."""
    rng = np.random.default_rng(1)
    t = np.arange(64) / 64.0
    wave = (np.sin(2 * np.pi * 5 * t) + 0.5 * np.cos(2 * np.pi * 12 * t)
            + 0.1 * rng.normal(size=64)).astype(np.float32)
    x = tf.constant(wave)
    spectrum = tf.signal.fft(tf.cast(x, tf.complex64))
    power = tf.math.real(spectrum * tf.math.conj(spectrum)) / 64.0
    centered = tf.signal.fftshift(power)
    back = tf.math.real(tf.signal.ifft(spectrum))
    target = tf.constant(np.abs(np.fft.rfft(np.sin(2 * np.pi * 5 * t))).astype(np.float32))
    signal = tf.Variable(wave)
    with tf.GradientTape() as tape:
        mag = tf.abs(tf.signal.rfft(signal))
        loss = tf.reduce_mean(tf.square(mag - target))
    grad = tape.gradient(loss, signal)
    peak = tf.argmax(power[:32])
    return _out({"spectrum": spectrum, "power": power, "centered": centered, "back": back,
                 "loss": loss, "grad": grad, "peak": peak,
                 "ishift": tf.signal.ifftshift(centered)})


# -- FFT convolution (Stack Overflow's "convolution via FFT in TensorFlow") ----------------
def fft_convolution_2d(tf):
    """Circular 2-D convolution of an image with a learnable kernel through rfft2d and
    irfft2d, checked against the direct sum, and its gradient for the kernel."""
    rng = np.random.default_rng(2)
    image = tf.constant(rng.normal(size=(2, 8, 8)).astype(np.float32))
    kernel = tf.Variable(rng.normal(size=(8, 8)).astype(np.float32) * 0.2)
    with tf.GradientTape() as tape:
        conv = tf.signal.irfft2d(tf.signal.rfft2d(image) * tf.signal.rfft2d(kernel),
                                 fft_length=[8, 8])
        loss = tf.reduce_sum(tf.nn.relu(conv) ** 2)
    g_kernel = tape.gradient(loss, kernel)
    padded = tf.signal.rfft2d(image, fft_length=[10, 10])  # zero-padded: linear conv
    full = tf.signal.fft2d(tf.complex(image, tf.zeros_like(image)))
    return _out({"conv": conv, "loss": loss, "g_kernel": g_kernel,
                 "padded_abs": tf.abs(padded), "full": full,
                 "round_trip": tf.math.real(tf.signal.ifft2d(full))})


# -- a multi-resolution STFT loss (DDSP / neural vocoders) ---------------------------------
def multi_resolution_stft_loss(tf):
    """Spectral convergence and log-magnitude losses at three frame sizes (64, 128, 256:
    long frames), and their gradient for the predicted waveform."""
    rng = np.random.default_rng(3)
    target = tf.constant(rng.normal(size=(2, 600)).astype(np.float32))
    pred = tf.Variable(rng.normal(size=(2, 600)).astype(np.float32))

    def stft_loss(y_true, y_pred, fft_size, hop):
        s_true = tf.abs(tf.signal.stft(y_true, fft_size, hop, fft_length=fft_size))
        s_pred = tf.abs(tf.signal.stft(y_pred, fft_size, hop, fft_length=fft_size))
        sc = tf.norm(s_true - s_pred, ord="fro", axis=[-2, -1]) / tf.norm(
            s_true, ord="fro", axis=[-2, -1])
        mag = tf.reduce_mean(tf.abs(tf.math.log(s_true + 1e-5) - tf.math.log(s_pred + 1e-5)))
        return tf.reduce_mean(sc) + mag

    with tf.GradientTape() as tape:
        loss = tf.add_n([stft_loss(target, pred, n, n // 4) for n in (64, 128, 256)])
    grad = tape.gradient(loss, pred)
    spec = tf.signal.stft(target, frame_length=255, frame_step=128)  # the audio tutorial's
    return _out({"loss": loss, "grad": grad, "spec_abs": tf.abs(spec),
                 "spec_1024": tf.abs(tf.signal.stft(target, 300, 150, fft_length=1024))})


# -- inverse STFT and Griffin-Lim (tf.signal guide, audio Stack Overflow answers) -----------
def griffin_lim(tf):
    """inverse_stft with inverse_stft_window_fn reconstructs a signal; a few Griffin-Lim
    iterations recover a phase from magnitudes; the gradient goes through inverse_stft."""
    rng = np.random.default_rng(4)
    frame_length, frame_step = 32, 8
    signal = tf.constant(rng.normal(size=(256,)).astype(np.float32))
    stfts = tf.signal.stft(signal, frame_length, frame_step)
    inverse = tf.signal.inverse_stft(
        stfts, frame_length, frame_step,
        window_fn=tf.signal.inverse_stft_window_fn(frame_step))
    plain = tf.signal.inverse_stft(stfts, frame_length, frame_step)
    magnitude = tf.abs(stfts)
    angles = tf.complex(tf.ones_like(magnitude), tf.zeros_like(magnitude))
    window_fn = tf.signal.inverse_stft_window_fn(frame_step)
    for _ in range(3):
        estimate = tf.signal.inverse_stft(tf.cast(magnitude, tf.complex64) * angles,
                                          frame_length, frame_step,
                                          window_fn=window_fn)
        rebuilt = tf.signal.stft(estimate, frame_length, frame_step)
        angles = rebuilt / tf.cast(tf.maximum(1e-8, tf.abs(rebuilt)), tf.complex64)
    v = tf.Variable(tf.math.real(stfts[:4]))
    with tf.GradientTape() as tape:
        y = tf.signal.inverse_stft(tf.complex(v, tf.math.imag(stfts[:4])), 32, 8,
                                   fft_length=32, window_fn=None)
        loss = tf.reduce_sum(y * tf.range(56.0))
    window = tf.signal.inverse_stft_window_fn(3, forward_window_fn=tf.signal.hamming_window)
    return _out({"inverse": inverse, "plain": plain, "estimate": estimate,
                 "grad": tape.gradient(loss, v), "y": y,
                 "window": window(10, tf.float32),
                 "ola": tf.signal.overlap_and_add(tf.reshape(tf.range(12.0), (3, 4)), 2)})


# -- Keras 3 weight paths ("tf.keras weight path", Stack Overflow's weight decay by name) ---
def keras_weight_paths(tf):
    """``w.path`` of Sequential, functional and subclassed models (a reused layer, a
    bidirectional RNN), the optimizer's slot names, and an L2 penalty on kernels picked
    by path."""
    keras = tf.keras
    seq = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, name="hidden"),
                            keras.layers.Dense(2, name="logits")], name="mlp")
    inp = keras.Input((5, 3))
    shared = keras.layers.Dense(3, name="shared")
    x = shared(keras.layers.Bidirectional(keras.layers.GRU(3, return_sequences=True, name="gru"),
                                          merge_mode="sum", name="bigru")(inp))
    x = shared(x)
    func = keras.Model(inp, keras.layers.GlobalAveragePooling1D()(x), name="encoder")

    class Residual(keras.layers.Layer):
        def __init__(self, units, **kwargs):
            super().__init__(**kwargs)
            self.dense = keras.layers.Dense(units, name="proj")
            self.norm = keras.layers.LayerNormalization(name="norm")

        def build(self, input_shape):
            self.gate = self.add_weight(shape=(input_shape[-1],), initializer="ones",
                                        name="gate")

        def call(self, x):
            return self.norm(x + self.gate * self.dense(x))

    class Net(keras.Model):
        def __init__(self):
            super().__init__(name="net")
            self.blocks = [Residual(3, name="block_a"), Residual(3, name="block_b")]
            self.head = keras.layers.Dense(1, name="head")

        def call(self, x):
            for block in self.blocks:
                x = block(x)
            return self.head(x)

    net = Net()
    data = np.random.default_rng(5).normal(size=(4, 3)).astype(np.float32)
    net(data)
    fix_weights(net, seed=6)
    opt = keras.optimizers.Adam(0.01, name="adam")
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(net(data)))
        l2 = tf.add_n([tf.nn.l2_loss(w) for w in net.trainable_weights if "kernel" in w.path])
        total = loss + 1e-2 * l2
    grads = tape.gradient(total, net.trainable_weights)
    opt.apply_gradients(zip(grads, net.trainable_weights))
    names = {"seq": [w.path for w in seq.weights], "func": [w.path for w in func.weights],
             "net": [w.path for w in net.weights],
             "slots": [v.path for v in opt.variables]}
    out = {f"paths_{k}": np.array(v) for k, v in names.items()}
    out.update({"l2": l2, "total": total,
                "weights": np.concatenate([w.numpy().ravel() for w in net.weights])})
    return _out(out)


# -- Keras's "Writing a training loop from scratch" -----------------------------------------
def custom_training_loop(tf):
    """A tf.function train step with a GradientTape, Adam, a metric's update_state /
    result / reset_state, and a validation step, over a batched tf.data pipeline."""
    keras = tf.keras
    inputs = keras.Input(shape=(6,), name="digits")
    x = keras.layers.Dense(8, activation="relu", name="dense_1",
                           kernel_regularizer=keras.regularizers.L2(1e-3))(inputs)
    x = keras.layers.ActivityRegularization(l1=1e-3)(x)
    x = keras.layers.Dense(8, activation="relu", name="dense_2")(x)
    outputs = keras.layers.Dense(3, name="predictions")(x)
    model = keras.Model(inputs=inputs, outputs=outputs)
    fix_weights(model, seed=7)
    optimizer = keras.optimizers.Adam(learning_rate=1e-2)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    train_acc_metric = keras.metrics.SparseCategoricalAccuracy()
    val_acc_metric = keras.metrics.SparseCategoricalAccuracy()
    rng = np.random.default_rng(8)
    x_train = rng.normal(size=(32, 6)).astype(np.float32)
    y_train = rng.integers(0, 3, size=(32,))
    train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(8)
    val_dataset = tf.data.Dataset.from_tensor_slices((x_train[:16], y_train[:16])).batch(8)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss_value = loss_fn(y, logits)
            # the guide's "low-level handling of losses tracked by the model"
            loss_value += sum(model.losses)
        grads = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        train_acc_metric.update_state(y, logits)
        return loss_value

    @tf.function
    def test_step(x, y):
        val_logits = model(x, training=False)
        val_acc_metric.update_state(y, val_logits)

    losses, accs = [], []
    for _epoch in range(2):
        for x_batch_train, y_batch_train in train_dataset:
            losses.append(float(train_step(x_batch_train, y_batch_train)))
        accs.append(float(train_acc_metric.result()))
        train_acc_metric.reset_state()
        for x_batch_val, y_batch_val in val_dataset:
            test_step(x_batch_val, y_batch_val)
        accs.append(float(val_acc_metric.result()))
        val_acc_metric.reset_state()
    return _out({"losses": np.array(losses), "accs": np.array(accs),
                 "iterations": np.array(int(optimizer.iterations)),
                 "kernel": model.get_layer("predictions").kernel})


# -- TensorFlow's DCGAN tutorial ------------------------------------------------------------
def dcgan_train_step(tf):
    """The generator (Dense, BatchNormalization, LeakyReLU, Reshape, Conv2DTranspose) and
    discriminator (Conv2D, LeakyReLU, Dropout, Flatten, Dense) of the tutorial, shrunk;
    one train step with two tapes and two Adam optimizers."""
    layers = tf.keras.layers

    def make_generator_model():
        model = tf.keras.Sequential()
        model.add(layers.Input((4,)))
        model.add(layers.Dense(2 * 2 * 8, use_bias=False))
        model.add(layers.BatchNormalization())
        model.add(layers.LeakyReLU())
        model.add(layers.Reshape((2, 2, 8)))
        model.add(layers.Conv2DTranspose(4, (3, 3), strides=(1, 1), padding="same",
                                         use_bias=False))
        model.add(layers.BatchNormalization())
        model.add(layers.LeakyReLU())
        model.add(layers.Conv2DTranspose(1, (3, 3), strides=(2, 2), padding="same",
                                         use_bias=False, activation="tanh"))
        return model

    def make_discriminator_model():
        model = tf.keras.Sequential()
        model.add(layers.Input((4, 4, 1)))
        model.add(layers.Conv2D(4, (3, 3), strides=(2, 2), padding="same"))
        model.add(layers.LeakyReLU())
        model.add(layers.Dropout(0.0))
        model.add(layers.Flatten())
        model.add(layers.Dense(1))
        return model

    generator, discriminator = make_generator_model(), make_discriminator_model()
    fix_weights(generator, seed=9)
    fix_weights(discriminator, seed=10)
    cross_entropy = tf.keras.losses.BinaryCrossentropy(from_logits=True)

    def discriminator_loss(real_output, fake_output):
        real_loss = cross_entropy(tf.ones_like(real_output), real_output)
        fake_loss = cross_entropy(tf.zeros_like(fake_output), fake_output)
        return real_loss + fake_loss

    def generator_loss(fake_output):
        return cross_entropy(tf.ones_like(fake_output), fake_output)

    generator_optimizer = tf.keras.optimizers.Adam(1e-2)
    discriminator_optimizer = tf.keras.optimizers.Adam(1e-2)
    rng = np.random.default_rng(11)
    images = rng.uniform(-1, 1, size=(6, 4, 4, 1)).astype(np.float32)
    noise = rng.normal(size=(6, 4)).astype(np.float32)

    @tf.function
    def train_step(images, noise):
        with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
            generated_images = generator(noise, training=True)
            real_output = discriminator(images, training=True)
            fake_output = discriminator(generated_images, training=True)
            gen_loss = generator_loss(fake_output)
            disc_loss = discriminator_loss(real_output, fake_output)
        gradients_of_generator = gen_tape.gradient(gen_loss, generator.trainable_variables)
        gradients_of_discriminator = disc_tape.gradient(disc_loss,
                                                        discriminator.trainable_variables)
        generator_optimizer.apply_gradients(zip(gradients_of_generator,
                                                generator.trainable_variables))
        discriminator_optimizer.apply_gradients(zip(gradients_of_discriminator,
                                                    discriminator.trainable_variables))
        return gen_loss, disc_loss

    steps = [train_step(images, noise) for _ in range(2)]
    return _out({"gen_loss": np.array([float(g) for g, _ in steps]),
                 "disc_loss": np.array([float(d) for _, d in steps]),
                 "generated": generator(noise, training=False),
                 "moving_mean": generator.layers[1].moving_mean})


# -- TensorFlow's "Neural style transfer" ---------------------------------------------------
def style_transfer(tf):
    """Gram matrices by einsum, style and content losses of a small conv extractor, total
    variation, an image Variable updated by Adam and clipped to [0, 1] (the tutorial's
    train_step)."""
    layers = tf.keras.layers
    inputs = tf.keras.Input((8, 8, 3))
    c1 = layers.Conv2D(4, 3, padding="same", activation="relu", name="block1_conv1")(inputs)
    c2 = layers.Conv2D(4, 3, padding="same", activation="relu", name="block2_conv1")(
        layers.MaxPooling2D(2)(c1))
    extractor = tf.keras.Model(inputs, [c1, c2])
    fix_weights(extractor, seed=12)
    extractor.trainable = False
    rng = np.random.default_rng(13)
    content_image = rng.uniform(size=(1, 8, 8, 3)).astype(np.float32)
    style_image = rng.uniform(size=(1, 8, 8, 3)).astype(np.float32)

    def gram_matrix(input_tensor):
        result = tf.linalg.einsum("bijc,bijd->bcd", input_tensor, input_tensor)
        input_shape = tf.shape(input_tensor)
        num_locations = tf.cast(input_shape[1] * input_shape[2], tf.float32)
        return result / num_locations

    def extract(image):
        style, content = extractor(image * 255.0 - 100.0)
        return {"style": [gram_matrix(style), gram_matrix(content)], "content": content}

    style_targets = extract(style_image)["style"]
    content_targets = extract(content_image)["content"]
    image = tf.Variable(content_image)
    opt = tf.keras.optimizers.Adam(learning_rate=0.02, beta_1=0.99, epsilon=1e-1)

    def clip_0_1(image):
        return tf.clip_by_value(image, clip_value_min=0.0, clip_value_max=1.0)

    @tf.function()
    def train_step(image):
        with tf.GradientTape() as tape:
            outputs = extract(image)
            style_loss = tf.add_n([tf.reduce_mean((s - t) ** 2)
                                   for s, t in zip(outputs["style"], style_targets)])
            content_loss = tf.reduce_mean((outputs["content"] - content_targets) ** 2)
            loss = 1e-2 * style_loss + 1e4 * content_loss / 1e4
            loss += 30 * tf.image.total_variation(image)
        grad = tape.gradient(loss, image)
        opt.apply_gradients([(grad, image)])
        image.assign(clip_0_1(image))
        return loss

    losses = [float(train_step(image)[0]) for _ in range(3)]
    return _out({"losses": np.array(losses), "image": image,
                 "gram": gram_matrix(tf.constant(content_image)),
                 "tv": tf.image.total_variation(tf.constant(style_image))})


# -- TensorFlow's "Integrated gradients" ----------------------------------------------------
def integrated_gradients(tf):
    """Interpolated images along tf.linspace alphas, batched gradients of the target
    class's probability, the trapezoidal Riemann sum, and the attribution mask."""
    layers = tf.keras.layers
    model = tf.keras.Sequential([layers.Input((6, 6, 3)), layers.Conv2D(4, 3),
                                 layers.GlobalAveragePooling2D(),
                                 layers.Dense(5, activation="softmax")])
    fix_weights(model, seed=14)
    image = tf.constant(np.random.default_rng(15).uniform(size=(6, 6, 3)).astype(np.float32))
    baseline = tf.zeros(shape=(6, 6, 3))
    m_steps = 8
    alphas = tf.linspace(start=0.0, stop=1.0, num=m_steps + 1)

    def interpolate_images(baseline, image, alphas):
        alphas_x = alphas[:, tf.newaxis, tf.newaxis, tf.newaxis]
        baseline_x = tf.expand_dims(baseline, axis=0)
        input_x = tf.expand_dims(image, axis=0)
        delta = input_x - baseline_x
        return baseline_x + alphas_x * delta

    def compute_gradients(images, target_class_idx):
        with tf.GradientTape() as tape:
            tape.watch(images)
            logits = model(images)
            probs = tf.nn.softmax(logits, axis=-1)[:, target_class_idx]
        return tape.gradient(probs, images)

    def integral_approximation(gradients):
        grads = (gradients[:-1] + gradients[1:]) / tf.constant(2.0)
        return tf.math.reduce_mean(grads, axis=0)

    @tf.function
    def one_batch(baseline, image, alpha_batch, target_class_idx):
        interpolated_path_input_batch = interpolate_images(baseline=baseline, image=image,
                                                           alphas=alpha_batch)
        return compute_gradients(images=interpolated_path_input_batch,
                                 target_class_idx=target_class_idx)

    gradient_batches = []
    batch_size = 4
    for alpha in tf.range(0, len(alphas), batch_size):
        from_ = alpha
        to = tf.minimum(from_ + batch_size, len(alphas))
        alpha_batch = alphas[from_:to]
        gradient_batches.append(one_batch(baseline, image, alpha_batch, 2))
    total_gradients = tf.concat(gradient_batches, axis=0)
    avg_gradients = integral_approximation(gradients=total_gradients)
    integrated = (image - baseline) * avg_gradients
    attribution_mask = tf.reduce_sum(tf.math.abs(integrated), axis=-1)
    return _out({"alphas": alphas, "total_gradients": total_gradients,
                 "integrated": integrated, "mask": attribution_mask})


# -- Jacobians and Hessians (Stack Overflow's "tf.GradientTape jacobian" answers) -----------
def jacobians_and_hessians(tf):
    """tape.jacobian of a layer's output for its kernel and input, batch_jacobian, a
    Hessian by nested tapes, and a Jacobian of a complex FFT's real part."""
    layer = tf.keras.layers.Dense(3, activation="tanh")
    x = tf.constant(np.random.default_rng(16).normal(size=(4, 2)).astype(np.float32))
    layer.build((None, 2))
    layer.set_weights([np.array([[0.5, -0.3, 0.2], [0.1, 0.4, -0.6]], np.float32),
                       np.array([0.1, 0.0, -0.1], np.float32)])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = layer(x)
    j_kernel = tape.jacobian(y, layer.kernel)
    j_x = tape.batch_jacobian(y, x)
    del tape
    v = tf.Variable([1.0, 2.0, -0.5])
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            f = tf.reduce_sum(tf.sin(v) * v ** 2) + v[0] * v[1] * v[2]
        g = t1.gradient(f, v)
    hessian = t2.jacobian(g, v)
    z = tf.Variable(np.arange(6.0, dtype=np.float32))
    with tf.GradientTape() as t3:
        spec = tf.math.real(tf.signal.rfft(z)) ** 2
    j_rfft = t3.jacobian(spec, z)
    w = tf.Variable(np.linspace(-1.0, 1.0, 8).astype(np.float32))
    with tf.GradientTape() as t4:
        with tf.GradientTape() as t5:
            energy = tf.reduce_sum(tf.abs(tf.signal.rfft(w * w)) ** 2)
        gw = t5.gradient(energy, w)
    h_fft = t4.jacobian(gw, w)
    return _out({"j_kernel": j_kernel, "j_x": j_x, "hessian": hessian, "g": g,
                 "j_rfft": j_rfft, "h_fft": h_fft, "gw": gw})


# -- keras.io "Text classification with FNet" (shrunk) -------------------------------------
def fnet_encoder(tf):
    """The FNet encoder: token and position embeddings, a Fourier mixing layer (the real
    part of fft2d over the sequence and hidden axes), LayerNormalization and a feed-forward
    block; compiled and fit two epochs."""
    keras, layers = tf.keras, tf.keras.layers

    class FNetEncoder(layers.Layer):
        def __init__(self, embed_dim, dense_dim, **kwargs):
            super().__init__(**kwargs)
            self.dense_proj = keras.Sequential([layers.Dense(dense_dim, activation="relu"),
                                                layers.Dense(embed_dim)])
            self.layernorm_1 = layers.LayerNormalization()
            self.layernorm_2 = layers.LayerNormalization()

        def call(self, inputs):
            inp_complex = tf.cast(inputs, tf.complex64)
            fft = tf.math.real(tf.signal.fft2d(inp_complex))
            proj_input = self.layernorm_1(inputs + fft)
            proj_output = self.dense_proj(proj_input)
            return self.layernorm_2(proj_input + proj_output)

    class PositionalEmbedding(layers.Layer):
        def __init__(self, sequence_length, vocab_size, embed_dim, **kwargs):
            super().__init__(**kwargs)
            self.token_embeddings = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
            self.position_embeddings = layers.Embedding(input_dim=sequence_length,
                                                        output_dim=embed_dim)

        def call(self, inputs):
            length = tf.shape(inputs)[-1]
            positions = tf.range(start=0, limit=length, delta=1)
            return self.token_embeddings(inputs) + self.position_embeddings(positions)

    inputs = keras.Input(shape=(None,), dtype="int64", name="encoder_inputs")
    x = PositionalEmbedding(6, 20, 8)(inputs)
    x = FNetEncoder(8, 12)(x)
    x = layers.GlobalAveragePooling1D()(x)
    outputs = layers.Dense(2, activation="softmax")(x)
    model = keras.Model(inputs, outputs, name="fnet")
    fix_weights(model, seed=17)
    rng = np.random.default_rng(18)
    tokens = rng.integers(0, 20, size=(8, 6))
    labels = rng.integers(0, 2, size=(8,))
    with tf.GradientTape() as tape:
        probs = model(tokens)
        loss = keras.losses.sparse_categorical_crossentropy(labels, probs)
    grads = tape.gradient(loss, model.trainable_weights)
    # SGD, not the example's Adam: Keras 3 on TensorFlow gives Adam the embedding's
    # gradient as IndexedSlices and squares its unsummed rows where a token repeats
    # (adam_on_repeated_embedding_rows below); tapegrad's gradient is dense
    model.compile(keras.optimizers.SGD(0.5), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    history = model.fit(tokens, labels, batch_size=4, epochs=2, verbose=0, shuffle=False)
    return _out({"probs": probs, "loss": loss,
                 "grads": np.concatenate([tf.convert_to_tensor(g).numpy().ravel()
                                          for g in grads]),
                 "history": np.array(history.history["loss"]),
                 "after": model.predict(tokens, verbose=0)})


# -- a learnable spectral filter (fft, a mask, ifft; Stack Overflow's "low-pass filter") ---
def spectral_filter(tf):
    """A low-pass filter by masking fft bins, a learnable complex gain per bin trained a
    few steps with SGD, and a 2-D spectral filter of an image batch (fft2d / ifft2d)."""
    rng = np.random.default_rng(19)
    n = 32
    clean = np.sin(2 * np.pi * 3 * np.arange(n) / n).astype(np.float32)
    noisy = tf.constant(clean + 0.3 * rng.normal(size=(4, n)).astype(np.float32))
    freq = tf.signal.fft(tf.cast(noisy, tf.complex64))
    keep = tf.cast(tf.abs(tf.signal.fftshift(tf.range(n) - n // 2)) <= 4, tf.complex64)
    lowpassed = tf.math.real(tf.signal.ifft(freq * keep))
    gain_re = tf.Variable(tf.ones([n]))
    gain_im = tf.Variable(tf.zeros([n]))
    opt = tf.keras.optimizers.SGD(0.05)
    losses = []
    for _ in range(3):
        with tf.GradientTape() as tape:
            gain = tf.complex(gain_re, gain_im)
            out = tf.math.real(tf.signal.ifft(freq * gain))
            loss = tf.reduce_mean((out - clean) ** 2)
        grads = tape.gradient(loss, [gain_re, gain_im])
        opt.apply_gradients(zip(grads, [gain_re, gain_im]))
        losses.append(float(loss))
    images = tf.constant(rng.normal(size=(2, 6, 6)).astype(np.float32))
    z = tf.Variable(tf.complex(images, 0.5 * images))
    with tf.GradientTape() as tape:
        spec = tf.signal.fft2d(z)
        blurred = tf.signal.ifft2d(spec * tf.cast(tf.exp(-tf.abs(spec) / 10.0), tf.complex64))
        img_loss = tf.reduce_sum(tf.abs(blurred))
    return _out({"lowpassed": lowpassed, "losses": np.array(losses), "gain_re": gain_re,
                 "gain_im": gain_im, "blurred": blurred, "img_loss": img_loss,
                 "g_z": tape.gradient(img_loss, z)})


# -- gradients of a complex FFT loss for a complex variable ---------------------------------
def complex_fft_gradients(tf):
    """TensorFlow's complex gradients through fft, ifft, rfft and irfft (with fft_length
    padding), fft3d and a Keras layer computing a spectrum."""
    rng = np.random.default_rng(20)
    z = tf.Variable((rng.normal(size=(3, 8)) + 1j * rng.normal(size=(3, 8))).astype(np.complex64))
    with tf.GradientTape(persistent=True) as tape:
        a = tf.reduce_sum(tf.abs(tf.signal.fft(z)) ** 1.5)
        b = tf.reduce_sum(tf.math.real(tf.signal.ifft(z * z)) * tf.range(8.0))
        c = tf.reduce_sum(tf.signal.irfft(z) ** 2)
        d = tf.reduce_sum(tf.signal.irfft(z, fft_length=[18]) * tf.range(18.0))
    r = tf.Variable(rng.normal(size=(2, 7)).astype(np.float64))
    with tf.GradientTape(persistent=True) as tape2:
        e = tf.reduce_sum(tf.abs(tf.signal.rfft(r, fft_length=[12])))
        f = tf.reduce_sum(tf.math.imag(tf.signal.rfft(r)) ** 2)
    cube = tf.Variable((rng.normal(size=(2, 3, 4)) + 0j).astype(np.complex128))
    with tf.GradientTape() as tape3:
        h = tf.reduce_sum(tf.math.real(tf.signal.fft3d(cube)) ** 2)

    class Spectrum(tf.keras.layers.Layer):
        def call(self, x):
            return tf.math.log(tf.abs(tf.signal.rfft(x)) + 1.0)

    model = tf.keras.Sequential([tf.keras.Input((10,)), Spectrum(), tf.keras.layers.Dense(2)])
    fix_weights(model, seed=21)
    xs = rng.normal(size=(3, 10)).astype(np.float32)
    with tf.GradientTape() as tape4:
        pred = model(xs)
        loss = tf.reduce_mean(pred ** 2)
    return _out({"ga": tape.gradient(a, z), "gb": tape.gradient(b, z),
                 "gc": tape.gradient(c, z), "gd": tape.gradient(d, z),
                 "ge": tape2.gradient(e, r), "gf": tape2.gradient(f, r),
                 "gh": tape3.gradient(h, cube), "pred": pred,
                 "g_model": tape4.gradient(loss, model.trainable_weights)[0],
                 "irfft3d": tf.signal.irfft3d(tf.signal.rfft3d(tf.math.real(cube)))})


# -- a siamese network: one layer used twice (keras.io "Image similarity", shrunk) ---------
def siamese_shared_layer(tf):
    """A functional model calling one embedding network on two inputs; the contrastive
    loss's gradient adds up both uses; weights listed once, by path."""
    keras = tf.keras
    embedding = keras.Sequential([keras.Input((5,)),
                                  keras.layers.Dense(4, activation="relu", name="hidden"),
                                  keras.layers.Dense(3, name="out")], name="embedding")
    a, b = keras.Input((5,), name="left"), keras.Input((5,), name="right")
    ea, eb = embedding(a), embedding(b)
    distance = keras.layers.Lambda(lambda t: tf.sqrt(
        tf.reduce_sum(tf.square(t[0] - t[1]), axis=1, keepdims=True) + 1e-6))([ea, eb])
    score = keras.layers.Dense(1, activation="sigmoid", name="score")(distance)
    model = keras.Model([a, b], score)
    fix_weights(model, seed=22)
    rng = np.random.default_rng(23)
    left, right = rng.normal(size=(6, 5)).astype(np.float32), rng.normal(size=(6, 5)).astype(np.float32)
    labels = rng.integers(0, 2, size=(6, 1)).astype(np.float32)

    def contrastive_loss(y_true, y_pred, margin=1.0):
        square_pred = tf.math.square(y_pred)
        margin_square = tf.math.square(tf.math.maximum(margin - y_pred, 0))
        return tf.math.reduce_mean((1 - y_true) * square_pred + y_true * margin_square)

    with tf.GradientTape() as tape:
        loss = contrastive_loss(labels, model([left, right]))
    grads = tape.gradient(loss, model.trainable_weights)
    model.compile(optimizer=keras.optimizers.RMSprop(0.01), loss=contrastive_loss)
    history = model.fit([left, right], labels, batch_size=3, epochs=2, verbose=0,
                        shuffle=False)
    return _out({"loss": loss, "grads": np.concatenate([g.numpy().ravel() for g in grads]),
                 "paths": np.array([w.path for w in model.weights]),
                 "history": np.array(history.history["loss"]),
                 "after": model.predict([left, right], verbose=0)})


# -- the audio tutorial's spectrogram pipeline over tf.data ---------------------------------
def spectrogram_dataset(tf):
    """``get_spectrogram`` (stft of 255 / 128, abs, a channel axis) mapped over a
    tf.data pipeline of padded waveforms, a Resizing + Normalization model adapted on
    the spectrograms, and a train step."""
    rng = np.random.default_rng(24)
    waves = rng.normal(size=(6, 800)).astype(np.float32) * 0.2
    labels = rng.integers(0, 3, size=(6,))

    def get_spectrogram(waveform):
        spectrogram = tf.signal.stft(waveform, frame_length=255, frame_step=128)
        spectrogram = tf.abs(spectrogram)
        spectrogram = spectrogram[..., tf.newaxis]
        return spectrogram

    ds = tf.data.Dataset.from_tensor_slices((waves, labels)).batch(3)
    spec_ds = ds.map(lambda audio, label: (get_spectrogram(audio), label))
    norm_layer = tf.keras.layers.Normalization()
    norm_layer.adapt(data=spec_ds.map(map_func=lambda spec, label: spec))
    model = tf.keras.Sequential([
        tf.keras.layers.Input(shape=(5, 129, 1)),
        tf.keras.layers.Resizing(8, 8),
        norm_layer,
        tf.keras.layers.Conv2D(4, 3, activation="relu"),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(3),
    ])
    fix_weights(model, seed=25, scale=0.1)
    norm_layer.adapt(data=spec_ds.map(map_func=lambda spec, label: spec))
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    history = model.fit(spec_ds, epochs=2, verbose=0)
    first = next(iter(spec_ds))[0]
    return _out({"spec": first, "mean": norm_layer.mean, "variance": norm_layer.variance,
                 "loss": np.array(history.history["loss"]),
                 "logits": model.predict(spec_ds, verbose=0)})


# -- IndexedSlices: Keras steps an embedding per slice (tapegrad since session 14) ------
def adam_on_repeated_embedding_rows(tf):
    """Adam on an Embedding whose batch repeats a token: Keras 3 on TensorFlow updates the
    second moment with the square of each unsummed IndexedSlices row (1 + 1, 4 + 9 for the
    row below) where the dense gradient has the square of their sum (4, 1)."""
    layer = tf.keras.layers.Embedding(4, 2, embeddings_initializer="ones")
    opt = tf.keras.optimizers.Adam(0.1)
    upstream = tf.constant([[1.0, 2.0], [1.0, -3.0]])
    for _ in range(2):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(layer(tf.constant([1, 1])) * upstream)
        grads = tape.gradient(loss, layer.trainable_weights)
        opt.apply_gradients(zip(grads, layer.trainable_weights))
    return _out({"embeddings": layer.embeddings})


XFAIL_NAMES = ()

NAMES = ("adam_on_repeated_embedding_rows", "fft_power_spectrum", "fft_convolution_2d", "multi_resolution_stft_loss",
         "griffin_lim", "keras_weight_paths", "custom_training_loop", "dcgan_train_step",
         "style_transfer", "integrated_gradients", "jacobians_and_hessians",
         "fnet_encoder", "spectral_filter", "complex_fft_gradients",
         "siamese_shared_layer", "spectrogram_dataset")


def run(tf, name):
    """Run the program ``name`` with the module ``tf``."""
    return globals()[name](tf)
