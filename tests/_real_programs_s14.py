"""Real TensorFlow/Keras programs of session 14's probe (saliency maps and FGSM, ESPCN's
sub-pixel upsampling and ViT's patches, CNN Jacobians in tf.function, a subclassed Model
with its own train_step/test_step, callbacks, learning-rate schedules with gradient
clipping, a convolutional autoencoder of many layer kinds, tf.custom_gradient,
Hessian-vector products, graph control flow, a multi-input multi-output functional model,
DeepDream, a physics-informed network, custom loss and metric classes, custom RNN cells),
written as their authors write them against a module ``tf``.
tests/test_real_programs_s14.py runs them with ``tapegrad``;
benchmarks/real_programs_s14_reference.py runs the same functions with TensorFlow 2.21 /
Keras 3.15 and stores what they return in tests/data/real_programs_s14.json.

Weights come from a seeded NumPy generator (``fix_weights``) and data (and noise) from
NumPy, so both libraries compute the same numbers; each program returns a dict of NumPy
arrays."""
import csv
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


def _small_cnn(tf, seed, classes=4):
    layers = tf.keras.layers
    model = tf.keras.Sequential([layers.Input((6, 6, 2)),
                                 layers.Conv2D(4, 3, padding="same", activation="relu"),
                                 layers.MaxPooling2D(2),
                                 layers.Conv2D(3, 2, activation="tanh"),
                                 layers.Flatten(),
                                 layers.Dense(classes)])
    fix_weights(model, seed=seed)
    return model


# -- saliency maps: vanilla gradients, SmoothGrad, gradient x input ------------------------
def _saliency_smoothgrad(tf):
    """The class score's gradient for the input image (abs, max over channels), SmoothGrad's
    average over noisy copies, and gradient times input, of a small CNN classifier."""
    model = _small_cnn(tf, seed=1)
    rng = np.random.default_rng(2)
    image = tf.constant(rng.uniform(size=(1, 6, 6, 2)).astype(np.float32))
    noise = rng.normal(scale=0.1, size=(5, 6, 6, 2)).astype(np.float32)
    with tf.GradientTape() as tape:
        tape.watch(image)
        logits = model(image)
        top = tf.argmax(logits[0])
        score = logits[0, top]
    grads = tape.gradient(score, image)
    saliency = tf.reduce_max(tf.abs(grads), axis=-1)
    noisy = image + noise
    with tf.GradientTape() as tape:
        tape.watch(noisy)
        probs = tf.nn.softmax(model(noisy))
        scores = tf.gather(probs, top, axis=1)
    smooth = tf.reduce_mean(tape.gradient(scores, noisy), axis=0)
    return _out({"logits": logits, "top": top, "saliency": saliency, "smooth": smooth,
                 "grad_x_input": tf.reduce_sum(grads * image, axis=-1)})


# -- TensorFlow's "Adversarial example using FGSM" (shrunk), and a few PGD steps -----------
def _fgsm_adversarial(tf):
    """create_adversarial_pattern (the sign of the loss gradient for the image), adversarial
    images for several epsilons clipped to [-1, 1], and projected gradient descent steps in
    a tf.function."""
    model = _small_cnn(tf, seed=3)
    loss_object = tf.keras.losses.CategoricalCrossentropy(from_logits=True)
    rng = np.random.default_rng(4)
    image = tf.constant(rng.uniform(-1, 1, size=(2, 6, 6, 2)).astype(np.float32))
    label = tf.one_hot([1, 3], 4)

    def create_adversarial_pattern(input_image, input_label):
        with tf.GradientTape() as tape:
            tape.watch(input_image)
            prediction = model(input_image)
            loss = loss_object(input_label, prediction)
        gradient = tape.gradient(loss, input_image)
        return tf.sign(gradient), gradient

    perturbations, gradient = create_adversarial_pattern(image, label)
    adv = {}
    for eps in [0.01, 0.1]:
        adv_x = tf.clip_by_value(image + eps * perturbations, -1, 1)
        adv[f"probs_{eps}"] = tf.nn.softmax(model(adv_x))

    @tf.function
    def pgd_step(x_adv, x0, alpha, eps):
        with tf.GradientTape() as tape:
            tape.watch(x_adv)
            loss = loss_object(label, model(x_adv))
        x_adv = x_adv + alpha * tf.sign(tape.gradient(loss, x_adv))
        x_adv = tf.clip_by_value(x_adv, x0 - eps, x0 + eps)
        return tf.clip_by_value(x_adv, -1.0, 1.0), loss

    x_adv, pgd_losses = image, []
    for _ in range(3):
        x_adv, loss = pgd_step(x_adv, image, 0.02, 0.05)
        pgd_losses.append(float(loss))
    return _out({"gradient": gradient, "perturbations": perturbations, **adv,
                 "pgd_losses": np.array(pgd_losses), "x_adv": x_adv})


def saliency_and_fgsm(tf):
    """Gradients for the input image: the saliency maps above, and the FGSM tutorial."""
    return {**_saliency_smoothgrad(tf), **_fgsm_adversarial(tf)}


