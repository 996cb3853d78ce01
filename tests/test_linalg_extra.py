"""Op-level tests of linear algebra and shape ops: values against NumPy, derivatives (forward
and reverse, orders 1 and 2), batching against a loop, and the errors for bad shapes.

``test_primitives.py`` checks each primitive through ``bind``; these go through the public
ops, so the op layer's parsing (einsum's '...' and implicit output, tensordot's axes, norm's
ord/axis) is covered too.
"""
import itertools

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.testing import check_batching, check_grads

L = tf.linalg


def rnd(*shape, seed=0):
    return np.random.RandomState(seed).standard_normal(shape)


def mat(*shape, seed=0):
    """Well-conditioned square matrices."""
    return rnd(*shape, seed=seed) + 3 * np.eye(shape[-1])


def spd(*shape, seed=0):
    a = rnd(*shape, seed=seed)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def sym(a):
    return 0.5 * (a + L.matrix_transpose(a))


def check_all(f, args, batched=None, order=2):
    """Derivatives in both modes to ``order``, and batching (no loop fallback)."""
    check_grads(f, args, order=order)
    batched = batched or [True] * len(args)
    stacked = [np.stack([np.asarray(a) * (1 + 0.1 * k) for k in range(3)]) if b else a
               for a, b in zip(args, batched)]
    check_batching(f, stacked, batched=batched, fallback_ok=False)


