"""A mutation fuzzer of saved programs: thousands of single-field mutations of valid files.

Each mutated file must either raise ``LoadError``, or load as a program that does what it
declares: called with inputs of the declared types, the generated code and the taped path
(the IR through ``bind``) both succeed, give the declared shapes and dtypes, and agree.
One exception, which no declaration can rule out: a mutation that rewires a Cholesky
factorization or a solve to other data may meet a matrix outside its mathematical domain;
then both paths must refuse it (``LinAlgError``). The seed is fixed, so a failure names a
reproducible mutation.
"""
import copy
import io
import json
import zipfile

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.core.dispatch import PRIMITIVES
from tapegrad.primitives.params import DTYPE_NAMES
from tapegrad.saved import LoadError

N_MUTATIONS = 3500       # per run, over all the base programs (about 10-25 s)
MAX_CALL_ELEMENTS = 10_000


def _base_programs():
    """(name, saved bytes) of valid programs that use most primitives and params."""
    rng = np.random.RandomState(5)
    w = tf.Variable(rng.rand(4, 3), name="w")
    mask = np.array([True, False, True])

    def model(x, k):
        h = tf.tanh(tf.matmul(x, w))
        y = tf.cond(tf.reduce_sum(h) > 1.0, lambda: h * 2.0, lambda: tf.exp(h))
        _, z = tf.while_loop(lambda i, z: i < 3, lambda i, z: (i + 1, z * 1.5 + 0.1), (0, y),
                             maximum_iterations=4)
        picked = tf.gather(z, [2, 0], axis=0)[:, ::-1]
        s = tf.sort(h, axis=-1)
        big = tf.reduce_max(tf.concat([h, y], axis=1), axis=1)
        return {"e": tf.einsum("ij,ij->i", z, y), "p": tf.pad(picked, [[1, 0], [0, 2]]),
                "a": tf.argmax(tf.concat([h, y], axis=1), axis=1), "s": s,
                "t": tf.transpose(tf.cast(z, tf.float32)), "m": x[mask][:, 1:3],
                "c": tf.cumsum(h, axis=1, reverse=True) + big[:, None],
                "k": tf.where(k > 1, tf.floor(h * 3.0), tf.math.mod(h, 0.3)),
                "r": tf.reshape(tf.broadcast_to(tf.reduce_prod(x, axis=0), [2, 4]), [8])}

    x = tf.constant(rng.rand(3, 4))
    k = tf.constant(rng.randint(0, 3, size=(3, 3)).astype(np.int32))

    def loss(x):
        out = model(x, k)
        return (tf.reduce_sum(out["e"]) + tf.reduce_sum(out["p"] * out["p"])
                + tf.reduce_sum(out["s"][:, :2]) + tf.reduce_sum(out["m"]))

    def linalg(a, b):
        sp = tf.matmul(a, a, transpose_b=True) + 3.0 * tf.eye(3, dtype=tf.float64)
        chol = tf.linalg.cholesky(sp)
        return (tf.linalg.solve(sp, b), tf.linalg.det(sp), tf.linalg.inv(sp)[0],
                tf.linalg.triangular_solve(chol, b, lower=True), tf.linalg.diag_part(sp),
                tf.math.logical_and(a > 0.5, a < 0.9), tf.math.sign(a - 0.5) ** 3)

    a, b = tf.constant(rng.rand(3, 3)), tf.constant(rng.rand(3, 2))
    filters = tf.Variable(rng.rand(3, 3, 2, 4) - 0.5, name="filters")

    def cnn(img):
        h = tf.nn.relu(tf.nn.conv2d(img, filters, strides=[1, 2, 1, 1], padding="SAME"))
        p = tf.nn.max_pool2d(h, ksize=2, strides=1, padding="VALID")
        q = tf.nn.avg_pool2d(h, ksize=[2, 1], strides=[1, 2], padding="SAME")
        return p, q

    def cnn_loss(img):
        p, q = cnn(img)
        return tf.reduce_sum(p * p) + tf.reduce_sum(q * q)

    img = tf.constant(rng.rand(2, 6, 5, 2))
    out = []
    for name, fn, args in [("model", model, (x, k)), ("gradient", tf.grad(loss), (x,)),
                           ("linalg", linalg, (a, b)), ("cnn", cnn, (img,)),
                           ("cnn gradient", tf.grad(cnn_loss), (img,))]:
        cf = tf.function(fn).get_concrete_function(*args)
        out.append((name, tf.saved.dumps(cf)))
    return out


def _read(data):
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return json.loads(z.read("program.json")), z.read("constants.npz")


def _write(doc, npz):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("program.json", json.dumps(doc))
        z.writestr("constants.npz", npz)
    return buf.getvalue()


def _paths(node, path=()):
    if path:
        yield path
    items = node.items() if isinstance(node, dict) else enumerate(node) \
        if isinstance(node, list) else ()
    for k, v in items:
        yield from _paths(v, path + (k,))


def _names(doc):
    out = set()

    def walk(d):
        if isinstance(d, dict):
            if set(d) == {"name", "shape", "dtype"}:
                out.add(d["name"])
            for v in d.values():
                walk(v)
        elif isinstance(d, list):
            for v in d:
                walk(v)
    walk(doc)
    return sorted(out)


