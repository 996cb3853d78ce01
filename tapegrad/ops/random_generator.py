"""``tf.random.Generator``: a random-number generator whose state is a Variable (int64
``[counter low, counter high, key]``, TensorFlow's Philox layout), so a ``tf.function``
draws fresh numbers on every call and the same seed gives TensorFlow's streams.

Each draw reads the Philox blocks at the state's counter and advances the counter by 256
per element drawn, as TensorFlow's kernels do.

>>> import tapegrad as tf
>>> g = tf.random.Generator.from_seed(1)
>>> g.uniform([2]).numpy()
array([0.78749514, 0.3906511 ], dtype=float32)
>>> g.state.numpy()
array([513,   0,   0])
"""
import enum
import os

import numpy as np

from tapegrad.core import dtypes as _dt
from tapegrad.core.tensor import Variable, convert_to_tensor
from tapegrad.ops import math_ops
from tapegrad.ops.shape_ops import cast, concat
from tapegrad.ops.stateless_random_ops import (check_alg, draw, normal_from, shape_of,
                                               uniform_from)

__all__ = ["Algorithm", "Generator", "create_rng_state", "get_global_generator",
           "set_global_generator"]
STATE_SIZE = 3
SKIP_PER_ELEMENT = 256  # counter steps per element drawn (TensorFlow's reservation)
_MASK64 = (1 << 64) - 1


class Algorithm(enum.Enum):
    """The counter-based algorithms of ``tf.random`` (tapegrad implements Philox)."""
    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


def _int64(word):
    return word - (1 << 64) if word >= 1 << 63 else word


def create_rng_state(seed, alg="philox"):
    """The int64 state ``[counter low, counter high, key]`` that ``Generator.from_seed``
    starts from: an integer seed in 64-bit words (two's complement), a list of integers
    right-aligned.

    >>> import tapegrad as tf
    >>> tf.random.create_rng_state(1, "philox").numpy()
    array([1, 0, 0])
    """
    check_alg(alg)
    if isinstance(seed, (list, tuple, np.ndarray)):
        words = [int(s) & _MASK64 for s in np.asarray(seed).reshape(-1)]
        if len(words) > STATE_SIZE:
            raise ValueError(f"seed should have no more than {STATE_SIZE} elements. "
                             f"Got {len(words)} elements.")
        words = [0] * (STATE_SIZE - len(words)) + words
    else:
        value = int(seed) % (1 << (64 * STATE_SIZE))
        words = [(value >> (64 * i)) & _MASK64 for i in range(STATE_SIZE)]
    return convert_to_tensor(np.array([_int64(w) for w in words], np.int64))


