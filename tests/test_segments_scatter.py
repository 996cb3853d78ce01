"""Segment reductions and tensor_scatter_nd_*: values against loops in NumPy (empty
segments, dropped ids, ties, NaN, duplicates), TensorFlow's gradients and errors, a
message-passing (GNN) training step eager and compiled, bit for bit."""
import re
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.testing import assert_same_bits, check_grads


def _segments_numpy(data, ids, n, how):
    """The reference: a loop over the rows, TensorFlow's identities for empty segments."""
    dt = data.dtype
    lowest = np.finfo(dt).min if dt.kind == "f" else np.iinfo(dt).min
    highest = np.finfo(dt).max if dt.kind == "f" else np.iinfo(dt).max
    init = {"sum": 0, "prod": 1, "max": lowest, "min": highest, "mean": 0}[how]
    out = np.full((n,) + data.shape[ids.ndim:], init, dt)
    rows = data.reshape((-1,) + data.shape[ids.ndim:])
    count = np.zeros(n)
    for r, s in zip(rows, ids.reshape(-1)):
        if s < 0:
            continue
        count[s] += 1
        if how in ("sum", "mean"):
            out[s] = out[s] + r
        elif how == "prod":
            out[s] = out[s] * r
        else:
            out[s] = (np.maximum if how == "max" else np.minimum)(out[s], r)
    if how == "mean":
        out = out / np.maximum(count, 1).reshape((n,) + (1,) * (out.ndim - 1))
    return out, count


@pytest.mark.parametrize("how", ["sum", "mean", "max", "min", "prod"])
def test_unsorted_segments_match_a_loop(how):
    rng = np.random.default_rng(0)
    data = rng.standard_normal((7, 3))
    data[2, 1] = np.nan
    data[4, 0] = np.inf
    ids = np.array([3, 0, 3, -1, 0, 3, -1])  # segments 1 and 2 empty, two rows dropped
    op = getattr(tf.math, f"unsorted_segment_{how}")
    got = op(data, ids, num_segments=4).numpy()
    want, _ = _segments_numpy(data, ids, 4, how)
    assert_same_bits(got, want, how)
    ids2 = np.array([[1, 0], [1, -1]])  # ids over the two leading axes
    data2 = rng.standard_normal((2, 2, 3))
    assert_same_bits(op(data2, ids2, 2).numpy(), _segments_numpy(data2, ids2, 2, how)[0])
    if how in ("sum", "max", "min", "prod"):
        idata = np.array([5, -2, 7, 3], np.int32)
        assert_same_bits(op(idata, [1, 1, 0, 1], 3).numpy(),
                         _segments_numpy(idata, np.array([1, 1, 0, 1]), 3, how)[0])


def test_unsorted_segment_sqrt_n():
    data = np.array([[1.0, 2.0], [3.0, -1.0], [4.0, 0.5], [2.0, 2.0]])
    ids = np.array([2, 2, -1, 2])
    s, count = _segments_numpy(data, ids, 4, "sum")
    want = s / np.sqrt(np.maximum(count, 1))[:, None]
    assert_same_bits(tf.math.unsorted_segment_sqrt_n(data, ids, 4).numpy(), want)
    check_grads(lambda d: tf.math.unsorted_segment_sqrt_n(d, ids, 4), [data])


@pytest.mark.parametrize("how", ["sum", "mean", "max", "min", "prod"])
def test_sorted_segments_give_zero_for_empty_segments(how):
    data = np.array([[1.0, -2.0], [3.0, 0.5], [-1.0, 4.0], [2.0, 2.0]])
    ids = np.array([0, 0, 2, 2])
    got = getattr(tf.math, f"segment_{how}")(data, ids).numpy()
    want, count = _segments_numpy(data, ids, 3, how)
    if how in ("max", "min"):
        want[count == 0] = 0.0
    assert_same_bits(got, want)
    assert getattr(tf.math, f"segment_{how}")(data[:0], ids[:0]).shape == (0, 2)
    # TensorFlow's integer mean truncates toward zero
    assert tf.math.segment_mean(np.array([1, 2, -7, 2], np.int32), [0, 0, 1, 1]).numpy(
        ).tolist() == [1, -2]


