"""tf.train.Checkpoint and CheckpointManager: the TensorFlow guide's training-checkpoints
workflow, objects holding Variables found by walking their attributes, and bad files."""
import gc
import json
import os
import warnings
import zipfile

import numpy as np
import pytest

import tapegrad as tf


class Dense:
    def __init__(self, n_in, n_out, seed):
        rng = np.random.default_rng(seed)
        self.kernel = tf.Variable(rng.normal(size=(n_in, n_out)).astype(np.float32))
        self.bias = tf.Variable(tf.zeros([n_out]))

    def __call__(self, x):
        return x @ self.kernel + self.bias


class Net:
    def __init__(self, seed=0):
        self.layers = [Dense(3, 4, seed), Dense(4, 1, seed + 1)]
        self._scale = tf.Variable(1.0)  # private attributes are walked too

    def __call__(self, x):
        for layer in self.layers:
            x = tf.tanh(layer(x))
        return x * self._scale

    @property
    def variables(self):
        return [v for layer in self.layers for v in (layer.kernel, layer.bias)] + [self._scale]


class Momentum:
    """An optimizer keeping its state in Variables, created on the first step."""

    def __init__(self, lr=0.1):
        self.lr, self.iterations, self._slots = lr, tf.Variable(0, dtype=tf.int64), []

    def apply_gradients(self, pairs):
        pairs = list(pairs)
        if not self._slots:
            self._slots = [tf.Variable(tf.zeros_like(v)) for _, v in pairs]
        for (g, v), m in zip(pairs, self._slots):
            m.assign(0.9 * m + g)
            v.assign_sub(self.lr * m)
        self.iterations.assign_add(1)


def _train(net, opt, steps):
    x = tf.constant(np.random.default_rng(5).normal(size=(8, 3)).astype(np.float32))
    for _ in range(steps):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(net(x) ** 2)
        opt.apply_gradients(zip(tape.gradient(loss, net.variables), net.variables))
    return float(loss)


def test_training_checkpoints_guide_workflow(tmp_path):
    net, opt = Net(0), Momentum()
    ckpt = tf.train.Checkpoint(step=tf.Variable(1), optimizer=opt, net=net)
    manager = tf.train.CheckpointManager(ckpt, tmp_path / "tf_ckpts", max_to_keep=3)
    assert ckpt.restore(manager.latest_checkpoint) is not None  # nothing yet: a no-op
    for _ in range(5):
        _train(net, opt, 2)
        ckpt.step.assign_add(1)
        manager.save()
    assert [os.path.basename(p) for p in manager.checkpoints] == ["ckpt-3", "ckpt-4", "ckpt-5"]
    assert not os.path.exists(str(tmp_path / "tf_ckpts" / "ckpt-1") + ".index")
    assert tf.train.latest_checkpoint(tmp_path / "tf_ckpts") == manager.latest_checkpoint
    want = {id(v): v.numpy() for v in net.variables + opt._slots + [opt.iterations]}
    # a fresh program: the same classes, other initial values; built, then restored
    net2, opt2 = Net(7), Momentum()
    _train(net2, opt2, 1)
    ckpt2 = tf.train.Checkpoint(step=tf.Variable(1), optimizer=opt2, net=net2)
    manager2 = tf.train.CheckpointManager(ckpt2, tmp_path / "tf_ckpts", max_to_keep=3)
    ckpt2.restore(manager2.latest_checkpoint).assert_consumed()
    for a, b in zip(net.variables + opt._slots + [opt.iterations],
                    net2.variables + opt2._slots + [opt2.iterations]):
        np.testing.assert_array_equal(b.numpy(), want[id(a)])
    assert int(ckpt2.step) == 6 and int(opt2.iterations) == 10
    # training continues identically from the restored state
    assert _train(net, opt, 3) == _train(net2, opt2, 3)
    assert os.path.basename(manager2.save()) == "ckpt-6"  # the save counter was restored


