"""Real TensorFlow/Keras programs (tutorials, keras.io examples, the usual Stack Overflow
answers), written as their authors write them against a module ``tf``: the tests run them
with ``tapegrad``, ``benchmarks/real_programs_s11_reference.py`` runs the same functions with
TensorFlow 2.21 / Keras 3.15 and stores what they return in tests/data.

Every program fixes its weights from a seeded NumPy generator (``fix_weights``), so both
libraries compute the same numbers; each returns a dict of NumPy arrays to compare."""
import numpy as np


def fix_weights(model, seed=0, scale=0.3):
    """Set every weight of ``model`` (in ``model.weights`` order) from ``seed``."""
    rng = np.random.default_rng(seed)
    model.set_weights([(rng.normal(size=tuple(w.shape)) * scale).astype(np.float32)
                       for w in model.get_weights()])


def _images(n, h, w, c, seed=1):
    return np.random.default_rng(seed).uniform(size=(n, h, w, c)).astype(np.float32)


# -- Grad-CAM (keras.io "Grad-CAM class activation visualization") -----------------------
def grad_cam(tf):
    """A model with two outputs (the last conv map and the predictions); the gradient of
    the top class's channel with respect to the conv map weighs the map's channels."""
    layers = tf.keras.layers
    inputs = tf.keras.Input(shape=(10, 10, 3))
    x = layers.Conv2D(6, 3, activation="relu", name="block1_conv")(inputs)
    x = layers.Conv2D(5, 3, activation="relu", name="last_conv")(x)
    x = layers.GlobalAveragePooling2D()(x)
    outputs = layers.Dense(4, activation="softmax", name="predictions")(x)
    model = tf.keras.Model(inputs, outputs)
    fix_weights(model, seed=3)
    img_array = _images(1, 10, 10, 3)

    grad_model = tf.keras.models.Model(
        model.inputs, [model.get_layer("last_conv").output, model.output])
    with tf.GradientTape() as tape:
        last_conv_layer_output, preds = grad_model(img_array)
        pred_index = tf.argmax(preds[0])
        class_channel = preds[:, pred_index]
    grads = tape.gradient(class_channel, last_conv_layer_output)
    pooled_grads = tf.reduce_mean(grads, axis=(0, 1, 2))
    last_conv_layer_output = last_conv_layer_output[0]
    heatmap = last_conv_layer_output @ pooled_grads[..., tf.newaxis]
    heatmap = tf.squeeze(heatmap)
    heatmap = tf.maximum(heatmap, 0) / tf.math.reduce_max(heatmap)
    return {"preds": preds.numpy(), "pred_index": np.array(int(pred_index)),
            "pooled_grads": pooled_grads.numpy(), "heatmap": heatmap.numpy()}


# -- Char-RNN (TensorFlow's "Text generation with an RNN") --------------------------------
def char_rnn(tf):
    """Embedding + GRU(return_state) in a subclassed model whose ``call`` takes the states,
    trained a step with ``fit`` on a windowed ``tf.data`` pipeline, then sampled one
    character at a time by a ``tf.function`` that carries the GRU state."""
    vocab_size, embedding_dim, rnn_units, seq_length = 7, 4, 5, 6

    class MyModel(tf.keras.Model):
        def __init__(self, vocab_size, embedding_dim, rnn_units):
            super().__init__()
            self.embedding = tf.keras.layers.Embedding(vocab_size, embedding_dim)
            self.gru = tf.keras.layers.GRU(rnn_units, return_sequences=True,
                                           return_state=True)
            self.dense = tf.keras.layers.Dense(vocab_size)

        def call(self, inputs, states=None, return_state=False, training=False):
            x = self.embedding(inputs, training=training)
            if states is None:
                states = self.gru.get_initial_state(tf.shape(x)[0])
            x, states = self.gru(x, initial_state=states, training=training)
            x = self.dense(x, training=training)
            if return_state:
                return x, states
            return x

    text_ids = np.random.default_rng(5).integers(1, vocab_size, size=200)
    ids_dataset = tf.data.Dataset.from_tensor_slices(text_ids)
    sequences = ids_dataset.batch(seq_length + 1, drop_remainder=True)

    def split_input_target(sequence):
        return sequence[:-1], sequence[1:]

    dataset = (sequences.map(split_input_target)
               .batch(4, drop_remainder=True)
               .prefetch(tf.data.experimental.AUTOTUNE))

    model = MyModel(vocab_size, embedding_dim, rnn_units)
    for input_example_batch, target_example_batch in dataset.take(1):  # noqa: B007
        example_batch_predictions = model(input_example_batch)
    fix_weights(model, seed=11)
    first_logits = model(input_example_batch).numpy()
    loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    example_batch_loss = loss(target_example_batch, model(input_example_batch))
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss=loss)
    history = model.fit(dataset, epochs=1, verbose=0)

    class OneStep(tf.keras.Model):
        def __init__(self, model, temperature=1.0):
            super().__init__()
            self.temperature = temperature
            self.model = model
            skip_ids = tf.constant([[0]], dtype=tf.int64)
            sparse_mask = tf.SparseTensor(values=[-float("inf")] * len(skip_ids),
                                          indices=skip_ids, dense_shape=[vocab_size])
            self.prediction_mask = tf.sparse.to_dense(sparse_mask)

        @tf.function
        def generate_one_step(self, input_ids, states=None):
            predicted_logits, states = self.model(inputs=input_ids, states=states,
                                                  return_state=True)
            predicted_logits = predicted_logits[:, -1, :]
            predicted_logits = predicted_logits / self.temperature
            predicted_logits = predicted_logits + self.prediction_mask
            # greedy here (the tutorial samples with tf.random.categorical) so that
            # both libraries pick the same characters
            predicted_ids = tf.argmax(predicted_logits, axis=-1)
            return predicted_ids[:, tf.newaxis], states

    one_step_model = OneStep(model)
    states = None
    next_char = tf.constant([[1, 2, 3]], dtype=tf.int64)
    result = []
    for _ in range(8):
        next_char, states = one_step_model.generate_one_step(next_char, states=states)
        result.append(next_char)
    generated = tf.concat(result, axis=-1)
    sampled = tf.random.categorical(tf.math.log([[0.5, 0.5, 0.0]]), num_samples=5)
    return {"example_shape": np.array(example_batch_predictions.shape),
            "first_logits": first_logits, "loss0": np.array(float(example_batch_loss)),
            "fit_loss": np.array(history.history["loss"]), "generated": generated.numpy(),
            "states": states.numpy(), "sampled_ok": np.array(
                bool(np.all(sampled.numpy() < 2)) and sampled.dtype == tf.int64)}


