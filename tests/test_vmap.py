"""vmap and vectorized_map: every result is compared with a Python loop over the examples
followed by a stack (computed with plain NumPy where possible)."""
import warnings

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.core.dispatch import PRIMITIVES, Primitive
from tapegrad.batching import interpreter as batching

RNG = np.random.default_rng(0)


def R(*shape):
    return RNG.standard_normal(shape)


def loop_stack(fn, *args, in_axes=0):
    """The reference: call ``fn`` per example (NumPy slices) and stack the outputs."""
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    n = next(np.shape(a)[ax] for a, ax in zip(args, axes) if ax is not None)
    outs = []
    for i in range(n):
        sl = [tf.constant(a) if ax is None else tf.constant(np.take(a, i, axis=ax))
              for a, ax in zip(args, axes)]
        outs.append(tf.nest.map_structure(lambda t: np.asarray(t), fn(*sl)))
    return _stack(outs)


def _stack(outs):
    first = outs[0]
    if isinstance(first, (list, tuple)):
        return type(first)(_stack([o[k] for o in outs]) for k in range(len(first)))
    if isinstance(first, dict):
        return {k: _stack([o[k] for o in outs]) for k in first}
    return np.stack(outs)


def check(fn, *args, in_axes=0, rtol=1e-12, atol=1e-12):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a loop fallback here would be a missing rule
        got = tf.vmap(fn, in_axes=in_axes)(*[tf.constant(a) for a in args])
    want = loop_stack(fn, *args, in_axes=in_axes)
    for g, w in zip(tf.nest.flatten(got), tf.nest.flatten(want)):
        assert isinstance(g, tf.Tensor) and not isinstance(g, batching.BatchedTensor)
        assert g.shape == w.shape, (g.shape, w.shape)
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g.numpy(), w, rtol=rtol, atol=atol)


# -- op by op against loop-and-stack ---------------------------------------------------------------
REDUCTIONS = [
    lambda x: tf.reduce_sum(x),
    lambda x: tf.reduce_sum(x, axis=0),
    lambda x: tf.reduce_sum(x, axis=-1, keepdims=True),
    lambda x: tf.reduce_mean(x, axis=[0, 2], keepdims=True),
    lambda x: tf.reduce_max(x, axis=1),
    lambda x: tf.reduce_min(x, axis=(0, 1), keepdims=True),
    lambda x: tf.reduce_prod(x, axis=2),
    lambda x: tf.reduce_logsumexp(x, axis=1),
    lambda x: tf.math.reduce_variance(x, axis=0),
    lambda x: tf.argmax(x, axis=1),
    lambda x: tf.argmin(x, axis=-1),
    lambda x: tf.math.cumsum(x, axis=1),
    lambda x: tf.math.cumsum(x, axis=0, exclusive=True, reverse=True),
]


@pytest.mark.parametrize("k", range(len(REDUCTIONS)))
def test_reductions(k):
    check(REDUCTIONS[k], R(4, 2, 3, 5))


SHAPES = [
    lambda x: tf.reshape(x, [-1]),
    lambda x: tf.reshape(x, [3, 2, 5]),
    lambda x: tf.broadcast_to(x, [7, 2, 3, 5]),
    lambda x: tf.broadcast_to(x[:, :1], [4, 2, 3, 5]),
    lambda x: tf.transpose(x),
    lambda x: tf.transpose(x, [1, 2, 0]),
    lambda x: tf.expand_dims(x, 1),
    lambda x: tf.squeeze(x[:, :1], axis=1),
    lambda x: x[1],
    lambda x: x[:, 1:, ::-2],
    lambda x: x[..., 0],
    lambda x: x[None, :, tf.newaxis],
    lambda x: x[-1, ..., 1:3],
    lambda x: x[np.array([1, 0, 1])],
    lambda x: x[:, np.array([2, 0])],
    lambda x: tf.tile(x, [2, 1, 1]),
    lambda x: tf.pad(x, [[1, 0], [0, 2], [1, 1]]),
    lambda x: tf.pad(x, [[1, 1], [0, 0], [2, 1]], mode="REFLECT"),
    lambda x: tf.reverse(x, [1]),
    lambda x: tf.concat([x, 2 * x], axis=1),
    lambda x: tf.stack([x, x + 1], axis=0),
    lambda x: tf.stack([x, x + 1], axis=-1),
    lambda x: tf.unstack(x, axis=1)[2],
    lambda x: tf.split(x, [1, 4], axis=2)[1],
    lambda x: tf.gather(x, [2, 0, 2], axis=2),
    lambda x: tf.gather(x, [[0, 1], [1, 0]], axis=0),
    lambda x: tf.cast(x > 0, tf.float32),
    lambda x: tf.where(x > 0, x, tf.zeros_like(x)),
    lambda x: tf.where(x[:, :1] > 0, x, -x),
    lambda x: tf.clip_by_value(x, -0.5, 0.5),
    lambda x: tf.nn.softmax(x, axis=1),
    lambda x: tf.nn.log_softmax(x),
    lambda x: tf.linalg.diag_part(x),
    lambda x: tf.linalg.trace(x),
]


