"""NumPy kernels of the special functions of ``primitives/special_more.py``, in float64.

NumPy is the only dependency: each kernel is a power series, an asymptotic series or a
continued fraction, summed until its terms fall below float64's epsilon (relative error near
1e-15 where the function is well conditioned), and each gives TensorFlow's values at the edges
of its domain (NaN, inf, poles), which were read from TensorFlow 2.21 (tests/data/
tf_special_reference.json). The algorithms are the ones TensorFlow's kernels (Eigen's, after
Cephes) use, so that the rare inputs where the float64 result is not correctly rounded mostly
round the same way:

- ``bessel_ie``: the power series of I_n below |x| = 20 (all terms positive, no cancellation),
  the asymptotic series of the scaled function above it;
- ``ndtri``: Halley's iteration on ``erf`` (centre) or ``erfc`` (tails), from an initial guess
  good to 2e-3 everywhere;
- ``igamma``: the series of P(a, x) for x < max(1, a), else Legendre's continued fraction of
  Q(a, x); each also carries its derivative in ``a`` (TensorFlow's ``IgammaGradA``);
- ``betainc``: the continued fraction of I_x(a, b) (modified Lentz), on the side of the mean
  where it converges fast;
- ``zeta``: the Hurwitz zeta function by Euler-Maclaurin summation (with the Bernoulli
  numbers B_2 ... B_24).

>>> import numpy as np
>>> round(float(zeta(np.float64(2.0), np.float64(1.0))), 12)   # pi ** 2 / 6
1.644934066848
"""
import math

import numpy as np

EPS = np.finfo(np.float64).eps
_MAXLOG = math.log(np.finfo(np.float64).max)
_BIG = 2.0 ** 52  # the continued fraction's numerators are rescaled past this


def _lgamma(x):
    from tapegrad.primitives import special
    return np.asarray(special._lgamma(np.asarray(x, np.float64)), np.float64)


def _digamma(x):
    from tapegrad.primitives import special
    return np.asarray(special._polygamma(np.asarray(x, np.float64), 0), np.float64)


def _erf(x):
    from tapegrad.primitives import elementwise
    return np.asarray(elementwise._erf(np.asarray(x, np.float64)), np.float64)


def _erfc(x):
    from tapegrad.primitives import special
    return np.asarray(special._erfc(np.asarray(x, np.float64)), np.float64)


# ---- modified Bessel functions, scaled: exp(-|x|) I_n(x) --------------------------------------
_SERIES_BELOW = 20.0  # the power series up to here (about 40 terms), the asymptotic one above


def bessel_ie(x, n):
    """exp(-|x|) I_n(x) for n = 0 or 1; odd in x for n = 1 (+0.0 at -0.0, as TensorFlow)."""
    x = np.asarray(x, np.float64)
    ax = np.abs(x)
    out = np.full(x.shape, np.nan)
    small = ax <= _SERIES_BELOW
    if small.any():
        z = ax[small]
        q = z * z / 4.0
        term = z / 2.0 if n else np.ones_like(z)
        total = term.copy()
        for k in range(1, 80):  # I_n(z) = (z/2)^n sum_k (z^2/4)^k / (k! (k+n)!)
            term = term * q / (k * (k + n))
            total += term
            if not (term > EPS * 1e-2 * total).any():
                break
        out[small] = total * np.exp(-z)
    large = ax > _SERIES_BELOW
    if large.any():
        z = ax[large]
        mu = 4.0 * n * n
        term = np.ones_like(z)
        total = term.copy()
        with np.errstate(invalid="ignore"):  # z = inf: terms are 0, and 1 / sqrt(inf) is 0
            for k in range(1, 40):  # terms shrink while k < 2z; the 40th is below 1e-17
                term = term * -(mu - (2 * k - 1) ** 2) / (k * 8.0 * z)
                total += term
            out[large] = total / np.sqrt(2.0 * math.pi * z)
    if n:
        out = np.where(x < 0, -out, out)
    return out