# -- Transformer block (keras.io "Text classification with Transformer") -----------------
def transformer_block(tf):
    """MultiHeadAttention + LayerNormalization + feed-forward in a custom layer, token and
    position embeddings, padding masks from ``mask_zero`` and a causal decoder block."""
    keras = tf.keras
    layers = keras.layers
    ops = keras.ops

    class TransformerBlock(layers.Layer):
        def __init__(self, embed_dim, num_heads, ff_dim, rate=0.1, causal=False):
            super().__init__()
            self.att = layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
            self.ffn = keras.Sequential(
                [layers.Dense(ff_dim, activation="relu"), layers.Dense(embed_dim)])
            self.layernorm1 = layers.LayerNormalization(epsilon=1e-6)
            self.layernorm2 = layers.LayerNormalization(epsilon=1e-6)
            self.dropout1 = layers.Dropout(rate)
            self.dropout2 = layers.Dropout(rate)
            self.causal = causal

        def call(self, inputs, training=False):
            attn_output = self.att(inputs, inputs, use_causal_mask=self.causal)
            attn_output = self.dropout1(attn_output, training=training)
            out1 = self.layernorm1(inputs + attn_output)
            ffn_output = self.ffn(out1)
            ffn_output = self.dropout2(ffn_output, training=training)
            return self.layernorm2(out1 + ffn_output)

    class TokenAndPositionEmbedding(layers.Layer):
        def __init__(self, maxlen, vocab_size, embed_dim):
            super().__init__()
            self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
            self.pos_emb = layers.Embedding(input_dim=maxlen, output_dim=embed_dim)

        def call(self, x):
            maxlen = ops.shape(x)[-1]
            positions = ops.arange(start=0, stop=maxlen, step=1)
            positions = self.pos_emb(positions)
            x = self.token_emb(x)
            return x + positions

    maxlen, vocab_size, embed_dim = 6, 11, 8
    inputs = layers.Input(shape=(maxlen,))
    x = TokenAndPositionEmbedding(maxlen, vocab_size, embed_dim)(inputs)
    x = TransformerBlock(embed_dim, 2, 16)(x)
    x = layers.GlobalAveragePooling1D()(x)
    x = layers.Dropout(0.1)(x)
    x = layers.Dense(5, activation="relu")(x)
    outputs = layers.Dense(2, activation="softmax")(x)
    model = keras.Model(inputs=inputs, outputs=outputs)
    fix_weights(model, seed=21)
    x_train = np.random.default_rng(2).integers(0, vocab_size, size=(8, maxlen))
    y_train = np.array([0, 1] * 4)
    probs = model.predict(x_train, verbose=0)
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    loss0 = model.evaluate(x_train, y_train, verbose=0)

    # a decoder block: causal self-attention on embeddings whose padding (id 0) is masked
    tokens = layers.Input(shape=(maxlen,), dtype="int32")
    emb = layers.Embedding(vocab_size, embed_dim, mask_zero=True)(tokens)
    dec = TransformerBlock(embed_dim, 2, 16, causal=True)(emb)
    logits = layers.Dense(vocab_size)(dec)
    decoder = keras.Model(tokens, logits)
    fix_weights(decoder, seed=22)
    seqs = np.array([[3, 4, 5, 0, 0, 0], [1, 2, 3, 4, 5, 6]], dtype=np.int32)
    dec_out = decoder(seqs)
    # what the causal mask means: later tokens do not change earlier outputs
    seqs2 = seqs.copy()
    seqs2[1, 4:] = [7, 8]
    dec_out2 = decoder(seqs2)
    return {"probs": probs, "loss0": np.array(loss0), "dec_out": ops.convert_to_numpy(dec_out),
            "dec_out2": ops.convert_to_numpy(dec_out2)}


# -- Hamiltonian neural network and a Neural ODE (tape.gradient inside the model) --------
def hamiltonian_nn(tf):
    """An HNN learns H(q, p); its vector field (dH/dp, -dH/dq) comes from an inner tape and
    the training gradient from an outer tape through it. The Neural ODE integrates
    dy/dt = f(y) with RK4 and differentiates the end state (jacobian and batch_jacobian)."""
    mlp = tf.keras.Sequential([tf.keras.layers.Input((2,)),
                               tf.keras.layers.Dense(8, activation="tanh"),
                               tf.keras.layers.Dense(1)])
    fix_weights(mlp, seed=31)
    optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)
    rng = np.random.default_rng(4)
    x = rng.normal(size=(16, 2)).astype(np.float32)
    dxdt = np.stack([x[:, 1], -x[:, 0]], axis=1)      # the harmonic oscillator

    def vector_field(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            H = mlp(x)
        dH = tape.gradient(H, x)
        dHdq, dHdp = tf.split(dH, 2, axis=-1)
        return tf.concat([dHdp, -dHdq], axis=-1)

    @tf.function
    def train_step(x, dxdt):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(vector_field(x) - dxdt))
        grads = tape.gradient(loss, mlp.trainable_variables)
        optimizer.apply_gradients(zip(grads, mlp.trainable_variables))
        return loss

    x = tf.constant(x)
    losses = [float(train_step(x, dxdt)) for _ in range(5)]

    W = tf.Variable(np.array([[0.0, 1.0], [-1.0, -0.1]], np.float32))

    def f(y):
        return tf.tanh(tf.matmul(y, W))

    def odeint_rk4(y, dt, steps):
        for _ in range(steps):
            k1 = f(y)
            k2 = f(y + dt / 2 * k1)
            k3 = f(y + dt / 2 * k2)
            k4 = f(y + dt * k3)
            y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return y

    y0 = tf.constant([[1.0, 0.0], [0.5, 0.5]])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(y0)
        y1 = odeint_rk4(y0, 0.1, 10)
        loss = tf.reduce_sum(y1 ** 2)
    jac_y = tape.jacobian(y1, y0)
    bjac = tape.batch_jacobian(y1, y0)
    dW = tape.gradient(loss, W)
    del tape
    return {"losses": np.array(losses), "weights0": mlp.get_weights()[0],
            "y1": y1.numpy(), "jac": jac_y.numpy(), "bjac": bjac.numpy(), "dW": dW.numpy()}