def _candidates(v, rng, names):
    """Replacements for one field: near misses of its own kind, and other kinds."""
    pick = lambda xs, n=3: [xs[i] for i in rng.choice(len(xs), min(n, len(xs)), False)]  # noqa
    if isinstance(v, bool):
        return [not v, int(v), None]
    if isinstance(v, int):
        return [v + 1, v - 1, 0, -1, 2 * v + 1, 2 ** 31, True, v + 2]
    if isinstance(v, str):
        if v in DTYPE_NAMES:
            return pick([d for d in DTYPE_NAMES if d != v], 4)
        if v in PRIMITIVES:
            return pick(sorted(set(PRIMITIVES) - {v}), 4)
        if v in names:
            return pick([n for n in names if n != v], 3) + [v + "x"]
        return [v + "x", v[:-1], "", v.upper(), v[::-1]]
    if v is None:
        return [0, {"int": 0}, False]
    if isinstance(v, list):
        if not v:
            return [[0], [{"int": 0}]]
        return [v[:-1], v + v[-1:], v[::-1], v[1:], []]
    if isinstance(v, dict):
        if not v:
            return [{"axis": {"int": 0}}, []]
        if len(v) == 1:  # a typed value
            (kind, x), = v.items()
            out = [{"none": None}, {"int": 1}, {"float": "1.5"}, {"bool": True},
                   {"tuple": [v]}, {"list": [v]}, {"str": "ij"}, {"dtype": "float32"}]
            return [c for c in out if c != v]
        k = sorted(v)[rng.randint(len(v))]
        return [{kk: vv for kk, vv in v.items() if kk != k}, dict(v, extra=1)]
    return [None]


def _set(doc, path, value):
    node = doc
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value


def _inputs(m, rng):
    args = []
    for spec in m.structured_input_signature:
        d, shape = np.dtype(spec.dtype), tuple(spec.shape)
        if d.kind == "b":
            a = rng.rand(*shape) < 0.5
        elif d.kind in "iu":
            a = rng.randint(0, 2, size=shape)
        elif d.kind == "c":
            a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        else:
            a = rng.uniform(0.1, 0.9, size=shape)
        args.append(np.asarray(a).astype(d))
    return args


def _agree(m, args):
    """Call the compiled and the taped path; check both against the declaration.

    Returns False where both refused the data as outside a factorization's domain."""
    try:
        plain = tf.nest.flatten(m(*args))
    except np.linalg.LinAlgError:
        with pytest.raises(tf.errors.InvalidArgumentError, match="(?i)singular|"
                                                                 "positive definite"):
            with tf.GradientTape():
                m(*[tf.constant(a) for a in args])
        return False
    with tf.GradientTape() as tape:
        ts = [tf.constant(a) for a in args]
        for t in ts:
            if t.dtype.kind == "f":
                tape.watch(t)
        taped = tf.nest.flatten(m(*ts))
    declared = m.program.outputs
    assert len(plain) == len(taped) == len(declared)
    for p, t, v in zip(plain, taped, declared):
        p, t = np.asarray(p), np.asarray(t)
        assert (p.shape, p.dtype) == (t.shape, t.dtype) == (v.shape, v.dtype), \
            f"declared {v}, compiled {p.dtype}{list(p.shape)}, taped {t.dtype}{list(t.shape)}"
        if p.dtype.kind in "fc":
            tol = 1e-3 if p.dtype.itemsize <= 4 else 1e-9
            np.testing.assert_allclose(p, t, rtol=tol, atol=tol, equal_nan=True)
        else:
            np.testing.assert_array_equal(p, t)
    return True


BASES = _base_programs()


@pytest.mark.timeout(120)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaNs of a rewired arcsin are fine
def test_single_field_mutations_give_load_error_or_a_program_that_keeps_its_word():
    rng = np.random.RandomState(1234)
    docs = [(name, *_read(data)) for name, data in BASES]
    docs = [(name, d, npz, list(_paths(d)), _names(d)) for name, d, npz in docs]
    tally = {"refused": 0, "ran": 0, "too large to call": 0, "outside a matrix domain": 0}
    failures = []
    for trial in range(N_MUTATIONS):
        name, doc0, npz, paths, names = docs[trial % len(docs)]
        path = paths[rng.randint(len(paths))]
        node = doc0
        for k in path:
            node = node[k]
        options = _candidates(node, rng, names)
        value = options[rng.randint(len(options))]
        doc = copy.deepcopy(doc0)
        _set(doc, path, value)
        what = f"{name}: {'/'.join(map(str, path))} = {json.dumps(value)[:60]}"
        try:
            m = tf.saved.load(_write(doc, npz))
        except LoadError:
            tally["refused"] += 1
            continue
        except Exception as e:  # noqa: BLE001 - the property under test
            failures.append(f"{what}: load raised {type(e).__name__}: {e}")
            continue
        if sum(int(np.prod(s.shape)) for s in m.structured_input_signature) > MAX_CALL_ELEMENTS:
            tally["too large to call"] += 1
            continue
        try:
            ran = _agree(m, _inputs(m, np.random.RandomState(trial)))
            tally["ran" if ran else "outside a matrix domain"] += 1
        except Exception as e:  # noqa: BLE001
            failures.append(f"{what}: {type(e).__name__}: {str(e)[:300]}")
    assert not failures, f"{len(failures)} mutations broke the promise ({tally}):\n" + \
        "\n".join(failures[:25])
    assert tally["ran"] > 100 and tally["refused"] > 1000, tally
    assert tally["outside a matrix domain"] < 20, tally


def test_the_unmutated_programs_keep_their_word():
    for _, data in BASES:
        m = tf.saved.load(data)
        assert _agree(m, _inputs(m, np.random.RandomState(0)))
