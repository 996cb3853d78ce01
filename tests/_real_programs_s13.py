"""Real TensorFlow/Keras programs of session 13's probe (text classifiers, a VAE, WGAN-GP,
attention layers, schedules, metrics, weighted fit, BatchNormalization and Dropout modes,
tf.data pipelines, weight round trips, tf.function signatures, vectorized_map, segment
message passing, a tf.linalg physics step), written as their authors write them against a
module ``tf``. tests/test_real_programs_s13.py runs them with ``tapegrad``;
benchmarks/real_programs_s13_reference.py runs the same functions with TensorFlow 2.21 /
Keras 3.15 and stores what they return in tests/data/real_programs_s13.json.

Weights come from a seeded NumPy generator (``fix_weights``) and data (and noise) from
NumPy, so both libraries compute the same numbers; each program returns a dict of NumPy
arrays."""
import os
import tempfile

import numpy as np


def fix_weights(model, seed=0, scale=0.3):
    """Set every weight of ``model`` (in ``model.weights`` order) from ``seed``."""
    rng = np.random.default_rng(seed)
    model.set_weights([(rng.normal(size=tuple(w.shape)) * scale).astype(np.float32)
                       for w in model.get_weights()])


def _out(d):
    return {k: np.asarray(v) for k, v in d.items()}


def _tokens(n, length, vocab, seed):
    return np.random.default_rng(seed).integers(1, vocab, size=(n, length))


# -- "Basic text classification" / "Text classification with an RNN" -----------------------
def text_classifier_pooling(tf):
    """Integer tokens -> Embedding -> GlobalAveragePooling1D -> Dense, fit with SGD a few
    epochs, then evaluate and predict."""
    keras = tf.keras
    model = keras.Sequential([keras.Input((7,), dtype="int32"),
                              keras.layers.Embedding(20, 6),
                              keras.layers.Dropout(0.0),
                              keras.layers.GlobalAveragePooling1D(),
                              keras.layers.Dense(4, activation="relu"),
                              keras.layers.Dense(1)])
    fix_weights(model, seed=1)
    model.compile(loss=keras.losses.BinaryCrossentropy(from_logits=True),
                  optimizer=keras.optimizers.SGD(0.1),
                  metrics=[keras.metrics.BinaryAccuracy(threshold=0.0)])
    x = _tokens(24, 7, 20, 2)
    y = (x[:, 0] > 10).astype(np.float32)
    history = model.fit(x, y, batch_size=8, epochs=3, verbose=0, shuffle=False)
    loss, acc = model.evaluate(x, y, batch_size=8, verbose=0)
    return _out({"loss": np.array(history.history["loss"]),
                 "acc": np.array(history.history["binary_accuracy"]),
                 "eval": np.array([loss, acc]), "pred": model.predict(x[:5], verbose=0)})


def text_classifier_lstm(tf):
    """Embedding(mask_zero) -> Bidirectional(LSTM) -> Dense -> GRU-free head, trained with
    SGD(momentum) on padded sequences."""
    keras = tf.keras
    model = keras.Sequential([keras.Input((6,), dtype="int32"),
                              keras.layers.Embedding(15, 4, mask_zero=True),
                              keras.layers.Bidirectional(keras.layers.LSTM(3)),
                              keras.layers.Dense(3, activation="softmax")])
    fix_weights(model, seed=3)
    model.compile(loss="sparse_categorical_crossentropy",
                  optimizer=keras.optimizers.SGD(0.1, momentum=0.9), metrics=["accuracy"])
    x = _tokens(16, 6, 15, 4)
    x[::3, 4:] = 0  # padding
    y = x[:, 0] % 3
    history = model.fit(x, y, batch_size=4, epochs=2, verbose=0, shuffle=False)
    return _out({"loss": np.array(history.history["loss"]),
                 "acc": np.array(history.history["accuracy"]),
                 "pred": model.predict(x[:4], verbose=0)})