# -- keras.io "Image super-resolution using an efficient sub-pixel CNN" and "Image
#    classification with Vision Transformer" (shrunk), an AlexNet-style LRN block ----------
def subpixel_and_patches(tf):
    """ESPCN's sub-pixel upsampling (tf.nn.depth_to_space in a Lambda) on images of unknown
    size, fit with Adam, then a custom loop over a tf.data augmentation (rot90,
    adjust_brightness, adjust_gamma) with tf.nn.compute_average_loss, and the tutorial's
    PSNR; crops and pads of tf.image; the ViT tutorial's Patches layer (tf.image.extract_patches and a
    reshape) and PatchEncoder (projection plus position embedding) in a small classifier;
    tf.nn.local_response_normalization after a convolution; space_to_depth's gradient."""
    keras = tf.keras
    layers = keras.layers
    inp = keras.Input((None, None, 1))
    h = layers.Conv2D(8, 3, padding="same", activation="relu")(inp)
    h = layers.Conv2D(4, 3, padding="same")(h)
    espcn = keras.Model(inp, layers.Lambda(lambda t: tf.nn.depth_to_space(t, 2))(h))
    fix_weights(espcn, seed=33)
    rng = np.random.default_rng(34)
    low = rng.uniform(size=(4, 5, 5, 1)).astype(np.float32)
    high = rng.uniform(size=(4, 10, 10, 1)).astype(np.float32)
    espcn.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    h_sr = espcn.fit(low, high, batch_size=2, epochs=2, verbose=0, shuffle=False)

    def augment(lo, hi):  # a tf.data augmentation, then a custom loop's averaged loss
        lo, hi = tf.image.rot90(lo, k=1), tf.image.rot90(hi, k=1)
        return tf.image.adjust_brightness(lo, 0.1), tf.image.adjust_gamma(hi, 0.9)

    loss_object = keras.losses.MeanSquaredError(reduction="none")
    sr_opt = keras.optimizers.SGD(0.05)
    loop_losses = []
    for lo, hi in tf.data.Dataset.from_tensor_slices((low, high)).map(augment).batch(3):
        with tf.GradientTape() as tape:
            per_example = tf.reduce_mean(loss_object(hi, espcn(lo)), axis=[1, 2])
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=4)
        grads = tape.gradient(loss, espcn.trainable_variables)
        sr_opt.apply_gradients(zip(grads, espcn.trainable_variables))
        loop_losses.append(float(loss))
    psnr = tf.image.psnr(espcn(low), high, max_val=1.0)
    framed = tf.image.pad_to_bounding_box(tf.image.crop_to_bounding_box(
        tf.image.transpose(high), 1, 2, 6, 5), 2, 1, 9, 7)
    centred = tf.image.resize_with_crop_or_pad(high, 12, 7)

    class Patches(layers.Layer):
        def __init__(self, patch_size):
            super().__init__()
            self.patch_size = patch_size

        def call(self, images):
            batch_size = tf.shape(images)[0]
            patches = tf.image.extract_patches(
                images=images, sizes=[1, self.patch_size, self.patch_size, 1],
                strides=[1, self.patch_size, self.patch_size, 1], rates=[1, 1, 1, 1],
                padding="VALID")
            patch_dims = patches.shape[-1]
            return tf.reshape(patches, [batch_size, -1, patch_dims])

    class PatchEncoder(layers.Layer):
        def __init__(self, num_patches, projection_dim):
            super().__init__()
            self.num_patches = num_patches
            self.projection = layers.Dense(units=projection_dim)
            self.position_embedding = layers.Embedding(input_dim=num_patches,
                                                       output_dim=projection_dim)

        def call(self, patch):
            positions = tf.range(start=0, limit=self.num_patches, delta=1)
            return self.projection(patch) + self.position_embedding(positions)

    images = keras.Input((6, 6, 2))
    lrn = layers.Lambda(lambda t: tf.nn.local_response_normalization(
        t, depth_radius=1, bias=1.0, alpha=0.5, beta=0.75))(
        layers.Conv2D(3, 3, padding="same")(images))
    encoded = PatchEncoder(9, 4)(Patches(2)(lrn))
    pooled = layers.GlobalAveragePooling1D()(layers.LayerNormalization()(encoded))
    vit = keras.Model(images, layers.Dense(3)(pooled))
    fix_weights(vit, seed=35)
    pics = rng.uniform(size=(6, 6, 6, 2)).astype(np.float32)
    labels = rng.integers(0, 3, size=6)
    vit.compile(optimizer=keras.optimizers.Adam(0.02),
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    h_vit = vit.fit(pics, labels, batch_size=3, epochs=2, verbose=0, shuffle=False)
    x = tf.constant(pics[:2])
    with tf.GradientTape() as tape:
        tape.watch(x)
        s2d = tf.nn.space_to_depth(x, 2)
        loss = tf.reduce_sum(tf.sin(s2d) * tf.range(8, dtype=tf.float32))
    return _out({"sr_loss": np.array(h_sr.history["loss"]), "loop_losses": np.array(loop_losses),
                 "psnr": psnr, "framed": framed, "centred": centred,
                 "sr_pred": espcn.predict(low[:1], verbose=0),
                 "sr_bigger": espcn(rng.uniform(size=(1, 3, 4, 1)).astype(np.float32)),
                 "vit_loss": np.array(h_vit.history["loss"]),
                 "vit_pred": vit.predict(pics[:2], verbose=0), "s2d": s2d,
                 "s2d_grad": tape.gradient(loss, x)})


# -- Jacobians of a CNN: batch_jacobian in tf.function, jacobian without pfor ---------------
def cnn_jacobians(tf):
    """tape.batch_jacobian of a small CNN's logits for its inputs inside a tf.function,
    called at two inputs and two batch sizes; tape.jacobian for the first kernel with
    experimental_use_pfor=False, and with pfor, which must agree."""
    model = _small_cnn(tf, seed=5, classes=3)
    rng = np.random.default_rng(6)
    xs = rng.uniform(size=(5, 6, 6, 2)).astype(np.float32)

    @tf.function
    def input_jacobian(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = model(x)
        return tape.batch_jacobian(y, x)

    j_a = input_jacobian(tf.constant(xs[:2]))
    j_b = input_jacobian(tf.constant(xs[2:4]))
    j_c = input_jacobian(tf.constant(xs[:3]))
    kernel = model.layers[0].kernel
    with tf.GradientTape(persistent=True) as tape:
        y = model(tf.constant(xs[4:]))
    j_loop = tape.jacobian(y, kernel, experimental_use_pfor=False)
    j_pfor = tape.jacobian(y, kernel)
    return _out({"j_a": j_a, "j_b": j_b, "j_c": j_c, "j_loop": j_loop, "j_pfor": j_pfor})


# -- "Customizing what happens in fit()" (Keras 3 guide, TensorFlow backend) ----------------
def custom_train_step(tf):
    """A keras.Model subclass with its own train_step and test_step, its own loss tracker
    and metrics (the metrics property), fit for two epochs with validation data, then
    evaluate and predict."""
    keras = tf.keras
    loss_tracker = keras.metrics.Mean(name="loss")
    mse = keras.losses.MeanSquaredError()
    mae_metric = keras.metrics.MeanAbsoluteError(name="mae")

    class CustomModel(keras.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = mse(y, y_pred)
            trainable_vars = self.trainable_variables
            gradients = tape.gradient(loss, trainable_vars)
            self.optimizer.apply(gradients, trainable_vars)
            loss_tracker.update_state(loss)
            mae_metric.update_state(y, y_pred)
            return {"loss": loss_tracker.result(), "mae": mae_metric.result()}

        def test_step(self, data):
            x, y = data
            y_pred = self(x, training=False)
            loss_tracker.update_state(mse(y, y_pred))
            mae_metric.update_state(y, y_pred)
            return {"loss": loss_tracker.result(), "mae": mae_metric.result()}

        @property
        def metrics(self):
            return [loss_tracker, mae_metric]

    inputs = keras.Input(shape=(3,))
    hidden = keras.layers.Dense(5, activation="relu")(inputs)
    outputs = keras.layers.Dense(1)(hidden)
    model = CustomModel(inputs, outputs)
    fix_weights(model, seed=7)
    model.compile(optimizer=keras.optimizers.SGD(0.05, momentum=0.5))
    rng = np.random.default_rng(8)
    x = rng.normal(size=(20, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)
    h = model.fit(x[:16], y[:16], batch_size=4, epochs=2, verbose=0, shuffle=False,
                  validation_data=(x[16:], y[16:]))
    ev = model.evaluate(x, y, batch_size=10, verbose=0, return_dict=True)

    class GuideModel(keras.Model):  # the guide's first version: compute_loss, self.metrics
        def train_step(self, data):
            x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred, sample_weight=sample_weight)
            gradients = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred, sample_weight=sample_weight)
            return {m.name: m.result() for m in self.metrics}

    inputs = keras.Input(shape=(3,))
    guide = GuideModel(inputs, keras.layers.Dense(1)(keras.layers.Dense(4, activation="tanh")(
        inputs)))
    fix_weights(guide, seed=9)
    guide.compile(optimizer="adam", loss="mse", metrics=["mae"])
    sw = np.linspace(0.5, 1.5, 16).astype(np.float32)
    hg = guide.fit(x[:16], y[:16], sample_weight=sw, batch_size=4, epochs=2, verbose=0,
                   shuffle=False)
    return _out({"guide_loss": np.array(hg.history["loss"]),
                 "guide_mae": np.array(hg.history["mae"]),
                 "guide_pred": guide.predict(x[:4], verbose=0),
                 "loss": np.array(h.history["loss"]), "mae": np.array(h.history["mae"]),
                 "val_loss": np.array(h.history["val_loss"]),
                 "val_mae": np.array(h.history["val_mae"]),
                 "eval": np.array([ev["loss"], ev["mae"]]),
                 "pred": model.predict(x[:4], verbose=0),
                 "keys": np.array(sorted(h.history))})


# -- callbacks: LearningRateScheduler, CSVLogger, ModelCheckpoint, a custom Callback -------
def callbacks_history(tf):
    """LearningRateScheduler (the documentation's scheduler function), CSVLogger's file,
    ModelCheckpoint's per-epoch weight files, a Callback recording epoch and batch logs,
    and the History object's epoch list and params; then EarlyStopping(start_from_epoch,
    restore_best_weights) with ReduceLROnPlateau(cooldown) on val_loss."""
    keras = tf.keras

    def scheduler(epoch, lr):
        if epoch < 2:
            return lr
        return lr * 0.5

    class Recorder(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.batch_losses, self.epoch_losses = [], []

        def on_train_batch_end(self, batch, logs=None):
            self.batch_losses.append(logs["loss"])

        def on_epoch_end(self, epoch, logs=None):
            self.epoch_losses.append(logs["val_loss"])

    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(3, activation="tanh"),
                              keras.layers.Dense(1)])
    fix_weights(model, seed=9)
    model.compile(optimizer=keras.optimizers.SGD(0.2), loss="mse", metrics=["mae"])
    rng = np.random.default_rng(10)
    x = rng.normal(size=(15, 2)).astype(np.float32)
    y = (x[:, :1] * x[:, 1:]).astype(np.float32)
    recorder = Recorder()
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "training.log")
        callbacks = [keras.callbacks.LearningRateScheduler(scheduler),
                     keras.callbacks.CSVLogger(log),
                     keras.callbacks.ModelCheckpoint(
                         os.path.join(d, "w-{epoch:02d}.weights.h5"), save_weights_only=True),
                     recorder]
        h = model.fit(x[:12], y[:12], validation_data=(x[12:], y[12:]), batch_size=5,
                      epochs=4, verbose=0, shuffle=False, callbacks=callbacks)
        with open(log) as f:
            rows = list(csv.reader(f))
        files = sorted(os.listdir(d))
        model.load_weights(os.path.join(d, "w-02.weights.h5"))
    stop = keras.callbacks.EarlyStopping(monitor="val_loss", patience=1, start_from_epoch=1,
                                         restore_best_weights=True)
    plateau = keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=0,
                                                cooldown=1, min_delta=1e-3)
    model.compile(optimizer=keras.optimizers.SGD(1.5), loss="mse")
    h2 = model.fit(x[:12], y[:12], validation_data=(x[12:], y[12:]), batch_size=5,
                   epochs=8, verbose=0, shuffle=False, callbacks=[stop, plateau])
    return _out({"header": np.array(rows[0]),
                 "csv": np.array([[float(v) for v in r] for r in rows[1:]]),
                 "files": np.array(files), "epoch": np.array(h.epoch),
                 "params": np.array([h.params["epochs"], h.params["steps"]]),
                 "lr": np.array(h.history["learning_rate"]),
                 "batch_losses": np.array(recorder.batch_losses),
                 "epoch_val": np.array(recorder.epoch_losses),
                 "h2_val": np.array(h2.history["val_loss"]),
                 "h2_lr": np.array(h2.history["learning_rate"]),
                 "stopped": np.array(stop.stopped_epoch),
                 "restored_pred": model.predict(x[:3], verbose=0)})


