"""``tf.linalg.eigh``, ``eigvalsh``, ``svd``, ``qr``, ``expm``, ``pinv`` and ``lstsq``: values
against NumPy/SciPy, eager against compiled (bit for bit), TensorFlow's edge behaviour
(degenerate eigenvalues, refused derivatives, errors), and programs that use them: a
spectral-norm penalty trained with a tape, PCA whitening, a Gaussian-process likelihood, a
Lie-group step with the matrix exponential. The primitives' derivative rules are checked
numerically (orders 1 and 2, both modes, batched) by the SPECS table of test_primitives."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.primitives import decompositions
from tapegrad.testing import assert_same_bits, check_grads

RNG = np.random.RandomState(7)


def _spread(*shape):
    """Matrices with eigenvalues and singular values near 1, 2, 3...: well apart."""
    m, n = shape[-2:]
    return np.eye(m, n) * np.arange(1.0, n + 1) + 0.1 * RNG.standard_normal(shape)


def _sym(a):
    return np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)


# ---- values ------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (1, 1)])
def test_eigh_matches_numpy_and_reads_the_lower_triangle(shape):
    a = RNG.standard_normal(shape)
    e, v = tf.linalg.eigh(a)
    we, wv = np.linalg.eigh(_sym(a))
    np.testing.assert_allclose(e.numpy(), we, rtol=1e-12, atol=1e-12)
    # eigenvectors up to sign: A v = e v, orthonormal
    av = _sym(a) @ v.numpy()
    np.testing.assert_allclose(av, v.numpy() * e.numpy()[..., None, :], atol=1e-12)
    np.testing.assert_allclose(np.swapaxes(v.numpy(), -1, -2) @ v.numpy(),
                               np.broadcast_to(np.eye(shape[-1]), shape), atol=1e-12)
    np.testing.assert_allclose(tf.linalg.eigvalsh(a).numpy(), we, rtol=1e-12, atol=1e-12)


def test_eigh_of_complex_hermitian_matrices_has_real_eigenvalues_of_its_dtype():
    a = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))
    a = a + a.conj().T
    e, v = tf.linalg.eigh(a)
    # TensorFlow's eigenvalues have the matrix's complex dtype, with zero imaginary parts
    assert e.dtype == np.complex128 and v.dtype == np.complex128
    assert (e.numpy().imag == 0).all()
    np.testing.assert_allclose(e.numpy().real, np.linalg.eigvalsh(a), atol=1e-12)
    assert tf.linalg.eigvalsh(a).dtype == np.complex128
    assert tf.linalg.logdet(a @ a.conj().T + np.eye(3)).dtype == np.float64


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 4, 3)])
@pytest.mark.parametrize("full", [False, True])
def test_svd_matches_numpy(shape, full):
    a = RNG.standard_normal(shape)
    s, u, v = tf.linalg.svd(a, full_matrices=full)
    wu, ws, wvh = np.linalg.svd(a, full_matrices=full)
    np.testing.assert_allclose(s.numpy(), ws, rtol=1e-12, atol=1e-12)
    assert_same_bits(u.numpy(), wu)  # NumPy's LAPACK signs (TensorFlow's may differ)
    assert_same_bits(v.numpy(), np.swapaxes(wvh, -1, -2))
    # s alone comes from the same thin SVD (LAPACK's values-only path differs in the last bits)
    np.testing.assert_allclose(tf.linalg.svd(a, compute_uv=False).numpy(),
                               np.linalg.svd(a, compute_uv=False), rtol=1e-12)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 4, 3)])
@pytest.mark.parametrize("full", [False, True])
def test_qr_matches_numpy(shape, full):
    a = RNG.standard_normal(shape)
    q, r = tf.linalg.qr(a, full_matrices=full)
    wq, wr = np.linalg.qr(a, mode="complete" if full else "reduced")
    assert_same_bits(q.numpy(), wq)
    assert_same_bits(r.numpy(), wr)
    assert tf.linalg.qr(a).q.shape == q.shape or full


def test_float32_stays_float32():
    a = _spread(3, 3).astype(np.float32)
    for out in [*tf.linalg.eigh(a), *tf.linalg.svd(a), *tf.linalg.qr(a), tf.linalg.expm(a),
                tf.linalg.pinv(a), tf.linalg.lstsq(a, a)]:
        assert out.dtype == np.float32


@pytest.mark.parametrize("scale", [0.01, 1.0, 30.0])
def test_expm_matches_scipy_with_and_without_scipy(monkeypatch, scale):
    sl = pytest.importorskip("scipy.linalg")
    a = scale * RNG.standard_normal((2, 4, 4))
    want = sl.expm(a)
    with_scipy = tf.linalg.expm(a).numpy()
    np.testing.assert_allclose(with_scipy, want, rtol=1e-12)
    monkeypatch.setattr(decompositions, "_scipy_expm", lambda: None)
    fallback = tf.linalg.expm(a).numpy()
    np.testing.assert_allclose(fallback, want, rtol=1e-11 * max(1.0, scale))
    # the NumPy fallback differentiates too
    check_grads(lambda x: tf.linalg.expm(x), [a[0] / max(1.0, scale)], order=1)


def test_expm_fallback_keeps_nan_and_empty_matrices(monkeypatch):
    monkeypatch.setattr(decompositions, "_scipy_expm", lambda: None)
    out = tf.linalg.expm([[np.nan, 0.0], [0.0, 1.0]]).numpy()
    assert np.isnan(out[0, 0])
    assert tf.linalg.expm(np.zeros((3, 0, 0))).shape == (3, 0, 0)
    np.testing.assert_allclose(tf.linalg.expm(np.zeros((2, 2))).numpy(), np.eye(2))


def test_pinv_matches_numpy_with_tensorflows_cutoff():
    a = RNG.standard_normal((5, 3)) @ RNG.standard_normal((3, 4))  # rank 3
    rcond = 10 * 5 * np.finfo(np.float64).eps
    np.testing.assert_allclose(tf.linalg.pinv(a).numpy(), np.linalg.pinv(a, rcond=rcond),
                               atol=1e-12)
    np.testing.assert_allclose(tf.linalg.pinv(a, rcond=0.5).numpy(),
                               np.linalg.pinv(a, rcond=0.5), atol=1e-12)


@pytest.mark.parametrize("shape", [(6, 3), (3, 6), (2, 5, 2)])
def test_lstsq_matches_numpy(shape):
    a = RNG.standard_normal(shape)
    b = RNG.standard_normal(shape[:-1] + (2,))
    want = np.stack([np.linalg.lstsq(x, y, rcond=None)[0]
                     for x, y in zip(a.reshape((-1,) + shape[-2:]),
                                     b.reshape((-1,) + b.shape[-2:]))]).reshape(
        shape[:-2] + (shape[-1], 2))
    for fast in (True, False):
        np.testing.assert_allclose(tf.linalg.lstsq(a, b, fast=fast).numpy(), want,
                                   atol=1e-10)
    lam = 0.3
    at = np.swapaxes(a, -1, -2)
    if shape[-2] >= shape[-1]:
        ridge = np.linalg.solve(at @ a + lam * np.eye(shape[-1]), at @ b)
    else:
        ridge = at @ np.linalg.solve(a @ at + lam * np.eye(shape[-2]), b)
    np.testing.assert_allclose(tf.linalg.lstsq(a, b, l2_regularizer=lam).numpy(), ridge,
                               atol=1e-12)
    # fast=False ignores the regularizer, as TensorFlow
    np.testing.assert_allclose(tf.linalg.lstsq(a, b, l2_regularizer=lam, fast=False).numpy(),
                               want, atol=1e-10)


def test_composed_functions_differentiate():
    a = _spread(4, 3)
    b = RNG.standard_normal((4, 2))
    check_grads(lambda x: tf.linalg.pinv(x), [a], order=2)
    check_grads(lambda x, y: tf.linalg.lstsq(x, y, l2_regularizer=0.1), [a, b], order=2)
    check_grads(lambda x, y: tf.linalg.lstsq(x, y, fast=False), [a, b], order=1)
    check_grads(lambda x: tf.linalg.eigvalsh(x), [_spread(3, 3)], order=2)
    check_grads(lambda x: tf.linalg.svd(x, compute_uv=False), [_spread(2, 4)], order=2)
    # s alone differentiates whatever full_matrices says (TensorFlow ignores it there)
    check_grads(lambda x: tf.linalg.svd(x, full_matrices=True, compute_uv=False),
                [_spread(4, 2)], order=1)


# ---- eager and compiled agree bit for bit ---------------------------------------------------
def _program(x, w):
    e, v = tf.linalg.eigh(tf.matmul(x, x, transpose_a=True))
    s, u, vv = tf.linalg.svd(x)
    q, r = tf.linalg.qr(x)
    out = (tf.reduce_sum(e * w[0]) + tf.reduce_sum(v[:, 0] ** 2 * w) + tf.reduce_sum(s ** 3)
           + tf.reduce_sum(u * u[:, :1]) + tf.reduce_sum(vv * w[0]) + tf.reduce_sum(q * q)
           + tf.reduce_sum(r * w[0]))
    out += tf.reduce_sum(tf.linalg.expm(0.1 * x[:3]) * w)
    out += tf.reduce_sum(tf.linalg.pinv(x)) + tf.reduce_sum(tf.linalg.lstsq(x, x[:, :1]))
    return out


def _value_and_grad(x, w):
    with tf.GradientTape() as t:
        t.watch(x)
        y = _program(x, w)
    return y, t.gradient(y, x)


def test_eager_and_compiled_agree_bit_for_bit():
    x = tf.constant(_spread(5, 3))
    w = tf.constant(RNG.standard_normal((3,)))
    eager = _value_and_grad(x, w)
    compiled = tf.function(_value_and_grad)(x, w)
    for a, b in zip(eager, compiled):
        assert_same_bits(a.numpy(), b.numpy())


def test_repeated_eager_gradients_keep_their_bits():
    """From the third gradient of one tape structure on, the derivative pass runs as
    generated code (compile/derivative_cache.py): the same numbers."""
    x = tf.constant(_spread(5, 3))
    w = tf.constant(RNG.standard_normal((3,)))
    first = _value_and_grad(x, w)
    for _ in range(4):
        again = _value_and_grad(x, w)
        for a, b in zip(first, again):
            assert_same_bits(a.numpy(), b.numpy())


def test_jacobians_batch_the_rules():
    a = tf.constant(_spread(3, 3))
    with tf.GradientTape(persistent=True) as t:
        t.watch(a)
        e, v = tf.linalg.eigh(a)
        q = tf.linalg.qr(a).q
        s = tf.linalg.svd(a, compute_uv=False)
    for y in (e, v, q, s):
        jac = t.jacobian(y, a).numpy()
        rows = [t.gradient(y, a, output_gradients=tf.constant(np.eye(y.numpy().size)[i]
                                                              .reshape(y.shape))).numpy()
                for i in range(y.numpy().size)]
        np.testing.assert_allclose(jac.reshape((-1, 3, 3)), np.stack(rows), atol=1e-12)


def test_lstsq_regularizer_is_exact_and_differentiable():
    a, b = _spread(5, 3), RNG.standard_normal((5, 2))
    lam = tf.constant(0.3, tf.float64)
    check_grads(lambda x, l: tf.linalg.lstsq(x, b, l2_regularizer=l), [a, lam], order=2)
    # a Python number is taken in the matrix's dtype: 0.3, not float32's 0.30000001
    at = a.T
    np.testing.assert_allclose(tf.linalg.lstsq(a, b, l2_regularizer=0.3).numpy(),
                               np.linalg.solve(at @ a + 0.3 * np.eye(3), at @ b), rtol=1e-14)


# ---- TensorFlow's edges -------------------------------------------------------------------
def test_degenerate_eigenvalues_give_tensorflows_finite_gradient():
    """TensorFlow divides by eigenvalue gaps with a safe reciprocal x / (x^2 + 1e-20): an
    exactly repeated pair contributes nothing, and the gradient stays finite."""
    a = tf.constant(np.diag([1.0, 1.0, 2.0]))
    with tf.GradientTape() as t:
        t.watch(a)
        e, v = tf.linalg.eigh(a)
        y = tf.reduce_sum(v * np.arange(9.0).reshape(3, 3)) + tf.reduce_sum(e * e)
    g = t.gradient(y, a).numpy()
    assert np.isfinite(g).all()
    with tf.GradientTape() as t:  # sum(e^2) = |A|_F^2 for the symmetric A: gradient 2 A
        t.watch(a)
        y = tf.reduce_sum(tf.linalg.eigvalsh(a) ** 2)
    np.testing.assert_allclose(t.gradient(y, a).numpy(), 2 * np.diag([1.0, 1.0, 2.0]))


def test_eigh_gradient_lives_on_the_lower_triangle():
    a = tf.constant(_spread(3, 3))
    with tf.GradientTape() as t:
        t.watch(a)
        y = tf.reduce_sum(tf.linalg.eigh(a)[1][:, 0] ** 3)
    g = t.gradient(y, a).numpy()
    assert (np.triu(g, 1) == 0).all() and np.abs(np.tril(g, -1)).max() > 0


def test_nan_and_inf_inputs_as_tensorflow():
    bad = np.array([[[np.nan, 0.0], [0.0, 1.0]], [[2.0, 0.0], [0.0, 1.0]]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="eigh"):
        tf.linalg.eigh(bad)
    e, v = tf.linalg.eigh(np.array([[1.0, np.inf], [0.0, 1.0]]))  # the upper triangle is unread
    np.testing.assert_allclose(e.numpy(), [1.0, 1.0])
    for x in (bad, np.where(np.isnan(bad), np.inf, bad)):
        s, u, v = tf.linalg.svd(x)  # NaN factors for the matrix that holds them, as TF
        assert np.isnan(s[0].numpy()).all() and np.isnan(u[0].numpy()).all()
        np.testing.assert_allclose(s[1].numpy(), [2.0, 1.0])
        assert np.isnan(tf.linalg.pinv(x)[0].numpy()).all()
    compiled = tf.function(lambda x: tf.linalg.svd(x)[1])(tf.constant(bad))
    assert_same_bits(compiled.numpy(), tf.linalg.svd(bad)[1].numpy())


def test_refused_derivatives_raise_as_tensorflow():
    a = tf.constant(_spread(4, 2))
    with tf.GradientTape(persistent=True) as t:
        t.watch(a)
        u = tf.linalg.svd(a, full_matrices=True)[1]
        q = tf.linalg.qr(a, full_matrices=True).q
    with pytest.raises(NotImplementedError, match="full_matrices"):
        t.gradient(u, a)
    with pytest.raises(NotImplementedError, match="full_matrices"):
        t.gradient(q, a)
    z = tf.constant(np.eye(2) * (1 + 1j))
    with tf.GradientTape() as t:
        t.watch(z)
        y = tf.linalg.expm(z)
    with pytest.raises(TypeError):
        t.gradient(y, z)
    with pytest.raises(NotImplementedError, match="complex128"):
        tf.linalg.lstsq(z, z, l2_regularizer=0.5)


def test_bad_inputs_get_clear_errors():
    with pytest.raises(ValueError, match="square"):
        tf.linalg.eigh(np.ones((2, 3)))
    with pytest.raises(ValueError, match="square"):
        tf.linalg.expm(np.ones((2, 3)))
    with pytest.raises(ValueError, match="matrices"):
        tf.linalg.svd(np.ones(3))
    with pytest.raises(TypeError):
        tf.linalg.qr(np.ones((2, 2), dtype=np.int32))
    with pytest.raises(TypeError):
        tf.linalg.eigh(np.ones((2, 2), dtype=np.float16))
    with pytest.raises(ValueError, match="rhs"):
        tf.linalg.lstsq(np.ones((3, 2)), np.ones((2, 1)))


# ---- programs -----------------------------------------------------------------------------
def test_spectral_norm_penalty_trained_with_a_tape():
    """Least squares with a penalty on the largest singular value of the weights, trained
    to a stationary point by gradient descent."""
    rng = np.random.RandomState(1)
    x = rng.standard_normal((32, 4))
    y = x @ (np.eye(4, 3) * [1.0, 2.0, 3.0] + 0.1 * rng.standard_normal((4, 3)))
    w = tf.Variable(rng.standard_normal((4, 3)))

    def loss(w):
        fit = tf.reduce_mean((tf.matmul(x, w) - y) ** 2)
        return fit + 0.5 * tf.linalg.svd(w, compute_uv=False)[0]

    def grad(w):
        with tf.GradientTape() as t:
            value = loss(w)
        return value, t.gradient(value, w)

    first, g0 = grad(w)
    for _ in range(300):
        value, g = grad(w)
        w.assign_sub(0.1 * g)
    value, g = grad(w)
    assert float(value) < 0.5 * float(first)
    assert np.abs(g.numpy()).max() < 1e-3 * np.abs(g0.numpy()).max()
    # at the optimum the penalty's pull balances the fit: the top singular value is smaller
    # than the unpenalised least-squares solution's
    w_ls = np.linalg.lstsq(x, y, rcond=None)[0]
    s = np.linalg.svd(w.numpy(), compute_uv=False)
    assert s[0] < np.linalg.svd(w_ls, compute_uv=False)[0] - 0.01
    check_grads(loss, [w.numpy()], order=2)


def test_pca_whitening_step():
    data = RNG.standard_normal((200, 3)) @ _spread(3, 3)

    def whiten(x):
        xc = x - tf.reduce_mean(x, axis=0)
        cov = tf.matmul(xc, xc, transpose_a=True) / (x.shape[0] - 1)
        e, v = tf.linalg.eigh(cov)
        return tf.matmul(xc, v) / tf.sqrt(e)

    z = whiten(tf.constant(data)).numpy()
    np.testing.assert_allclose(np.cov(z, rowvar=False), np.eye(3), atol=1e-10)
    # a loss on the whitened data differentiates through the eigenvectors (sign-free loss)
    check_grads(lambda x: tf.reduce_sum(whiten(x) ** 4), [data[:20]], order=1)


def test_gaussian_process_log_likelihood_and_its_gradient():
    x = np.linspace(0.0, 3.0, 12)[:, None]
    y = np.sin(2 * x[:, 0]) + 0.1 * RNG.standard_normal(12)

    def log_likelihood(log_ell, log_noise):
        d2 = (x - x.T) ** 2
        k = tf.exp(-0.5 * d2 / tf.exp(2 * log_ell)) + tf.exp(2 * log_noise) * np.eye(12)
        chol = tf.linalg.cholesky(k)
        alpha = tf.linalg.cholesky_solve(chol, y[:, None])
        return (-0.5 * tf.reduce_sum(y[:, None] * alpha)
                - tf.reduce_sum(tf.math.log(tf.linalg.diag_part(chol)))
                - 6 * np.log(2 * np.pi))

    params = [np.float64(-0.3), np.float64(-1.5)]
    ll = float(log_likelihood(*[tf.constant(p) for p in params]))
    stats = pytest.importorskip("scipy.stats")
    kk = np.exp(-0.5 * (x - x.T) ** 2 / np.exp(-0.6)) + np.exp(-3.0) * np.eye(12)
    np.testing.assert_allclose(ll, stats.multivariate_normal(np.zeros(12), kk).logpdf(y),
                               rtol=1e-10)
    check_grads(log_likelihood, params, order=2)


def test_matrix_exponential_in_a_lie_group_step_and_an_ode():
    """A rotation exp(theta K) stays orthogonal; d/dt exp(t A) x0 = A exp(t A) x0."""
    k = np.array([[0.0, -1.0, 0.5], [1.0, 0.0, -0.2], [-0.5, 0.2, 0.0]])
    theta = tf.constant(0.7, tf.float64)  # (a float32 theta makes theta * k float32)
    r = tf.linalg.expm(theta * k).numpy()
    np.testing.assert_allclose(r.T @ r, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(np.linalg.det(r), 1.0, rtol=1e-12)
    target = np.array([0.0, 0.0, 1.0])

    def loss(theta):
        # (a float64 vector: TensorFlow's matvec converts a list to float32, then raises)
        return tf.reduce_sum((tf.linalg.matvec(tf.linalg.expm(theta * k),
                                               np.array([1.0, 0.0, 0.0])) - target) ** 2)

    check_grads(loss, [np.float64(0.7)], order=2)
    a = RNG.standard_normal((3, 3))
    x0 = RNG.standard_normal(3)
    t = tf.constant(0.4, tf.float64)  # x0's dtype: TensorFlow's matvec promotes none
    with tf.autodiff.ForwardAccumulator(t, tf.constant(1.0, tf.float64)) as acc:
        x = tf.linalg.matvec(tf.linalg.expm(t * a), x0)
    np.testing.assert_allclose(acc.jvp(x).numpy(), a @ x.numpy(), rtol=1e-10)


@pytest.mark.parametrize("shape", [(3, 4), (4, 3), (1, 2), (2, 1), (2, 2, 3)])
def test_full_svd_with_one_extra_singular_vector_differentiates(shape):
    # |m - n| == 1: the extra vector of the square factor is unique up to its sign (a loss
    # of squares does not see the sign), so its derivative counts too
    m, n = shape[-2:]
    wu, wv = RNG.standard_normal(shape[:-2] + (m, m)), RNG.standard_normal(shape[:-2] + (n, n))

    def loss(x):
        s, u, v = tf.linalg.svd(x, full_matrices=True)
        return (tf.reduce_sum(wu * u * u) + tf.reduce_sum(wv * v * v)
                + tf.reduce_sum(s * s * s))
    check_grads(loss, [_spread(*shape)], modes=("fwd", "rev"), order=2)