def text_classifier_gru_vectorized(tf):
    """TextVectorization adapted on a tiny corpus -> Embedding -> GRU -> Dense."""
    keras = tf.keras
    corpus = np.array(["the cat sat", "the dog ran far", "a cat ran", "dogs and cats",
                       "the end", "a dog sat on the mat"])
    vec = keras.layers.TextVectorization(max_tokens=12, output_sequence_length=5)
    vec.adapt(corpus)
    ids = vec(corpus)
    model = keras.Sequential([keras.Input((5,), dtype="int64"),
                              keras.layers.Embedding(12, 4),
                              keras.layers.GRU(3),
                              keras.layers.Dense(1, activation="sigmoid")])
    fix_weights(model, seed=5)
    model.compile(loss="binary_crossentropy", optimizer=keras.optimizers.Adam(0.05))
    y = np.array([1, 0, 1, 0, 0, 1], np.float32)
    history = model.fit(ids, y, batch_size=3, epochs=2, verbose=0, shuffle=False)
    return _out({"vocab": np.array(vec.get_vocabulary()), "ids": ids,
                 "loss": np.array(history.history["loss"]),
                 "pred": model.predict(ids, verbose=0)})


def text_classifier_pooling_adam(tf):
    """The pooling classifier fit with Adam: its tokens repeat within a batch, and Keras 3
    on TensorFlow squares the unsummed IndexedSlices rows of the Embedding's gradient in
    Adam's second moment (session 12's adam_on_repeated_embedding_rows)."""
    keras = tf.keras
    model = keras.Sequential([keras.Input((7,), dtype="int32"),
                              keras.layers.Embedding(20, 6),
                              keras.layers.GlobalAveragePooling1D(),
                              keras.layers.Dense(4, activation="relu"),
                              keras.layers.Dense(1)])
    fix_weights(model, seed=1)
    model.compile(loss=keras.losses.BinaryCrossentropy(from_logits=True),
                  optimizer=keras.optimizers.Adam(0.01))
    x = _tokens(24, 7, 20, 2)
    y = (x[:, 0] > 10).astype(np.float32)
    history = model.fit(x, y, batch_size=8, epochs=3, verbose=0, shuffle=False)
    return _out({"loss": np.array(history.history["loss"]),
                 "pred": model.predict(x[:5], verbose=0)})


# -- keras.io "Variational AutoEncoder" (custom train_step) ---------------------------------
def vae_train_step(tf):
    """Encoder -> (z_mean, z_log_var), reparameterization with noise passed in, decoder,
    reconstruction + KL loss in a custom training step, Adam."""
    keras = tf.keras
    enc_in = keras.Input((6,))
    h = keras.layers.Dense(5, activation="relu")(enc_in)
    z_mean = keras.layers.Dense(2, name="z_mean")(h)
    z_log_var = keras.layers.Dense(2, name="z_log_var")(h)
    encoder = keras.Model(enc_in, [z_mean, z_log_var])
    dec_in = keras.Input((2,))
    decoder = keras.Model(dec_in, keras.layers.Dense(6, activation="sigmoid")(
        keras.layers.Dense(5, activation="relu")(dec_in)))
    fix_weights(encoder, seed=11)
    fix_weights(decoder, seed=12)
    opt = keras.optimizers.Adam(0.01)
    rng = np.random.default_rng(13)
    data = rng.uniform(size=(4, 8, 6)).astype(np.float32)
    noise = rng.normal(size=(4, 8, 2)).astype(np.float32)
    total, recon, kls = [], [], []
    for x, eps in zip(data, noise):
        with tf.GradientTape() as tape:
            zm, zlv = encoder(x)
            z = zm + tf.exp(0.5 * zlv) * eps
            rec = decoder(z)
            reconstruction_loss = tf.reduce_mean(tf.reduce_sum(
                keras.losses.binary_crossentropy(x[..., None], rec[..., None]), axis=1))
            kl_loss = -0.5 * (1 + zlv - tf.square(zm) - tf.exp(zlv))
            kl_loss = tf.reduce_mean(tf.reduce_sum(kl_loss, axis=1))
            total_loss = reconstruction_loss + kl_loss
        weights = encoder.trainable_weights + decoder.trainable_weights
        grads = tape.gradient(total_loss, weights)
        opt.apply_gradients(zip(grads, weights))
        total.append(float(total_loss))
        recon.append(float(reconstruction_loss))
        kls.append(float(kl_loss))
    return _out({"total": np.array(total), "recon": np.array(recon), "kl": np.array(kls),
                 "z_mean_kernel": encoder.get_layer("z_mean").kernel})