class Generator:
    """A random-number generator with its state in a Variable.

    >>> import tapegrad as tf
    >>> a, b = tf.random.Generator.from_seed(7).split(2)
    >>> bool((a.normal([3]).numpy() != b.normal([3]).numpy()).all())
    True
    """

    def __init__(self, copy_from=None, state=None, alg=None):
        if copy_from is not None:
            state, alg = copy_from.state.numpy(), copy_from.algorithm
        if state is None:
            raise ValueError("tf.random.Generator needs `copy_from` or `state`: use "
                             "Generator.from_seed(seed) or from_non_deterministic_state().")
        check_alg(alg)
        state = np.asarray(state.numpy() if hasattr(state, "numpy") else state, np.int64)
        if state.shape != (STATE_SIZE,):
            raise ValueError(f"The shape of the state should be [{STATE_SIZE}]; got "
                             f"{list(state.shape)}")
        self._state_var = Variable(state, trainable=False, name="StateVar")
        self._alg = Algorithm.PHILOX

    @classmethod
    def from_seed(cls, seed, alg=None):
        """A generator whose state is ``create_rng_state(seed)``."""
        return cls(state=create_rng_state(seed), alg=alg)

    @classmethod
    def from_state(cls, state, alg):
        """A generator starting at ``state`` (int64 ``[counter low, counter high, key]``)."""
        return cls(state=state, alg=alg)

    @classmethod
    def from_key_counter(cls, key, counter, alg):
        """A generator with Philox ``key`` (one int) and ``counter`` (two ints)."""
        counter = [int(c) for c in np.asarray(counter).reshape(-1)]
        return cls(state=counter + [int(np.asarray(key).reshape(-1)[0])], alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None):
        """A generator seeded from the operating system's entropy."""
        words = np.frombuffer(os.urandom(8 * STATE_SIZE), np.int64)
        return cls(state=words.copy(), alg=alg)

    @property
    def state(self):
        """The state Variable (int64, shape [3])."""
        return self._state_var

    @property
    def algorithm(self):
        """The algorithm's number (1: Philox)."""
        return self._alg.value

    @property
    def key(self):
        """The Philox key (the state's last word)."""
        return self._state_var[-1]

    def reset(self, state):
        """Continue from ``state``."""
        self._state_var.assign(np.asarray(state, np.int64))

    def reset_from_seed(self, seed):
        """Continue as ``Generator.from_seed(seed)`` would start."""
        self._state_var.assign(create_rng_state(seed))

    def reset_from_key_counter(self, key, counter):
        """Continue from Philox ``key`` and ``counter``."""
        counter = [int(c) for c in np.asarray(counter).reshape(-1)]
        self._state_var.assign(np.array(counter + [int(key)], np.int64))

    def skip(self, delta):
        """Advance the state as ``delta`` drawn elements would."""
        self._advance(int(delta))

    def _advance(self, elements):
        """Add ``256 * elements`` to the 128-bit counter (wrapping, as TensorFlow's)."""
        state = self._state_var.read_value()
        lo = state[0:1] + np.int64(SKIP_PER_ELEMENT * elements)  # wraps at 2**64
        # an unsigned overflow: the low word was >= 2**63 and is now < 2**63
        carry = cast(math_ops.logical_and(state[0:1] < 0, lo >= 0), _dt.int64)
        self._state_var.assign(concat([lo, state[1:2] + carry, state[2:3]], 0))

    def _draw(self, shape, fn):
        shape = shape_of(shape)
        state = self._state_var.read_value()
        out = fn(state, shape)
        self._advance(int(np.prod(shape, dtype=np.int64)))
        return out

    def uniform(self, shape, minval=0, maxval=None, dtype=_dt.float32, name=None):
        """Uniform numbers in [minval, maxval) (integers: both bounds or neither)."""
        if _dt.as_dtype(dtype).kind in "iu" and (minval is None) != (maxval is None):
            raise ValueError(f"For integer dtype {_dt.as_dtype(dtype)!r}, minval and maxval "
                             "must be both `None` or both non-`None`; got "
                             f"minval={minval} and maxval={maxval}")
        return self._draw(shape, lambda s, sh: uniform_from(s, sh, minval, maxval, dtype,
                                                            False))

    def uniform_full_int(self, shape, dtype="uint64", name=None):
        """Integers over the whole range of ``dtype`` (32 or 64 bits)."""
        return self._draw(shape, lambda s, sh: uniform_from(s, sh, None, None, dtype, False))

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=_dt.float32, name=None):
        """Normal numbers."""
        return self._draw(shape, lambda s, sh: normal_from(s, sh, mean, stddev, dtype, False))

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=_dt.float32, name=None):
        """Normal numbers within two standard deviations of ``mean``."""
        return self._draw(shape, lambda s, sh: normal_from(s, sh, mean, stddev, dtype, False,
                                                           truncated=True))

    def make_seeds(self, count=1):
        """``count`` seeds for the stateless functions, shape ``[2, count]``."""
        keys = self._draw([count], lambda s, sh: draw(s, sh, "int64", "full_int", False))
        return concat([keys[None], keys[None] * 0], 0)

    def split(self, count=1):
        """``count`` new, independent generators (this one advances)."""
        keys = self._draw([count], lambda s, sh: draw(s, sh, "int64", "full_int", False))
        return [Generator(state=[0, 0, int(k)], alg=self._alg) for k in keys.numpy()]


_GLOBAL = []


def get_global_generator():
    """The global generator (made from the operating system's entropy on first use).

    >>> import tapegrad as tf
    >>> tf.random.get_global_generator().normal([2]).shape
    TensorShape([2])
    """
    if not _GLOBAL:
        _GLOBAL.append(Generator.from_non_deterministic_state())
    return _GLOBAL[0]


def set_global_generator(generator):
    """Replace the global generator."""
    _GLOBAL[:] = [generator]
