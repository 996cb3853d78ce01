"""``tf.keras.initializers``: the starting values of weights.

As in Keras 3, an initializer holds its seed: one created with ``seed=`` (or without one,
which draws a seed from ``tf.random``'s global generator when it is made) gives the same
values on every call. Values are drawn with NumPy, so building a layer inside
``tf.function`` gives concrete weights.

>>> from tapegrad import keras
>>> init = keras.initializers.GlorotUniform(seed=1)
>>> bool((init((2, 3)).numpy() == init((2, 3)).numpy()).all())
True
"""
import math

import numpy as np

from tapegrad.keras import _tf as tf
from tapegrad.keras import backend


def _dtype(dtype):
    return np.dtype(backend.standardize_dtype(dtype))


class Initializer:
    """Base class: ``init(shape, dtype=None)`` returns a tensor of that shape."""

    def __call__(self, shape, dtype=None):
        raise NotImplementedError

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def clone(self):
        return self.__class__.from_config(self.get_config())


class Zeros(Initializer):
    def __call__(self, shape, dtype=None):
        return tf.constant(np.zeros(tuple(shape), _dtype(dtype)))


class Ones(Initializer):
    def __call__(self, shape, dtype=None):
        return tf.constant(np.ones(tuple(shape), _dtype(dtype)))


class Constant(Initializer):
    def __init__(self, value=0.0):
        self.value = value

    def __call__(self, shape, dtype=None):
        return tf.constant(np.broadcast_to(np.asarray(self.value, _dtype(dtype)),
                                           tuple(shape)).copy())

    def get_config(self):
        return {"value": self.value}


class Identity(Initializer):
    def __init__(self, gain=1.0):
        self.gain = gain

    def __call__(self, shape, dtype=None):
        if len(shape) != 2:
            raise ValueError("Identity matrix initializer can only be used for 2D matrices. "
                             f"Received: shape={shape} of rank {len(shape)}.")
        return tf.constant(self.gain * np.eye(*shape, dtype=_dtype(dtype)))


class RandomInitializer(Initializer):
    def __init__(self, seed=None):
        if seed is not None and not isinstance(seed, (int, np.integer)):
            raise ValueError("`seed` argument should be an instance of "
                             f"`keras.random.SeedGenerator()` or an integer. Received: "
                             f"seed={seed}")
        self._init_seed = seed
        # Keras 3: an unseeded initializer draws its seed once, when it is made
        self.seed = int(seed) if seed is not None else int(
            backend.rng().integers(0, 2**31 - 1))

    def _rng(self):
        return np.random.default_rng(self.seed)

    def get_config(self):
        return {"seed": self._init_seed}


class RandomNormal(RandomInitializer):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev = mean, stddev
        super().__init__(seed)

    def __call__(self, shape, dtype=None):
        v = self._rng().normal(self.mean, self.stddev, tuple(shape))
        return tf.constant(v.astype(_dtype(dtype)))

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, **super().get_config()}


def _truncated(rng, shape, stddev, mean=0.0):
    # resample beyond two standard deviations, as tf.random.truncated_normal does
    v = rng.normal(0.0, 1.0, shape)
    bad = np.abs(v) > 2
    while bad.any():
        v[bad] = rng.normal(0.0, 1.0, int(bad.sum()))
        bad = np.abs(v) > 2
    return v * stddev + mean


class TruncatedNormal(RandomNormal):
    def __call__(self, shape, dtype=None):
        v = _truncated(self._rng(), tuple(shape), self.stddev, self.mean)
        return tf.constant(v.astype(_dtype(dtype)))


class RandomUniform(RandomInitializer):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        self.minval, self.maxval = minval, maxval
        super().__init__(seed)

    def __call__(self, shape, dtype=None):
        v = self._rng().uniform(self.minval, self.maxval, tuple(shape))
        return tf.constant(v.astype(_dtype(dtype)))

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, **super().get_config()}


def compute_fans(shape, input_axes=None, output_axes=None):
    """(fan_in, fan_out) of a weight shape; convolution kernels count their window. Given
    both ``input_axes`` and ``output_axes``, the products of those axes' sizes (Keras 3.15)."""
    shape = tuple(shape)
    if input_axes is not None and output_axes is not None:
        return (int(math.prod(shape[a] for a in input_axes)),
                int(math.prod(shape[a] for a in output_axes)))
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = math.prod(shape[:-2])
    return shape[-2] * receptive, shape[-1] * receptive