# ---- the inverse of the normal distribution function -------------------------------------------
_WINITZKI = 0.147  # the constant of Winitzki's closed-form guess of erfinv (error < 2e-3)


def _erfcinv_guess(c):
    """erfc^-1(c) to 2e-3, for c in (0, 2): ln(1 - y^2) is written ln(c (2 - c)), with no
    cancellation as c goes to 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        lg = np.log(c * (2.0 - c))
        t = 2.0 / (math.pi * _WINITZKI) + lg / 2.0
        w = np.sqrt(np.sqrt(t * t - lg / _WINITZKI) - t)
    return np.where(c > 1.0, -w, w)


def ndtri(p):
    """x with Phi(x) = p: -inf at 0, inf at 1, NaN outside [0, 1] (TensorFlow's values)."""
    p = np.asarray(p, np.float64)
    out = np.full(p.shape, np.nan)
    with np.errstate(invalid="ignore"):
        inside = (p > 0.0) & (p < 1.0)
    out = np.where(p == 0.0, -np.inf, np.where(p == 1.0, np.inf, out))
    if not inside.any():
        return out
    v = p[inside]
    # the centre solves erf(w) = 2p - 1 (exact for p >= 1/4); the tails erfc(w) = 2 min(p, 1-p)
    # (1 - p is exact for p >= 1/2), so no step loses the digits of a small probability
    central = np.abs(v - 0.5) <= 0.25
    upper = v > 0.5
    c = np.where(upper, 2.0 * (1.0 - v), 2.0 * v)  # erfc(w) = c with w >= 0 in the tails
    w = np.where(central, _erfcinv_guess(1.0 - (2.0 * v - 1.0)), _erfcinv_guess(c))
    y = 2.0 * v - 1.0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for _ in range(4):  # Halley's steps: 2e-3 -> 1e-8 -> 1e-24 (two more for safety)
            d = (2.0 / math.sqrt(math.pi)) * np.exp(-w * w)  # |f'(w)|
            u = np.where(central, (_erf(w) - y) / d, -(_erfc(w) - c) / d)
            step = u / (1.0 + w * u)
            w = w - np.where(np.isfinite(step), step, 0.0)
    x = math.sqrt(2.0) * w
    x = np.where(central, x, np.where(upper, x, -x))
    out[inside] = x
    return out


# ---- the regularized incomplete gamma functions -------------------------------------------------
_MAX_TERMS = 2000
_TINY = 1e-300


def _igamma_series(a, x):
    """P(a, x) and dP/da by the series x^a e^-x / Gamma(a + 1) sum_k x^k / ((a+1)...(a+k))."""
    log_ax = a * np.log(x) - x - _lgamma(a)
    dlog_ax = np.log(x) - _digamma(a)
    r = a.copy()
    c, dc = np.ones_like(a), np.zeros_like(a)
    s, ds = np.ones_like(a), np.zeros_like(a)
    live = np.ones(a.shape, bool)
    for _ in range(_MAX_TERMS):
        r = r + 1.0
        dc = np.where(live, (dc - c / r) * x / r, dc)
        c = np.where(live, c * x / r, c)
        s = np.where(live, s + c, s)
        ds = np.where(live, ds + dc, ds)
        live &= (c > EPS * s) | (np.abs(dc) > EPS * np.abs(ds))
        if not live.any():
            break
    with np.errstate(under="ignore"):
        front = np.where(log_ax < -_MAXLOG, 0.0, np.exp(log_ax) / a)
    value = s * front
    deriv = (ds + s * (dlog_ax - 1.0 / a)) * front
    return value, deriv


def _igammac_cf(a, x):
    """Q(a, x) and dQ/da by Legendre's continued fraction (converges for x > max(1, a))."""
    log_ax = a * np.log(x) - x - _lgamma(a)
    dlog_ax = np.log(x) - _digamma(a)
    y = 1.0 - a
    z = x + y + 1.0
    c = np.zeros_like(a)
    pkm2, qkm2, pkm1, qkm1 = np.ones_like(a), x.copy(), x + 1.0, z * x
    dpkm2, dqkm2, dpkm1, dqkm1 = (np.zeros_like(a), np.zeros_like(a), np.zeros_like(a), -x)
    ans = pkm1 / qkm1
    dans = (dpkm1 - ans * dqkm1) / qkm1
    live = np.ones(a.shape, bool)
    for _ in range(_MAX_TERMS):
        c = c + 1.0
        y = y + 1.0
        z = z + 2.0
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c  # dy/da = dz/da = -1
        dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c
        ok = live & (qk != 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            r = pk / qk
            dr = (dpk - r * dqk) / qk
            t = np.where(ok, np.abs((ans - r) / r), 1.0)
        # the derivative must settle too: at an integer a the fraction of the value ends
        # (y c = 0) several terms before the fraction of its derivative does
        t = np.where(ok, np.maximum(t, np.abs(dr - dans) / np.maximum(np.abs(dr), _TINY)), t)
        ans = np.where(ok, r, ans)
        dans = np.where(ok, dr, dans)
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        dpkm2, dpkm1, dqkm2, dqkm1 = dpkm1, dpk, dqkm1, dqk
        big = np.abs(pk) > _BIG
        if big.any():
            scale = np.where(big, 1.0 / _BIG, 1.0)
            pkm2, pkm1, qkm2, qkm1 = pkm2 * scale, pkm1 * scale, qkm2 * scale, qkm1 * scale
            dpkm2, dpkm1 = dpkm2 * scale, dpkm1 * scale
            dqkm2, dqkm1 = dqkm2 * scale, dqkm1 * scale
        live &= t > EPS
        if not live.any():
            break
    with np.errstate(under="ignore"):
        front = np.where(log_ax < -_MAXLOG, 0.0, np.exp(log_ax))
    return ans * front, (dans + ans * dlog_ax) * front


def igamma(a, x, upper=False):
    """(P(a, x), dP/da), or (Q(a, x), dQ/da) with ``upper``: NaN for a <= 0 or x < 0 or NaN,
    P = 0 at x = 0 and at a = inf, P = 1 at x = inf (TensorFlow's values)."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    value = np.full(a.shape, np.nan)
    deriv = np.full(a.shape, np.nan)
    with np.errstate(invalid="ignore"):
        ok = (a > 0) & (x >= 0)
    lo = 1.0 if upper else 0.0
    edge_x0 = ok & (x == 0)
    edge_xinf = ok & (x == np.inf) & (a < np.inf)
    edge_ainf = ok & (a == np.inf) & (x < np.inf)
    value[edge_x0 | edge_ainf] = lo
    value[edge_xinf] = 1.0 - lo
    deriv[edge_x0 | edge_xinf | edge_ainf] = 0.0
    work = ok & (x > 0) & np.isfinite(x) & np.isfinite(a)
    use_cf = work & (x > 1.0) & (x > a)
    use_series = work & ~use_cf
    if use_series.any():
        v, d = _igamma_series(a[use_series], x[use_series])
        value[use_series], deriv[use_series] = (1.0 - v, -d) if upper else (v, d)
    if use_cf.any():
        v, d = _igammac_cf(a[use_cf], x[use_cf])
        value[use_cf], deriv[use_cf] = (v, d) if upper else (1.0 - v, -d)
    return value, deriv


# ---- the regularized incomplete beta function --------------------------------------------------


def _betacf(a, b, x):
    """The continued fraction of I_x(a, b) (x < (a + 1) / (a + b + 2)), by modified Lentz."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = np.ones_like(a)
    d = 1.0 - qab * x / qap
    d = 1.0 / np.where(np.abs(d) < _TINY, _TINY, d)
    h = d.copy()
    live = np.ones(a.shape, bool)
    for m in range(1, _MAX_TERMS):
        m2 = 2.0 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                   -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / np.where(np.abs(d) < _TINY, _TINY, d)
            c = 1.0 + aa / c
            c = np.where(np.abs(c) < _TINY, _TINY, c)
            delta = d * c
            h = np.where(live, h * delta, h)
        live &= np.abs(delta - 1.0) > EPS
        if not live.any():
            break
    return h


def betainc(a, b, x):
    """I_x(a, b): NaN for a <= 0, b <= 0, x outside [0, 1] or NaN; 0 at x = 0, 1 at x = 1."""
    a, b, x = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, b, x)))
    out = np.full(a.shape, np.nan)
    with np.errstate(invalid="ignore"):
        ok = (a > 0) & (b > 0) & (x >= 0) & (x <= 1) & np.isfinite(a) & np.isfinite(b)
    out[ok & (x == 0)] = 0.0
    out[ok & (x == 1)] = 1.0
    work = ok & (x > 0) & (x < 1)
    if work.any():
        a, b, x = a[work], b[work], x[work]
        flip = x > (a + 1.0) / (a + b + 2.0)  # there the fraction of I_{1-x}(b, a) is faster
        a, b, x = np.where(flip, b, a), np.where(flip, a, b), np.where(flip, 1.0 - x, x)
        log_front = (a * np.log(x) + b * np.log1p(-x)
                     - (_lgamma(a) + _lgamma(b) - _lgamma(a + b)))
        v = np.exp(log_front) * _betacf(a, b, x) / a
        out[work] = np.where(flip, 1.0 - v, v)
    return out