@pytest.mark.parametrize("k", range(len(SHAPES)))
def test_structural_ops(k):
    check(SHAPES[k], R(6, 2, 3, 5))


@pytest.mark.parametrize("sa,sb,in_axes", [
    ((4, 3), (3, 5), (0, None)),          # vector per example @ matrix
    ((4, 2, 3), (3, 5), (0, None)),       # matrix per example @ matrix (one GEMM)
    ((4, 6, 2, 3), (3, 5), (0, None)),    # stacked matrices @ matrix
    ((2, 3), (4, 3, 5), (None, 0)),       # matrix @ matrix per example
    ((3,), (4, 3, 5), (None, 0)),         # vector @ matrix per example
    ((2, 3), (4, 3), (None, 0)),          # matrix @ vector per example
    ((6, 2, 3), (4, 3, 5), (None, 0)),    # stacked @ per example
    ((4, 2, 3), (4, 3, 5), (0, 0)),       # both
    ((4, 3), (4, 3), (0, 0)),             # vector . vector
    ((4, 6, 2, 3), (4, 3, 5), (0, 0)),    # ranks differ, both batched
    ((4, 2, 3), (4, 6, 3, 5), (0, 0)),
    ((2, 4, 3), (3, 5), (1, None)),       # batch axis not first
    ((2, 3, 4), (4, 3, 5), (2, 0)),
])
def test_matmul_every_combination(sa, sb, in_axes):
    # a vector per example: NumPy's rule (the private _matmul, as matvec and tensordot use
    # it), since tf.matmul takes no vector, as TensorFlow
    from tapegrad.ops.linalg_ops import _matmul
    a, b = R(*sa), R(*sb)
    ranks = [len(s) - (ax is not None) for s, ax in zip((sa, sb), in_axes)]
    f = tf.matmul if min(ranks) >= 2 else _matmul
    check(lambda a, b: f(a, b), a, b, in_axes=in_axes, rtol=1e-10)


def test_matmul_transposed_flags():
    check(lambda a, b: tf.matmul(a, b, transpose_a=True, transpose_b=True), R(4, 3, 2), R(4, 5, 3),
          rtol=1e-10)


@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 0)])
@pytest.mark.parametrize("op", [tf.add, tf.subtract, tf.multiply, tf.divide, tf.maximum,
                                tf.pow, tf.math.atan2, tf.equal, tf.less])
def test_binary_broadcasting(op, in_axes):
    # per-example shapes (3, 1) and (4,) broadcast to (3, 4)
    a = np.abs(R(5, 3, 1)) + 0.5 if in_axes[0] == 0 else np.abs(R(3, 1)) + 0.5
    b = R(5, 4) if in_axes[1] == 0 else R(4)
    check(op, a, b, in_axes=in_axes, rtol=1e-12)


def test_where_with_unbatched_condition_and_branches():
    c = R(3, 4) > 0
    check(lambda x, c: tf.where(c, x, 1.0), R(5, 3, 4), c, in_axes=(0, None))
    check(lambda c, y: tf.where(c, 2.0 * tf.ones([3, 4], tf.float64), y), R(5, 3, 4) > 0,
          R(3, 4), in_axes=(0, None))


def test_concat_mixed_batched_and_unbatched():
    check(lambda a, b: tf.concat([a, b, a], axis=0), R(4, 2, 3), R(5, 3), in_axes=(0, None))


def test_gather_with_unbatched_indices_and_batched_params():
    idx = np.array([3, 0, 3])
    check(lambda p, i: tf.gather(p, i, axis=1), R(5, 2, 4), idx, in_axes=(0, None))


def test_gather_with_batched_indices():
    p, idx = R(4, 3), np.array([[0, 2], [1, 1], [2, 0]])
    check(lambda i, p: tf.gather(p, i), idx, p, in_axes=(0, None))
    check(lambda p, i: tf.gather(p, i, axis=1), R(3, 2, 4), idx, in_axes=(0, 0))