# -- add_loss and regularizers (the Keras "losses" guide) ---------------------------------
def add_loss_layers(tf):
    """A custom layer adding an activity loss with ``add_loss``, a kernel regularizer, and
    ``model.losses`` counted by ``fit``/``evaluate`` and by a hand-written loop."""
    keras = tf.keras

    class ActivityRegularizationLayer(keras.layers.Layer):
        def __init__(self, rate=1e-2):
            super().__init__()
            self.rate = rate

        def call(self, inputs):
            self.add_loss(self.rate * tf.reduce_sum(inputs))
            return inputs

    inputs = keras.Input(shape=(3,))
    x = keras.layers.Dense(4, activation="relu",
                           kernel_regularizer=keras.regularizers.l2(1e-2))(inputs)
    x = ActivityRegularizationLayer()(x)
    outputs = keras.layers.Dense(1)(x)
    model = keras.Model(inputs, outputs)
    fix_weights(model, seed=41)
    rng = np.random.default_rng(6)
    xs = rng.normal(size=(12, 3)).astype(np.float32)
    ys = rng.normal(size=(12, 1)).astype(np.float32)
    model(xs)
    n_losses = len(model.losses)
    reg = float(tf.add_n(model.losses))
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    eval0 = model.evaluate(xs, ys, batch_size=12, verbose=0)
    loss_fn = keras.losses.MeanSquaredError()
    optimizer = keras.optimizers.SGD(0.05)
    with tf.GradientTape() as tape:
        logits = model(xs)
        loss_value = loss_fn(ys, logits) + sum(model.losses)
    grads = tape.gradient(loss_value, model.trainable_weights)
    optimizer.apply_gradients(zip(grads, model.trainable_weights))
    history = model.fit(xs, ys, batch_size=6, epochs=2, shuffle=False, verbose=0)
    return {"n_losses": np.array(n_losses), "reg": np.array(reg), "eval0": np.array(eval0),
            "loop_loss": np.array(float(loss_value)), "fit_loss": np.array(
                history.history["loss"]), "kernel": model.get_weights()[0]}


# -- model.save('x.keras'), load_model, and training on (optimizer state included) -------
def save_reload_resume(tf, path):
    """A model trained a few steps, saved to ``.keras`` and reloaded: the reloaded model
    predicts the same and, with the optimizer's state restored, trains on identically."""
    keras = tf.keras
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(6, activation="relu"),
                              keras.layers.BatchNormalization(),
                              keras.layers.Dense(3, activation="softmax")])
    fix_weights(model, seed=51)
    bn = model.layers[1]
    bn.moving_variance.assign(np.ones(6, np.float32))
    rng = np.random.default_rng(8)
    xs = rng.normal(size=(20, 4)).astype(np.float32)
    ys = rng.integers(0, 3, size=20)
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    model.fit(xs, ys, batch_size=5, epochs=1, shuffle=False, verbose=0)
    model.save(path)
    reloaded = keras.models.load_model(path)
    same_pred = np.array([model.predict(xs, verbose=0), reloaded.predict(xs, verbose=0)])
    h1 = model.fit(xs, ys, batch_size=5, epochs=1, shuffle=False, verbose=0)
    h2 = reloaded.fit(xs, ys, batch_size=5, epochs=1, shuffle=False, verbose=0)
    return {"same_pred": same_pred, "resumed": np.array([h1.history["loss"],
                                                         h2.history["loss"]]),
            "iterations": np.array([int(model.optimizer.iterations),
                                    int(reloaded.optimizer.iterations)]),
            "after": reloaded.get_weights()[0]}


# -- schedules and callbacks together -----------------------------------------------------
def schedules_and_callbacks(tf, ckpt_path):
    """An ExponentialDecay schedule in Adam; EarlyStopping with restore_best_weights and
    ModelCheckpoint on validation loss; ReduceLROnPlateau on a float learning rate."""
    keras = tf.keras

    def make():
        model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(4, activation="tanh"),
                                  keras.layers.Dense(1)])
        fix_weights(model, seed=61)
        return model

    rng = np.random.default_rng(9)
    xs = rng.normal(size=(32, 2)).astype(np.float32)
    ys = (xs[:, :1] * 2 - xs[:, 1:]).astype(np.float32)
    lr_schedule = keras.optimizers.schedules.ExponentialDecay(
        initial_learning_rate=0.1, decay_steps=4, decay_rate=0.5, staircase=True)
    model = make()
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=lr_schedule), loss="mse")
    callbacks = [keras.callbacks.EarlyStopping(monitor="val_loss", patience=2,
                                               restore_best_weights=True),
                 keras.callbacks.ModelCheckpoint(ckpt_path, monitor="val_loss",
                                                 save_best_only=True)]
    h = model.fit(xs[:24], ys[:24], validation_data=(xs[24:], ys[24:]), batch_size=8,
                  epochs=12, shuffle=False, callbacks=callbacks, verbose=0)
    best = keras.models.load_model(ckpt_path)
    lr_now = float(model.optimizer.learning_rate)

    model2 = make()
    model2.compile(optimizer=keras.optimizers.SGD(learning_rate=0.2), loss="mse")
    reduce = keras.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1,
                                               min_delta=1.0, min_lr=0.03)
    h2 = model2.fit(xs, ys, batch_size=32, epochs=6, shuffle=False, callbacks=[reduce],
                    verbose=0)
    return {"val_loss": np.array(h.history["val_loss"]), "loss": np.array(h.history["loss"]),
            "epochs": np.array(len(h.history["loss"])), "lr_now": np.array(lr_now),
            "restored": np.array([model.predict(xs, verbose=0), best.predict(xs, verbose=0)]),
            "h2_loss": np.array(h2.history["loss"]),
            "h2_lr": np.array(h2.history["learning_rate"])}