def test_save_write_read_and_dtypes(tmp_path):
    v64 = tf.Variable([np.array([1.0, 2.0]), np.array([3.0, 4.0])])
    n = tf.Variable(7)
    ckpt = tf.train.Checkpoint(a=v64, nested={"n": n, "pair": (tf.Variable([True]),)})
    path = ckpt.write(str(tmp_path / "w"))
    assert os.path.exists(path + ".index") and os.path.exists(path + ".data-00000-of-00001")
    v64.assign(tf.zeros([2, 2], tf.float64))
    n.assign(0)
    ckpt.read(path).assert_consumed()
    assert v64.dtype == tf.float64 and v64.numpy().tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert int(n) == 7
    names = dict(tf.train.list_variables(path))
    assert names["nested/n/.ATTRIBUTES/VARIABLE_VALUE"] == []
    assert tf.train.load_variable(path, "a").tolist() == [[1.0, 2.0], [3.0, 4.0]]
    p1 = ckpt.save(str(tmp_path / "s" / "ckpt"))
    p2 = ckpt.save(str(tmp_path / "s" / "ckpt"))
    assert p1.endswith("ckpt-1") and p2.endswith("ckpt-2")
    assert tf.train.latest_checkpoint(str(tmp_path / "s")) == os.path.abspath(p2)
    state = (tmp_path / "s" / "checkpoint").read_text()
    assert 'model_checkpoint_path: "ckpt-2"' in state


def test_shared_variables_are_saved_once(tmp_path):
    shared = tf.Variable([1.0])

    class Holder:
        def __init__(self):
            self.a, self.b = shared, [shared]
    ckpt = tf.train.Checkpoint(h=Holder())
    path = ckpt.write(str(tmp_path / "x"))
    assert [n for n, _ in tf.train.list_variables(path)] == ["h/a/.ATTRIBUTES/VARIABLE_VALUE"]