def test_advanced_indices_that_numpy_moves_to_the_front():
    check(lambda x: x[np.array([0, 2]), :, np.array([1, 0])], R(4, 3, 2, 5))
    check(lambda x: x[1, :, np.array([1, 0, 1])], R(4, 3, 2, 5))


def test_elementwise_unary_functions():
    for op in [tf.sin, tf.exp, tf.tanh, tf.sigmoid, tf.nn.relu, tf.abs, tf.square, tf.math.erf,
               tf.nn.softplus, tf.sign, tf.floor]:
        check(op, R(4, 3, 2))


def test_einsum_and_tensordot_if_present():
    check(lambda a, b: tf.einsum("ij,jk->ik", a, b), R(4, 2, 3), R(4, 3, 5), rtol=1e-10)
    check(lambda a, b: tf.einsum("ij,jk->ik", a, b), R(4, 2, 3), R(3, 5), in_axes=(0, None),
          rtol=1e-10)
    check(lambda a, b: tf.tensordot(a, b, 1), R(4, 2, 3), R(3, 5), in_axes=(0, None),
          rtol=1e-10)


def test_mlp_per_example():
    w1, w2 = R(3, 8), R(8, 2)
    check(lambda x: tf.matmul(tf.tanh(tf.matmul(x, w1)), w2), R(6, 1, 3), rtol=1e-10)
    check(lambda x: tf.linalg.matvec(w2, tf.tanh(tf.linalg.matvec(w1, x, transpose_a=True)),
                                     transpose_a=True), R(6, 3), rtol=1e-10)


# -- in_axes / out_axes -------------------------------------------------------------------------------
def test_in_axes_negative_and_none():
    x, w = R(3, 4, 5), R(4)
    got = tf.vmap(lambda x, w: tf.reduce_sum(x * w, axis=0), in_axes=(-1, None))(x, w)
    want = np.stack([np.sum(x[:, :, i] * w, axis=0) for i in range(5)])
    np.testing.assert_allclose(got.numpy(), want)


def test_nested_in_axes_prefix_tree():
    d = {"a": R(4, 2), "b": R(2)}
    pair = (R(3, 4), R(4))
    fn = lambda d, p: d["a"] * d["b"] + tf.reduce_sum(p[0]) * p[1]
    got = tf.vmap(fn, in_axes=({"a": 0, "b": None}, (1, 0)))(d, pair)
    want = np.stack([d["a"][i] * d["b"] + np.sum(pair[0][:, i]) * pair[1][i] for i in range(4)])
    np.testing.assert_allclose(got.numpy(), want)


def test_out_axes_and_nested_outputs():
    x = R(4, 2, 3)
    out = tf.vmap(lambda x: {"s": tf.reduce_sum(x, 0), "t": (x, x[0, 0])},
                  out_axes={"s": 1, "t": (-1, 0)})(x)
    np.testing.assert_allclose(out["s"].numpy(), np.sum(x, 1).T)
    assert out["t"][0].shape == (2, 3, 4)
    np.testing.assert_allclose(out["t"][0].numpy(), np.moveaxis(x, 0, -1))
    np.testing.assert_allclose(out["t"][1].numpy(), x[:, 0, 0])


def test_unbatched_outputs_are_broadcast_or_kept_with_out_axes_none():
    x = R(4, 3)
    c = tf.constant(R(3))
    got = tf.vmap(lambda x: (c, 2.0))(x)
    assert got[0].shape == (4, 3) and got[1].shape == (4,)
    np.testing.assert_allclose(got[0].numpy(), np.broadcast_to(c.numpy(), (4, 3)))
    kept = tf.vmap(lambda x: (tf.reduce_sum(x), c), out_axes=(0, None))(x)
    assert kept[1] is c


def test_kwargs_are_mapped_over_axis_0():
    x, y = R(4, 3), R(4, 3)
    got = tf.vmap(lambda x, y=None: x - y)(x, y=y)
    np.testing.assert_allclose(got.numpy(), x - y)


def test_float64_numpy_inputs_stay_float64_and_python_floats_are_float32():
    out = tf.vmap(lambda x, s: x * s, in_axes=(0, None))(R(3, 2), 2.0)
    assert out.dtype == np.float64
    out32 = tf.vmap(lambda x: x * 2.0)(tf.constant([1.0, 2.0]))
    assert out32.dtype == np.float32


