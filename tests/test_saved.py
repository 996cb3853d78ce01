"""tapegrad.saved: round trips, and every kind of bad file ends in LoadError, running nothing."""
import io
import json
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.saved import LoadError
from tapegrad.testing import check_batching, check_grads

try:  # the op-spec table of the primitive tests: one or more cases per primitive
    import test_primitives as _tp
    SPEC_CASES = [pytest.param(c, id=f"{n}-{i}-{c.label}") for n in sorted(_tp.SPECS)
                  for i, c in enumerate(_tp.SPECS[n])]
except ImportError:  # pragma: no cover - the round trips below still cover many primitives
    _tp, SPEC_CASES = None, []

RNG = np.random.RandomState(0)
X = tf.constant(RNG.rand(3, 4))  # float64: the gradient checks need it


def model_fn():
    w = tf.Variable(RNG.rand(4, 2), name="weights")

    def model(x):
        h = tf.tanh(tf.matmul(x, w))
        y = tf.cond(tf.reduce_sum(h) > 1.0, lambda: h * 2.0, lambda: tf.exp(h))
        _, z = tf.while_loop(lambda i, z: tf.reduce_sum(z) < 20.0,
                             lambda i, z: (i + 1, z * 1.5 + 0.1), (0, y), maximum_iterations=30)
        return {"y": y, "z": [z, tf.einsum("ij,ij->i", z, y)]}
    return model, w


def save(tmp_path, fn, *args, name="f.tgz"):
    path = tmp_path / name
    tf.saved.save(tf.function(fn).get_concrete_function(*args), path)
    return path


def assert_tree_close(a, b):
    fa, fb = tf.nest.flatten(a), tf.nest.flatten(b)
    assert len(fa) == len(fb)
    for x, y in zip(fa, fb):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype
        np.testing.assert_allclose(x, y, rtol=1e-6 if x.dtype == np.float32 else 1e-12)


# ---- round trips --------------------------------------------------------------------------------
def test_round_trip_with_control_flow_structure_and_variables(tmp_path):
    model, w = model_fn()
    m = tf.saved.load(save(tmp_path, model, X))
    assert_tree_close(m(X), model(X))
    assert [v.name for v in m.variables] == ["weights:0"]
    np.testing.assert_array_equal(m.variables[0].numpy(), w.numpy())
    assert m.variables[0] is not w  # a new variable holding the saved value
    assert "_while_loop(" in m.source() and "_cond(" in m.source()


def test_a_saved_derivative_program_with_loops_runs_and_differentiates_again(tmp_path):
    model, _ = model_fn()

    def loss(x):
        return tf.reduce_sum(model(x)["z"][1])
    m = tf.saved.load(save(tmp_path, tf.grad(loss), X))  # reverse loops and histories inside
    np.testing.assert_allclose(m(X).numpy(), tf.grad(loss)(X).numpy(), rtol=1e-12)
    check_grads(m, [X.numpy()], order=1)


def test_index_params_of_every_kind_survive(tmp_path):
    mask = np.array([True, False, True])

    def f(x):
        a = x[1:, ::-2][None, ..., 0]
        b = x[np.array([2, 0])][:, 1]
        c = x[mask]
        return a, tf.pad(b, [[1, 2]], constant_values=7.0), c, tf.cast(x, tf.float32)
    m = tf.saved.load(save(tmp_path, f, X))
    assert_tree_close(m(X), f(X))
    assert isinstance(m(X), tuple)


@pytest.mark.parametrize("case", SPEC_CASES)
def test_every_primitive_round_trips(case, tmp_path):
    args = [tf.constant(a) for a in _tp._draw(case, 0)]
    m = tf.saved.load(save(tmp_path, case.fn, *args))
    assert_tree_close(m(*args), case.fn(*args))


def test_broadcast_constants_are_stored_once(tmp_path):
    path = save(tmp_path, lambda x: x + tf.zeros([1000, 4], tf.float64), X[:1])
    assert path.stat().st_size < 20_000  # not 32 kB of zeros
    np.testing.assert_array_equal(tf.saved.load(path)(X[:1]).numpy().shape, (1000, 4))