# -- keras.optimizers.schedules driving optimizers, with gradient clipping -----------------
def schedules_and_clipping(tf):
    """PiecewiseConstantDecay in SGD(nesterov momentum, clipnorm), CosineDecay with warmup in
    centered RMSprop(momentum, clipvalue), ExponentialDecay in Adagrad(global_clipnorm),
    PolynomialDecay in Adamax and InverseTimeDecay in Adam(amsgrad), each in a custom loop;
    the learning rate read at every step."""
    keras = tf.keras
    schedules = keras.optimizers.schedules
    rng = np.random.default_rng(11)
    x = rng.normal(size=(6, 3)).astype(np.float32)
    y = rng.normal(size=(6, 2)).astype(np.float32) * 3.0
    optimizers = {
        "sgd": keras.optimizers.SGD(schedules.PiecewiseConstantDecay([2, 4], [0.1, 0.05, 0.01]),
                                    momentum=0.9, nesterov=True, clipnorm=1.0),
        "rmsprop": keras.optimizers.RMSprop(
            schedules.CosineDecay(0.0, decay_steps=4, warmup_target=0.05, warmup_steps=2,
                                  alpha=0.1),
            rho=0.8, momentum=0.5, centered=True, clipvalue=0.3),
        "adagrad": keras.optimizers.Adagrad(schedules.ExponentialDecay(0.3, 2, 0.7),
                                            initial_accumulator_value=0.2,
                                            global_clipnorm=0.5),
        "adamax": keras.optimizers.Adamax(schedules.PolynomialDecay(0.05, 5, 0.005, power=2.0)),
        "adam": keras.optimizers.Adam(schedules.InverseTimeDecay(0.05, 2, 0.5, staircase=True),
                                      amsgrad=True),
    }
    out = {}
    for name, opt in optimizers.items():
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
        fix_weights(model, seed=12)
        lrs = []
        for _ in range(6):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            lrs.append(float(opt.learning_rate))
        out[f"{name}_lr"] = np.array(lrs)
        out[f"{name}_kernel"] = model.layers[0].kernel
        out[f"{name}_bias"] = model.layers[0].bias
    return _out(out)