# -- denoising autoencoder on a tf.data pipeline ------------------------------------------
def autoencoder_tf_data(tf):
    """A convolutional autoencoder fed by from_tensor_slices -> map -> cache -> batch ->
    prefetch, with a validation dataset, then predict on a dataset of images alone."""
    keras = tf.keras
    layers = keras.layers
    x = _images(24, 8, 8, 1, seed=12)

    def add_noise(img):
        noise = 0.1 * tf.reshape(tf.cast(tf.range(64) % 3 - 1, tf.float32), (8, 8, 1))
        return tf.clip_by_value(img + noise, 0.0, 1.0), img

    AUTOTUNE = tf.data.AUTOTUNE
    train_ds = (tf.data.Dataset.from_tensor_slices(x[:16]).map(add_noise, num_parallel_calls=AUTOTUNE)
                .cache().batch(8).prefetch(AUTOTUNE))
    val_ds = tf.data.Dataset.from_tensor_slices(x[16:]).map(add_noise).batch(8)

    inp = layers.Input(shape=(8, 8, 1))
    h = layers.Conv2D(4, (3, 3), activation="relu", padding="same", strides=2)(inp)
    h = layers.Conv2D(2, (3, 3), activation="relu", padding="same", strides=2)(h)
    h = layers.Conv2DTranspose(2, kernel_size=3, strides=2, activation="relu", padding="same")(h)
    h = layers.Conv2DTranspose(4, kernel_size=3, strides=2, activation="relu", padding="same")(h)
    out = layers.Conv2D(1, kernel_size=(3, 3), activation="sigmoid", padding="same")(h)
    autoencoder = keras.Model(inp, out)
    fix_weights(autoencoder, seed=71)
    autoencoder.compile(optimizer=keras.optimizers.SGD(0.5), loss="binary_crossentropy")
    hist = autoencoder.fit(train_ds, epochs=2, validation_data=val_ds, verbose=0)
    decoded = autoencoder.predict(tf.data.Dataset.from_tensor_slices(x[16:]).batch(4), verbose=0)
    return {"loss": np.array(hist.history["loss"]), "val_loss": np.array(hist.history["val_loss"]),
            "decoded": decoded}


# -- model.summary() ---------------------------------------------------------------------
def summaries(tf):
    """``summary()`` of a Sequential, a functional and a nested model: the parameter counts
    its last lines print, and ``count_params``."""
    keras = tf.keras
    lines = []
    seq = keras.Sequential([keras.Input((5,)), keras.layers.Dense(7, activation="relu"),
                            keras.layers.Dropout(0.2), keras.layers.BatchNormalization(),
                            keras.layers.Dense(2)], name="seq")
    seq.summary(print_fn=lambda s, **kw: lines.append(s))
    inp = keras.Input((6, 6, 1))
    x = keras.layers.Conv2D(3, 3)(inp)
    x = keras.layers.Flatten()(x)
    fn = keras.Model(inp, keras.layers.Dense(4)(x), name="fn")
    fn.layers[1].trainable = False
    fn.summary(print_fn=lambda s, **kw: lines.append(s))
    text = "\n".join(lines)
    totals = [ln.strip() for ln in text.splitlines()
              if "params:" in ln and ("Total" in ln or "Trainable" in ln or "Non-trainable" in ln)]
    return {"totals": np.array(totals), "counts": np.array([seq.count_params(), fn.count_params()])}


# -- The usual Stack Overflow answers ------------------------------------------------------
def stack_overflow_idioms(tf):
    """Gradient clipping by global norm in a custom loop, a Lambda layer, a custom loss and a
    custom metric function in compile, class_weight in fit, gradients w.r.t. the input of a
    Keras model, and ``tf.keras.backend`` helpers."""
    keras = tf.keras
    K = keras.backend
    inp = keras.Input((3,))
    h = keras.layers.Dense(4, activation="relu")(inp)
    h = keras.layers.Lambda(lambda t: t * 2.0 + 1.0)(h)
    out = keras.layers.Dense(1, activation="sigmoid")(h)
    model = keras.Model(inp, out)
    fix_weights(model, seed=81)
    rng = np.random.default_rng(10)
    xs = rng.normal(size=(16, 3)).astype(np.float32)
    ys = (xs[:, :1] > 0).astype(np.float32)

    def weighted_bce(y_true, y_pred):
        y_pred = K.clip(y_pred, K.epsilon(), 1 - K.epsilon())
        return -K.mean(2.0 * y_true * K.log(y_pred) + (1 - y_true) * K.log(1 - y_pred), axis=-1)

    def my_acc(y_true, y_pred):
        return K.mean(K.cast(K.equal(y_true, K.round(y_pred)), "float32"))

    optimizer = keras.optimizers.SGD(0.1)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(weighted_bce(ys, model(xs, training=True)))
    grads = tape.gradient(loss, model.trainable_variables)
    clipped, global_norm = tf.clip_by_global_norm(grads, 0.5)
    optimizer.apply_gradients(zip(clipped, model.trainable_variables))

    x_var = tf.convert_to_tensor(xs[:2])
    with tf.GradientTape() as tape:
        tape.watch(x_var)
        pred = model(x_var)
    input_grad = tape.gradient(pred, x_var)

    model.compile(optimizer=keras.optimizers.SGD(0.1), loss=weighted_bce, metrics=[my_acc])
    h = model.fit(xs, ys, batch_size=8, epochs=2, shuffle=False, verbose=0,
                  class_weight={0: 1.0, 1: 3.0})
    return {"global_norm": np.array(float(global_norm)), "input_grad": input_grad.numpy(),
            "fit_loss": np.array(h.history["loss"]), "fit_acc": np.array(h.history["my_acc"]),
            "kernel": model.get_weights()[0]}