def test_variable_updates_are_applied_to_the_loaded_variables(tmp_path):
    v = tf.Variable(1.0, name="count", trainable=False)

    def step(x):
        v.assign_add(1.0)
        return x * v
    m = tf.saved.load(save(tmp_path, step, tf.constant(2.0)))
    assert float(m(tf.constant(2.0))) == 4.0 and float(m.variables[0]) == 2.0
    assert m.trainable_variables == () and float(v) == 1.0  # the original is untouched
    with tf.GradientTape() as t:  # the interpreted path assigns too
        x = tf.constant(2.0)
        t.watch(x)
        y = m(x)
    assert float(t.gradient(y, x)) == 3.0 and float(m.variables[0]) == 3.0


def test_loads_in_a_fresh_process_without_the_python_function(tmp_path):
    model, _ = model_fn()
    path = save(tmp_path, model, X)
    np.save(tmp_path / "x.npy", X.numpy())
    code = ("import numpy as np, tapegrad as tf; m = tf.saved.load(r'%s'); "
            "print(float(tf.reduce_sum(m(np.load(r'%s'))['z'][1])))"
            % (path, tmp_path / "x.npy"))
    root = os.path.dirname(os.path.dirname(os.path.abspath(tf.__file__)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, env=dict(os.environ, PYTHONPATH=root), check=True)
    assert float(out.stdout) == pytest.approx(float(tf.reduce_sum(model(X)["z"][1])), rel=1e-12)


def test_loaded_functions_are_differentiable(tmp_path):
    model, w = model_fn()
    m = tf.saved.load(save(tmp_path, model, X))

    def loss(f, x):
        out = f(x)
        return tf.reduce_sum(out["z"][1]) + tf.reduce_sum(out["y"] * out["y"])
    with tf.GradientTape() as t:
        t.watch(X)
        y = loss(m, X)
    with tf.GradientTape() as t0:
        t0.watch(X)
        y0 = loss(model, X)
    g, gw = t.gradient(y, [X, m.variables[0]])
    g0, gw0 = t0.gradient(y0, [X, w])
    np.testing.assert_allclose(g.numpy(), g0.numpy(), rtol=1e-10)
    np.testing.assert_allclose(gw.numpy(), gw0.numpy(), rtol=1e-10)
    check_grads(lambda x: loss(m, x), [X.numpy()], order=2)


def test_loaded_functions_vectorize_and_inline(tmp_path):
    model, _ = model_fn()
    m = tf.saved.load(save(tmp_path, lambda x: model(x)["z"][1], X[0:1]))
    xs = RNG.rand(5, 1, 4)
    check_batching(m, [xs], fallback_ok=False)
    np.testing.assert_allclose(tf.vmap(m)(xs).numpy(), np.stack([m(x).numpy() for x in xs]))
    twice = tf.function(lambda x: m(x) * 2.0)  # a loaded function inside a trace is inlined
    np.testing.assert_allclose(twice(xs[0]).numpy(), 2 * m(xs[0]).numpy())
    assert "while_loop" in [e.prim.name for e in
                            twice.get_concrete_function(xs[0]).program.equations]


def test_calls_are_checked_against_the_saved_signature(tmp_path):
    m = tf.saved.load(save(tmp_path, lambda x, y: x * y, X, X))
    np.testing.assert_allclose(m([X, X]).numpy(), (X * X).numpy())  # nested args flatten
    with pytest.raises(TypeError, match="takes 2 tensor arguments"):
        m(X)
    with pytest.raises(TypeError, match=r"float64\[3, 4\], got float32"):
        m(tf.cast(X, tf.float32), X)
    assert [s.shape for s in m.structured_input_signature] == [(3, 4), (3, 4)]


def test_save_accepts_concrete_functions_and_signed_functions_only(tmp_path):
    signed = tf.function(lambda x: x + 1.0, input_signature=[tf.TensorSpec([2], tf.float32)])
    tf.saved_model.save(signed, tmp_path / "s.tgz")  # TensorFlow's names work too
    assert tf.saved_model.load(tmp_path / "s.tgz")([1.0, 2.0]).numpy().tolist() == [2.0, 3.0]
    with pytest.raises(TypeError, match="input_signature"):
        tf.saved.save(tf.function(lambda x: x), tmp_path / "a.tgz")
    with pytest.raises(TypeError, match="ConcreteFunction"):
        tf.saved.save(lambda x: x, tmp_path / "b.tgz")
    v = tf.Variable(np.float64(1.0))  # X's dtype: TensorFlow multiplies no float32 by it
    with pytest.raises(ValueError, match="Variables as arguments"):
        tf.saved.save(tf.function(lambda x, v: x * v).get_concrete_function(X, v),
                      tmp_path / "c.tgz")
    with pytest.raises(ValueError, match="Python values"):
        save(tmp_path, lambda x: (x, 3), X, name="d.tgz")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.tgz"]  # nothing half-written


def test_the_format_is_documented():
    doc = open(os.path.join(os.path.dirname(__file__), "..", "docs", "saved_format.md")).read()
    assert f'"version": {tf.saved.VERSION}' in doc and "allow_pickle=False" in doc
    assert "program.json" in tf.saved.__doc__


# ---- bad files ------------------------------------------------------------------------------------
@pytest.fixture
def good(tmp_path):
    """A valid file using most features, to corrupt."""
    model, _ = model_fn()
    return save(tmp_path, lambda x: tf.reshape(model(x)["z"][1][:2], [1, 2])
                + tf.cast(tf.cast(x, tf.float32)[:1, :2], tf.float64), X, name="good.tgz")


def read(path):
    with zipfile.ZipFile(path) as z:
        doc = json.loads(z.read("program.json"))
        arrays = dict(np.load(io.BytesIO(z.read("constants.npz"))))
    return doc, arrays


def write(path, doc, arrays, text=None, extra=()):
    npz = io.BytesIO()
    np.savez(npz, **arrays)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("program.json", text if text is not None else json.dumps(doc))
        z.writestr("constants.npz", npz.getvalue())
        for name, data in extra:
            z.writestr(name, data)
    return path


def eqn(doc, prim):
    return next(e for e in doc["function"]["equations"] if e["primitive"] == prim)


@pytest.fixture
def sentinel(tmp_path):
    """A file that any payload below would create if it were ever executed."""
    s = tmp_path / "PWNED"
    yield s
    assert not s.exists(), "a payload from the file was executed"


def payload(sentinel):
    return f"__import__('pathlib').Path(r'{sentinel}').touch()"


def crafted(good, sentinel):
    """name -> (mutation of (doc, arrays), expected message)."""
    code = payload(sentinel)

    def setp(prim, name, value):
        return lambda d, a: eqn(d, prim)["params"].__setitem__(name, value)

    def first(d):
        return d["function"]["equations"][0]

    def add_var(d, **var):
        d["function"]["inputs"].append(dict({"name": "q", "shape": [2], "dtype": "float64"},
                                            **var))
    return {
        "unknown primitive": (lambda d, a: first(d).__setitem__("primitive", "frobnicate"),
                              "unknown primitive 'frobnicate'"),
        "code as primitive": (lambda d, a: first(d).__setitem__("primitive", code),
                              "unknown primitive"),
        "wrong arity": (lambda d, a: eqn(d, "matmul")["inputs"].pop(), "takes 2 inputs"),
        "code in a string param": (setp("einsum", "subscripts", {"str": "ij'); " + code}),
                                   "letters, digits"),
        "code in a dtype param": (setp("cast", "dtype", {"str": "float64');" + code + "#"}),
                                  "letters, digits"),
        "code as a value type": (setp("cast", "dtype", {"code": code}), "invalid value"),
        "unknown param": (lambda d, a: eqn(d, "cast")["params"].__setitem__("evil", {"int": 1}),
                          r"unknown \['evil'\]"),
        "missing param": (lambda d, a: eqn(d, "cast")["params"].clear(), r"missing \['dtype'\]"),
        "param of the wrong type": (setp("cast", "dtype", {"int": 3}),
                                    "param dtype must be a dtype name"),
        "wrong declared shape": (lambda d, a: eqn(d, "matmul")["outputs"][0].__setitem__(
            "shape", [3, 3]), "the rule gives"),
        "negative dimension": (lambda d, a: add_var(d, shape=[-1]), "expected an integer"),
        "absurd dimensions": (lambda d, a: add_var(d, shape=[2 ** 21, 2 ** 21]), "absurd shape"),
        "too many axes": (lambda d, a: add_var(d, shape=[1] * 33), "absurd shape"),
        "huge size param": (setp("reshape", "shape", {"tuple": [{"int": 1}, {"int": 2 ** 40}]}),
                            "exceeds the dimensions"),
        "unsupported dtype": (lambda d, a: add_var(d, dtype="object"), "unsupported dtype"),
        "dangling name": (lambda d, a: eqn(d, "matmul")["inputs"].__setitem__(0, "nowhere"),
                          "used but not defined"),
        "duplicate name": (lambda d, a: add_var(d, name="x"), "defined twice"),
        "code as a name": (lambda d, a: add_var(d, name="x; " + code), "invalid variable name"),
        "dunder name": (lambda d, a: add_var(d, name="__class__"), "invalid variable name"),
        "keyword name": (lambda d, a: add_var(d, name="None"), "invalid variable name"),
        "code as program name": (lambda d, a: d["function"].__setitem__(
            "name", "f():\n    " + code + "\ndef g"), "invalid program name"),
        "unknown field": (lambda d, a: first(d).__setitem__("exec", code), "unexpected fields"),
        "bare JSON float": (lambda d, a: add_var(d, shape=[2.0]), "JSON number"),
        "bad sub-program": (lambda d, a: eqn(d, "cond")["params"]["true_branch"]["program"][
            "inputs"][0].__setitem__("dtype", "float32"), "true_branch takes"),
        "bad update": (lambda d, a: d["function"]["updates"].append([5, "x"]), "updates"),
        "wrong format": (lambda d, a: d.__setitem__("format", "pickle"), "not a tapegrad saved"),
        "newer version": (lambda d, a: d.__setitem__("version", 2), "version 2 is not supported"),
        "version as text": (lambda d, a: d.__setitem__("version", "1"), "version '1'"),
        "output structure": (lambda d, a: d.__setitem__("output_structure", {"tensor": 3}),
                             "output_structure"),
        "missing array": (lambda d, a: a.pop(sorted(a)[0]), "is missing"),
        "unused array": (lambda d, a: a.__setitem__("extra1", np.zeros(2)), "unexpected arrays"),
        "array of the wrong shape": (lambda d, a: a.__setitem__(
            d["function"]["constants"][0]["data"], np.zeros(7)), "expected"),
        "object array": (lambda d, a: a.__setitem__(
            d["function"]["constants"][0]["data"], np.array([Touch(sentinel)], dtype=object)),
            r"unsupported dtype '\|O'"),
    }


class Touch:
    """Unpickling this creates the sentinel file: the classic pickle payload, harmless here."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


CASES = list(crafted("", "").keys())


@pytest.mark.parametrize("case", CASES)
def test_crafted_files_raise_load_error_and_run_nothing(case, good, sentinel, tmp_path):
    mutate, message = crafted(good, sentinel)[case]
    doc, arrays = read(good)
    mutate(doc, arrays)
    bad = write(tmp_path / "bad.tgz", doc, arrays)
    with pytest.raises(LoadError, match=message):
        tf.saved.load(bad)


def test_the_unmodified_file_loads(tmp_path):
    model, _ = model_fn()  # the fixture's program, with weights this test knows

    def fn(x):
        return tf.reshape(model(x)["z"][1][:2], [1, 2]) + tf.cast(tf.cast(x, tf.float32)[:1, :2],
                                                                 tf.float64)
    got = tf.saved.load(save(tmp_path, fn, X, name="good.tgz"))(X)
    assert np.array_equal(np.asarray(got), np.asarray(fn(X)))


def test_duplicate_json_keys_are_refused(good, tmp_path):
    doc, arrays = read(good)
    text = json.dumps(doc)[:-1] + ', "version": 1}'
    with pytest.raises(LoadError, match="appears twice"):
        tf.saved.load(write(tmp_path / "bad.tgz", doc, arrays, text=text))


@pytest.mark.parametrize("damage", ["empty", "not a zip", "truncated", "cut short", "flipped",
                                    "garbled json", "json list", "deep json", "extra member",
                                    "missing member", "npy for npz"])
def test_garbled_files_raise_load_error(damage, good, tmp_path):
    data = good.read_bytes()
    bad = tmp_path / "bad.tgz"
    doc, arrays = read(good)
    if damage == "empty":
        bad.write_bytes(b"")
    elif damage == "not a zip":
        bad.write_bytes(b"#!/bin/sh\nrm -rf /\n")
    elif damage == "truncated":
        bad.write_bytes(data[:len(data) // 2])
    elif damage == "cut short":
        bad.write_bytes(data[:-7])
    elif damage == "flipped":  # damage inside the compressed program.json: CRC or zlib error
        start = data.index(b"program.json") + 40
        bad.write_bytes(data[:start] + bytes(b ^ 0x5A for b in data[start:start + 64])
                        + data[start + 64:])
    elif damage == "garbled json":
        write(bad, doc, arrays, text='{"format": "tapegrad.saved", "vers')
    elif damage == "json list":
        write(bad, doc, arrays, text="[1, 2, 3]")
    elif damage == "deep json":
        write(bad, doc, arrays, text="[" * 100_000 + "]" * 100_000)
    elif damage == "npy for npz":
        buf = io.BytesIO()
        np.save(buf, np.zeros(3))
        with zipfile.ZipFile(bad, "w") as z:
            z.writestr("program.json", json.dumps(doc))
            z.writestr("constants.npz", buf.getvalue())
    elif damage == "extra member":
        write(bad, doc, arrays, extra=[("run_me.py", "import os")])
    else:
        with zipfile.ZipFile(bad, "w") as z:
            z.writestr("program.json", json.dumps(doc))
    with pytest.raises(LoadError):
        tf.saved.load(bad)


def test_truncated_array_data_is_detected(good, tmp_path):
    doc, arrays = read(good)
    key = doc["function"]["constants"][0]["data"]
    npz = io.BytesIO()
    with zipfile.ZipFile(npz, "w") as z:
        for k, v in arrays.items():
            buf = io.BytesIO()
            np.save(buf, v)
            raw = buf.getvalue()
            z.writestr(k + ".npy", raw[:-4] if k == key else raw)
    bad = tmp_path / "bad.tgz"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("program.json", json.dumps(doc))
        z.writestr("constants.npz", npz.getvalue())
    with pytest.raises(LoadError, match="truncated"):
        tf.saved.load(bad)


def test_random_damage_only_ever_raises_load_error(good, tmp_path, sentinel):
    rng = np.random.RandomState(7)
    data = good.read_bytes()
    doc0, arrays = read(good)
    junk = [None, True, 0, -1, 2 ** 70, "x", "__import__('os')", [], {}, {"int": 1}]
    paths = []

    def walk(d, path):
        paths.append(path)
        for k, v in (d.items() if isinstance(d, dict) else
                     enumerate(d) if isinstance(d, list) else ()):
            walk(v, path + (k,))
    walk(doc0, ())
    for trial in range(300):
        bad = tmp_path / "bad.tgz"
        if trial % 2:  # bytes flipped or cut anywhere in the archive
            b = bytearray(data)
            for i in rng.randint(0, len(b), rng.randint(1, 6)):
                b[i] = rng.randint(256)
            bad.write_bytes(bytes(b[:rng.randint(len(b) // 2, len(b) + 1)]))
        else:  # a JSON value replaced by junk
            doc = json.loads(json.dumps(doc0))
            path = paths[rng.randint(1, len(paths))]
            parent = doc
            for k in path[:-1]:
                parent = parent[k]
            parent[path[-1]] = junk[rng.randint(len(junk))]
            write(bad, doc, arrays)
        try:
            tf.saved.load(bad)
        except LoadError:
            pass