def test_nested_vmap_is_a_double_loop():
    x, y = R(3, 4, 2), R(5, 2)
    # outer over x's axis 0, inner over y's axis 0: an outer product of examples
    f = tf.vmap(tf.vmap(lambda a, b: tf.reduce_sum(a * b), in_axes=(None, 0)),
                in_axes=(0, None))
    got = f(x, y)
    want = np.array([[np.sum(x[i] * y[j]) for j in range(5)] for i in range(3)])
    np.testing.assert_allclose(got.numpy(), want)
    # both levels mapped over the same argument, inner along axis 1
    g = tf.vmap(tf.vmap(lambda v: v * tf.reduce_sum(v), in_axes=0), in_axes=1)
    got = g(x)
    want = np.stack([np.stack([x[j, i] * np.sum(x[j, i]) for j in range(3)]) for i in range(4)])
    np.testing.assert_allclose(got.numpy(), want)


def test_vmap_of_a_function_with_a_variable():
    v = tf.Variable(np.array([1.0, 2.0]))
    got = tf.vmap(lambda x: x * v)(R(3, 2))
    assert got.shape == (3, 2)


# -- errors ---------------------------------------------------------------------------------------------
def test_batch_size_mismatch_names_both_sizes():
    with pytest.raises(ValueError, match=r"inconsistent sizes.*size 3.*size 4"):
        tf.vmap(lambda a, b: a + b)(R(3, 2), R(4, 2))
    with pytest.raises(ValueError, match=r"size 2 along axis 1.*size 5 along axis 0"):
        tf.vmap(lambda a, b: a + b, in_axes=(1, 0))(R(3, 2), R(5, 3))


def test_in_axes_errors():
    with pytest.raises(ValueError, match="len\\(in_axes\\)=2, len\\(args\\)=1"):
        tf.vmap(lambda a: a, in_axes=(0, 0))(R(3))
    with pytest.raises(ValueError, match="rank should be at least 1, but is only 0"):
        tf.vmap(lambda a: a)(2.0)
    with pytest.raises(ValueError, match="axis 2"):
        tf.vmap(lambda a: a, in_axes=2)(R(3, 2))
    with pytest.raises(ValueError, match="at least one non-None"):
        tf.vmap(lambda a: a, in_axes=None)(R(3))
    with pytest.raises(TypeError, match="in_axes"):
        tf.vmap(lambda a: a, in_axes="0")
    with pytest.raises(TypeError, match="in_axes"):
        tf.vmap(lambda a: a, in_axes=1.0)
    with pytest.raises(ValueError, match="tree prefix"):
        tf.vmap(lambda d: d["a"], in_axes=({"b": 0},))({"a": R(3)})
    with pytest.raises(TypeError, match="got a dict"):
        tf.vmap(lambda d: d["a"], in_axes={"a": 0})


def test_axis_size_when_nothing_is_mapped():
    got = tf.vmap(lambda c: c * 2.0, in_axes=None, axis_size=3)(tf.constant([1.0, 2.0]))
    assert got.shape == (3, 2)


def test_out_axes_none_for_a_batched_output_is_an_error():
    with pytest.raises(ValueError, match="mapped output but out_axes is None"):
        tf.vmap(lambda a: a * 2, out_axes=None)(R(3))


def test_python_control_flow_and_numpy_on_batched_values_are_errors():
    with pytest.raises(TypeError, match="tf.where"):
        tf.vmap(lambda a: a if a > 0 else -a)(R(3))
    with pytest.raises(TypeError, match="no single concrete value"):
        tf.vmap(lambda a: a.numpy())(R(3))


def test_state_is_restored_after_an_error_inside():
    with pytest.raises(ZeroDivisionError):
        tf.vmap(lambda a: 1 / 0)(R(3))
    from tapegrad.core.state import STATE
    assert STATE.stack.batch_level == 0 and STATE.stack.idle


# -- vectorized_map -------------------------------------------------------------------------------------
def test_vectorized_map_calls_fn_once_on_the_whole_batch():
    calls = []

    def fn(x):
        calls.append(x.shape)
        return tf.reduce_sum(x * x)

    x = R(100, 3)
    got = tf.vectorized_map(fn, tf.constant(x))
    assert calls == [(3,)]
    np.testing.assert_allclose(got.numpy(), np.sum(x * x, axis=1))


def test_vectorized_map_nested_elems_and_outputs():
    elems = {"x": R(5, 3), "pair": (R(5), R(5, 2, 3))}

    def fn(e):
        return e["x"] * e["pair"][0], {"m": tf.linalg.matvec(e["pair"][1], e["x"])}

    a, b = tf.vectorized_map(fn, elems)
    np.testing.assert_allclose(a.numpy(), elems["x"] * elems["pair"][0][:, None])
    np.testing.assert_allclose(b["m"].numpy(), np.einsum("bij,bj->bi", elems["pair"][1],
                                                         elems["x"]))