# -- a convolutional autoencoder of many layer kinds ---------------------------------------
def conv_autoencoder_zoo(tf):
    """SeparableConv2D(depth_multiplier), BatchNormalization, DepthwiseConv2D(strides),
    Conv2D(dilation), UpSampling2D, Conv2DTranspose (same and valid, strides), Cropping2D,
    Add, and a Conv1D branch (causal, dilated, strided) with UpSampling1D; fit with Adam;
    a 3-D U-Net step (Conv3D, MaxPooling3D, UpSampling3D) fit with the Dice loss, the
    Tversky loss, ZeroPadding3D and Cropping3D."""
    keras = tf.keras
    layers = keras.layers
    inp = keras.Input((8, 8, 2))
    h = layers.SeparableConv2D(4, 3, padding="same", depth_multiplier=2, activation="relu")(inp)
    h = layers.BatchNormalization()(h)
    h = layers.DepthwiseConv2D(3, strides=2, padding="same", activation="relu")(h)
    h = layers.Conv2D(3, 3, dilation_rate=2, padding="same", activation="elu")(h)
    up = layers.UpSampling2D(2)(h)
    a = layers.Conv2DTranspose(2, 3, padding="same")(up)
    b = layers.Conv2DTranspose(2, 3, strides=2, padding="valid")(h)
    b = layers.Cropping2D(((0, 1), (1, 0)))(b)
    image_model = keras.Model(inp, layers.Add()([a, b]))
    seq_in = keras.Input((12, 3))
    s = layers.Conv1D(4, 3, dilation_rate=2, padding="causal", activation="relu")(seq_in)
    s = layers.Conv1D(2, 3, strides=2, padding="same")(s)
    s = layers.UpSampling1D(2)(s)
    seq_model = keras.Model(seq_in, layers.Conv1D(3, 1)(s))
    rng = np.random.default_rng(13)
    images = rng.uniform(size=(6, 8, 8, 2)).astype(np.float32)
    seqs = rng.normal(size=(6, 12, 3)).astype(np.float32)
    out = {}
    for name, model, data in (("image", image_model, images), ("seq", seq_model, seqs)):
        fix_weights(model, seed=14)
        for layer in model.layers:
            if isinstance(layer, layers.BatchNormalization):
                layer.moving_variance.assign(tf.abs(layer.moving_variance))
        model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
        h = model.fit(data, data, batch_size=3, epochs=2, verbose=0, shuffle=False)
        out[f"{name}_loss"] = np.array(h.history["loss"])
        out[f"{name}_pred"] = model.predict(data[:2], verbose=0)
    vol_in = keras.Input((4, 6, 6, 1))  # a 3-D U-Net step with the Dice loss
    v1 = layers.Conv3D(3, 3, padding="same", activation="relu")(vol_in)
    v2 = layers.Conv3D(3, 3, padding="same", activation="relu")(layers.MaxPooling3D(2)(v1))
    vol_out = layers.Conv3D(1, 1, activation="sigmoid")(
        layers.Concatenate()([v1, layers.UpSampling3D(2)(v2)]))
    vol_model = keras.Model(vol_in, vol_out)
    fix_weights(vol_model, seed=15)
    volumes = rng.uniform(size=(4, 4, 6, 6, 1)).astype(np.float32)
    masks = (volumes > 0.5).astype(np.float32)
    vol_model.compile(optimizer=keras.optimizers.Adam(0.05),
                      loss=keras.losses.Dice(axis=(1, 2, 3, 4)))
    out["vol_loss"] = np.array(vol_model.fit(volumes, masks, batch_size=2, epochs=2, verbose=0,
                                             shuffle=False).history["loss"])
    pred = vol_model.predict(volumes[:2], verbose=0)
    out["vol_tversky"] = keras.losses.Tversky(alpha=0.7, beta=0.3)(masks[:2], pred)
    out["vol_padded"] = layers.Cropping3D(((1, 0), (0, 2), 1))(
        layers.ZeroPadding3D(((0, 1), (2, 0), 1))(pred))
    out["bn_mean"] = image_model.layers[2].moving_mean
    out["bn_var"] = image_model.layers[2].moving_variance
    return _out(out)