# -- sequence classification with masking: Bidirectional LSTM on padded sequences ---------
def masked_bilstm(tf):
    """pad_sequences -> Embedding(mask_zero=True) -> Bidirectional(LSTM) -> Dense; the padded
    steps must not change the outputs."""
    keras = tf.keras
    seqs = [[3, 1, 4], [1, 5, 9, 2, 6], [5]]
    padded = keras.utils.pad_sequences(seqs, padding="post", maxlen=5)
    model = keras.Sequential([keras.Input((None,), dtype="int32"),
                              keras.layers.Embedding(10, 4, mask_zero=True),
                              keras.layers.Bidirectional(keras.layers.LSTM(3)),
                              keras.layers.Dense(1)])
    fix_weights(model, seed=91)
    out = model(padded)
    short = model(np.array([[3, 1, 4]], np.int32))
    return {"padded": padded, "out": out.numpy(), "short": short.numpy()}


# -- time series windows (TF's "Time series forecasting") ----------------------------------
def timeseries_windows(tf):
    """Windows of a series by Dataset.window + flat_map and by
    keras.utils.timeseries_dataset_from_array, fed to an LSTM forecaster."""
    keras = tf.keras
    series = np.arange(30, dtype=np.float32) / 10.0
    ds = tf.data.Dataset.from_tensor_slices(series)
    ds = ds.window(5, shift=1, drop_remainder=True)
    ds = ds.flat_map(lambda w: w.batch(5))
    ds = ds.map(lambda w: (w[:-1], w[-1:]))
    ds = ds.batch(4)
    first_x, first_y = next(iter(ds))
    ds2 = keras.utils.timeseries_dataset_from_array(series[:-4], targets=series[4:],
                                                    sequence_length=4, batch_size=4)
    x2, y2 = next(iter(ds2))
    model = keras.Sequential([keras.Input((4, 1)), keras.layers.LSTM(4),
                              keras.layers.Dense(1)])
    fix_weights(model, seed=101)
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse", metrics=["mae"])
    hist = model.fit(ds.map(lambda a, b: (a[..., None], b)), epochs=2, verbose=0)
    return {"first_x": first_x.numpy(), "first_y": first_y.numpy(), "x2": np.asarray(x2),
            "y2": np.asarray(y2), "loss": np.array(hist.history["loss"]),
            "mae": np.array(hist.history["mae"])}


