"""Same numbers as Keras 3, for the cases of tests/data/keras_reference_extra.npz (written
by real Keras with the TensorFlow backend, see benchmarks/keras_reference_extra.py):
channels-first and grouped image layers, ``fit`` with ``class_weight`` / ``sample_weight``,
and masked models (``Embedding(mask_zero=True)``, ``Masking``, merges, pooling, losses and
metrics).
TensorFlow is never imported here."""
import json
import pathlib

import numpy as np
import pytest

from tapegrad import keras

DATA = np.load(pathlib.Path(__file__).parent / "data" / "keras_reference_extra.npz",
               allow_pickle=False)
MANIFEST = json.loads(str(DATA["manifest"]))


def _close(actual, expected, rtol=2e-6, atol=2e-6):
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("case", MANIFEST["layers"], ids=lambda c: c["name"])
def test_layer_outputs_match_keras(case):
    name = case["name"]
    layer = getattr(keras.layers, case["class"])(**case["config"])
    x = DATA[f"layer/{name}/input0"]
    layer(x)
    assert [w.name for w in layer.weights] == case["weight_names"]
    layer.set_weights([DATA[f"layer/{name}/weight{i}"] for i in range(case["weights"])])
    out = layer(x, **case["kwargs"])
    _close(out, DATA[f"layer/{name}/output"], rtol=1e-5, atol=1e-5)
    for i, w in enumerate(layer.weights):
        _close(w, DATA[f"layer/{name}/after{i}"])
    # the symbolic call (a functional model) gives the same shape
    symbolic = layer(keras.Input(batch_shape=x.shape))
    assert tuple(symbolic.shape) == tuple(out.shape)


@pytest.mark.parametrize("case", MANIFEST["fits"], ids=lambda c: c["name"])
def test_fit_with_weights_matches_keras(case):
    p = f"fit/{case['name']}"
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(5, activation="tanh"),
                              keras.layers.Dense(3, activation="softmax")])
    model.set_weights([DATA[f"{p}/init{i}"] for i in range(4)])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss=case["loss"],
                  metrics=["accuracy"], weighted_metrics=["accuracy"])
    fit_kwargs = dict(case["fit"])
    if "sample_weight" in fit_kwargs:
        fit_kwargs["sample_weight"] = np.asarray(fit_kwargs["sample_weight"], "float32")
    if "class_weight" in fit_kwargs:  # JSON made the keys strings; Keras's are ints
        fit_kwargs["class_weight"] = {int(k): v for k, v in fit_kwargs["class_weight"].items()}
    hist = model.fit(DATA[f"{p}/x"], DATA[f"{p}/y"], batch_size=4, epochs=2, shuffle=False,
                     verbose=0, **fit_kwargs)
    _close(hist.history["loss"], DATA[f"{p}/loss"], rtol=1e-5)
    _close(hist.history["accuracy"], DATA[f"{p}/accuracy"], rtol=1e-5)
    _close(hist.history["weighted_accuracy"], DATA[f"{p}/weighted_accuracy"], rtol=1e-5)
    for i, w in enumerate(model.get_weights()):
        _close(w, DATA[f"{p}/final{i}"], rtol=1e-5, atol=1e-6)
    ekw = {k: np.asarray(v, "float32") for k, v in case["evaluate"].items()}
    logs = model.evaluate(DATA[f"{p}/x"], DATA[f"{p}/y"], verbose=0, return_dict=True, **ekw)
    assert sorted(logs) == ["accuracy", "loss", "weighted_accuracy"]
    _close([logs[k] for k in sorted(logs)], DATA[f"{p}/evaluate"], rtol=1e-5)


def _graph(case):
    """The functional model of a masked case (as benchmarks/keras_reference_extra.py's
    build_graph makes it with Keras)."""
    made = {name: keras.Input(tuple(shape), dtype=dtype, name=name)
            for name, shape, dtype in case["inputs"]}
    for name, cls, config, args in case["nodes"]:
        arg = [made[a] for a in args]
        made[name] = getattr(keras.layers, cls)(name=name, **config)(
            arg if len(arg) > 1 else arg[0])
    return keras.Model(made[case["inputs"][0][0]], made[case["output"]])


@pytest.mark.parametrize("case", MANIFEST["masked"], ids=lambda c: c["name"])
def test_masked_models_match_keras(case):
    """Masks from Embedding(mask_zero=True) and Masking flow through Dense, merges and
    pooling into the loss and the metrics: predict, evaluate and fit as in Keras."""
    p = f"masked/{case['name']}"
    model = _graph(case)
    model.set_weights([DATA[f"{p}/init{i}"] for i in range(len(model.weights))])
    model.compile(optimizer=keras.optimizers.SGD(0.3), loss=case["loss"],
                  metrics=case["metrics"])
    x, y = DATA[f"{p}/x"], DATA[f"{p}/y"]
    _close(model.predict(x, verbose=0), DATA[f"{p}/predict"], rtol=1e-5, atol=1e-6)
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    assert sorted(logs) == case["logs"]
    _close([logs[k] for k in sorted(logs)], DATA[f"{p}/evaluate"], rtol=1e-5)
    hist = model.fit(x, y, batch_size=3, epochs=2, shuffle=False, verbose=0)
    _close([hist.history[k] for k in case["history"]], DATA[f"{p}/history"], rtol=1e-5)
    for i, w in enumerate(model.get_weights()):
        _close(w, DATA[f"{p}/final{i}"], rtol=1e-5, atol=1e-6)


def test_two_output_model_matches_keras():
    """Losses, loss weights and metrics given per output (dicts and lists of lists), with
    sample weights: each output's loss and metrics are logged under its name."""
    p = "multi_output"
    inp = keras.Input((4,), name="features")
    h = keras.layers.Dense(6, activation="tanh", name="trunk")(inp)
    model = keras.Model(inp, [keras.layers.Dense(2, name="reg")(h),
                              keras.layers.Dense(3, activation="softmax", name="cls")(h)])
    model.set_weights([DATA[f"{p}/init{i}"] for i in range(6)])
    # run_eagerly, as the reference ran: compiled, each output's logged loss counts each
    # batch once (test_real_programs_s14.py's per-output test)
    model.compile(optimizer=keras.optimizers.SGD(0.2),
                  loss={"reg": "mse", "cls": "sparse_categorical_crossentropy"},
                  loss_weights={"reg": 0.5, "cls": 2.0},
                  metrics={"reg": ["mae"], "cls": ["accuracy"]},
                  weighted_metrics=[[], ["accuracy"]], run_eagerly=True)
    x, ys = DATA[f"{p}/x"], [DATA[f"{p}/y0"], DATA[f"{p}/y1"]]
    hist = model.fit(x, ys, sample_weight=DATA[f"{p}/sample_weight"], batch_size=4,
                     epochs=2, shuffle=False, verbose=0)
    assert sorted(hist.history) == MANIFEST["multi_output"]["history"]
    _close([hist.history[k] for k in sorted(hist.history)], DATA[f"{p}/history"], rtol=1e-5)
    for i, w in enumerate(model.get_weights()):
        _close(w, DATA[f"{p}/final{i}"], rtol=1e-5, atol=1e-6)
    logs = model.evaluate(x, ys, verbose=0, return_dict=True)
    assert sorted(logs) == MANIFEST["multi_output"]["logs"]
    _close([logs[k] for k in sorted(logs)], DATA[f"{p}/evaluate"], rtol=1e-5)
    with pytest.raises(ValueError, match="Invalid `metrics`"):
        model.compile(loss=["mse", "sparse_categorical_crossentropy"], metrics=["mae"])
        model.evaluate(x, ys, verbose=0)