# -- tf.custom_gradient: clipping, straight-through estimators, log1pexp, variables --------
def custom_gradients(tf):
    """The guide's clip_gradients (tf.clip_by_norm inside the gradient), a straight-through
    sign estimator, the API page's stable log1pexp, and a custom gradient with variables
    (grad_fn(dy, variables)) in a binarised Dense layer trained with SGD."""
    @tf.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return tf.clip_by_norm(dy, 0.5)
        return y, backward

    @tf.custom_gradient
    def sign_ste(x):
        def grad(dy):
            return dy * tf.cast(tf.abs(x) <= 1.0, dy.dtype)
        return tf.sign(x), grad

    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)

        def grad(upstream):
            return upstream * (1 - 1 / (1 + e))
        return tf.math.log(1 + e), grad

    v = tf.Variable([1.0, -2.0, 3.0])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(clip_gradients(v) ** 2)
    g_clip = tape.gradient(loss, v)
    x = tf.constant([-1.5, -0.3, 0.0, 0.7, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        q = sign_ste(x)
        loss = tf.reduce_sum(q * tf.range(5, dtype=tf.float32))
    g_ste = tape.gradient(loss, x)
    big = tf.constant([0.0, 10.0, 100.0])
    with tf.GradientTape() as tape:
        tape.watch(big)
        soft = log1pexp(big)
    g_soft = tape.gradient(soft, big)

    @tf.custom_gradient
    def scaled_product(a, b):
        def grad(dy):  # a differentiable rule: second derivatives go through it
            return dy * b * tf.cos(a * b), dy * a * tf.cos(a * b) * 2.0
        return tf.sin(a * b), grad

    a, b = tf.Variable(0.7), tf.Variable(-1.3)
    with tf.GradientTape(persistent=True) as outer:
        with tf.GradientTape() as inner:
            prod = scaled_product(a, b) * a
        da, db = inner.gradient(prod, [a, b])
    second = [outer.gradient(da, [a, b]), outer.gradient(db, [a, b])]
    w = tf.Variable(np.random.default_rng(15).normal(size=(4, 2)).astype(np.float32) * 0.5)

    @tf.custom_gradient
    def binary_dense(inputs):
        wb = tf.sign(w)
        out = tf.matmul(inputs, wb)

        def grad_fn(dy, variables=None):
            dw = tf.matmul(inputs, dy, transpose_a=True) * tf.cast(tf.abs(w) <= 1.0, dy.dtype)
            return tf.matmul(dy, wb, transpose_b=True), [dw]
        return out, grad_fn

    rng = np.random.default_rng(16)
    xs = tf.constant(rng.normal(size=(8, 4)).astype(np.float32))
    ys = tf.constant(rng.normal(size=(8, 2)).astype(np.float32))
    opt = tf.keras.optimizers.SGD(0.1)
    losses = []
    for _ in range(3):
        with tf.GradientTape() as tape:
            tape.watch(xs)
            loss = tf.reduce_mean(tf.square(binary_dense(xs) - ys))
        g_x, g_w = tape.gradient(loss, [xs, w])
        opt.apply_gradients([(g_w, w)])
        losses.append(float(loss))
    return _out({"g_clip": g_clip, "q": q, "g_ste": g_ste, "soft": soft, "g_soft": g_soft,
                 "losses": np.array(losses), "g_x": g_x, "w": w, "prod": prod,
                 "first": np.array([da, db]), "second": np.array(second)})


# -- Hessian-vector products: back over back, forward over back, back over forward ---------
def hessian_vector_products(tf):
    """The HVP of a small MLP's loss by nested tapes (output_gradients), by a
    ForwardAccumulator over a tape (the autodiff guide's forward-over-backward), and by a
    tape over a ForwardAccumulator; the full Hessian of a 6-parameter model."""
    rng = np.random.default_rng(17)
    w1 = tf.Variable(rng.normal(size=(3, 4)).astype(np.float32) * 0.5)
    b1 = tf.Variable(rng.normal(size=(4,)).astype(np.float32) * 0.1)
    w2 = tf.Variable(rng.normal(size=(4, 1)).astype(np.float32) * 0.5)
    params = [w1, b1, w2]
    vecs = [tf.constant(rng.normal(size=tuple(p.shape)).astype(np.float32)) for p in params]
    x = tf.constant(rng.normal(size=(7, 3)).astype(np.float32))
    y = tf.constant(rng.normal(size=(7, 1)).astype(np.float32))

    def loss_fn():
        h = tf.nn.softplus(tf.matmul(x, w1) + b1)
        return tf.reduce_mean((tf.matmul(h, w2) - y) ** 2)

    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            loss = loss_fn()
        grads = inner.gradient(loss, params)
    hvp_rr = outer.gradient(grads, params, output_gradients=vecs)
    with tf.autodiff.ForwardAccumulator(params, vecs) as acc:
        with tf.GradientTape() as tape:
            loss = loss_fn()
        grads = tape.gradient(loss, params)
    hvp_fr = acc.jvp(grads)
    with tf.GradientTape() as tape:
        with tf.autodiff.ForwardAccumulator(params, vecs) as acc:
            loss = loss_fn()
        directional = acc.jvp(loss)
    hvp_rf = tape.gradient(directional, params)

    @tf.function
    def hvp_function(vectors):
        with tf.autodiff.ForwardAccumulator(params, vectors) as acc:
            with tf.GradientTape() as tape:
                loss = loss_fn()
            grads = tape.gradient(loss, params)
        return acc.jvp(grads)

    hvp_traced = hvp_function(vecs)
    theta = tf.Variable([0.5, -1.0, 0.3, 0.8, -0.2, 1.1])
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            a, b = tf.reshape(theta[:4], (2, 2)), theta[4:]
            f = tf.reduce_sum(tf.tanh(tf.linalg.matvec(a, b)) ** 2) + tf.reduce_prod(theta)
        g = t1.gradient(f, theta)
    hessian = t2.jacobian(g, theta)
    out = {"hessian": hessian, "directional": directional}
    for i in range(3):
        out[f"rr{i}"], out[f"fr{i}"], out[f"rf{i}"] = hvp_rr[i], hvp_fr[i], hvp_rf[i]
        out[f"traced{i}"] = hvp_traced[i]
    return _out(out)


# -- tf.while_loop, tf.scan, tf.cond, tf.foldl and TensorArray in tf.function --------------
def graph_control_flow(tf):
    """Newton's square root by tf.while_loop, a discounted return and an RNN by tf.scan,
    tf.cond on a tensor predicate, tf.foldl, and an autograph loop over tf.range writing a
    TensorArray: values and gradients inside tf.function."""
    a = tf.Variable(2.5)
    w = tf.Variable([[0.5, -0.3], [0.2, 0.4]])
    u = tf.Variable([[0.1, 0.6], [-0.5, 0.3]])
    rng = np.random.default_rng(18)
    seq = tf.constant(rng.normal(size=(5, 3, 2)).astype(np.float32))
    rewards = tf.constant([1.0, 0.0, -0.5, 2.0, 1.0])

    @tf.function
    def newton_sqrt():
        def body(i, z):
            return i + 1, 0.5 * (z + a / z)
        _, z = tf.while_loop(lambda i, z: i < 6, body, [tf.constant(0), tf.constant(1.0)])
        return z

    @tf.function
    def scans(gamma):
        returns = tf.scan(lambda acc, r: r + gamma * acc, rewards, reverse=True)
        states = tf.scan(lambda h, x_t: tf.tanh(tf.matmul(x_t, w) + tf.matmul(h, u)), seq,
                         initializer=tf.zeros((3, 2)))
        return returns, states

    @tf.function
    def branch(x):
        return tf.cond(tf.reduce_sum(x) > 0, lambda: tf.reduce_sum(x * w),
                       lambda: tf.reduce_sum(tf.exp(x) * u))

    @tf.function
    def array_loop(xs):
        n = xs.shape[0]
        ta = tf.TensorArray(tf.float32, size=n)
        h = tf.ones((2,))
        for i in tf.range(n):
            h = tf.tanh(tf.linalg.matvec(w, h) + xs[i])
            ta = ta.write(i, h)
        return ta.stack()

    with tf.GradientTape(persistent=True) as tape:
        z = newton_sqrt()
        gamma = tf.constant(0.9)
        tape.watch(gamma)
        returns, states = scans(gamma)
        pos = branch(tf.constant([[1.0, 2.0], [0.5, -0.1]]))
        neg = branch(tf.constant([[-1.0, 0.2], [0.5, -0.1]]))
        folded = tf.foldl(lambda acc, x_t: acc * 0.5 + tf.reduce_sum(x_t * w), seq[:, 0, :]
                          [:, None, :] * tf.ones((5, 2, 2)), initializer=tf.constant(0.0))
        stacked = array_loop(seq[:4, 0, :])
        total = tf.reduce_sum(states) + tf.reduce_sum(returns) + pos + neg + folded
        total = total + tf.reduce_sum(stacked ** 2)
    return _out({"z": z, "dz_da": tape.gradient(z, a), "returns": returns, "states": states,
                 "d_gamma": tape.gradient(returns, gamma), "pos": pos, "neg": neg,
                 "folded": folded, "stacked": stacked,
                 "d_w": tape.gradient(total, w), "d_u": tape.gradient(total, u)})


def tensor_array_tensor_size(tf):
    """A TensorArray whose size is a tensor argument of the tf.function (the loop over
    tf.range(n) writing one row per step), and its gradient."""
    w = tf.Variable([[0.5, -0.3], [0.2, 0.4]])

    @tf.function
    def array_loop(n):
        ta = tf.TensorArray(tf.float32, size=n)
        h = tf.ones((2,))
        for i in tf.range(n):
            h = tf.tanh(tf.linalg.matvec(w, h) + tf.cast(i, tf.float32))
            ta = ta.write(i, h)
        return ta.stack()

    with tf.GradientTape() as tape:
        stacked = array_loop(tf.constant(4))
        loss = tf.reduce_sum(stacked ** 2)
    return _out({"stacked": stacked, "short": array_loop(tf.constant(2)),
                 "d_w": tape.gradient(loss, w)})


# -- the functional API guide's multi-input, multi-output ticket classifier (shrunk) -------
def multi_io_functional(tf):
    """Title, body and tags inputs, one Embedding shared by title and body, Concatenate, a
    gated unit of keras.ops on the symbolic tensors, two named outputs with their own
    losses, loss_weights and metrics, fit on dicts, then evaluate (return_dict) and
    predict."""
    keras = tf.keras
    layers = keras.layers
    num_tags, num_words, num_departments = 5, 30, 3
    title_input = keras.Input(shape=(6,), name="title", dtype="int32")
    body_input = keras.Input(shape=(10,), name="body", dtype="int32")
    tags_input = keras.Input(shape=(num_tags,), name="tags")
    embed = layers.Embedding(num_words, 4)
    title_features = layers.GlobalAveragePooling1D()(embed(title_input))
    body_features = layers.GlobalMaxPooling1D()(embed(body_input))
    x = layers.Concatenate()([title_features, body_features, tags_input])
    x = layers.Dense(6, activation="relu")(x)
    x_lin, x_gate = keras.ops.split(x, 2, axis=-1)  # a gated linear unit, in keras.ops
    x = x_lin * keras.activations.sigmoid(x_gate) + keras.ops.mean(x, axis=-1, keepdims=True)
    priority_pred = layers.Dense(1, name="priority")(x)
    department_pred = layers.Dense(num_departments, name="department")(x)
    model = keras.Model(inputs=[title_input, body_input, tags_input],
                        outputs={"priority": priority_pred, "department": department_pred})
    fix_weights(model, seed=19)
    model.compile(
        optimizer=keras.optimizers.SGD(0.1, momentum=0.9),
        loss={"priority": keras.losses.BinaryCrossentropy(from_logits=True),
              "department": keras.losses.CategoricalCrossentropy(from_logits=True)},
        loss_weights={"priority": 1.0, "department": 0.2},
        metrics={"priority": [keras.metrics.BinaryAccuracy(threshold=0.0)],
                 "department": ["categorical_accuracy"]})
    rng = np.random.default_rng(20)
    title_data = rng.integers(0, num_words, size=(12, 6))
    body_data = rng.integers(0, num_words, size=(12, 10))
    tags_data = rng.integers(0, 2, size=(12, num_tags)).astype("float32")
    priority_targets = rng.integers(0, 2, size=(12, 1)).astype("float32")
    dept_targets = np.eye(num_departments, dtype="float32")[rng.integers(0, 3, size=12)]
    inputs = {"title": title_data, "body": body_data, "tags": tags_data}
    targets = {"priority": priority_targets, "department": dept_targets}
    h = model.fit(inputs, targets, epochs=2, batch_size=5, verbose=0, shuffle=False)
    ev = model.evaluate(inputs, targets, batch_size=6, verbose=0, return_dict=True)
    pred = model.predict(inputs, verbose=0)
    out = {f"h_{k}": np.array(v) for k, v in h.history.items()}
    out.update({f"ev_{k}": np.array(v) for k, v in ev.items()})
    out.update({"pred_priority": pred["priority"], "pred_department": pred["department"],
                "embedding": embed.embeddings})
    return _out(out)


# -- TensorFlow's "DeepDream" (shrunk): gradient ascent in a tf.function over tf.range -----
def deep_dream(tf):
    """The tutorial's calc_loss over two layers' activations, a DeepDream tf.Module whose
    tf.function (input_signature with unknown image size) loops over tf.range(steps),
    normalises the gradient by its standard deviation and clips the image, and the tiled
    variant's tf.roll shifts."""
    layers = tf.keras.layers
    inp = tf.keras.Input((None, None, 3))
    c1 = layers.Conv2D(4, 3, padding="same", activation="relu", name="mixed0")(inp)
    c2 = layers.Conv2D(3, 3, strides=2, padding="same", activation="relu", name="mixed1")(c1)
    dream_model = tf.keras.Model(inputs=inp, outputs=[c1, c2])
    fix_weights(dream_model, seed=21)

    def calc_loss(img, model):
        img_batch = tf.expand_dims(img, axis=0)
        layer_activations = model(img_batch)
        losses = []
        for act in layer_activations:
            loss = tf.math.reduce_mean(act)
            losses.append(loss)
        return tf.reduce_sum(losses)

    class DeepDream(tf.Module):
        def __init__(self, model):
            self.model = model

        @tf.function(input_signature=(tf.TensorSpec(shape=[None, None, 3], dtype=tf.float32),
                                      tf.TensorSpec(shape=[], dtype=tf.int32),
                                      tf.TensorSpec(shape=[], dtype=tf.float32)))
        def __call__(self, img, steps, step_size):
            loss = tf.constant(0.0)
            for _ in tf.range(steps):
                with tf.GradientTape() as tape:
                    tape.watch(img)
                    loss = calc_loss(img, self.model)
                gradients = tape.gradient(loss, img)
                gradients /= tf.math.reduce_std(gradients) + 1e-8
                img = img + gradients * step_size
                img = tf.clip_by_value(img, -1, 1)
            return loss, img

    deepdream = DeepDream(dream_model)
    rng = np.random.default_rng(22)
    img = tf.constant(rng.uniform(-1, 1, size=(6, 8, 3)).astype(np.float32))
    loss, dreamed = deepdream(img, tf.constant(3), tf.constant(0.05))
    loss2, dreamed2 = deepdream(img[:4, :6], tf.constant(2), tf.constant(0.1))
    rolled = tf.roll(tf.roll(img, shift=2, axis=0), shift=-3, axis=1)
    return _out({"loss": loss, "dreamed": dreamed, "loss2": loss2, "dreamed2": dreamed2,
                 "rolled": rolled})


# -- a physics-informed network for the heat equation (the usual PINN tutorial code) --------
def pinn_heat_equation(tf):
    """u(t, x) from a tanh MLP; u_t and u_xx by nested tapes watching t and x, the PDE
    residual plus initial and boundary losses, trained with Adam in a tf.function."""
    keras = tf.keras
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(6, activation="tanh"),
                              keras.layers.Dense(6, activation="tanh"), keras.layers.Dense(1)])
    fix_weights(model, seed=23, scale=0.5)
    rng = np.random.default_rng(24)
    t_col = tf.constant(rng.uniform(0, 1, size=(10, 1)).astype(np.float32))
    x_col = tf.constant(rng.uniform(-1, 1, size=(10, 1)).astype(np.float32))
    x_init = tf.constant(np.linspace(-1, 1, 5, dtype=np.float32)[:, None])
    u_init = -tf.sin(np.pi * x_init)
    alpha = 0.1
    optimizer = keras.optimizers.Adam(0.01)

    def residual(t, x):
        with tf.GradientTape(persistent=True) as tape2:
            tape2.watch([t, x])
            with tf.GradientTape(persistent=True) as tape1:
                tape1.watch([t, x])
                u = model(tf.concat([t, x], axis=1))
            u_t = tape1.gradient(u, t)
            u_x = tape1.gradient(u, x)
        u_xx = tape2.gradient(u_x, x)
        return u_t - alpha * u_xx, u_xx

    @tf.function
    def train_step():
        with tf.GradientTape() as tape:
            res, _ = residual(t_col, x_col)
            loss_pde = tf.reduce_mean(tf.square(res))
            u0 = model(tf.concat([tf.zeros_like(x_init), x_init], axis=1))
            loss_ic = tf.reduce_mean(tf.square(u0 - u_init))
            ub = model(tf.constant([[0.5, -1.0], [0.5, 1.0]]))
            loss = loss_pde + loss_ic + tf.reduce_mean(tf.square(ub))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    losses = [float(train_step()) for _ in range(4)]
    res, u_xx = residual(t_col, x_col)
    return _out({"losses": np.array(losses), "res": res, "u_xx": u_xx,
                 "kernel0": model.layers[0].kernel})


