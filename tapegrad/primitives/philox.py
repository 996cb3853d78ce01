"""The counter-based random primitive of ``tf.random.stateless_*`` and ``tf.random.Generator``:
TensorFlow's Philox4x32-10 streams, bit for bit where the arithmetic is exact.

A draw is a function of its input alone (no hidden state): a seed (two int32/int64, which
TensorFlow scrambles into a Philox key and counter, ``from_seed=True``) or a generator state
(int64 ``[counter low, counter high, key]``, ``from_seed=False``). Output element ``i``
comes from the Philox block at ``counter + i // k`` (``k`` samples per block of four
uint32), as in TensorFlow's kernels, so uniform floats and integers, ``stateless_split`` and
``stateless_fold_in`` give TensorFlow's bits. Normal samples use TensorFlow's Box-Muller
transform with float32 rounding after each step; TensorFlow's ``logf``/``sincosf`` (glibc)
are not always correctly rounded, so about 1.5% of float32 normals differ from its in the
last bit.

>>> import numpy as np
>>> from tapegrad.primitives.philox import draw
>>> draw(np.array([1, 2]), shape=(2,), dtype="uint32", dist="full_int", from_seed=True)
array([1105988140, 1738052849], dtype=uint32)
"""
import numpy as np

from tapegrad.core.dispatch import Primitive
from tapegrad.primitives.params import check_bool, check_dtype, check_int, check_shape, fail

_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = 0x9E3779B9, 0xBB67AE85
_LOW, _32 = np.uint64(0xFFFFFFFF), np.uint64(32)
_SCRAMBLE_KEY = (0x3EC8F720, 0x02461E29)
TRUNCATE = 2.0            # truncated normals lie in (-2, 2) standard deviations
RESERVED_WORDS = 256      # uint32 words TensorFlow reserves per truncated-normal output
DISTS = ("uniform", "normal", "truncated_normal", "uniform_int", "full_int")


def philox_blocks(counters, key):
    """Philox4x32-10 of ``counters`` ((n, 4) uint32) under ``key`` (two ints): (n, 4) uint32."""
    c = [counters[:, i].astype(np.uint64) for i in range(4)]
    k0, k1 = int(key[0]), int(key[1])
    for _ in range(10):
        p0, p1 = _M0 * c[0], _M1 * c[2]
        c = [(p1 >> _32) ^ c[1] ^ np.uint64(k0), p1 & _LOW,
             (p0 >> _32) ^ c[3] ^ np.uint64(k1), p0 & _LOW]
        k0, k1 = (k0 + _W0) & 0xFFFFFFFF, (k1 + _W1) & 0xFFFFFFFF
    return np.stack(c, axis=-1).astype(np.uint32)


def _words(v):
    v = int(v) & 0xFFFFFFFFFFFFFFFF  # two's complement, as TensorFlow's cast to uint64
    return v & 0xFFFFFFFF, v >> 32


def key_counter(source, from_seed):
    """(key: two ints, counter: 128-bit int) of a seed or of a generator state."""
    if from_seed:  # TensorFlow's scrambling: one Philox block of the seed under a fixed key
        counter = np.array([[*_words(source[0]), *_words(source[1])]], np.uint32)
        mix = philox_blocks(counter, _SCRAMBLE_KEY)[0]
        return (int(mix[0]), int(mix[1])), (int(mix[2]) << 64) | (int(mix[3]) << 96)
    lo, hi = (int(v) & 0xFFFFFFFFFFFFFFFF for v in source[:2])
    return _words(source[2]), lo | (hi << 64)


def blocks_at(key, counter, offsets):
    """The Philox blocks at counters ``counter + offsets`` (the counter wraps at 2**128)."""
    step = np.asarray(offsets, np.uint64)
    lo = np.uint64(counter & 0xFFFFFFFFFFFFFFFF) + step  # wraps at 2**64: carry into hi
    hi = np.uint64(counter >> 64) + (lo < step).astype(np.uint64)
    words = np.stack([lo & _LOW, lo >> _32, hi & _LOW, hi >> _32], axis=-1)
    return philox_blocks(words.astype(np.uint32).reshape(-1, 4), key)


