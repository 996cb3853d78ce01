"""F1Score, FBetaScore and R2Score (alone and in ``compile()``), the Ftrl and Adafactor
optimizers (20-step trajectories), ``tf.math.rint`` and ``tf.dtypes.saturate_cast``, against
the numbers Keras 3.15 and TensorFlow 2.21 computed (tests/data/keras_reference_scores.npz,
written by benchmarks/keras_reference_scores.py). TensorFlow is never imported here."""
import json
import pathlib
import warnings
from fractions import Fraction

import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras

DATA = np.load(pathlib.Path(__file__).parent / "data" / "keras_reference_scores.npz",
               allow_pickle=False)
MANIFEST = json.loads(str(DATA["manifest"]))


def _close(actual, expected, rtol=1e-6, atol=1e-6):
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("case", MANIFEST["metrics"], ids=lambda c: c["name"])
def test_metrics_match_keras(case):
    p = f"metric/{case['name']}"
    metric = getattr(keras.metrics, case["class"])(**case["config"])
    for batch in range(2):
        sw = DATA[f"{p}/sample_weight{batch}"] if case["weighted"] else None
        metric.update_state(DATA[f"{p}/y_true{batch}"], DATA[f"{p}/y_pred{batch}"],
                            sample_weight=sw)
        result = metric.result()
        assert result.dtype == tf.float32
        _close(result, DATA[f"{p}/result{batch}"], rtol=2e-6)
    assert [v.name for v in metric.variables] == case["variables"]
    assert json.loads(json.dumps(metric.get_config())) == case["get_config"]
    again = type(metric).from_config(metric.get_config())
    assert again.get_config() == metric.get_config()
    metric.reset_state()
    metric.update_state(DATA[f"{p}/y_true0"], DATA[f"{p}/y_pred0"],
                        sample_weight=DATA[f"{p}/sample_weight0"] if case["weighted"] else None)
    _close(metric.result(), DATA[f"{p}/result0"], rtol=2e-6)


def test_metric_results_compile_to_the_same_numbers():
    """A tf.function update and result equal the eager ones (the adjusted R2's fallback
    is a select there, not a Python branch)."""
    case = {c["name"]: c for c in MANIFEST["metrics"]}["r2_adjusted"]
    p = "metric/r2_adjusted"
    eager = keras.metrics.R2Score(**case["config"])
    traced = keras.metrics.R2Score(**case["config"])
    traced.update_state(DATA[f"{p}/y_true0"], DATA[f"{p}/y_pred0"])  # builds its state
    eager.update_state(DATA[f"{p}/y_true0"], DATA[f"{p}/y_pred0"])

    @tf.function
    def step(y_true, y_pred):
        traced.update_state(y_true, y_pred)
        return traced.result()

    eager.update_state(DATA[f"{p}/y_true1"], DATA[f"{p}/y_pred1"])
    np.testing.assert_array_equal(step(DATA[f"{p}/y_true1"], DATA[f"{p}/y_pred1"]),
                                  eager.result())
    _close(eager.result(), DATA[f"{p}/result1"], rtol=2e-6)


def test_metric_errors_and_names():
    with pytest.raises(ValueError, match="Invalid `average` argument value"):
        keras.metrics.F1Score(average="samples")
    with pytest.raises(ValueError, match="It should be a Python float"):
        keras.metrics.FBetaScore(beta=2)
    with pytest.raises(ValueError, match="It should be > 0"):
        keras.metrics.FBetaScore(beta=-1.0)
    with pytest.raises(ValueError, match="0 < threshold <= 1"):
        keras.metrics.F1Score(threshold=1.5)
    with pytest.raises(ValueError, match="`class_aggregation`"):
        keras.metrics.R2Score(class_aggregation="mean")
    with pytest.raises(ValueError, match="`num_regressors`"):
        keras.metrics.R2Score(num_regressors=-1)
    with pytest.raises(ValueError, match="expects 2D inputs"):
        keras.metrics.F1Score().update_state(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="expects 2D inputs"):
        keras.metrics.R2Score().update_state(np.ones((2, 2, 2)), np.ones((2, 2, 2)))
    assert keras.metrics.get("f1_score").name == "f1_score"
    assert keras.metrics.get("r2_score").name == "r2_score"
    assert keras.metrics.get("f_beta_score").name == "fbeta_score"
    assert type(keras.metrics.get("R2Score")) is keras.metrics.R2Score
    r2 = keras.metrics.R2Score(num_regressors=5)
    r2.update_state(np.ones((3, 1)), np.ones((3, 1)) * 0.5)
    with pytest.warns(UserWarning, match="More independent predictors"):
        r2.result()
    r2 = keras.metrics.R2Score(num_regressors=2)
    r2.update_state([[1.0], [2.0], [4.0]], [[1.5], [2.0], [3.0]])
    with pytest.warns(UserWarning, match="Division by zero"):
        r2.result()


