"""``tf.keras.backend``: the default float type, fuzz factor and per-session layer names.

Keras keeps this state in one place so that ``clear_session`` can reset it; here it is
process-wide as well (names and floatx are configuration, not model state).

>>> from tapegrad import keras
>>> keras.backend.floatx()
'float32'
"""
import collections
import re

import numpy as np

_FLOATX = "float32"
_IMAGE_DATA_FORMAT = "channels_last"
_EPSILON = 1e-7
_UIDS = collections.defaultdict(int)


def floatx():
    """The default float type of new weights and converted inputs, as a string."""
    return _FLOATX


def set_floatx(value):
    """Set the default float type: ``'float16'``, ``'float32'`` or ``'float64'``.

    >>> from tapegrad import keras
    >>> keras.backend.set_floatx("float64"); keras.layers.Dense(1)(np.ones((1, 2))).dtype
    dtype('float64')
    >>> keras.backend.set_floatx("float32")
    """
    global _FLOATX
    accepted = {"bfloat16", "float16", "float32", "float64"}
    if value not in accepted:
        raise ValueError(f"Unknown `floatx` value: {value}. Expected one of {accepted}")
    if value == "bfloat16":
        raise ValueError("bfloat16 is not supported by NumPy; use float16, float32 or float64.")
    _FLOATX = str(value)


def epsilon():
    """The fuzz factor used in numeric expressions (1e-7 by default)."""
    return _EPSILON


def set_epsilon(value):
    global _EPSILON
    _EPSILON = float(value)


def image_data_format():
    """The default ``data_format`` of image layers: ``'channels_last'`` unless
    ``set_image_data_format`` changed it."""
    return _IMAGE_DATA_FORMAT


def set_image_data_format(data_format):
    """Set the default ``data_format`` (``'channels_first'`` or ``'channels_last'``)."""
    global _IMAGE_DATA_FORMAT
    _IMAGE_DATA_FORMAT = standardize_data_format(data_format)


def standardize_data_format(data_format):
    """``data_format`` checked and lower-cased; None is ``image_data_format()``.

    >>> standardize_data_format(None), standardize_data_format("Channels_First")
    ('channels_last', 'channels_first')
    """
    if data_format is None:
        return _IMAGE_DATA_FORMAT
    data_format = str(data_format).lower()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError("The `data_format` argument must be one of {'channels_first', "
                         f"'channels_last'}}. Received: data_format={data_format}")
    return data_format


def backend():
    return "tapegrad"


def get_uid(prefix=""):
    """A per-session counter per prefix: 1, 2, ... (``clear_session`` restarts it)."""
    _UIDS[prefix] += 1
    return _UIDS[prefix]


def to_snake_case(name):
    """Keras's snake case of a class name (``Conv2D`` -> ``conv2d``, ``ReLU`` -> ``re_lu``),
    which differs from ``tf.Module``'s (``conv2_d``)."""
    name = re.sub(r"\W+", "", name)
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


def unique_name(prefix):
    """Keras's automatic names: ``dense``, then ``dense_1``, ``dense_2``, ..."""
    n = get_uid(prefix)
    return prefix if n == 1 else f"{prefix}_{n - 1}"


def clear_session(free_memory=True):
    """Reset the automatic layer names (``dense``, ``dense_1``, ...)."""
    _UIDS.clear()


def standardize_dtype(dtype):
    """A dtype (string, NumPy or tapegrad) as Keras's string name; None means floatx."""
    if dtype is None:
        return _FLOATX
    if isinstance(dtype, str) and dtype in ("float", "int"):
        return _FLOATX if dtype == "float" else "int32"
    if isinstance(dtype, str) and dtype == "string":
        return dtype
    d = np.dtype(dtype)
    return "string" if d.kind in "OUS" else d.name  # tf.string: object arrays of bytes


def is_float_dtype(dtype):
    return np.dtype(dtype).kind == "f"


def int_shape(x):
    return tuple(x.shape)


def rng():
    """tapegrad's global NumPy generator (re-seeded by ``tf.random.set_seed``)."""
    from tapegrad.ops.random_ops import generator
    return generator()


def __getattr__(name):
    # tf.keras.backend also exports the Keras 2 era functions (K.mean, K.clip, ...); they
    # compute with tapegrad's operations, which import this module, so they load on first use
    from tapegrad.keras import legacy_backend
    if name in legacy_backend.NAMES:
        return getattr(legacy_backend, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