# -- keras.io "WGAN-GP" gradient penalty (nested tapes) -------------------------------------
def wgan_gp_penalty(tf):
    """The critic's gradient penalty on interpolated samples (inner tape), differentiated
    by the outer tape for the critic's weights, and one RMSprop step."""
    keras = tf.keras
    critic = keras.Sequential([keras.Input((4,)), keras.layers.Dense(6),
                               keras.layers.LeakyReLU(0.2), keras.layers.Dense(1)])
    fix_weights(critic, seed=21)
    rng = np.random.default_rng(22)
    real = tf.constant(rng.normal(size=(5, 4)).astype(np.float32))
    fake = tf.constant(rng.normal(size=(5, 4)).astype(np.float32))
    alpha = tf.constant(rng.uniform(size=(5, 1)).astype(np.float32))
    opt = keras.optimizers.RMSprop(1e-2)
    with tf.GradientTape() as tape:
        diff = fake - real
        interpolated = real + alpha * diff
        with tf.GradientTape() as gp_tape:
            gp_tape.watch(interpolated)
            pred = critic(interpolated, training=True)
        grads = gp_tape.gradient(pred, [interpolated])[0]
        norm = tf.sqrt(tf.reduce_sum(tf.square(grads), axis=[1]))
        gp = tf.reduce_mean((norm - 1.0) ** 2)
        d_cost = tf.reduce_mean(critic(fake)) - tf.reduce_mean(critic(real))
        d_loss = d_cost + 10.0 * gp
    d_grads = tape.gradient(d_loss, critic.trainable_variables)
    opt.apply_gradients(zip(d_grads, critic.trainable_variables))
    return _out({"gp": gp, "d_loss": d_loss, "g0": d_grads[0], "g1": d_grads[1],
                 "after": critic(real)})


# -- seq2seq attention (keras.layers.Attention / AdditiveAttention) ------------------------
def attention_layers(tf):
    """Dot-product and additive attention over an encoder's GRU states with a query mask
    and value mask, scores returned, and the gradient for the query."""
    keras = tf.keras
    rng = np.random.default_rng(31)
    query = tf.constant(rng.normal(size=(2, 3, 4)).astype(np.float32))
    value = tf.constant(rng.normal(size=(2, 5, 4)).astype(np.float32))
    vmask = tf.constant(np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool))
    qmask = tf.constant(np.array([[1, 1, 0], [1, 1, 1]], bool))
    dot = keras.layers.Attention(use_scale=True)
    add = keras.layers.AdditiveAttention()
    dot([query, value])  # build
    add([query, value])
    dot.set_weights([np.array(0.7, np.float32)])
    add.set_weights([np.linspace(-1, 1, 4).astype(np.float32)])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(query)
        ctx, scores = dot([query, value], mask=[qmask, vmask], return_attention_scores=True)
        ctx2 = add([query, value, value], mask=[qmask, vmask])
        loss = tf.reduce_sum(ctx ** 2) + tf.reduce_sum(tf.sin(ctx2))
    g = tape.gradient(loss, query)
    gw = tape.gradient(loss, dot.trainable_weights + add.trainable_weights)
    causal = keras.layers.Attention()([query, query], use_causal_mask=True)
    return _out({"ctx": ctx, "scores": scores, "ctx2": ctx2, "g": g, "gscale": gw[0],
                 "gadd": gw[1], "causal": causal})