# -- tf.keras.backend's Keras 2 functions, as custom losses and metrics use them ---------
def legacy_backend_functions(tf):
    """``K.mean``, ``K.clip``, ``K.switch``, ``K.batch_dot``... called the way Keras 2 era
    answers call them, on fixed inputs."""
    K = tf.keras.backend
    rng = np.random.default_rng(13)
    x = rng.normal(size=(3, 4)).astype(np.float32)
    y = rng.normal(size=(3, 4)).astype(np.float32)
    p = rng.uniform(0.05, 0.95, size=(3, 4)).astype(np.float32)
    t = (rng.uniform(size=(3, 4)) > 0.5).astype(np.float32)
    a3 = rng.normal(size=(3, 2, 4)).astype(np.float32)
    b3 = rng.normal(size=(3, 4, 5)).astype(np.float32)
    x, y, p, t, a3, b3 = (K.constant(v) for v in (x, y, p, t, a3, b3))
    labels = np.array([0, 3, 1])
    out = {
        "mean": K.mean(x, axis=1), "mean_bool": K.mean(K.greater(x, 0.0)),
        "sum_keep": K.sum(x, axis=0, keepdims=True), "max": K.max(x, axis=-1),
        "min": K.min(x), "prod": K.prod(x, axis=1), "std": K.std(x, axis=0),
        "var": K.var(x), "argmax": K.argmax(x), "argmin": K.argmin(x, axis=0),
        "cumsum": K.cumsum(x, axis=1), "cumprod": K.cumprod(x),
        "any": K.any(x > 1.0, axis=1), "all": K.all(x > -3.0),
        "clip": K.clip(x, -0.5, 0.5), "clip_swapped": K.clip(x, 0.5, -0.5),
        "clip_none": K.clip(x, None, 0.2), "sqrt_neg": K.sqrt(x),
        "square": K.square(x), "abs": K.abs(x), "exp": K.exp(x), "log": K.log(p),
        "pow": K.pow(p, 3), "sign": K.sign(x), "round": K.round(x * 2),
        "sin": K.sin(x), "cos": K.cos(x), "maximum": K.maximum(x, y),
        "minimum": K.minimum(x, y), "equal": K.equal(K.round(x), K.round(y)),
        "not_equal": K.not_equal(K.round(x), 0.0), "greater_equal": K.greater_equal(x, y),
        "less": K.less(x, y), "less_equal": K.less_equal(x, 0.1),
        "switch_tensor": K.switch(x > 0, x, y * 10),
        "switch_column": K.switch(x[:, :1] > 0, x, y),
        "switch_scalar": K.switch(K.constant(True), lambda: x, lambda: y),
        "relu": K.relu(x), "relu_leaky": K.relu(x, alpha=0.1),
        "relu_all": K.relu(x, alpha=0.1, max_value=0.8, threshold=0.2),
        "relu6": K.relu(x * 10, max_value=6), "elu": K.elu(x, alpha=0.5),
        "sigmoid": K.sigmoid(x), "hard_sigmoid": K.hard_sigmoid(x * 4), "tanh": K.tanh(x),
        "softplus": K.softplus(x), "softsign": K.softsign(x), "softmax": K.softmax(x),
        "softmax_axes": K.softmax(a3, axis=(1, 2)), "l2_normalize": K.l2_normalize(x, axis=1),
        "bce": K.binary_crossentropy(t, p), "bce_logits": K.binary_crossentropy(t, x, True),
        "cce": K.categorical_crossentropy(K.one_hot(labels, 4), p),
        "cce_logits": K.categorical_crossentropy(K.one_hot(labels, 4), x, from_logits=True),
        "scce": K.sparse_categorical_crossentropy(labels, K.softmax(x)),
        "scce_logits": K.sparse_categorical_crossentropy(labels, x, from_logits=True),
        "scce_3d": K.sparse_categorical_crossentropy(np.array([[0, 1], [2, 3], [1, 1]]),
                                                      a3, from_logits=True),
        "flatten": K.flatten(a3), "batch_flatten": K.batch_flatten(a3),
        "expand_dims": K.expand_dims(x), "squeeze": K.squeeze(K.expand_dims(x, 1), 1),
        "permute": K.permute_dimensions(a3, (2, 0, 1)), "transpose": K.transpose(x),
        "concatenate": K.concatenate([x, y]), "stack": K.stack([x, y], axis=1),
        "tile": K.tile(x, (2, 1)), "repeat": K.repeat(x, 2),
        "repeat_elements": K.repeat_elements(x, 2, axis=1), "reverse": K.reverse(x, 1),
        "one_hot": K.one_hot(labels, 5), "gather": K.gather(x, [2, 0]),
        "arange": K.arange(5), "arange_neg": K.arange(-3), "arange_f": K.arange(1, 7, 2, "float32"),
        "dot": K.dot(x, K.transpose(y)), "dot_3d": K.dot(a3, b3[0]),
        "batch_dot": K.batch_dot(a3, b3), "batch_dot_2d": K.batch_dot(x, y, axes=1),
        "batch_dot_axes": K.batch_dot(a3, a3, axes=(2, 2)),
        "bias_add": K.bias_add(a3, K.constant(np.arange(4.0))),
        "zeros": K.zeros((2, 3)), "ones": K.ones((2,), dtype="float64"), "eye": K.eye(3),
        "zeros_like": K.zeros_like(x), "ones_like": K.ones_like(labels),
        "constant": K.constant([1, 2]), "cast": K.cast(x > 0, "int32"),
        "cast_to_floatx": K.cast_to_floatx([1, 2]), "shape": K.shape(a3),
        "int_shape": np.array(K.int_shape(a3)), "ndim": np.array(K.ndim(a3)),
        "dtype": np.array(K.dtype(K.constant(1.0))), "count_params": np.array(K.count_params(
            K.variable(x))),
        "map_fn": K.map_fn(lambda r: r * 2.0, x), "foldl": K.foldl(lambda a, r: a + r, x),
        "foldr": K.foldr(lambda a, r: a * 0.5 + r, x),
    }
    v = K.variable(x)
    K.set_value(v, y)
    K.update_add(v, K.ones_like(v))
    K.moving_average_update(v, x, 0.9)
    out["variable"] = K.get_value(v)
    out["zeros_is_variable"] = np.array(isinstance(K.zeros((2,)), tf.Variable))
    out["stop_gradient"] = K.stop_gradient(x)
    return {k: (val if isinstance(val, np.ndarray) else np.asarray(val)) for k, val in out.items()}


# -- audio: spectrograms with tf.signal (TensorFlow's "Simple audio recognition") --------
def audio_spectrogram_classifier(tf):
    """Waveforms -> |stft| spectrograms in a tf.data map -> Resizing + Normalization(adapt)
    + a small convnet trained a step; the gradient of the loss with respect to the waveform
    goes back through the STFT."""
    layers = tf.keras.layers
    rng = np.random.default_rng(14)
    t = np.arange(400) / 400.0
    waves = np.stack([np.sin(2 * np.pi * f * t) + 0.05 * rng.normal(size=t.size)
                      for f in (5, 40, 7, 35, 6, 38)]).astype(np.float32)
    labels = np.array([0, 1, 0, 1, 0, 1])

    def get_spectrogram(waveform):
        spectrogram = tf.signal.stft(waveform, frame_length=63, frame_step=32)
        spectrogram = tf.abs(spectrogram)
        return spectrogram[..., tf.newaxis]

    ds = tf.data.Dataset.from_tensor_slices((waves, labels))
    spec_ds = ds.map(lambda audio, label: (get_spectrogram(audio), label),
                     num_parallel_calls=tf.data.AUTOTUNE)
    for example_spectrograms, _ in spec_ds.take(1):
        input_shape = example_spectrograms.shape
    norm_layer = layers.Normalization()
    norm_layer.adapt(data=spec_ds.map(map_func=lambda spec, label: spec))
    model = tf.keras.Sequential([
        layers.Input(shape=input_shape),
        layers.Resizing(8, 8),
        norm_layer,
        layers.Conv2D(4, 3, activation="relu"),
        layers.MaxPooling2D(),
        layers.Flatten(),
        layers.Dense(8, activation="relu"),
        layers.Dense(2),
    ])
    rng_w = np.random.default_rng(15)
    for layer in model.layers:
        if layer.trainable_weights:
            layer.set_weights([(rng_w.normal(size=tuple(w.shape)) * 0.3).astype(np.float32)
                               for w in layer.get_weights()])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.05),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    train = spec_ds.batch(3).cache().prefetch(tf.data.AUTOTUNE)
    history = model.fit(train, epochs=2, verbose=0)

    wave = tf.constant(waves[:2])
    with tf.GradientTape() as tape:
        tape.watch(wave)
        logits = model(get_spectrogram(wave), training=False)
        loss = tf.keras.losses.sparse_categorical_crossentropy(labels[:2], logits,
                                                               from_logits=True)
    wave_grad = tape.gradient(loss, wave)
    return {"spectrogram": example_spectrograms.numpy(), "input_shape": np.array(input_shape),
            "norm_mean": np.asarray(norm_layer.mean).ravel(),
            "loss": np.array(history.history["loss"]), "logits": logits.numpy(),
            "wave_grad": wave_grad.numpy()}