def blocks(key, counter, start, n):
    """``n`` Philox blocks from counter ``counter + start`` on."""
    return blocks_at(key, (counter + start) % (1 << 128), np.arange(n, dtype=np.uint64))


def _unit_float(x, dtype):
    """Uniform [0, 1) from the low mantissa bits of uint32 words (float16/32) or word pairs."""
    if dtype == np.float16:
        return ((x & np.uint32(0x3FF)) | np.uint32(0x3C00)).astype(np.uint16).view(
            np.float16) - np.float16(1)
    if dtype == np.float32:
        return ((x & np.uint32(0x7FFFFF)) | np.uint32(0x3F800000)).view(np.float32) \
            - np.float32(1)
    x = x.reshape(-1, 2).astype(np.uint64)
    man = ((x[:, 0] & np.uint64(0xFFFFF)) << _32) | x[:, 1]
    return (man | np.uint64(1023 << 52)).view(np.float64) - 1.0


def _box_muller(x, dtype):
    """TensorFlow's Box-Muller pairs: two uint32 (float16/32) or four (float64) per pair."""
    if dtype == np.float64:
        x = x.reshape(-1, 4)
        u1, u = _unit_float(x[:, :2].ravel(), dtype), _unit_float(x[:, 2:].ravel(), dtype)
        u1 = np.maximum(u1, 1e-7)
        v1, u2 = 2.0 * np.pi * u, np.sqrt(-2.0 * np.log(u1))
        return np.stack([np.sin(v1) * u2, np.cos(v1) * u2], -1).ravel()
    x = x.reshape(-1, 2)
    u1 = np.maximum(_unit_float(x[:, 0], np.float32), np.float32(1e-7))
    u = _unit_float(x[:, 1], np.float32)
    # 2 * M_PI is a double in TensorFlow's kernel; logf/sinf/cosf round to float32
    v1 = (2.0 * np.pi * u.astype(np.float64)).astype(np.float32).astype(np.float64)
    u2 = np.sqrt(np.float32(-2.0) * np.log(u1.astype(np.float64)).astype(np.float32))
    sin, cos = np.sin(v1).astype(np.float32), np.cos(v1).astype(np.float32)
    out = np.stack([sin * u2, cos * u2], -1).ravel()
    return out.astype(dtype)


def _per_block(dtype):
    """Samples per Philox block: 4, or 2 where each takes 64 bits."""
    return 2 if dtype.itemsize == 8 else 4