# -- learning-rate warmup in a custom loop ------------------------------------------------
def warmup_schedule_loop(tf):
    """A LearningRateSchedule subclass (linear warmup then cosine decay) given to AdamW,
    and keras.metrics.Mean / MeanSquaredError in the loop with reset_state."""
    keras = tf.keras

    class WarmupCosine(keras.optimizers.schedules.LearningRateSchedule):
        def __init__(self, base, warmup, total):
            self.base, self.warmup, self.total = base, warmup, total
            self.cos = keras.optimizers.schedules.CosineDecay(base, total - warmup)

        def __call__(self, step):
            step = tf.cast(step, tf.float32)
            warm = self.base * step / self.warmup
            return tf.where(step < self.warmup, warm, self.cos(step - self.warmup))

    sched = WarmupCosine(0.05, 3, 10)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="tanh"),
                              keras.layers.Dense(1)])
    fix_weights(model, seed=41)
    opt = keras.optimizers.AdamW(learning_rate=sched, weight_decay=0.01)
    loss_metric = keras.metrics.Mean()
    mse = keras.metrics.MeanSquaredError()
    rng = np.random.default_rng(42)
    x = rng.normal(size=(8, 3)).astype(np.float32)
    y = np.sum(x, axis=1, keepdims=True).astype(np.float32)
    lrs, means, mses = [], [], []
    for _epoch in range(3):
        for i in range(0, 8, 4):
            lrs.append(float(sched(opt.iterations)))
            with tf.GradientTape() as tape:
                pred = model(x[i:i + 4])
                loss = tf.reduce_mean(tf.square(pred - y[i:i + 4]))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            loss_metric.update_state(loss)
            mse.update_state(y[i:i + 4], pred)
        means.append(float(loss_metric.result()))
        mses.append(float(mse.result()))
        loss_metric.reset_state()
        mse.reset_state()
    return _out({"lrs": np.array(lrs), "means": np.array(means), "mses": np.array(mses),
                 "kernel": model.layers[0].kernel})


# -- class_weight / sample_weight in fit ----------------------------------------------------
def weighted_fit(tf):
    """fit with class_weight, then with sample_weight, and evaluate with sample_weight;
    a weighted metric."""
    keras = tf.keras
    rng = np.random.default_rng(51)
    x = rng.normal(size=(12, 4)).astype(np.float32)
    y = rng.integers(0, 3, size=(12,))
    sw = rng.uniform(0.5, 2.0, size=(12,)).astype(np.float32)

    def make():
        m = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
        fix_weights(m, seed=52)
        m.compile(optimizer=keras.optimizers.SGD(0.1),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  weighted_metrics=["accuracy"])
        return m
    a = make()
    ha = a.fit(x, y, batch_size=4, epochs=2, class_weight={0: 1.0, 1: 3.0, 2: 0.5},
               verbose=0, shuffle=False)
    b = make()
    hb = b.fit(x, y, sample_weight=sw, batch_size=4, epochs=2, verbose=0, shuffle=False)
    ev = b.evaluate(x, y, sample_weight=sw, batch_size=6, verbose=0)
    return _out({"class_loss": np.array(ha.history["loss"]),
                 "class_acc": np.array(ha.history["accuracy"]),
                 "sample_loss": np.array(hb.history["loss"]),
                 "eval": np.array(ev), "kernel_a": a.layers[0].kernel,
                 "kernel_b": b.layers[0].kernel})


# -- BatchNormalization / Dropout in training vs inference -------------------------------
def batchnorm_dropout_modes(tf):
    """BatchNormalization's moving statistics after model(x, training=True) calls and a
    fit, outputs with training=False / True, and a seeded Dropout in inference (its
    training-mode mask is each library's own random stream: only its form is compared)."""
    keras = tf.keras
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4),
                              keras.layers.BatchNormalization(momentum=0.8),
                              keras.layers.Dense(1)])
    fix_weights(model, seed=61)
    bn = model.layers[1]
    bn.set_weights([np.ones(4, np.float32), np.zeros(4, np.float32),
                    np.zeros(4, np.float32), np.ones(4, np.float32)])
    rng = np.random.default_rng(62)
    x = rng.normal(size=(6, 3)).astype(np.float32)
    infer0 = model(x, training=False)
    dense_out = model.layers[0](x)
    train_bn = bn(dense_out, training=True)
    after_one = [bn.moving_mean.numpy(), bn.moving_variance.numpy()]
    bn(dense_out * 2.0 + 1.0, training=True)
    infer1 = model(x, training=False)
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, np.ones((6, 1), np.float32), batch_size=6, epochs=1, verbose=0)
    drop = keras.layers.Dropout(0.5, seed=1)
    dropped = drop(x, training=True).numpy()
    kept_or_zero = np.all((dropped == 0) | np.isclose(dropped, 2 * x))
    return _out({"drop_infer": drop(x, training=False), "kept_or_zero": kept_or_zero,"infer0": infer0, "train_bn": train_bn, "mm1": after_one[0],
                 "mv1": after_one[1], "infer1": infer1, "mm2": bn.moving_mean,
                 "mv2": bn.moving_variance,
                 "predict": model.predict(x, verbose=0)})