# -- custom Loss, Metric and Layer classes (the Keras guides' subclassing recipes) ----------
def custom_loss_metric_layer(tf):
    """A keras.losses.Loss subclass (focal loss), a keras.metrics.Metric subclass counting
    true positives with add_weight, a Layer subclass with build/add_weight/add_loss, used in
    compile and fit; the metric's state after evaluate."""
    keras = tf.keras

    class FocalLoss(keras.losses.Loss):
        def __init__(self, gamma=2.0, name="focal_loss"):
            super().__init__(name=name)
            self.gamma = gamma

        def call(self, y_true, y_pred):
            p = tf.sigmoid(y_pred)
            pt = y_true * p + (1 - y_true) * (1 - p)
            bce = tf.nn.sigmoid_cross_entropy_with_logits(labels=y_true, logits=y_pred)
            return tf.reduce_mean(tf.pow(1 - pt, self.gamma) * bce, axis=-1)

    class TruePositives(keras.metrics.Metric):
        def __init__(self, name="true_positives", **kwargs):
            super().__init__(name=name, **kwargs)
            self.true_positives = self.add_weight(shape=(), initializer="zeros", name="tp")

        def update_state(self, y_true, y_pred, sample_weight=None):
            y_pred = tf.cast(y_pred > 0, tf.float32)
            values = tf.cast(y_true, tf.float32) * y_pred
            self.true_positives.assign_add(tf.reduce_sum(values))

        def result(self):
            return self.true_positives

        def reset_state(self):
            self.true_positives.assign(0.0)

    class Linear(keras.layers.Layer):
        def __init__(self, units=32, **kwargs):
            super().__init__(**kwargs)
            self.units = units

        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], self.units),
                                     initializer="random_normal", trainable=True)
            self.b = self.add_weight(shape=(self.units,), initializer="zeros", trainable=True)

        def call(self, inputs):
            out = tf.matmul(inputs, self.w) + self.b
            self.add_loss(0.01 * tf.reduce_sum(tf.square(self.w)))
            return out

    model = keras.Sequential([keras.Input((4,)), Linear(5), keras.layers.Activation("relu"),
                              Linear(2)])
    fix_weights(model, seed=25)
    metric = TruePositives()
    model.compile(optimizer=keras.optimizers.Adam(0.02), loss=FocalLoss(gamma=1.5),
                  metrics=[metric])
    rng = np.random.default_rng(26)
    x = rng.normal(size=(12, 4)).astype(np.float32)
    y = (rng.uniform(size=(12, 2)) > 0.5).astype(np.float32)
    h = model.fit(x, y, batch_size=4, epochs=2, verbose=0, shuffle=False)
    ev = model.evaluate(x, y, batch_size=6, verbose=0)
    direct = FocalLoss()(y[:3], model(x[:3]))
    return _out({"loss": np.array(h.history["loss"]), "tp": np.array(h.history["true_positives"]),
                 "eval": np.array(ev), "direct": direct, "metric_state": metric.result(),
                 "n_losses": np.array(len(model.losses)), "w0": model.layers[0].w})


