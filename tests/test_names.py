"""Names in generated code and printed programs: the user's variables, ``_ct`` and ``_dot``
for derivatives, ``d/dh of`` comments; names never change a number; derivative entries of a
tape are told apart in its picture."""
import pathlib
import re

import numpy as np
import pytest

import tapegrad as tf
import tapegrad.drawing as drawing
from tapegrad.drawing.render import COLOURS
from tapegrad.ir import Origin, Program, Var
from tapegrad.ir.names import RESERVED, value_names
from tapegrad.trace import naming
from tapegrad.trace.codegen import compile_program, generate

W = tf.constant(np.linspace(-1, 1, 6).reshape(3, 2).astype("float32"))


def _code(src):
    """The body lines of generated source without comments."""
    return [ln.strip() for ln in src.splitlines()
            if ln.startswith("    ") and not ln.strip().startswith("#")]


def _assigned(src):
    return [m for ln in _code(src) for m in re.findall(r"^(\w+) = ", ln)]


def _line(text):
    """``test_names.py:N  text``: where this file says ``text``."""
    for n, ln in enumerate(open(__file__), 1):
        if ln.strip() == text:
            return f"test_names.py:{n}  {text}"
    raise AssertionError(text)


def _same_without_names(cf, *args):
    """The compiled program and the same program with every name hint dropped compute
    bit-identical results."""
    bare, _ = compile_program(cf.program.replace(origins=()))
    named, _ = compile_program(cf.program)
    got, want = named(*args), bare(*args)
    got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.tobytes() == w.tobytes()


def test_reverse_mode_names_and_comments():
    @tf.function
    def f(x):
        with tf.GradientTape() as g:
            g.watch(x)
            h = tf.tanh(x @ W)
            loss = tf.reduce_sum(h * h)
        dx = g.gradient(loss, x)
        return dx

    cf = f.get_concrete_function(tf.TensorSpec([4, 3], tf.float32))
    src = cf.source()
    names = _assigned(src)
    assert {"h", "h_ct", "t0_ct", "dx"} <= set(names)  # (loss itself is dead code)
    assert "return dx" in src
    comments = [ln.strip() for ln in src.splitlines() if ln.strip().startswith("#")]
    asked = comments.index(f"# derivative code, from {_line('dx = g.gradient(loss, x)')}")
    assert comments[asked + 1:asked + 3] == [
        f"# d/dloss of: {_line('loss = tf.reduce_sum(h * h)')}",
        f"# d/dh of: {_line('h = tf.tanh(x @ W)')}"]
    # the printed program says the same names
    printed = str(cf.program)
    assert re.search(r"^  h_ct:f32\[4,2\] = ", printed, re.M)
    assert "return (dx)" in printed
    x = np.random.default_rng(0).standard_normal((4, 3)).astype("float32")
    np.testing.assert_allclose(f(x).numpy(), 2 * (np.tanh(x @ W.numpy()) * (
        1 - np.tanh(x @ W.numpy()) ** 2)) @ W.numpy().T, rtol=1e-5)
    _same_without_names(cf, x)