# -- tf.data: map / cache / batch / prefetch feeding fit ------------------------------------
def tf_data_fit(tf):
    """A tf.data pipeline (from_tensor_slices, map with a normalizing function, cache,
    batch, prefetch) into fit and evaluate; predict on a dataset of features only."""
    keras = tf.keras
    rng = np.random.default_rng(71)
    feats = rng.normal(size=(20, 3)).astype(np.float32) * 4 + 2
    labels = (feats[:, :1] * 0.5 - feats[:, 1:2]).astype(np.float32)

    def preprocess(x, y):
        return (x - 2.0) / 4.0, y

    ds = (tf.data.Dataset.from_tensor_slices((feats, labels)).map(preprocess).cache()
          .batch(6).prefetch(tf.data.AUTOTUNE))
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(5, activation="elu"),
                              keras.layers.Dense(1)])
    fix_weights(model, seed=72)
    model.compile(optimizer=keras.optimizers.Adam(0.02), loss="mse", metrics=["mae"])
    h = model.fit(ds, epochs=3, verbose=0)
    ev = model.evaluate(ds, verbose=0, return_dict=True)
    pred = model.predict(ds.map(lambda x, y: x), verbose=0)
    shapes = [tuple(b[0].shape) for b in ds]
    return _out({"loss": np.array(h.history["loss"]), "mae": np.array(h.history["mae"]),
                 "eval_loss": np.array(ev["loss"]), "eval_mae": np.array(ev["mae"]),
                 "pred": pred, "batch_rows": np.array([s[0] for s in shapes])})


# -- save_weights / load_weights / get_weights / set_weights -------------------------------
def weights_round_trip(tf):
    """A functional model's weights saved to .weights.h5 and loaded into a fresh copy;
    get_weights/set_weights between two models; one more step on each gives the same."""
    keras = tf.keras

    def make():
        inp = keras.Input((4,))
        h = keras.layers.Dense(3, activation="relu")(inp)
        h = keras.layers.LayerNormalization()(h)
        return keras.Model(inp, keras.layers.Dense(2)(h))
    a = make()
    fix_weights(a, seed=81)
    a.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    rng = np.random.default_rng(82)
    x = rng.normal(size=(8, 4)).astype(np.float32)
    y = rng.normal(size=(8, 2)).astype(np.float32)
    a.fit(x, y, batch_size=4, epochs=1, verbose=0, shuffle=False)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "model.weights.h5")
        a.save_weights(path)
        b = make()
        b.load_weights(path)
    c = make()
    c.set_weights(a.get_weights())
    return _out({"a": a.predict(x, verbose=0), "b": b.predict(x, verbose=0),
                 "c": c(x, training=False),
                 "n_weights": np.array(len(a.get_weights())),
                 "shapes": np.array([np.prod(w.shape) for w in b.get_weights()])})


# -- tf.function with input_signature, a Python loop, tf.vectorized_map -------------------
def function_signature_vmap(tf):
    """A tf.function with an input_signature of None batch size called with two batch
    sizes, a Python-side loop of unrolled steps inside, and tf.vectorized_map computing
    per-example gradients."""
    w = tf.Variable(np.array([[0.5, -0.2], [0.1, 0.3], [-0.4, 0.2]], np.float32))

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def unrolled(x):
        h = x
        for _ in range(3):
            h = tf.tanh(tf.matmul(h, w)) @ tf.transpose(w) + x
        return tf.reduce_sum(h, axis=1)

    rng = np.random.default_rng(91)
    xs = rng.normal(size=(5, 3)).astype(np.float32)
    ys = rng.normal(size=(5,)).astype(np.float32)
    out5 = unrolled(tf.constant(xs))
    out2 = unrolled(tf.constant(xs[:2]))

    def per_example(args):
        x, y = args
        with tf.GradientTape() as tape:
            pred = tf.reduce_sum(tf.tanh(tf.linalg.matvec(tf.transpose(w), x)))
            loss = (pred - y) ** 2
        return tape.gradient(loss, w)
    per_grads = tf.vectorized_map(per_example, (tf.constant(xs), tf.constant(ys)))
    squares = tf.vectorized_map(lambda r: tf.reduce_sum(r * r), tf.constant(xs))
    return _out({"out5": out5, "out2": out2, "per_grads": per_grads, "squares": squares})