def _truncated(key, counter, n, dtype):
    """Accepted Box-Muller samples (|z| < 2) in groups of 4 (2 for float64), group g
    drawing from Philox block ``g * 256`` (``g * 128``) on: TensorFlow's variable-sample
    kernels reserve 256 words per output."""
    per = 2 if dtype == np.float64 else 4
    stride, take = RESERVED_WORDS * per // 4, 2 if per == 4 else 3
    groups = -(-n // per)
    starts = np.arange(groups) * stride
    words = blocks_at(key, counter, (starts[:, None] + np.arange(take)).ravel())
    z = _box_muller(words.ravel(), dtype).reshape(groups, -1)
    ok = np.abs(z.astype(np.float64)) < TRUNCATE
    rank = np.cumsum(ok, axis=1)
    out = np.empty((groups, per), dtype)
    full = rank[:, -1] >= per
    pick = ok & (rank <= per)
    out[full] = z[full][pick[full]].reshape(-1, per)
    for g in np.flatnonzero(~full):  # rare: keep drawing this group's blocks in order
        found, used = list(z[g][ok[g]]), take
        while len(found) < per:
            more = _box_muller(blocks(key, counter, int(starts[g]) + used, 1).ravel(), dtype)
            found.extend(v for v in more if abs(float(v)) < TRUNCATE)
            used += 1
        out[g] = found[:per]
    return out.ravel()[:n]


def draw(source, *, shape, dtype, dist, from_seed, minval=None, maxval=None):
    """The samples of one call (see the module's notes)."""
    dtype = np.dtype(dtype)
    key, counter = key_counter(np.asarray(source).ravel(), from_seed)
    n = int(np.prod(shape, dtype=np.int64))
    if dist == "truncated_normal":
        return _truncated(key, counter, n, dtype).reshape(shape)
    per = _per_block(dtype)
    words = blocks(key, counter, 0, -(-n // per)).ravel()
    if dist == "uniform":
        out = _unit_float(words, dtype)
    elif dist == "normal":
        out = _box_muller(words, dtype)
    else:
        if per == 2:
            pairs = words.reshape(-1, 2).astype(np.uint64)
            raw = pairs[:, 0] | (pairs[:, 1] << _32)
        else:
            raw = words
        if dist == "full_int":
            out = raw.view(np.int64 if per == 2 else np.int32).astype(dtype) \
                if dtype.kind == "i" else raw.astype(dtype)
        else:
            span = (int(maxval) - int(minval)) % (1 << (64 if per == 2 else 32))
            offset = raw % np.uint64(span) if per == 2 else raw % np.uint32(span)
            out = (np.array(int(minval)).astype(dtype) + offset.astype(dtype)).astype(dtype)
    return np.asarray(out[:n], dtype).reshape(shape)


def _abstract(source, *, shape, dtype, **params):
    if np.dtype(source.dtype).name not in ("int32", "int64"):
        raise TypeError(f"philox_random: the seed or state must be int32 or int64, got "
                        f"{np.dtype(source.dtype).name}")
    want = (2,) if params["from_seed"] else (3,)
    if tuple(source.shape) != want:
        raise ValueError(f"philox_random: a {'seed' if params['from_seed'] else 'state'} "
                         f"has shape {list(want)}, got {list(source.shape)}")
    return tuple(shape), np.dtype(dtype)


def _validate(source, *, shape, dtype, dist, from_seed, minval, maxval):
    check_shape("philox_random", "shape", shape)
    check_bool("philox_random", "from_seed", from_seed)
    if dist not in DISTS:
        fail("philox_random", "dist", f"must be one of {DISTS}, got {dist!r}")
    kinds = "f" if dist in ("uniform", "normal", "truncated_normal") else "iu"
    d = check_dtype("philox_random", "dtype", dtype, kinds=kinds)
    if dist in ("uniform", "normal", "truncated_normal") and d.name not in (
            "float16", "float32", "float64"):
        fail("philox_random", "dtype", f"must be a float dtype, got {dtype!r}")
    if dist == "uniform_int":
        if d.itemsize < 4:
            fail("philox_random", "dtype", f"must be 32 or 64 bits wide, got {dtype!r}")
        info = np.iinfo(d)
        lo = check_int("philox_random", "minval", minval, info.min, info.max)
        hi = check_int("philox_random", "maxval", maxval, info.min, info.max)
        if not lo < hi:
            fail("philox_random", "maxval", f"must exceed minval: need minval < maxval, got "
                                            f"{lo} >= {hi}")
    elif minval is not None or maxval is not None:
        fail("philox_random", "minval", "is only given for dist='uniform_int'")
    elif dist == "full_int" and d.itemsize < 4:
        fail("philox_random", "dtype", f"must be 32 or 64 bits wide, got {dtype!r}")


def _batch(args, batched, **params):
    """One draw per seed (or state) of the batch, stacked."""
    from tapegrad.primitives import api
    source = args[0]
    return api.stack([philox_random_p.bind_raw(source[i], **params)
                      for i in range(source.shape[0])], axis=0)


philox_random_p = Primitive(
    "philox_random", lambda source, **params: draw(source, **params), nin=1, nondiff=True,
    abstract=_abstract, validate=_validate, batch=_batch, fresh=True,
    value_params=("minval", "maxval"),
    emit="_philox_draw({0}, shape={shape}, dtype='{dtype}', dist='{dist}', "
         "from_seed={from_seed}, minval={minval}, maxval={maxval})")

EMIT_HELPERS = {"_philox_draw": draw}