def test_segment_errors_are_tensorflows():
    err = tf.errors.InvalidArgumentError
    with pytest.raises(err, match=r"segment_ids\[0\] = 3 is out of range \[0, 2\)"):
        tf.math.unsorted_segment_sum([1.0, 2.0], [3, 0], 2)
    with pytest.raises(err, match="out of range"):
        tf.math.unsorted_segment_max([1.0, 2.0], [0, 2], 2)
    with pytest.raises(err, match="segment ids are not increasing"):
        tf.math.segment_sum([1.0, 2.0], [1, 0])
    with pytest.raises(err, match="Segment id -1 out of range"):
        tf.math.segment_max([1.0, 2.0], [-1, 0])
    with pytest.raises(err, match="same size as dimension 0"):
        tf.math.segment_sum([1.0, 2.0, 3.0], [0, 1])
    with pytest.raises(err, match="does not start with"):
        tf.math.unsorted_segment_sum(np.ones((3, 2)), [0, 1], 2)
    with pytest.raises(TypeError, match="int32 or int64"):
        tf.math.unsorted_segment_sum([1.0], [0.0], 1)
    with pytest.raises(TypeError, match="num_segments must be a concrete integer"):
        tf.function(lambda d, n: tf.math.unsorted_segment_sum(d, [0, 1], n))(
            tf.ones([2]), tf.constant(2))
    with pytest.raises(TypeError, match="unsorted_segment_sum"):
        tf.function(lambda d, i: tf.math.segment_sum(d, i))(tf.ones([2]), tf.constant([0, 1]))


def test_segment_gradients_are_tensorflows():
    data = np.array([[1.0, 5.0], [5.0, 2.0], [3.0, 5.0], [0.5, -1.0]])
    ids = np.array([0, 0, 0, 2])
    x = tf.constant(data)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        m = tf.math.unsorted_segment_max(x, ids, 3)
        p = tf.math.unsorted_segment_prod(x, ids, 3)
    w = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    g = t.gradient(m, x, output_gradients=w).numpy()
    # column 1 of segment 0 ties (5, 5): each gets half; column 0 has one maximum
    assert g.tolist() == [[0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [5.0, 6.0]]
    gp = t.gradient(p, x).numpy()
    np.testing.assert_allclose(gp[:3, 0], [15.0, 3.0, 5.0])
    for op in (tf.math.unsorted_segment_max, tf.math.unsorted_segment_min,
               tf.math.unsorted_segment_prod, tf.math.unsorted_segment_sum,
               tf.math.unsorted_segment_mean):
        check_grads(lambda d: op(d, np.array([1, -1, 1, 0, 3]), 4),
                    [np.array([0.5, 2.0, -1.5, 3.0, 0.25])])
    for op in (tf.math.segment_max, tf.math.segment_mean, tf.math.segment_prod):
        check_grads(lambda d: op(d, np.array([0, 0, 2, 2, 2])),
                    [np.array([0.5, 2.0, -1.5, 3.0, 0.25])])
    # a segment with one zero: its gradient is the product of the others, without 0 / 0
    z = tf.constant([0.0, 2.0, 3.0, 0.0, 0.0])
    with tf.GradientTape() as t2:
        t2.watch(z)
        pz = tf.math.unsorted_segment_prod(z, [0, 0, 0, 1, 1], 2)
    assert t2.gradient(pz, z).numpy().tolist() == [6.0, 0.0, 0.0, 0.0, 0.0]


def _gnn_step(h, w, src, dst, n):
    """One message-passing layer: messages along the edges, mean-pooled at their targets,
    max-pooled into a graph readout."""
    msg = tf.nn.relu(tf.matmul(tf.gather(h, src), w))
    agg = tf.math.unsorted_segment_mean(msg, dst, num_segments=n)
    pooled = tf.math.unsorted_segment_max(agg + h, tf.constant([0, 0, 1, 1, 1]), 2)
    return tf.reduce_sum(tf.square(pooled))


def test_a_message_passing_step_eager_and_compiled():
    rng = np.random.default_rng(3)
    h = rng.standard_normal((5, 4))
    w = tf.Variable(rng.standard_normal((4, 4)) * 0.5)
    src = tf.constant([0, 1, 2, 3, 4, 0, 2])
    dst = tf.constant([1, 2, 3, 4, 0, 3, 3])

    def grads(hv):
        with tf.GradientTape() as t:
            loss = _gnn_step(hv, w, src, dst, 5)
        return loss, t.gradient(loss, w)
    hv = tf.constant(h)
    loss, g = grads(hv)
    compiled = tf.function(grads)
    loss_c, g_c = compiled(hv)
    assert_same_bits(loss_c.numpy(), loss.numpy())
    assert_same_bits(g_c.numpy(), g.numpy())
    check_grads(lambda hh, ww: _gnn_step(hh, ww, src, dst, 5), [h, w.numpy()], order=1)
    for _ in range(4):  # from the third tape of one structure on, a compiled derivative pass
        assert_same_bits(grads(hv)[1].numpy(), g.numpy())

    @tf.function
    def traced_ids(d, ids):  # ids as arguments: the unsorted ops trace with them
        return (tf.math.unsorted_segment_sum(d, ids, 3), tf.math.unsorted_segment_max(d, ids, 3),
                tf.math.unsorted_segment_mean(d, ids, 3))
    d, ids = tf.constant(h[:4]), tf.constant([2, -1, 0, 2])
    for c, e in zip(traced_ids(d, ids), (tf.math.unsorted_segment_sum(d, ids, 3),
                                         tf.math.unsorted_segment_max(d, ids, 3),
                                         tf.math.unsorted_segment_mean(d, ids, 3))):
        assert_same_bits(c.numpy(), e.numpy())
    # an id past num_segments fails when traced too, with TensorFlow's error
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=re.escape("segment_ids[1] = 3 is out of range [0, 3)")):
        traced_ids(d, tf.constant([2, 3, 0, 2]))