# -- GNN-style message passing with segment ops -------------------------------------------
def gnn_message_passing(tf):
    """keras.io's "node classification with GNN" aggregation: gather edge sources,
    transform messages, unsorted_segment_sum/mean/max to targets, segment_sum pooling per
    graph, and the gradient for the layer's weights."""
    keras = tf.keras
    rng = np.random.default_rng(101)
    nodes = tf.constant(rng.normal(size=(6, 3)).astype(np.float32))
    edges = tf.constant(np.array([[0, 1], [1, 2], [2, 0], [3, 4], [4, 5], [5, 3], [0, 2],
                                  [3, 5]]).T)
    edge_weights = tf.constant(rng.uniform(0.5, 1.5, size=(8,)).astype(np.float32))
    graph_ids = tf.constant([0, 0, 0, 1, 1, 1])
    ffn = keras.layers.Dense(4, activation="gelu")
    update = keras.layers.Dense(3)
    ffn.build((None, 3))
    update.build((None, 7))
    fix_weights(ffn, seed=102)
    fix_weights(update, seed=103)
    with tf.GradientTape() as tape:
        sources, targets = edges[0], edges[1]
        neighbour = tf.gather(nodes, sources)
        messages = ffn(neighbour) * tf.expand_dims(edge_weights, -1)
        summed = tf.math.unsorted_segment_sum(messages, targets, num_segments=6)
        meaned = tf.math.unsorted_segment_mean(messages, targets, num_segments=6)
        maxed = tf.math.unsorted_segment_max(messages, targets, num_segments=6)
        h = update(tf.concat([nodes, summed], axis=1)) + meaned[:, :3] + maxed[:, 1:]
        h = tf.nn.l2_normalize(h, axis=-1)
        pooled = tf.math.segment_sum(h, graph_ids)
        loss = tf.reduce_sum(pooled ** 2) + tf.reduce_sum(tf.math.segment_max(h, graph_ids))
    grads = tape.gradient(loss, ffn.trainable_weights + update.trainable_weights)
    return _out({"h": h, "pooled": pooled, "loss": loss,
                 **{f"g{i}": g for i, g in enumerate(grads)}})


# -- a small physics example with tf.linalg ---------------------------------------------
def spring_chain_physics(tf):
    """A chain of masses and springs: the stiffness matrix, its eigenvalues (normal-mode
    frequencies) with tf.linalg.eigh, the static solution of K u = f with tf.linalg.solve
    and cholesky_solve, and the gradient of the compliance for the spring constants."""
    k = tf.Variable(np.array([1.0, 2.0, 1.5, 3.0, 0.5]))
    f = tf.constant(np.array([[0.0], [1.0], [0.0], [-0.5]]))
    with tf.GradientTape() as tape:
        main = k[:-1] + k[1:]
        K = tf.linalg.diag(main) - tf.linalg.diag(k[1:-1], k=1) - tf.linalg.diag(k[1:-1], k=-1)
        u = tf.linalg.solve(K, f)
        compliance = tf.reduce_sum(f * u)
        evals, evecs = tf.linalg.eigh(K)
        freq = tf.sqrt(evals)
        loss = compliance + tf.reduce_sum(freq)
    g = tape.gradient(loss, k)
    chol = tf.linalg.cholesky(K)
    u2 = tf.linalg.cholesky_solve(chol, f)
    return _out({"K": K, "u": u, "u2": u2, "compliance": compliance, "freq": freq,
                 "evec_abs": tf.abs(evecs), "g": g, "logdet": tf.linalg.logdet(K),
                 "det": tf.linalg.det(K)})


NAMES = ("text_classifier_pooling", "text_classifier_pooling_adam",
         "text_classifier_gru_vectorized", "text_classifier_lstm",
         "vae_train_step", "wgan_gp_penalty", "attention_layers", "warmup_schedule_loop",
         "weighted_fit", "batchnorm_dropout_modes", "tf_data_fit", "weights_round_trip",
         "function_signature_vmap", "gnn_message_passing", "spring_chain_physics")

# program -> why tapegrad differs (tests/test_real_programs_s13.py: strict xfails)
XFAIL = {}
XFAIL_NAMES = tuple(XFAIL)


def run(tf, name):
    """Run the program ``name`` with the module ``tf``."""
    return globals()[name](tf)