def test_vectorized_map_batch_mismatch():
    with pytest.raises(ValueError, match="size 3.*size 4"):
        tf.vectorized_map(lambda e: e[0] + e[1][0], (R(3), R(4, 2)))


def _no_rule_primitive():
    """A primitive without a batching rule, kept out of the registry (tests walk it)."""
    name = "test_vmap_no_rule"
    p = PRIMITIVES.pop(name, None) or Primitive(name, lambda x: x * 3.0, nin=1)
    PRIMITIVES.pop(name, None)
    return p


def test_loop_fallback_warns_and_fallback_false_raises():
    p = _no_rule_primitive()
    x = R(4, 2)
    with pytest.warns(UserWarning, match="test_vmap_no_rule"):
        got = tf.vectorized_map(lambda e: p(e) + 1.0, tf.constant(x))
    np.testing.assert_allclose(got.numpy(), 3 * x + 1)
    with pytest.raises(ValueError, match="test_vmap_no_rule.*fallback_to_while_loop"):
        tf.vectorized_map(lambda e: p(e), tf.constant(x), fallback_to_while_loop=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tf.vectorized_map(lambda e: p(e), tf.constant(x), warn=False)


# -- with tapes -------------------------------------------------------------------------------------------
def test_gradient_through_vmap():
    x = tf.constant(R(4, 3))
    w = tf.constant(R(3))
    with tf.GradientTape() as t:
        t.watch([x, w])
        y = tf.reduce_sum(tf.vmap(lambda r, w: tf.sin(r * w), in_axes=(0, None))(x, w))
    gx, gw = t.gradient(y, [x, w])
    np.testing.assert_allclose(gx.numpy(), np.cos(x.numpy() * w.numpy()) * w.numpy())
    np.testing.assert_allclose(gw.numpy(), np.sum(np.cos(x.numpy() * w.numpy()) * x.numpy(), 0))


def test_tape_inside_vmap_gives_per_example_gradients():
    x = R(5, 3)

    def per_example(r):
        with tf.GradientTape() as t:
            t.watch(r)
            y = tf.reduce_sum(r ** 3)
        return t.gradient(y, r)

    got = tf.vmap(per_example)(x)
    np.testing.assert_allclose(got.numpy(), 3 * x ** 2)


def test_vmap_results_agree_with_and_without_an_active_tape():
    x, w = R(4, 2, 3), R(3, 5)
    fn = lambda a: tf.nn.softmax(tf.matmul(a, w), axis=-1)
    plain = tf.vmap(fn)(x).numpy()
    with tf.GradientTape() as t:
        xt = tf.constant(x)
        t.watch(xt)
        taped = tf.vmap(fn)(xt).numpy()
    np.testing.assert_allclose(plain, taped)


# -- linear algebra ------------------------------------------------------------------------------------
def _spd(*shape):
    a = RNG.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


LINALG = {
    "inv": (tf.linalg.inv, [_spd(4, 3, 3)]),
    "det": (tf.linalg.det, [_spd(4, 3, 3)]),
    "slogdet": (tf.linalg.slogdet, [_spd(4, 3, 3)]),
    "logdet": (tf.linalg.logdet, [_spd(4, 3, 3)]),
    "cholesky": (tf.linalg.cholesky, [_spd(4, 3, 3)]),
    "solve": (tf.linalg.solve, [_spd(4, 3, 3), R(4, 3, 2)]),
    "triangular_solve": (tf.linalg.triangular_solve, [np.tril(_spd(4, 3, 3)), R(4, 3, 2)]),
    "einsum-trace": (lambda a: tf.einsum("ii->", a), [R(4, 3, 3)]),
    "einsum-outer": (lambda a, b: tf.einsum("i,j->ij", a, b), [R(4, 3), R(4, 2)]),
    "einsum-bmm": (lambda a, b: tf.einsum("bij,bjk->bik", a, b), [R(4, 2, 3, 5), R(4, 2, 5, 2)]),
    "norm": (lambda a: tf.norm(a, axis=-1), [R(4, 3, 2)]),
    "tensordot": (lambda a, b: tf.tensordot(a, b, [[0], [1]]), [R(4, 3, 2), R(4, 5, 3)]),
}


def _axes_choices(n):
    yield (0,) * n
    if n > 1:
        for i in range(n):
            yield tuple(0 if j == i else None for j in range(n))


@pytest.mark.parametrize("name", sorted(LINALG))
def test_linear_algebra(name):
    fn, args = LINALG[name]
    for axes in _axes_choices(len(args)):
        a = [x if ax == 0 else x[0] for x, ax in zip(args, axes)]
        check(fn, *a, in_axes=axes, rtol=1e-9, atol=1e-12)