@pytest.mark.parametrize("case", MANIFEST["compile"], ids=lambda c: c["name"])
def test_score_metrics_in_compile_match_keras(case):
    p = f"compile/{case['name']}"
    regression = case["name"] == "regression"
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(6, activation="tanh"),
                              keras.layers.Dense(2 if regression else 3,
                                                 activation=None if regression else "softmax")])
    model.set_weights([DATA[f"{p}/init{i}"] for i in range(4)])
    metrics = (["r2_score", keras.metrics.R2Score(name="r2")] if regression else
               [keras.metrics.F1Score(average="macro"), "f1_score"])
    model.compile(optimizer=keras.optimizers.SGD(0.1),
                  loss="mse" if regression else "categorical_crossentropy", metrics=metrics)
    x, y = DATA[f"{p}/x"], DATA[f"{p}/y"]
    hist = model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    assert sorted(hist.history) == case["history"]
    for k in case["history"]:
        _close(hist.history[k], DATA[f"{p}/history/{k}"], rtol=1e-5, atol=1e-6)
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    assert sorted(logs) == case["evaluate"]
    for k in case["evaluate"]:
        _close(logs[k], DATA[f"{p}/evaluate/{k}"], rtol=1e-5, atol=1e-6)


def _optimizer(case):
    config = dict(case["config"])
    schedule = config.pop("schedule", None)
    if schedule:
        config["learning_rate"] = getattr(keras.optimizers.schedules, schedule[0])(
            **schedule[1])
    return getattr(keras.optimizers, case["class"])(**config)


def _trajectory(case, make_step=None):
    p = f"optimizer/{case['name']}"
    n = len([k for k in DATA.files if k.startswith(f"{p}/start")])
    opt = _optimizer(case)
    variables = [tf.Variable(DATA[f"{p}/start{i}"]) for i in range(n)]
    targets = [DATA[f"{p}/target{i}"] for i in range(n)]
    noise = [DATA[f"{p}/noise{i}"] for i in range(n)]
    apply = make_step(opt) if make_step else (
        lambda grads, vs: opt.apply_gradients(zip(grads, vs)))
    out = []
    for t in range(case["steps"]):
        grads = [tf.constant(2.0 * (v.numpy() - tg) + nz[t])
                 for v, tg, nz in zip(variables, targets, noise)]
        apply(grads, variables)
        out.append([v.numpy() for v in variables])
    return opt, out


@pytest.mark.parametrize("case", MANIFEST["optimizers"], ids=lambda c: c["name"])
def test_optimizer_trajectories_match_keras(case):
    """20 steps on a vector, a matrix, a rank-3 tensor and a scalar (Adafactor factors the
    last two axes of the rank >= 2 ones), eager, as Keras 3.15 takes them."""
    p = f"optimizer/{case['name']}"
    opt, steps = _trajectory(case)
    for t, values in enumerate(steps):
        for i, v in enumerate(values):
            _close(v, DATA[f"{p}/step{t}/var{i}"], rtol=2e-5, atol=2e-6)
    shapes = [[list(v.shape), v.dtype.name] for v in opt.variables]
    assert shapes == sorted(shapes, key=lambda s: 0) and len(shapes) == len(case["variables"])
    if case["class"] == "Adafactor":  # Keras's order: each variable's r, c and velocity
        assert shapes == [[s, d] for _, s, d in case["variables"]]
    else:  # tapegrad's: slots by kind (README: Keras orders them by variable)
        assert sorted(map(str, shapes)) == sorted(str([s, d]) for _, s, d in case["variables"])
    config = opt.get_config()
    for k, v in case["get_config"].items():
        if k != "name":
            assert config[k] == pytest.approx(v), k
    again = type(opt).from_config(config)
    assert again.get_config() == config


@pytest.mark.parametrize("name", ["ftrl_regularized", "adafactor_options"])
def test_optimizer_steps_compile_to_the_same_numbers(name):
    """A tf.function step (the tensor rule) equals the eager one (the array rule)."""
    case = {c["name"]: c for c in MANIFEST["optimizers"]}[name]

    def make_step(opt):
        @tf.function
        def step(grads, vs):
            opt.apply_gradients(zip(grads, vs))
        return step

    _, eager = _trajectory(case)
    _, compiled = _trajectory(case, make_step)
    for a, b in zip(eager, compiled):
        for u, v in zip(a, b):
            np.testing.assert_allclose(u, v, rtol=1e-6, atol=1e-7)