# ---- the Hurwitz zeta function -----------------------------------------------------------------
# (2k)! / B_2k for k = 1..12: the Euler-Maclaurin correction terms' denominators
_BERNOULLI_2K = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
                 43867 / 798, -174611 / 330, 854513 / 138, -236364091 / 2730)
_EM = tuple(math.factorial(2 * k) / b for k, b in enumerate(_BERNOULLI_2K, 1))


def zeta(x, q):
    """sum_k (q + k)^-x: inf at x = 1, NaN for x < 1; for q <= 0 TensorFlow's rule (an integer
    q: inf for even integer x, else NaN; otherwise NaN unless x is an integer); 1 at x = inf
    (q = 1), 0 at q = inf."""
    x, q = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(q, np.float64))
    out = np.full(x.shape, np.nan)
    with np.errstate(invalid="ignore"):
        x_int = x == np.floor(x)
        even = x_int & (np.mod(x, 2.0) == 0)
        q_int = q == np.floor(q)
        ok = (x > 1) & ((q > 0) | (~q_int & x_int))
        out[x == 1] = np.inf
        out[(x > 1) & (q <= 0) & q_int & even] = np.inf
        out[ok & (q == np.inf)] = 0.0
    work = ok & np.isfinite(q)
    if not work.any():
        return out
    s_x, s_q = x[work], q[work]
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        total = np.power(s_q, -s_x)
        a = s_q.copy()
        b = total
        done = np.zeros(s_x.shape, bool)
        more = np.ones(s_x.shape, bool)
        i = 0
        while more.any():  # direct terms until q + i > 9 (at least 9 of them), or converged
            i += 1
            a = np.where(more, a + 1.0, a)
            b = np.where(more, np.power(a, -s_x), b)
            total = np.where(more, total + b, total)
            done |= more & (np.abs(b / total) < EPS)
            more = ~done & ((i < 9) | (a <= 9.0))
        w = a
        tail = total + b * w / (s_x - 1.0) - 0.5 * b
        fac = np.ones_like(s_x)
        k = 0.0
        live = ~done
        for em in _EM:  # sum B_2j / (2j)! x (x+1) ... (x+2j-2) w^(-x-2j+1)
            fac = fac * (s_x + k)
            b = b / w
            t = fac * b / em
            tail = np.where(live, tail + t, tail)
            live &= np.abs(t / tail) >= EPS
            k += 1.0
            fac = fac * (s_x + k)
            b = b / w
            k += 1.0
    out[work] = np.where(done, total, tail)
    return out