# -- "Working with RNNs": a custom cell in keras.layers.RNN, stacked cells, states ---------
def custom_rnn_cells(tf):
    """The guide's MinimalRNNCell in keras.layers.RNN (return_sequences), a stacked RNN of
    two cells with return_state, SimpleRNN with an initial_state and go_backwards, and one
    fit epoch of a model using the custom cell."""
    keras = tf.keras

    class MinimalRNNCell(keras.layers.Layer):
        def __init__(self, units, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.state_size = units

        def build(self, input_shape):
            self.kernel = self.add_weight(shape=(input_shape[-1], self.units),
                                          initializer="uniform", name="kernel")
            self.recurrent_kernel = self.add_weight(shape=(self.units, self.units),
                                                    initializer="uniform",
                                                    name="recurrent_kernel")

        def call(self, inputs, states):
            prev_output = states[0]
            h = tf.matmul(inputs, self.kernel)
            output = tf.tanh(h + tf.matmul(prev_output, self.recurrent_kernel))
            return output, [output]

    rng = np.random.default_rng(27)
    x = rng.normal(size=(4, 5, 3)).astype(np.float32)
    single = keras.layers.RNN(MinimalRNNCell(3), return_sequences=True)
    stacked = keras.layers.RNN([MinimalRNNCell(4), MinimalRNNCell(2)], return_state=True)
    simple = keras.layers.SimpleRNN(3, go_backwards=True, return_state=True)
    single(x)
    stacked(x)
    simple(x)
    for i, layer in enumerate((single, stacked, simple)):
        fix_weights(layer, seed=28 + i)
    seqs = single(x)
    last, state1, state2 = stacked(x)
    init = tf.constant(rng.normal(size=(4, 3)).astype(np.float32))
    with tf.GradientTape() as tape:
        out, final = simple(x, initial_state=[init])
        loss = tf.reduce_sum(out * final) + tf.reduce_sum(single(x) ** 2)
    grads = tape.gradient(loss, simple.trainable_weights + single.trainable_weights)
    model = keras.Sequential([keras.Input((5, 3)), keras.layers.RNN(MinimalRNNCell(4)),
                              keras.layers.Dense(1)])
    fix_weights(model, seed=31)
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    h = model.fit(x, np.sum(x, axis=(1, 2))[:, None], batch_size=2, epochs=1, verbose=0,
                  shuffle=False)
    return _out({"seqs": seqs, "last": last, "state1": state1, "state2": state2, "out": out,
                 "final": final, **{f"g{i}": g for i, g in enumerate(grads)},
                 "fit_loss": np.array(h.history["loss"]),
                 "fit_pred": model.predict(x, verbose=0)})


NAMES = ("saliency_and_fgsm", "subpixel_and_patches", "cnn_jacobians", "custom_train_step",
         "callbacks_history", "schedules_and_clipping", "conv_autoencoder_zoo",
         "custom_gradients", "hessian_vector_products", "graph_control_flow",
         "multi_io_functional", "deep_dream", "pinn_heat_equation",
         "custom_loss_metric_layer", "custom_rnn_cells")

# program -> why tapegrad differs (tests/test_real_programs_s14.py: strict xfails)
XFAIL = {"tensor_array_tensor_size": "tf.TensorArray(size=n) with n a symbolic tensor "
         "inside tf.function: tapegrad's staged TensorArray is a dense buffer of a size "
         "known when tracing"}
XFAIL_NAMES = tuple(XFAIL)


def run(tf, name):
    """Run the program ``name`` with the module ``tf``."""
    return globals()[name](tf)