def test_optimizer_errors_and_names():
    for kw in ("initial_accumulator_value", "l1_regularization_strength",
               "l2_regularization_strength", "l2_shrinkage_regularization_strength"):
        with pytest.raises(ValueError, match=f"`{kw}` needs to be positive or zero"):
            keras.optimizers.Ftrl(**{kw: -0.1})
    with pytest.raises(ValueError, match="`learning_rate_power` needs to be negative"):
        keras.optimizers.Ftrl(learning_rate_power=0.5)
    assert type(keras.optimizers.get("ftrl")) is keras.optimizers.Ftrl
    assert type(keras.optimizers.get("Adafactor")) is keras.optimizers.Adafactor


def test_fit_with_ftrl_and_adafactor_saves_and_loads(tmp_path):
    x = np.random.default_rng(0).normal(size=(16, 3)).astype("float32")
    y = x @ np.array([[1.0], [-2.0], [0.5]], "float32")
    for opt in (keras.optimizers.Ftrl(0.1), keras.optimizers.Adafactor(0.1)):
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4),
                                  keras.layers.Dense(1)])
        model.compile(optimizer=opt, loss="mse")
        hist = model.fit(x, y, batch_size=4, epochs=3, verbose=0)
        assert hist.history["loss"][-1] < hist.history["loss"][0]
        model.save(tmp_path / "m.keras")
        loaded = keras.models.load_model(tmp_path / "m.keras")
        assert type(loaded.optimizer) is type(opt)
        np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
        for a, b in zip(loaded.optimizer.variables, model.optimizer.variables):
            np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rint_matches_tensorflow(dtype):
    x = DATA[f"rint/{dtype}/x"]
    y = tf.math.rint(x)
    assert y.dtype == dtype
    np.testing.assert_array_equal(y, DATA[f"rint/{dtype}/y"])
    assert np.array_equal(np.signbit(y), np.signbit(DATA[f"rint/{dtype}/y"]))  # -0.0
    v = tf.Variable(x[:4])
    with tf.GradientTape() as tape:
        out = tf.reduce_sum(tf.math.rint(v) * 3.0)
    assert tape.gradient(out, v) is None  # TensorFlow registers no gradient
    with pytest.raises(tf.errors.NotFoundError, match="Rint"):  # (TensorFlow: no half kernel)
        tf.math.rint(np.array([2.5, -0.5], "float16"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="not in the list of allowed"):
        tf.math.rint([1, 2])


def _closer(y, expected, x):
    """Where our result is strictly nearer the input than TensorFlow's, exactly: there
    TensorFlow 2.21's own clamp limit overflowed (README, "Differences": its int64 max ->
    float32 is -9.2e18, its int64 -> int64 maps every value to -2**63)."""
    out = []
    for a, b, v in zip(y.tolist(), expected.tolist(), x.tolist()):
        if v != v or a == b:
            out.append(False)
        elif v in (float("inf"), float("-inf")):
            out.append((a - b) * (1 if v > 0 else -1) > 0)
        else:
            out.append(abs(Fraction(a) - Fraction(v)) < abs(Fraction(b) - Fraction(v)))
    return np.array(out, bool)


@pytest.mark.parametrize("case", MANIFEST["saturate"], ids=lambda c: c["src"])
def test_saturate_cast_matches_tensorflow(case):
    """Bits equal TensorFlow's, but where TensorFlow's limit overflows (ours is then in
    range and nearer the input) and for NaN to an integer (tf.cast's own, undefined in
    C++: TensorFlow gives -128 for int8 on x86, tapegrad's cast 0)."""
    src = case["src"]
    x = DATA[f"saturate/{src}/x"]
    for dst in case["outs"]:
        expected = DATA[f"saturate/{src}/{dst}"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # NaN cast to an integer
            y = tf.dtypes.saturate_cast(x, dst).numpy()
        assert y.dtype == dst
        skip = _closer(y, expected, x) | (np.isnan(x) if dst[0] in "iu" else False)
        np.testing.assert_array_equal(y[~skip], expected[~skip], err_msg=f"{src} -> {dst}")
        if dst[0] in "iu":
            info = np.iinfo(dst)
            assert all(info.min <= v <= info.max for v in y.tolist())


def test_saturate_cast_gradient_and_complex():
    x = tf.Variable(DATA["saturate_grad/x"])
    with tf.GradientTape() as tape:
        y = tf.dtypes.saturate_cast(x, tf.float16)
    _close(tape.gradient(y, x), DATA["saturate_grad/float16"])
    z = tf.saturate_cast(np.array([1e39 + 1e39j, 3 - 4j]), tf.complex64)
    assert z.dtype == tf.complex64
    np.testing.assert_array_equal(z.numpy(), np.array(
        [np.finfo("float32").max * (1 + 1j), 3 - 4j], "complex64"))
    assert tf.saturate_cast(np.array([300.5 - 2j]), tf.uint8).numpy().tolist() == [255]
    with pytest.raises(TypeError, match="Cannot find minimum value of bool"):
        tf.saturate_cast([True], tf.int32)