class VarianceScaling(RandomInitializer):
    """Random values with variance ``scale / n``, n the fan in, out or their average."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 input_axes=None, output_axes=None):
        if scale <= 0.0:
            raise ValueError(f"Argument `scale` must be positive float. Received: scale={scale}")
        if mode not in {"fan_in", "fan_out", "fan_avg"}:
            raise ValueError("Invalid `mode` argument: expected one of {'fan_in', 'fan_out', "
                             f"'fan_avg'}}. Received: mode={mode}")
        distribution = distribution.lower()
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in {"uniform", "truncated_normal", "untruncated_normal"}:
            raise ValueError("Invalid `distribution` argument: expected one of {'uniform', "
                             "'truncated_normal', 'untruncated_normal'}. Received: "
                             f"distribution={distribution}")
        self.scale, self.mode, self.distribution = scale, mode, distribution
        self.input_axes, self.output_axes = input_axes, output_axes
        super().__init__(seed)

    def __call__(self, shape, dtype=None):
        fan_in, fan_out = compute_fans(shape, self.input_axes, self.output_axes)
        n = {"fan_in": fan_in, "fan_out": fan_out,
             "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, n)
        rng, shape = self._rng(), tuple(shape)
        if self.distribution == "truncated_normal":
            # 0.8796... is the standard deviation of a unit normal truncated to [-2, 2]
            v = _truncated(rng, shape, math.sqrt(scale) / 0.87962566103423978)
        elif self.distribution == "untruncated_normal":
            v = rng.normal(0.0, math.sqrt(scale), shape)
        else:
            limit = math.sqrt(3.0 * scale)
            v = rng.uniform(-limit, limit, shape)
        return tf.constant(v.astype(_dtype(dtype)))

    def get_config(self):
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution,
                **super().get_config(), "input_axes": self.input_axes,
                "output_axes": self.output_axes}


def _scaling(name, scale, mode, distribution):
    def __init__(self, seed=None, input_axes=None, output_axes=None):
        VarianceScaling.__init__(self, scale, mode, distribution, seed, input_axes,
                                 output_axes)

    def get_config(self):
        return {"seed": self._init_seed, "input_axes": self.input_axes,
                "output_axes": self.output_axes}
    return type(name, (VarianceScaling,), {
        "__init__": __init__, "get_config": get_config,
        "__doc__": f"VarianceScaling(scale={scale}, mode='{mode}', "
                   f"distribution='{distribution}')."})


GlorotUniform = _scaling("GlorotUniform", 1.0, "fan_avg", "uniform")
GlorotNormal = _scaling("GlorotNormal", 1.0, "fan_avg", "truncated_normal")
HeNormal = _scaling("HeNormal", 2.0, "fan_in", "truncated_normal")
HeUniform = _scaling("HeUniform", 2.0, "fan_in", "uniform")
LecunNormal = _scaling("LecunNormal", 1.0, "fan_in", "truncated_normal")
LecunUniform = _scaling("LecunUniform", 1.0, "fan_in", "uniform")


class Orthogonal(RandomInitializer):
    """A (scaled) orthogonal matrix, from the QR decomposition of a normal sample."""

    def __init__(self, gain=1.0, seed=None):
        self.gain = gain
        super().__init__(seed)

    def __call__(self, shape, dtype=None):
        if len(shape) < 2:
            raise ValueError("The tensor to initialize must be at least two-dimensional. "
                             f"Received: shape={shape} of rank {len(shape)}.")
        rows, cols = math.prod(shape[:-1]), shape[-1]
        a = self._rng().normal(0.0, 1.0, (max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(a)
        q = q * np.sign(np.diag(r))  # makes the decomposition unique
        if rows < cols:
            q = q.T
        return tf.constant((self.gain * q.reshape(tuple(shape))).astype(_dtype(dtype)))

    def get_config(self):
        return {"gain": self.gain, **super().get_config()}


# Keras's lower-case aliases are the classes too (``keras.initializers.zeros()``)
zeros, ones, constant, identity = Zeros, Ones, Constant, Identity
random_normal, random_uniform, truncated_normal = RandomNormal, RandomUniform, TruncatedNormal
glorot_uniform, glorot_normal, he_normal, he_uniform = (
    GlorotUniform, GlorotNormal, HeNormal, HeUniform)
lecun_normal, lecun_uniform, orthogonal, variance_scaling = (
    LecunNormal, LecunUniform, Orthogonal, VarianceScaling)

_BY_NAME = {
    "zeros": Zeros, "ones": Ones, "constant": Constant, "identity": Identity,
    "random_normal": RandomNormal, "random_uniform": RandomUniform,
    "truncated_normal": TruncatedNormal, "glorot_uniform": GlorotUniform,
    "glorot_normal": GlorotNormal, "he_normal": HeNormal, "he_uniform": HeUniform,
    "lecun_normal": LecunNormal, "lecun_uniform": LecunUniform, "orthogonal": Orthogonal,
    "variance_scaling": VarianceScaling,
    # Keras's aliases
    "normal": RandomNormal, "uniform": RandomUniform, "one": Ones, "zero": Zeros,
    "identity_initializer": Identity, "orthogonal_initializer": Orthogonal}


def get(identifier):
    """An initializer from a name (``'glorot_uniform'``, ``'zeros'``, ...), a class, a
    callable or an instance; a name gives a new instance each time.

    >>> from tapegrad import keras
    >>> keras.initializers.get("ones")((2,)).numpy().tolist()
    [1.0, 1.0]
    """
    if identifier is None:
        return None
    if isinstance(identifier, str):
        key = identifier if identifier in _BY_NAME else _snake(identifier)
        if key in _BY_NAME:
            return _BY_NAME[key]()
    elif isinstance(identifier, dict):
        cls = _BY_NAME.get(_snake(identifier.get("class_name", "")))
        if cls is not None:
            return cls(**identifier.get("config", {}))
    elif isinstance(identifier, type) and issubclass(identifier, Initializer):
        return identifier()
    elif callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret initializer identifier: {identifier}")


def _snake(name):
    import re
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