def test_a_gradient_nobody_names_is_the_sources_cotangent():
    @tf.function
    def f(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = tf.reduce_sum(tf.sin(x) * x)
        return g.gradient(y, x)

    cf = f.get_concrete_function(tf.TensorSpec([3], tf.float64))
    assert "return x_ct" in cf.source() and "return (x_ct)" in str(cf.program)
    assert repr(cf) == "<ConcreteFunction f(x:f64[3]) -> (x_ct:f64[3])>"
    x = np.array([0.1, 1.0, -2.0])
    np.testing.assert_allclose(f(x).numpy(), np.cos(x) * x + np.sin(x), rtol=1e-12)
    _same_without_names(cf, x)


def test_gradients_of_captured_variables_are_named_after_them():
    kernel = tf.Variable(W.numpy(), name="dense/kernel:0")
    bias = tf.Variable(np.zeros(2, "float32"), name="bias")

    @tf.function
    def step(x):
        with tf.GradientTape() as g:
            y = tf.tanh(x @ kernel + bias)
            loss = tf.reduce_mean(y * y)
        return g.gradient(loss, [kernel, bias])

    cf = step.get_concrete_function(tf.TensorSpec([4, 3], tf.float32))
    src = cf.source()
    assert "def step(x, dense_kernel, bias):" in src
    assert "return (dense_kernel_ct, bias_ct)" in src and "y_ct = " in src
    _same_without_names(cf, np.ones((4, 3), "float32"), W.numpy(), np.zeros(2, "float32"))


def test_forward_mode_names_and_comments():
    @tf.function
    def f(x):
        with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as acc:
            h = tf.tanh(tf.matmul(x, W))
            y = tf.reduce_sum(h * h)
        return acc.jvp(y)

    cf = f.get_concrete_function(tf.TensorSpec([4, 3], tf.float32))
    src = cf.source()
    assert {"h", "h_dot"} <= set(_assigned(src)) and "return y_dot" in src
    comments = [ln.strip() for ln in src.splitlines() if ln.strip().startswith("#")]
    assert f"# d/dh of: {_line('h = tf.tanh(tf.matmul(x, W))')}" in comments
    assert f"# d/dy of: {_line('y = tf.reduce_sum(h * h)')}" in comments
    assert not any(c.startswith("# derivative code") for c in comments)  # asked on the line
    _same_without_names(cf, np.ones((4, 3), "float32"))


def test_names_are_unique_valid_and_never_reserved():
    @tf.function
    def f(x):
        np = tf.sin(x)          # noqa: F841 - a local called np must not shadow NumPy
        sum = tf.exp(x)         # noqa: A001 - nor a builtin
        t0 = sum * 2.0
        c0 = t0 + 1.0
        x = c0 * x
        x = x * x
        häh = x - 1.0  # a non-ASCII name stays an IR name
        return x + np + häh

    cf = f.get_concrete_function(tf.TensorSpec([3], tf.float64))
    src = cf.source()
    names = _assigned(src)
    assert len(names) == len(set(names))
    assert not set(names) & RESERVED and all(n.isidentifier() and n.isascii() for n in names)
    # the IR's own t0 and c0 keep their names; the user's take the next free ones
    assert {"np_1", "sum_1", "t0_1", "c0_1", "x_1", "x_2"} <= set(names)
    assert "np.sin(" in src and "np.exp(" in src
    compile(src, "<names>", "exec")
    x = np.array([0.5, -1.0, 2.0])
    s = np.sin(x)
    want = ((np.exp(x) * 2 + 1) * x) ** 2
    np.testing.assert_allclose(f(x).numpy(), want + s + want - 1, rtol=1e-12)
    _same_without_names(cf, x)


def test_value_names_give_way_to_ir_names_and_the_namespace():
    f32 = np.dtype("float32")
    x, t0, t1, t2 = (Var(n, (2,), f32) for n in ("x", "t0", "t1", "t2"))
    from tapegrad.core.dispatch import PRIMITIVES
    from tapegrad.ir import Equation
    eqs = tuple(Equation(PRIMITIVES["neg"], (a,), (), (b,)) for a, b in ((x, t0), (t0, t1),
                                                                          (t1, t2)))
    o = Origin("f.py:1", "", False)
    p = Program((x,), (), (), eqs, (t2,), name="f", origins=(
        ("t0", o._replace(name="t2")), ("t1", o._replace(name="x")),
        ("t2", o._replace(name="f"))))
    assert value_names(p) == {"x": "x", "t0": "t2_1", "t1": "x_1", "t2": "f_1"}
    assert value_names(p, taken={"x_1"})["t1"] == "x_2"
    src, _ = generate(p)
    assert _assigned(src) == ["t2_1", "x_1", "f_1"]


def test_loops_and_helper_functions():
    def layer(x):
        z = tf.tanh(x @ tf.transpose(W) @ W)
        return z

    @tf.function
    def f(x):
        for _ in range(3):
            x = tf.sin(x) * 0.5
        out = layer(x)
        return out

    cf = f.get_concrete_function(tf.TensorSpec([2, 2], tf.float32))
    names = _assigned(cf.source())
    assert {"x_1", "x_2", "x_3", "z"} <= set(names)
    _same_without_names(cf, np.ones((2, 2), "float32"))


def test_saved_programs_load_and_compute_the_same(tmp_path):
    @tf.function
    def f(x):
        with tf.GradientTape() as g:
            g.watch(x)
            h = tf.reduce_sum(tf.tanh(x @ W))
        return g.gradient(h, x)

    cf = f.get_concrete_function(tf.TensorSpec([2, 3], tf.float32))
    tf.saved.save(cf, tmp_path / "f.tgz")
    loaded = tf.saved.load(tmp_path / "f.tgz")
    x = np.arange(6, dtype="float32").reshape(2, 3) / 7
    assert loaded(x).numpy().tobytes() == cf(x).numpy().tobytes()
    # the file keeps the names: the loaded program prints, draws and compiles with them
    assert "return (x_ct)" in str(loaded.program) and "x_ct" in tf.draw(loaded)
    assert value_names(loaded.program) == {n: n for n in loaded.program.all_names()}
    tf.saved.save(cf, tmp_path / "g.tgz")  # the same program, the same bytes
    assert (tmp_path / "f.tgz").read_bytes() == (tmp_path / "g.tgz").read_bytes()


def test_naming_is_never_on_the_eager_path(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("naming ran eagerly")
    monkeypatch.setattr(naming.Namer, "note", boom)
    monkeypatch.setattr(naming.Namer, "flush", boom)
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape(persistent=True) as outer:
        with tf.GradientTape() as inner:
            y = tf.reduce_sum(tf.sin(x) * x)
        g = inner.gradient(y, x)
    outer.gradient(g, x)
    with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as acc:
        y = tf.sin(x) * x
    acc.jvp(y)


def _ops(tape):
    return [(n.label.split("\n")[0], n.derivative) for n in drawing.graph(tape).nodes
            if n.kind == "op"]


def test_tape_pictures_tell_derivative_entries_apart():
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as t2:      # the lesson's second derivative
        with tf.GradientTape() as t1:
            y = x * x * x
        dy_dx = t1.gradient(y, x)
    t2.gradient(dy_dx, x)
    ops = _ops(t2)
    # one read of the unchanged variable serves its three uses
    assert ops[:3] == [("read_variable", False), ("mul", False), ("mul", False)]
    assert len(ops) > 3 and all(d for _, d in ops[3:])   # inner gradient, recorded by t2
    assert COLOURS["derivative"] in tf.draw(t2)

    with tf.GradientTape(persistent=True) as t:       # a persistent tape's own gradient
        y = x * x
        t.gradient(y, x)
        z = y * 3.0
    ops = _ops(t)
    assert ops[:2] == [("read_variable", False), ("mul", False)]
    # d(v*v) = 1*v + 1*v: the unit seed's products are skipped, the sum stays
    assert ops[-1] == ("mul", False) and all(d for _, d in ops[2:-1]) and len(ops) > 3
    del z

    with tf.GradientTape() as t:                      # forward mode's tangents under a tape
        with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)):
            y = x * x
    ops = _ops(t)
    assert [d for name, d in ops if name == "read_variable"] == [False]  # one read, two uses
    assert ops.count(("mul", False)) == 1 and any(d for _, d in ops)