# -- log-mel spectrograms and MFCCs (tf.signal's guide) -----------------------------------
def mel_features(tf):
    """STFT (pad_end, a Hamming window, fft_length 64) -> power -> mel filterbank via
    tensordot -> log -> MFCCs; the round trip rfft -> irfft; the frames' gradient."""
    rng = np.random.default_rng(16)
    pcm = tf.constant(rng.normal(size=(2, 300)).astype(np.float32))
    stfts = tf.signal.stft(pcm, frame_length=48, frame_step=20, fft_length=64,
                           window_fn=tf.signal.hamming_window, pad_end=True)
    spectrograms = tf.abs(stfts)
    num_spectrogram_bins = stfts.shape[-1]
    lower_edge_hertz, upper_edge_hertz, num_mel_bins = 80.0, 3800.0, 10
    linear_to_mel_weight_matrix = tf.signal.linear_to_mel_weight_matrix(
        num_mel_bins, num_spectrogram_bins, 8000, lower_edge_hertz, upper_edge_hertz)
    mel_spectrograms = tf.tensordot(spectrograms, linear_to_mel_weight_matrix, 1)
    mel_spectrograms.set_shape(spectrograms.shape[:-1].concatenate(
        linear_to_mel_weight_matrix.shape[-1:]))
    log_mel_spectrograms = tf.math.log(mel_spectrograms + 1e-6)
    mfccs = tf.signal.mfccs_from_log_mel_spectrograms(log_mel_spectrograms)[..., :6]
    x = tf.constant(rng.normal(size=(3, 16)).astype(np.float32))
    back = tf.signal.irfft(tf.signal.rfft(x))
    frames = tf.signal.frame(pcm, 48, 20, axis=-1)
    with tf.GradientTape() as tape:
        tape.watch(pcm)
        energy = tf.reduce_sum(tf.abs(tf.signal.stft(pcm, 32, 16)) ** 2)
    return {"stft_shape": np.array(stfts.shape), "log_mel": log_mel_spectrograms.numpy(),
            "mfccs": mfccs.numpy(), "roundtrip": back.numpy(), "frames": frames.numpy(),
            "energy_grad": tape.gradient(energy, pcm).numpy(),
            "dct_ortho": tf.signal.dct(x, norm="ortho").numpy(),
            "hann": tf.signal.hann_window(10, periodic=False).numpy()}


# -- next-frame prediction with ConvLSTM2D (keras.io "Next-frame prediction with Conv-LSTM")
def next_frame_convlstm(tf):
    """Stacked ConvLSTM2D (return_sequences, relu) with BatchNormalization and a Conv3D
    head over frames of a moving square, inputs of any number of frames; trained a step
    with fit, then frames predicted one after another."""
    keras = tf.keras
    layers = keras.layers
    frames = np.zeros((4, 6, 8, 8, 1), np.float32)
    for n in range(4):
        for t in range(6):
            r, c = (n + t) % 6, (2 * n + t) % 6
            frames[n, t, r:r + 2, c:c + 2, 0] = 1.0
    x_train, y_train = frames[:, :-1], frames[:, 1:]

    inp = layers.Input(shape=(None, *x_train.shape[2:]))
    x = layers.ConvLSTM2D(filters=4, kernel_size=(3, 3), padding="same",
                          return_sequences=True, activation="relu")(inp)
    x = layers.BatchNormalization()(x)
    x = layers.ConvLSTM2D(filters=3, kernel_size=(1, 1), padding="same",
                          return_sequences=True, activation="relu")(x)
    x = layers.Conv3D(filters=1, kernel_size=(3, 3, 3), activation="sigmoid",
                      padding="same")(x)
    model = keras.models.Model(inp, x)
    fix_weights(model, seed=111)
    for layer in model.layers:
        if isinstance(layer, layers.BatchNormalization):
            layer.moving_variance.assign(np.full(layer.moving_variance.shape, 1.5, np.float32))
    model.compile(loss=keras.losses.binary_crossentropy,
                  optimizer=keras.optimizers.SGD(learning_rate=0.1))
    before = model.predict(x_train[:2], verbose=0)
    history = model.fit(x_train, y_train, batch_size=2, epochs=1, shuffle=False, verbose=0)
    example = frames[0, :3]
    for _ in range(2):
        new_prediction = model.predict(np.expand_dims(example, axis=0), verbose=0)
        new_prediction = np.squeeze(new_prediction, axis=0)
        predicted_frame = np.expand_dims(new_prediction[-1, ...], axis=0)
        example = np.concatenate((example, predicted_frame), axis=0)
    return {"before": before, "loss": np.array(history.history["loss"]), "rolled": example,
            "out_shape": np.array(model.output_shape[1:], dtype=object).astype(str)}