def test_restore_mismatches(tmp_path):
    ckpt = tf.train.Checkpoint(v=tf.Variable([1.0, 2.0]), w=tf.Variable(3.0))
    path = ckpt.write(str(tmp_path / "m"))
    with pytest.raises(ValueError, match=r"Received incompatible tensor with shape \(2,\) when "
                       r"attempting to restore variable with shape \(3,\)"):
        tf.train.Checkpoint(v=tf.Variable([0.0, 0.0, 0.0])).restore(path)
    with pytest.raises(TypeError, match="holds float32"):
        tf.train.Checkpoint(v=tf.Variable([0, 0])).restore(path)
    partial = tf.train.Checkpoint(v=tf.Variable([0.0, 0.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        status = partial.restore(path).expect_partial()  # no warning once partial is expected
    with pytest.raises(AssertionError, match="saved but not restored"):
        status.assert_consumed()
    status.assert_existing_objects_matched()
    with pytest.warns(UserWarning, match="were not restored"):
        partial.restore(path)  # 'w' waits for a Variable that never comes
        del partial, status
        gc.collect()
    extra = tf.train.Checkpoint(v=tf.Variable([0.0, 0.0]), z=tf.Variable(1.0))
    with pytest.raises(AssertionError, match="without a saved value"):
        extra.restore(path).expect_partial().assert_existing_objects_matched()


def test_bad_arguments_and_files(tmp_path):
    with pytest.raises(ValueError, match="was expecting a trackable object"):
        tf.train.Checkpoint(x=1)
    with pytest.raises(ValueError, match="was expecting a trackable object"):
        tf.train.Checkpoint(x=tf.constant(1.0))
    with pytest.raises(FileNotFoundError, match="Failed to find any matching files"):
        tf.train.Checkpoint(v=tf.Variable(1.0)).restore(str(tmp_path / "nothing"))
    with pytest.raises(ValueError, match="max_to_keep"):
        tf.train.CheckpointManager(tf.train.Checkpoint(), str(tmp_path), max_to_keep=0)
    ckpt = tf.train.Checkpoint(v=tf.Variable([1.0, 2.0]))
    path = ckpt.write(str(tmp_path / "b"))
    index = json.loads(open(path + ".index").read())
    index["values"][0]["shape"] = [3]
    open(path + ".index", "w").write(json.dumps(index))
    with pytest.raises(ValueError, match="does not match its declared shape"):
        ckpt.restore(path)
    index["format"] = "other"
    open(path + ".index", "w").write(json.dumps(index))
    with pytest.raises(ValueError, match="not a tapegrad checkpoint"):
        ckpt.restore(path)
    # a data file holding a pickled object array is refused, never unpickled
    path = ckpt.write(str(tmp_path / "p"))
    with zipfile.ZipFile(path + ".data-00000-of-00001", "w") as z:
        import io
        buf = io.BytesIO()
        np.save(buf, np.array([{"x": 1}], dtype=object), allow_pickle=True)
        z.writestr("v0.npy", buf.getvalue())
    with pytest.raises(ValueError):
        ckpt.restore(path)


def test_save_options_are_accepted(tmp_path):
    opts = tf.saved_model.SaveOptions(namespace_whitelist=["Custom"], save_debug_info=True)
    assert opts.namespace_whitelist == ["Custom"] and "save_debug_info=True" in repr(opts)
    f = tf.function(lambda x: x * 2.0)
    path = str(tmp_path / "f.tgz")
    tf.saved_model.save(f.get_concrete_function(tf.zeros([2])), path, options=opts)
    assert tf.saved_model.load(path)(tf.constant([1.0, 2.0])).numpy().tolist() == [2.0, 4.0]
    with pytest.raises(TypeError, match="SaveOptions"):
        tf.saved_model.save(f.get_concrete_function(tf.zeros([2])), path, options={"a": 1})
    with pytest.raises(TypeError, match="namespace_whitelist"):
        tf.saved_model.SaveOptions(namespace_whitelist="Custom")


def test_keras_model_and_optimizer_restore_without_special_code(tmp_path):
    x = np.random.default_rng(0).normal(size=(16, 3)).astype(np.float32)

    def make():
        model = tf.keras.Sequential([tf.keras.Input((3,)),
                                     tf.keras.layers.Dense(4, activation="tanh"),
                                     tf.keras.layers.Dense(1)])
        return model, tf.keras.optimizers.Adam(0.01)

    def train(model, opt, steps):
        for _ in range(steps):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((model(x) - x[:, :1]) ** 2)
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
        return float(loss)

    model, opt = make()
    train(model, opt, 3)
    path = tf.train.Checkpoint(model=model, optimizer=opt).save(str(tmp_path / "ckpt"))
    model2, opt2 = make()
    ckpt2 = tf.train.Checkpoint(model=model2, optimizer=opt2)
    status = ckpt2.restore(path)  # Adam's slots do not exist yet: restored when created
    with pytest.raises(AssertionError, match="saved but not restored"):
        status.assert_consumed()
    opt2.build(model2.trainable_variables)
    status.assert_consumed()
    for a, b in zip(model.variables, model2.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert train(model, opt, 3) == train(model2, opt2, 3)  # Adam's moments came back too


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "function"])
def test_deferred_restore_of_a_model_built_later(tmp_path, compiled):
    """TensorFlow's deferred restoration: restore first, then build the model (on its first
    call, eagerly or inside tf.function) and take the first optimizer step."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(8, 3)).astype(np.float32)

    def make():
        model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu"),
                                     tf.keras.layers.Dense(2)])  # no Input: built later
        return model, tf.keras.optimizers.SGD(0.1, momentum=0.9)

    def step(model, opt):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(x) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    model, opt = make()
    for _ in range(2):
        step(model, opt)
    path = tf.train.Checkpoint(model=model, opt=opt).save(str(tmp_path / "c"))
    expected = float(step(model, opt))
    model2, opt2 = make()
    status = tf.train.Checkpoint(model=model2, opt=opt2).restore(path)
    assert model2.variables == []
    run = tf.function(step) if compiled else step
    assert float(run(model2, opt2)) == expected  # restored weights, momentum and iterations
    status.assert_consumed()
    for a, b in zip(model.variables, model2.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert int(opt2.iterations) == int(opt.iterations)


def test_deferred_restore_of_module_attributes_and_new_dependencies(tmp_path):
    class Net(tf.Module):
        pass

    net = Net()
    net.w = tf.Variable([1.0, 2.0])
    extra = tf.Variable(5.0)
    path = tf.train.Checkpoint(net=net, extra=extra).save(str(tmp_path / "c"))
    net2 = Net()
    ckpt = tf.train.Checkpoint(net=net2)
    status = ckpt.restore(path)
    net2.w = tf.Variable([0.0, 0.0])  # set after the restore: it gets the saved value
    assert net2.w.numpy().tolist() == [1.0, 2.0]
    ckpt.extra = tf.Variable(0.0)  # a dependency added after the restore
    assert float(ckpt.extra) == 5.0
    status.assert_consumed()
    # a newer restore replaces what an older one still waited for
    net3 = Net()
    ckpt3 = tf.train.Checkpoint(net=net3)
    ckpt3.restore(path)
    net.w.assign([7.0, 8.0])
    path2 = tf.train.Checkpoint(net=net, extra=extra).save(str(tmp_path / "d"))
    ckpt3.restore(path2).expect_partial()
    net3.w = tf.Variable([0.0, 0.0])
    assert net3.w.numpy().tolist() == [7.0, 8.0]
    # a deferred value that does not fit fails when its Variable appears, once
    net4 = Net()
    ckpt4 = tf.train.Checkpoint(net=net4)
    ckpt4.restore(path).expect_partial()
    with pytest.raises(ValueError, match="Received incompatible tensor with shape"):
        net4.w = tf.Variable([0.0, 0.0, 0.0])
    net4.v = tf.Variable(1.0)