def test_tensor_scatter_nd():
    t = np.arange(12.0).reshape(3, 4)
    idx = np.array([[0, 1], [2, 3], [0, 1]])
    upd = np.array([10.0, 20.0, 30.0])
    added = tf.tensor_scatter_nd_add(t, idx, upd).numpy()
    want = t.copy()
    np.add.at(want, (idx[:, 0], idx[:, 1]), upd)
    assert_same_bits(added, want)
    want = t.copy()
    np.subtract.at(want, (idx[:, 0], idx[:, 1]), upd)
    assert_same_bits(tf.tensor_scatter_nd_sub(t, idx, upd).numpy(), want)
    want = t.copy()
    want[idx[:, 0], idx[:, 1]] = upd  # NumPy assigns in order: the last duplicate wins
    assert_same_bits(tf.tensor_scatter_nd_update(t, idx, upd).numpy(), want)
    # slices: indices address rows, updates are whole rows; -0.0 and NaN pass unchanged
    rows = np.array([[-0.0, np.nan, 1.0, 2.0]])
    want = t.copy()
    want[1] = rows[0]
    assert_same_bits(tf.tensor_scatter_nd_update(t, [[1]], rows).numpy(), want)
    # gradients: the tensor's off the updated elements, each update that reaches the output
    tv, uv = tf.constant(t), tf.constant(upd)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([tv, uv])
        u = tf.tensor_scatter_nd_update(tv, idx, uv) * np.arange(1.0, 13.0).reshape(3, 4)
        a = tf.tensor_scatter_nd_add(tv, idx, uv) * 2.0
    gt, gu = tape.gradient(u, [tv, uv])
    mask = np.ones((3, 4))
    mask[0, 1] = mask[2, 3] = 0
    assert_same_bits(gt.numpy(), mask * np.arange(1.0, 13.0).reshape(3, 4))
    assert gu.numpy().tolist() == [0.0, 12.0, 2.0]  # the first (overwritten) update: 0
    assert tape.gradient(a, uv).numpy().tolist() == [2.0, 2.0, 2.0]
    for op in (tf.tensor_scatter_nd_update, tf.tensor_scatter_nd_add, tf.tensor_scatter_nd_sub):
        check_grads(lambda a_, b_: op(a_, [[0], [2]], b_), [t, np.ones((2, 4))])
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not index into shape"):
        tf.tensor_scatter_nd_update(tf.zeros([4]), [[4]], [1.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not index into shape"):
        tf.tensor_scatter_nd_add(tf.zeros([4]), [[-1]], [1.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="updates must have shape"):
        tf.tensor_scatter_nd_add(tf.zeros([4]), [[1]], [1.0, 2.0])

    @tf.function
    def traced(tt, ii, uu):
        return tf.tensor_scatter_nd_update(tt, ii, uu)
    got = traced(tf.constant(t), tf.constant(idx), tf.constant(upd))
    assert_same_bits(got.numpy(), tf.tensor_scatter_nd_update(t, idx, upd).numpy())


def test_vectorized_map_over_examples_and_their_indices():
    rng = np.random.default_rng(4)
    x = tf.constant(rng.standard_normal((3, 5, 2)))
    idx = tf.constant([[[1], [3]], [[0], [0]], [[4], [2]]])      # per-example indices
    ids = tf.constant([[0, 1, 1, -1, 2], [2, 2, 0, 0, 1], [1, 1, 1, 1, 1]])
    shifts = tf.constant([1, -2, 7])
    fns = {
        "scatter": lambda a: tf.tensor_scatter_nd_update(a[0], a[1], a[0][:2] * 2),
        "segments": lambda a: (tf.math.unsorted_segment_mean(a[0], a[2], 3)
                               + tf.math.unsorted_segment_prod(a[0], a[2], 3)
                               + tf.math.unsorted_segment_max(a[0], a[2], 3)),
        "roll": lambda a: tf.roll(a[0], a[3], 0),
        "batch_dims": lambda a: tf.gather(a[0], [[1], [0], [1], [0], [1]], axis=1, batch_dims=1),
    }
    for name, f in fns.items():
        got = tf.vectorized_map(f, (x, idx, ids, shifts)).numpy()
        want = np.stack([f((x[k], idx[k], ids[k], shifts[k])).numpy() for k in range(3)])
        assert_same_bits(got, want, name)


def _scatter_extreme_loop(t, ids, u, how):
    """TensorFlow's CPU kernel, update by update: out = (out < u) ? u : out (min: u < out)."""
    out = t.copy()
    better = (lambda a, b: a < b) if how == "max" else (lambda a, b: b < a)
    for k, i in enumerate(ids):
        for j in np.ndindex(out.shape[1:]):
            if better(out[(i,) + j], u[(k,) + j]):
                out[(i,) + j] = u[(k,) + j]
    return out


@pytest.mark.parametrize("how", ["max", "min"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_tensor_scatter_nd_max_min_match_the_kernel_loop(how, dtype):
    rng = np.random.default_rng(7)
    t = rng.integers(-3, 4, (6, 2)).astype(dtype)
    u = rng.integers(-3, 4, (9, 2)).astype(dtype)
    ids = rng.integers(0, 6, 9)
    if dtype != np.int32:  # NaN in the tensor stays, NaN updates change nothing; +-0 ties
        t[0, 0], u[3, 1], t[1] = np.nan, np.nan, [-0.0, 0.0]
        u[[4, 5]] = [[0.0, -0.0], [-0.0, 0.0]]
        ids[[3, 4, 5]] = [2, 1, 1]
    fn = getattr(tf, f"tensor_scatter_nd_{how}")
    want = _scatter_extreme_loop(t, ids, u, how)
    got = fn(tf.constant(t), tf.constant(ids[:, None]), tf.constant(u))
    assert_same_bits(got.numpy(), want)
    compiled = tf.function(fn)(tf.constant(t), tf.constant(ids[:, None]), tf.constant(u))
    assert_same_bits(compiled.numpy(), want)
    # indices into two axes: the same slots, addressed by (row, column)
    got2 = fn(tf.constant(t), tf.constant(np.stack([ids, ids % 2], 1)),
              tf.constant(u[:, 0].copy()))
    want2 = _scatter_extreme_loop(t.reshape(12, 1), ids * 2 + ids % 2, u[:, :1], how)
    assert_same_bits(got2.numpy(), want2.reshape(6, 2))


@pytest.mark.parametrize("how", ["max", "min"])
def test_tensor_scatter_nd_max_min_gradients_are_tensorflows(how):
    fn = getattr(tf, f"tensor_scatter_nd_{how}")
    rng = np.random.default_rng(8)
    ids = np.array([[0], [2], [0], [3]])
    check_grads(lambda t, u: fn(t, ids, u), [rng.standard_normal((5, 2)),
                                             rng.standard_normal((4, 2))], order=2)
    # ties share the cotangent (TensorFlow's rule): the tensor and two updates equal to it
    t, u = tf.constant([3.0, 1.0]), tf.constant([3.0, 3.0, 0.5])
    with tf.GradientTape() as g:
        g.watch([t, u])
        y = fn(t, [[0], [0], [1]], u)
    gt, gu = g.gradient(y, [t, u])
    winner = float(how == "min")  # 0.5 beats 1.0 only for min
    third = np.float32(1) / np.float32(3)
    np.testing.assert_array_equal(gt.numpy(), np.array([third, 1 - winner], np.float32))
    np.testing.assert_array_equal(gu.numpy(), np.array([third, third, winner], np.float32))


def test_tensor_scatter_nd_max_min_errors_and_vmap():
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not index"):
        tf.tensor_scatter_nd_max([1.0, 2.0], [[5]], [1.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="updates must have shape"):
        tf.tensor_scatter_nd_min([1.0, 2.0], [[0]], [1.0, 2.0])
    with pytest.raises(tf.errors.NotFoundError):
        tf.tensor_scatter_nd_max([True, False], [[1]], [True])
    rng = np.random.default_rng(9)
    t, u = rng.standard_normal((4, 5)), rng.standard_normal((4, 3))
    ids = rng.integers(0, 5, (4, 3, 1))
    f = lambda t, i, u: tf.tensor_scatter_nd_max(t, i, u)  # noqa: E731
    loop = np.stack([f(t[k], ids[k], u[k]).numpy() for k in range(4)])
    assert_same_bits(tf.vmap(f)(t, ids, u).numpy(), loop)