# -- ConvLSTM2D's options, layer by layer -------------------------------------------------
def convlstm_cases(tf):
    """ConvLSTM2D with 'same' padding and sequences, strides with return_state, dilation
    with go_backwards and relu: outputs for fixed weights, and the weights' names."""
    layers = tf.keras.layers
    rng = np.random.default_rng(17)
    out = {}
    for name, kw, shape in [
            ("same_seq", dict(filters=3, kernel_size=(3, 3), padding="same",
                              return_sequences=True), (2, 4, 6, 6, 2)),
            ("strided_state", dict(filters=2, kernel_size=3, strides=2, return_state=True),
             (2, 3, 7, 7, 2)),
            ("dilated_back", dict(filters=2, kernel_size=2, dilation_rate=2, go_backwards=True,
                                  activation="relu", unit_forget_bias=False), (1, 3, 6, 5, 1))]:
        layer = layers.ConvLSTM2D(**kw)
        x = rng.normal(size=shape).astype(np.float32)
        layer(x)
        out[f"{name}_bias0"] = np.asarray(layer.get_weights()[2])
        layer.set_weights([(rng.normal(size=w.shape) * 0.3).astype(np.float32)
                           for w in layer.get_weights()])
        y = layer(x)
        for i, t in enumerate(y if isinstance(y, (list, tuple)) else [y]):
            out[f"{name}_{i}"] = np.asarray(t)
        out[f"{name}_names"] = np.array([w.name for w in layer.weights])
    return out


# -- tf.signal function by function --------------------------------------------------------
def signal_functions(tf):
    """frame (pad_end, axis, too short), windows (periodic, odd/even, float64), rfft (crop,
    pad, float64), irfft (odd length), DCT I-IV (ortho, n), idct, the mel matrix, MFCCs."""
    s = tf.signal
    rng = np.random.default_rng(18)
    x = tf.constant(np.arange(10, dtype=np.float32))
    sig = tf.constant(rng.normal(size=(2, 3, 13)).astype(np.float32))
    v4 = tf.constant([1.0, 2.0, 3.0, 4.0])
    spec = tf.constant((rng.normal(size=(2, 5)) + 1j * rng.normal(size=(2, 5)))
                       .astype(np.complex64))
    out = {
        "frame": s.frame(x, 4, 3), "frame_pad": s.frame(x, 4, 3, pad_end=True, pad_value=-1),
        "frame_axis0": s.frame(tf.reshape(tf.range(12.0), (3, 4)), 2, 1, axis=0),
        "frame_short": s.frame(x, 12, 3), "frame_short_pad": s.frame(x, 12, 3, pad_end=True),
        "frame_int": s.frame(tf.range(10), 3, 2), "frame_3d": s.frame(sig, 5, 4, axis=-1),
        "hann5": s.hann_window(5), "hann4": s.hann_window(4),
        "hann4_sym": s.hann_window(4, periodic=False), "hann1": s.hann_window(1),
        "hamming6": s.hamming_window(6), "hann_f64": s.hann_window(7, dtype=tf.float64),
        "rfft": s.rfft(v4), "rfft_pad": s.rfft(tf.constant([1.0, 2.0, 3.0]), fft_length=[5]),
        "rfft_crop": s.rfft(v4, fft_length=[2]), "rfft_3d": s.rfft(sig),
        "rfft_f64": s.rfft(tf.cast(sig, tf.float64), fft_length=[16]),
        "irfft": s.irfft(spec), "irfft_odd": s.irfft(spec, fft_length=[9]),
        "irfft_short": s.irfft(spec, fft_length=[4]),
        "stft": s.stft(sig, frame_length=6, frame_step=3),
        "stft_pad": s.stft(sig, 6, 4, fft_length=10, pad_end=True, window_fn=None),
        "mel": s.linear_to_mel_weight_matrix(8, 17, 16000, 50.0, 7000.0),
        "mel_default": s.linear_to_mel_weight_matrix(),
        "mfcc": s.mfccs_from_log_mel_spectrograms(sig),
        "idct": s.idct(v4), "idct_ortho": s.idct(sig, norm="ortho"),
        "dct_n6": s.dct(v4, n=6), "dct_n2": s.dct(v4, n=2),
    }
    for t in (1, 2, 3, 4):
        out[f"dct{t}"] = s.dct(sig, type=t)
        if t > 1:
            out[f"dct{t}_ortho"] = s.dct(sig, type=t, norm="ortho")
    v = tf.Variable(rng.normal(size=(20,)).astype(np.float32))
    with tf.GradientTape(persistent=True) as tape:
        energy = tf.reduce_sum(tf.abs(s.stft(v, 8, 4)) ** 2 * tf.range(5.0))
        r = s.rfft(v)
        parts = tf.reduce_sum(tf.math.real(r) * tf.range(11.0) + tf.math.imag(r) ** 2)
        d = tf.reduce_sum(s.dct(v, norm="ortho") * tf.range(20.0))
    out["grad_stft"] = tape.gradient(energy, v)
    out["grad_rfft"] = tape.gradient(parts, v)
    out["grad_dct"] = tape.gradient(d, v)
    return {k: np.asarray(val) for k, val in out.items()}


NAMES = ("grad_cam", "char_rnn", "transformer_block", "hamiltonian_nn", "add_loss_layers",
         "save_reload_resume", "schedules_and_callbacks", "autoencoder_tf_data", "summaries",
         "stack_overflow_idioms", "masked_bilstm", "timeseries_windows",
         "legacy_backend_functions", "audio_spectrogram_classifier", "mel_features",
         "next_frame_convlstm", "convlstm_cases", "signal_functions")


def run(tf, name, directory):
    """Run the program ``name`` with the module ``tf``; files go to ``directory``."""
    import os
    if name == "save_reload_resume":
        return save_reload_resume(tf, os.path.join(directory, "model.keras"))
    if name == "schedules_and_callbacks":
        return schedules_and_callbacks(tf, os.path.join(directory, "best.keras"))
    return globals()[name](tf)