# ---- einsum -------------------------------------------------------------------------------
EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),                      # implicit output
    ("bxby->bxy", [(2, 3, 2, 4)]),                    # a letter repeated in one operand
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),                                 # implicit: the trace
    ("iii->i", [(2, 2, 2)]),
    ("ij->", [(2, 3)]),
    ("ji", [(2, 3)]),                                 # implicit output sorts the letters
    ("Ba,bA", [(2, 3), (4, 5)]),                      # ... in ASCII order, as NumPy
    ("iij,jk->ik", [(3, 3, 2), (2, 2)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("i,i,i->", [(3,), (3,), (3,)]),
    (",ij->ij", [(), (2, 3)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),  # ellipsis axes broadcast
    ("...ij,...jk", [(2, 3, 4), (4, 2)]),
    ("i...->...", [(2, 3, 4)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("ij,ij->ij", [(2, 3), (1, 3)]),                  # a size-1 axis broadcasts
    (" b i j , b j k -> b i k ", [(2, 3, 4), (2, 4, 2)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM, ids=[e for e, _ in EINSUM])
def test_einsum_matches_numpy(eq, shapes):
    args = [rnd(*s, seed=i) for i, s in enumerate(shapes)]
    got = tf.einsum(eq, *args).numpy()
    want = np.einsum(eq.replace(" ", ""), *args)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("eq,shapes", EINSUM, ids=[e for e, _ in EINSUM])
def test_einsum_derivatives_and_batching(eq, shapes):
    args = [rnd(*s, seed=i) for i, s in enumerate(shapes)]
    check_all(lambda *xs: tf.einsum(eq, *xs), args)
    if len(args) > 1:  # one operand batched, the others shared
        check_all(lambda *xs: tf.einsum(eq, *xs), args,
                  batched=[True] + [False] * (len(args) - 1), order=1)


def test_einsum_same_tensor_twice():
    x = tf.constant(rnd(3, 3))
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.einsum("ij,ji->", x, x)   # tr(x @ x)
    np.testing.assert_allclose(t.gradient(y, x).numpy(), 2 * x.numpy().T, rtol=1e-12)


@pytest.mark.parametrize("eq,shapes,match", [
    ("ij,jk->ik", [(2, 3), (4, 2)], "sizes 3 and 4"),
    ("ij,jk->ik", [(2, 3)], "2 operand"),
    ("ij->ii", [(2, 2)], "only once"),
    ("ij->k", [(2, 2)], "must appear"),
    ("ijk->i", [(2, 2)], "do not fit"),
    ("i1->i", [(2, 2)], "invalid subscripts"),
    ("...i->i", [(2, 2)], "'...'"),
    ("ii->i", [(2, 3)], "sizes"),
])
def test_einsum_errors(eq, shapes, match):
    with pytest.raises(ValueError, match=match):
        tf.einsum(eq, *[np.ones(s) for s in shapes])


# ---- tensordot ----------------------------------------------------------------------------
@pytest.mark.parametrize("a,b,axes", [
    ((2, 3), (3, 4), 1), ((2, 3, 4), (3, 4, 5), 2), ((2, 3), (4,), 0),
    ((3, 4, 2), (2, 3), [[0, 2], [1, 0]]), ((2, 3), (3, 2), [1, 0]), ((), (3,), 0),
])
def test_tensordot(a, b, axes):
    x, y = rnd(*a), rnd(*b, seed=1)
    np.testing.assert_allclose(tf.tensordot(x, y, axes).numpy(), np.tensordot(x, y, axes),
                               rtol=1e-12, atol=1e-12)
    check_all(lambda x, y: tf.tensordot(x, y, axes), [x, y])


def test_tensordot_error_names_both_shapes():
    with pytest.raises(ValueError, match=r"tensordot.*\(2, 3\).*\(2, 3\)"):
        tf.tensordot(tf.ones([2, 3]), tf.ones([2, 3]), 1)


# ---- inverse, determinants, solves ---------------------------------------------------------------
MATS = [(3, 3), (2, 3, 3), (1, 1)]


@pytest.mark.parametrize("shape", MATS)
def test_inv_det_slogdet(shape):
    a = mat(*shape)
    np.testing.assert_allclose(L.inv(a).numpy(), np.linalg.inv(a), rtol=1e-12)
    np.testing.assert_allclose(L.det(a).numpy(), np.linalg.det(a), rtol=1e-12)
    sign, logabs = L.slogdet(a)
    np.testing.assert_allclose(sign.numpy(), np.linalg.slogdet(a)[0])
    np.testing.assert_allclose(logabs.numpy(), np.linalg.slogdet(a)[1], rtol=1e-12)
    check_all(L.inv, [a])
    check_all(lambda a: L.inv(a, adjoint=True), [a])
    check_all(L.det, [a])
    check_all(lambda a: L.slogdet(a)[1], [a])


def test_slogdet_sign_has_no_gradient_and_logabsdet_handles_negative_det():
    a = tf.constant([[0.0, 2.0], [1.5, 0.3]], dtype=tf.float64)
    with tf.GradientTape(persistent=True) as t:
        t.watch(a)
        sign, logabs = L.slogdet(a)
    assert float(sign) == -1.0
    assert t.gradient(sign, a) is None
    np.testing.assert_allclose(t.gradient(logabs, a).numpy(), np.linalg.inv(a.numpy()).T)


@pytest.mark.parametrize("a,b", [((3, 3), (3, 2)), ((2, 3, 3), (2, 3, 1)), ((3, 3), (2, 3, 2)),
                                 ((2, 1, 3, 3), (4, 3, 1))])
def test_solve(a, b):
    m, r = mat(*a), rnd(*b, seed=1)
    batch = np.broadcast_shapes(a[:-2], b[:-2])
    want = np.linalg.solve(np.broadcast_to(m, batch + a[-2:]), np.broadcast_to(r, batch + b[-2:]))
    np.testing.assert_allclose(L.solve(m, r).numpy(), want, rtol=1e-12)
    check_all(L.solve, [m, r])
    check_all(lambda m, r: L.solve(m, r, adjoint=True), [m, r])
    check_all(L.solve, [m, r], batched=[True, False], order=1)
    check_all(L.solve, [m, r], batched=[False, True], order=1)


@pytest.mark.parametrize("shape", MATS)
def test_cholesky(shape):
    a = spd(*shape)
    np.testing.assert_allclose(L.cholesky(a).numpy(), np.linalg.cholesky(a), rtol=1e-12)
    # numpy reads the lower triangle only: symmetrising first makes every direction valid
    check_all(lambda a: L.cholesky(sym(a)), [a])
    check_all(lambda a: L.logdet(sym(a)), [a])


def test_cholesky_gradient_is_symmetric():
    a = tf.constant(spd(3, 3))
    with tf.GradientTape() as t:
        t.watch(a)
        y = tf.reduce_sum(L.cholesky(a) * rnd(3, 3, seed=4))
    g = t.gradient(y, a).numpy()
    np.testing.assert_allclose(g, g.T, rtol=1e-12)


@pytest.mark.parametrize("lower,adjoint", list(itertools.product([True, False], repeat=2)))
@pytest.mark.parametrize("a,b", [((3, 3), (3, 2)), ((2, 3, 3), (3, 1)), ((3, 3), (2, 3, 2))])
def test_triangular_solve(a, b, lower, adjoint):
    m, r = mat(*a), rnd(*b, seed=1)
    tri = np.tril(m) if lower else np.triu(m)
    tri = np.swapaxes(tri, -1, -2) if adjoint else tri
    batch = np.broadcast_shapes(a[:-2], b[:-2])
    want = np.linalg.solve(np.broadcast_to(tri, batch + a[-2:]),
                           np.broadcast_to(r, batch + b[-2:]))
    got = L.triangular_solve(m, r, lower=lower, adjoint=adjoint)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    check_all(lambda m, r: L.triangular_solve(m, r, lower=lower, adjoint=adjoint), [m, r])


@pytest.mark.parametrize("fn,args,match", [
    (tf.matmul, ([[1.0, 2.0, 3.0]], [[1.0], [2.0]]), r"\[1, 3\].*\[2, 1\].*matmul"),
    (L.solve, (np.eye(3), np.ones((4, 2))), r"solve.*\(3, 3\).*\(4, 2\)"),
    (L.solve, (np.ones((2, 3, 3)), np.ones((4, 3, 1))), r"solve.*\(2, 3, 3\).*\(4, 3, 1\)"),
    (L.triangular_solve, (np.eye(3), np.ones((2, 2))), r"triangular_solve.*\(3, 3\).*\(2, 2\)"),
    (L.inv, (np.ones((2, 3)),), r"inv.*\(2, 3\)"),
    (L.det, (np.ones((3,)),), r"det.*\(3,\)"),
])
def test_shape_errors_name_the_op_and_shapes(fn, args, match):
    with pytest.raises(ValueError, match=match):
        fn(*args)


def test_singular_raises_and_not_positive_definite_gives_nan():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input is not invertible"):
        L.inv(np.zeros((2, 2)))
    # TensorFlow's Cholesky kernel does not raise: the factor's lower triangle is NaN
    got = L.cholesky(np.array([[1.0, 2.0], [2.0, 1.0]])).numpy()
    assert np.isnan(got[np.tril_indices(2)]).all() and got[0, 1] == 0


# ---- diagonals, bands, trace ----------------------------------------------------------------
@pytest.mark.parametrize("shape,kw", [
    ((3,), {}), ((2, 3), {}), ((3,), dict(k=1)), ((3,), dict(k=-2)),
    ((3,), dict(num_rows=3, num_cols=5)), ((3,), dict(num_rows=5, num_cols=3)),
    ((2,), dict(k=1, num_rows=4)), ((3,), dict(padding_value=7.0)),
])
def test_diag(shape, kw):
    v = rnd(*shape)
    out = L.diag(v, **kw).numpy()
    k = kw.get("k", 0)
    want = np.full(shape[:-1] + out.shape[-2:], kw.get("padding_value", 0.0))
    for i in range(shape[-1]):
        want[..., i + max(0, -k), i + max(0, k)] = v[..., i]
    np.testing.assert_array_equal(out, want)
    check_all(lambda v: L.diag(v, **kw), [v])


@pytest.mark.parametrize("shape,k", [((3, 3), 0), ((2, 3, 4), 0), ((4, 2), 0), ((3, 4), 1),
                                     ((3, 4), -2)])
def test_diag_part_and_trace(shape, k):
    x = rnd(*shape)
    want = np.diagonal(x, offset=k, axis1=-2, axis2=-1)
    np.testing.assert_array_equal(L.diag_part(x, k=k).numpy(), want)
    check_all(lambda x: L.diag_part(x, k=k), [x])
    np.testing.assert_allclose(L.trace(x).numpy(), np.trace(x, axis1=-2, axis2=-1))
    check_all(L.trace, [x])


@pytest.mark.parametrize("lo,up", [(0, -1), (-1, 0), (1, 1), (0, 0), (-1, -1)])
def test_band_part(lo, up):
    x = rnd(2, 3, 4)
    i, j = np.arange(3)[:, None], np.arange(4)[None]
    keep = ((lo < 0) | (i - j <= lo)) & ((up < 0) | (j - i <= up))
    np.testing.assert_array_equal(L.band_part(x, lo, up).numpy(), np.where(keep, x, 0.0))
    check_all(lambda x: L.band_part(x, lo, up), [x])


# ---- norms ----------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,ord,axis,keepdims", [
    ((3,), "euclidean", None, False), ((2, 3), "euclidean", None, True), ((2, 3), 1, 1, False),
    ((2, 3), np.inf, 0, True), ((2, 3), 3, None, False), ((2, 3), 2, -1, False),
    ((2, 3, 4), "fro", (1, 2), False), ((2, 3, 4), 1, (1, 2), True),
    ((2, 3, 4), np.inf, [-1, -3], False), ((3, 4), 1, (1, 0), False),
    ((2, 3, 4), 2, (1, 2), False), ((2, 3, 4), 2, (2, 0), True),
])
def test_norm(shape, ord, axis, keepdims):
    x = rnd(*shape)
    got = tf.norm(x, ord=ord, axis=axis, keepdims=keepdims).numpy()
    if axis is None:
        want = np.linalg.norm(x.ravel(), ord=None if ord == "euclidean" else ord)
        want = np.reshape(want, (1,) * x.ndim) if keepdims else want
    else:
        np_ord = "fro" if ord in ("fro", "euclidean") else ord
        np_axis = tuple(axis) if isinstance(axis, (list, tuple)) else axis
        want = np.linalg.norm(x, ord=np_ord if np.ndim(np_axis) else ord, axis=np_axis,
                              keepdims=keepdims)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # 1 and inf norms are piecewise linear: their second derivative is zero almost everywhere
    check_all(lambda x: tf.norm(x, ord=ord, axis=axis, keepdims=keepdims), [x])
    assert L.norm is tf.norm


def test_norm_errors():
    with pytest.raises(ValueError, match="matrix norm"):
        tf.norm(tf.ones([2, 3]), "fro")
    with pytest.raises(ValueError, match="matrix norm"):
        tf.norm(tf.ones([2, 3]), 3, axis=[0, 1])
    with pytest.raises(ValueError, match="vector norm"):
        tf.norm(tf.ones([3]), -1)


@pytest.mark.parametrize("ord,axis", [("euclidean", None), ("euclidean", 1), (1, 0),
                                      (np.inf, None), ("fro", (0, 1)), (3.0, -1), (1, [0, 1])])
def test_normalize_is_the_tensor_over_its_norm(ord, axis):
    x = rnd(3, 4)
    normalized, norm = tf.linalg.normalize(x, ord, axis)
    want = tf.norm(x, ord, axis, keepdims=True)
    assert norm.shape == want.shape
    np.testing.assert_array_equal(norm.numpy(), want.numpy())
    np.testing.assert_array_equal(normalized.numpy(), x / want.numpy())
    smooth = ord not in (1, np.inf)  # 1 and inf norms are piecewise linear
    check_grads(lambda x: tf.linalg.normalize(x, ord, axis)[0], [x], order=2 if smooth else 1)
    check_grads(lambda x: tf.linalg.normalize(x, ord, axis)[1], [x], order=2 if smooth else 1)


def test_euclidean_norm_of_complex_numbers_is_their_modulus():
    x = rnd(3, 4) + 1j * rnd(3, 4)
    for axis in (None, 1, (0, 1)):
        got = tf.norm(x, "euclidean", axis).numpy()
        want = np.sqrt(np.sum(x * np.conj(x), axis=axis))  # TensorFlow's, in x's dtype
        assert got.dtype == np.complex128
        np.testing.assert_allclose(got, want, rtol=1e-14)
        np.testing.assert_allclose(got.real, np.linalg.norm(x if axis is not None else
                                                            x.ravel(), axis=axis), rtol=1e-14)


def test_normalize_zero_vector_and_errors():
    normalized, norm = tf.linalg.normalize([[3.0, 4.0], [0.0, 0.0]], axis=1)
    assert norm.numpy().tolist() == [[5.0], [0.0]] and np.isnan(normalized.numpy()[1]).all()
    with pytest.raises(tf.errors.InvalidArgumentError, match="int32"):
        tf.linalg.normalize(tf.constant([3, 4]))
    with pytest.raises(ValueError, match="vector norm"):
        tf.linalg.normalize([1.0, 2.0], -1)


@pytest.mark.parametrize("shape,clip,axes", [((3,), 1.0, None), ((2, 3), 0.5, 1),
                                             ((2, 3), 100.0, None)])
def test_clip_by_norm(shape, clip, axes):
    x = rnd(*shape)
    n = np.sqrt(np.sum(x * x, axis=axes, keepdims=True))
    np.testing.assert_allclose(tf.clip_by_norm(x, clip, axes).numpy(),
                               x * clip / np.maximum(n, clip), rtol=1e-12)
    check_all(lambda x: tf.clip_by_norm(x, clip, axes), [x])


def test_clip_by_norm_of_zeros_has_a_finite_gradient():
    x = tf.zeros([3], dtype=tf.float64)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reduce_sum(tf.clip_by_norm(x, 1.0))
    assert np.all(np.isfinite(t.gradient(y, x).numpy()))


# ---- shape ops --------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["REFLECT", "SYMMETRIC"])
@pytest.mark.parametrize("shape", [(1,), (3,), (5,), (3, 4)])
def test_pad_modes_match_numpy(mode, shape):
    x = np.arange(np.prod(shape), dtype=float).reshape(shape)
    off = 1 if mode == "REFLECT" else 0
    for pads in itertools.product(*[range(n - off + 1) for n in shape for _ in (0, 1)]):
        p = np.array(pads).reshape(len(shape), 2)
        np.testing.assert_array_equal(tf.pad(x, p, mode).numpy(),
                                      np.pad(x, p, mode=mode.lower()))
    with pytest.raises(ValueError, match="too large"):
        tf.pad(x, [[shape[0] + 1 - off, 0]] + [[0, 0]] * (len(shape) - 1), mode)


@pytest.mark.parametrize("mode", ["CONSTANT", "REFLECT", "SYMMETRIC"])
def test_pad_derivatives(mode):
    check_all(lambda x: tf.pad(x, [[1, 2], [0, 2]], mode), [rnd(3, 4)])


GETITEM = [
    (1, slice(None, None, 2)), (slice(None, None, -1), None, Ellipsis), (Ellipsis, None),
    (np.array([0, 2, 2]),), (np.array([True, False, True]),), (Ellipsis, np.array([1, -1])),
    (np.array([0, 2]), slice(None), np.array([1, 3])),           # separated: moved to the front
    (0, slice(None), np.array([1, 3, 3])),                        # an int counts as advanced
    (np.array([1]), Ellipsis, np.array([0, 4])),
    (slice(None), np.array([0, 1]), None, np.array([2, 2])),
    (np.array([[0], [2]]), slice(1, 3), np.array([[1, 2, 3]])),
    (np.array([True, False, True]), slice(None), np.array([0, 4])),
    ([2, 0], 1),
]


@pytest.mark.parametrize("key", GETITEM, ids=[str(k) for k in GETITEM])
def test_getitem(key):
    x = rnd(3, 4, 5)
    np_key = tuple(np.array(k) if isinstance(k, list) else k for k in key)
    np.testing.assert_array_equal(tf.constant(x)[key].numpy(), x[np_key])
    check_all(lambda x: x[key], [x])


@pytest.mark.parametrize("axis,xshape,ishape", [(0, (5, 3), (4,)), (1, (3, 5), (2, 3)),
                                                (1, (3, 5, 2), ()), (2, (2, 3, 5), (2,))])
def test_gather_batched_indices(axis, xshape, ishape):
    x = rnd(*xshape)
    i = np.random.RandomState(1).randint(0, 5, ishape)
    np.testing.assert_array_equal(tf.gather(x, i, axis=axis).numpy(), np.take(x, i, axis=axis))
    check_grads(lambda x: tf.gather(x, i, axis=axis), [x])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"is not in \[0, 5\)"):
        tf.gather(x, i - 5, axis=axis)   # TensorFlow refuses a negative index (NumPy wraps it)
    bi = np.stack([np.roll(i, k) if i.ndim else (i + k) % 5 for k in range(3)])
    for flags in ([False, True], [True, True]):
        bx = np.stack([x + k for k in range(3)]) if flags[0] else x
        check_batching(lambda x, i: tf.gather(x, i, axis=axis), [bx, bi], batched=flags,
                       fallback_ok=False)
        # the gradient of a per-example gather (take_add with batched indices)
        check_batching(lambda x, i: _grad(lambda x: tf.gather(x, i, axis=axis) ** 2, x),
                       [bx, bi], batched=flags, fallback_ok=False)


def _grad(f, x):
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reduce_sum(f(x))
    return tf.convert_to_tensor(t.gradient(y, x))  # a gather's IndexedSlices made dense


def test_gather_nd():
    x = rnd(3, 4, 2)
    i = np.array([[0, 1], [2, 3], [0, 1]])
    np.testing.assert_array_equal(tf.gather_nd(x, i).numpy(), x[i[:, 0], i[:, 1]])
    check_all(lambda x: tf.gather_nd(x, i), [x])
    # per-example indices under vmap
    bi = np.stack([i, i[::-1], i % 2])
    check_batching(lambda x, i: tf.gather_nd(x, i), [np.stack([x] * 3), bi],
                   batched=[True, True], fallback_ok=False)
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not index into param shape"):
        tf.gather_nd(x, [[3, 0]])


@pytest.mark.parametrize("f,shapes", [
    (lambda x: tf.reverse(x, [0, -1]), [(2, 3)]),
    (lambda x: tf.tile(x, [2, 1, 3]), [(2, 1, 3)]),
    (lambda x: tf.split(x, [2, -1, 1], axis=1), [(2, 6)]),
    (lambda x: tf.unstack(x, axis=-1), [(2, 3)]),
    (lambda x: tf.squeeze(x, [-1]), [(1, 3, 1)]),
    (lambda x: tf.expand_dims(x, -1), [(2, 3)]),
    (lambda x, y: tf.concat([x, y], -1), [(2, 3), (2, 1)]),
    (lambda x, y: tf.stack([x, y], axis=-1), [(2, 3), (2, 3)]),
    (lambda x: tf.broadcast_to(x, [4, 2, 3]), [(2, 1)]),
    (tf.identity, [(2, 3)]),
])
def test_shape_ops(f, shapes):
    check_all(f, [rnd(*s, seed=i) for i, s in enumerate(shapes)])


def test_matmul_with_a_transposed_matrix_matches_numpy():
    # the impl computes few-row products with an F-ordered right operand as (b.T @ a.T).T
    rng = np.random.default_rng(5)
    w = rng.standard_normal((7, 5))
    for rows in (1, 3, 64, 65):
        g = rng.standard_normal((rows, 5))
        out = tf.matmul(tf.constant(g), tf.transpose(tf.constant(w)))
        np.testing.assert_allclose(out.numpy(), g @ w.T, rtol=1e-12)


def test_matmul_with_inner_size_one_is_the_outer_product():
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((5, 1)), rng.standard_normal((1, 4))
    np.testing.assert_allclose(tf.matmul(a, b).numpy(), a @ b, rtol=1e-15)
    a32 = a.astype(np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError):  # TensorFlow promotes no dtypes
        tf.matmul(tf.constant(a32), tf.constant(b))
    out = tf.matmul(tf.constant(a32), b)   # a NumPy array takes the tensor's dtype
    assert out.dtype == np.float32