@pytest.mark.parametrize("persistent", [False, True])
def test_tape_pictures_of_first_order_tapes_have_no_derivative_entries(persistent):
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=persistent) as t:
        y = tf.sin(x) * x
    if persistent:
        t.gradient(y, x)  # after the block: records nothing
    assert _ops(t) and not any(d for _, d in _ops(t))


# ---- "seed" means the random seed only ------------------------------------------------------
# The modules whose "seed" is the random-number seed (TensorFlow's and Keras's public word:
# tf.random.set_seed, an initializer's or Dropout's seed, Dataset.shuffle(seed=)). Derivative
# code says cotangent, tangent, output_gradients or basis; the project's documents are the
# lessons and the user's question.
RANDOM_SEED_MODULES = {
    "keras/legacy_backend.py": "tf.keras.backend's random_normal, dropout... (seed=)",
    "keras/layers/conv_lstm.py": "ConvLSTM2D(seed=), Keras's argument (no dropout here)",
    "random.py": "tf.random", "ops/random_ops.py": "tf.random.set_seed and the draws",
    "primitives/random.py": "the random primitives' seed param",
    "primitives/philox.py": "the stateless draws' seed input",
    "ops/stateless_random_ops.py": "tf.random.stateless_*(seed=)",
    "ops/random_generator.py": "Generator.from_seed",
    "ops/image_ops.py": "random_flip_*(seed=)",
    "data/dataset.py": "Dataset.shuffle(seed=)", "data/transforms.py": "the shuffle's generator",
    "keras/initializers.py": "initializers' seed", "keras/backend.py": "the global generator",
    "keras/utils.py": "set_random_seed", "keras/dataset_utils.py": "the shuffles' seed=",
    "keras/datasets/boston_housing.py": "load_data(seed=)",
    "keras/layers/core.py": "Dropout(seed=)",
    "keras/random.py": "keras.random's SeedGenerator", "keras/layers/preprocessing.py":
    "RandomFlip(seed=)", "keras/layers/image_augmentation.py": "the random layers' seed",
    "keras/layers/image_resizing.py": "RandomCrop(seed=)", "keras/layers/attention.py": "MultiHeadAttention(seed=)",
    "keras/layers/recurrent.py": "LSTM(seed=), Keras's argument",
    "keras/layers/rnn_cells.py": "LSTMCell(seed=): the dropout masks' generator",
    "ops/dropout_ops.py": "tf.nn.dropout(seed=)",
    "keras/layers/regularization.py": "GaussianNoise(seed=) and the other noise layers",
    "keras/layers/dot_attention.py": "Attention(seed=), its dropout's",
    "testing.py": "the random points of the gradient checks",
    "demo.py": "the demo networks' random weights",
    "keras/layer_config.py": "SimpleRNN(seed=) left out of its config, as Keras does",
}


def test_seed_is_only_the_random_seed():
    root = pathlib.Path(tf.__file__).parent
    found = sorted(str(p.relative_to(root)) for p in root.rglob("*.py")
                   if "seed" in p.read_text(encoding="utf-8").lower())
    assert sorted(set(found) - set(RANDOM_SEED_MODULES)) == [], \
        "'seed' outside random-number code: say cotangent, tangent, basis, or the lesson"
    assert set(found) == set(RANDOM_SEED_MODULES), "an allowed module no longer needs it"
    docs = root.parent / "docs"
    for doc in sorted(docs.glob("*.md")):
        assert "seed" not in doc.read_text(encoding="utf-8").lower(), doc.name
