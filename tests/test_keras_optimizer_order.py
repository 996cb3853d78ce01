"""An optimizer's variables in Keras 3's order and with Keras's names, so that a list taken
from Keras (``get_weights`` / ``set_weights``, a saved file) puts every slot on its own
variable. Reference: tests/data/keras_optimizer_reference.{json,npz}, written by Keras 3.15
(benchmarks/keras_optimizer_reference.py) for two Dense layers of the same shapes, where a
slot on the wrong variable has the right shape and only its values tell.

Files that tapegrad wrote before session 9 (slots kind by kind) are kept in
tests/data/keras_files/old_optimizer_order_*.keras (tests/data/make_old_optimizer_files.py,
run with the old code): they load with each slot on its own variable.
"""
import json
import pathlib
import warnings

import numpy as np
import pytest

from tapegrad import keras
from tapegrad.keras.layers.base import variable_path

DATA = pathlib.Path(__file__).parent / "data"
META = json.loads((DATA / "keras_optimizer_reference.json").read_text())
REF = np.load(DATA / "keras_optimizer_reference.npz", allow_pickle=False)
CASES = sorted(META["cases"])
FILES = DATA / "keras_files"


def _model():
    """The reference's model, with Keras's initial weights."""
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(3, name="first"),
                              keras.layers.Dense(3, name="second")])
    kernels, biases = REF["initial_weights"], REF["initial_biases"]
    for k, v in enumerate(model.trainable_variables):
        v.assign((kernels if len(v.shape) == 2 else biases)[k // 2])
    return model


def _gradients(step):
    return [REF[f"gradient/{step}/{k}"] for k in range(4)]


def _optimizer(case, model):
    c = META["cases"][case]
    opt = getattr(keras.optimizers, c["class"])(**c["kwargs"])
    opt.build(model.trainable_variables)
    return opt


def _kind(name, model_paths):
    """Keras's slot name ``<model variable path with _>_<kind>``: (variable index, kind)."""
    for i, p in enumerate(model_paths):
        prefix = p.replace("/", "_") + "_"
        if name.startswith(prefix):
            return i, name[len(prefix):]
    return None, name


@pytest.mark.parametrize("case", CASES)
def test_variables_in_keras_order_with_keras_names(case):
    c = META["cases"][case]
    model = _model()
    opt = _optimizer(case, model)
    ref = c["variables"]
    mine_paths = [variable_path(v) for v in model.trainable_variables]
    assert len(opt.variables) == len(ref), [v.name for v in opt.variables]
    for v, r in zip(opt.variables, ref):
        assert list(v.shape) == r["shape"] and v.dtype.name == r["dtype"], (v.name, r)
        k, kind = _kind(r["name"], c["model_variables"])
        if k is None:  # iteration, learning_rate, Nadam's product, Adafactor's factors
            assert v.name == r["name"]
            want = r["path"].replace(c["optimizer_name"], opt.name, 1)
            assert variable_path(v) == want, (v.name, r)
        else:  # Keras's model paths hold the model's name, tapegrad's do not
            assert v.name == f"{mine_paths[k].replace('/', '_')}_{kind}", (v.name, r)
            assert variable_path(v) == f"{opt.name}/{v.name}"


def _close(got, want, what):
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5, atol=2e-6, err_msg=what)


@pytest.mark.parametrize("case", CASES)
def test_two_steps_give_keras_state_and_its_list_continues_as_keras(case):
    model = _model()
    opt = _optimizer(case, model)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for s in range(2):
            opt.apply_gradients(zip(_gradients(s), model.trainable_variables))
    for k, v in enumerate(opt.variables):
        _close(v.numpy(), REF[f"{case}/after2/{k}"], f"{case}: variable {k} ({v.name})")
    # Keras's list, set on a fresh optimizer: the third step is Keras's third step
    model = _model()
    for k, v in enumerate(model.trainable_variables):
        v.assign(REF[f"{case}/model2/{k}"])
    opt = _optimizer(case, model)
    opt.set_weights([REF[f"{case}/after2/{k}"] for k in range(len(opt.variables))])
    opt.apply_gradients(zip(_gradients(2), model.trainable_variables))
    for k, v in enumerate(model.trainable_variables):
        _close(v.numpy(), REF[f"{case}/model3/{k}"], f"{case}: model variable {k}")
    for k, v in enumerate(opt.variables):
        _close(v.numpy(), REF[f"{case}/after3/{k}"], f"{case}: variable {k} ({v.name})")


def test_add_optimizer_variables_interleaves_and_takes_an_initializer_per_name():
    model = _model()
    opt = keras.optimizers.SGD()
    m, a = opt.add_optimizer_variables(model.trainable_variables[:2], ["m", "a"],
                                       ["zeros", "ones"])
    # Keras 3 names them after the weight's path, 'sequential/first/kernel'
    assert [v.name for v in opt.variables[2:]] == [
        f"{model.name}_{n}" for n in ("first_kernel_m", "first_kernel_a", "first_bias_m",
                                      "first_bias_a")]
    assert all((v.numpy() == 0).all() for v in m) and all((v.numpy() == 1).all() for v in a)
    only = opt.add_optimizer_variables(model.trainable_variables[2:3], "z")
    assert isinstance(only, list) and only[0].name == f"{model.name}_second_kernel_z"
    with pytest.raises(ValueError, match="number of provided names"):
        opt.add_optimizer_variables(model.trainable_variables, ["x", "y"], ["zeros"])


@pytest.mark.parametrize("name", ["adam", "rmsprop", "nadam"])
def test_files_from_before_session_9_load_each_slot_on_its_variable(name):
    old = np.load(FILES / f"old_optimizer_order_{name}.npz", allow_pickle=False)
    model = keras.models.load_model(FILES / f"old_optimizer_order_{name}.keras")
    by_name = {v.name: v for v in model.optimizer.variables}
    n = len(model.optimizer.variables)
    assert n == len([k for k in old.files if k.startswith("opt/")])
    renamed = {"u_product": "variable"}  # Nadam's product: Keras's name since session 9
    for k in range(n):
        saved = str(old[f"opt_name/{k}"])
        v = by_name[renamed.get(saved, saved)]
        np.testing.assert_array_equal(v.numpy(), old[f"opt/{k}"], err_msg=saved)
    np.testing.assert_array_equal(model.predict(old["x"], verbose=0), old["after"])
    # the old code's next epoch, from the restored state
    model.fit(old["x"], old["y"], epochs=1, batch_size=4, shuffle=False, verbose=0)
    np.testing.assert_allclose(
        np.concatenate([v.numpy().ravel() for v in model.trainable_variables]),
        np.load(FILES / f"old_optimizer_order_{name}_next.npy"), rtol=1e-6, atol=1e-7)


def test_files_written_now_keep_the_keras_order(tmp_path):
    old = np.load(FILES / "old_optimizer_order_adam.npz", allow_pickle=False)
    model = keras.models.load_model(FILES / "old_optimizer_order_adam.keras")
    model.save(tmp_path / "again.keras")
    again = keras.models.load_model(tmp_path / "again.keras")
    for a, b in zip(model.optimizer.variables, again.optimizer.variables):
        assert a.name == b.name
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    model.fit(old["x"], old["y"], epochs=1, batch_size=4, shuffle=False, verbose=0)
    again.fit(old["x"], old["y"], epochs=1, batch_size=4, shuffle=False, verbose=0)
    for a, b in zip(model.trainable_variables, again.trainable_variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
