"""``keras.ops``: Keras 3's NumPy-style operations (``ops.sum``, ``ops.exp``, ...), which
its examples use in place of ``tf.*``.

They follow Keras's rules where those differ from TensorFlow's: tensors of different
dtypes are promoted as JAX does (``int32`` with ``float16`` is ``float16``; a Python float
with an integer tensor is ``floatx``), transcendental functions and ``mean`` of integers
compute in ``floatx``, ``sum`` of ``bool``/``int8``/``int16`` gives ``int32``, and the
axes, defaults and argument names are NumPy's (``concatenate(xs, axis=0)``,
``split(x, 3)``, ``var`` and ``std`` of the population).

>>> from tapegrad.keras import ops
>>> float(ops.mean(ops.arange(4))), ops.sum(ops.ones((2, 3)), axis=0).numpy().tolist()
(1.5, [2.0, 2.0, 2.0])
"""
from tapegrad.keras.ops.arrays import *  # noqa: F401,F403
from tapegrad.keras.ops.numeric import *  # noqa: F401,F403
from tapegrad.keras.ops.convolution import *  # noqa: F401,F403
from tapegrad.keras.ops.more_numeric import *  # noqa: F401,F403
from tapegrad.keras.ops.extra import *  # noqa: F401,F403
from tapegrad.keras.ops.misc import *  # noqa: F401,F403
from tapegrad.keras.ops.spectral import *  # noqa: F401,F403
from tapegrad.keras.ops.losses import *  # noqa: F401,F403
from tapegrad.keras.ops.nn_extra import *  # noqa: F401,F403
from tapegrad.keras.ops.attention import *  # noqa: F401,F403
from tapegrad.keras.ops.functional import *  # noqa: F401,F403
from tapegrad.keras.ops.statistics import *  # noqa: F401,F403
from tapegrad.keras.ops.math_more import *  # noqa: F401,F403
from tapegrad.keras.ops.linalg_more import *  # noqa: F401,F403
from tapegrad.keras.ops.signal_more import *  # noqa: F401,F403
from tapegrad.keras.ops.pooling import *  # noqa: F401,F403
from tapegrad.keras.ops.einops import *  # noqa: F401,F403

import functools as _functools
import types as _types

from tapegrad.keras.symbolic_ops import accepts_keras_tensors as _accepts_keras_tensors


def _wrap_public():
    # each function also builds functional-API nodes from KerasTensors (symbolic_ops.py);
    # shape() of a KerasTensor is its static shape, None for unknown sizes, as in Keras
    space = globals()
    for name, value in list(space.items()):
        if not name.startswith("_") and isinstance(value, _types.FunctionType):
            space[name] = _accepts_keras_tensors(value)
    plain_shape = space["shape"].__wrapped__

    @_functools.wraps(plain_shape)
    def shape(x):
        return tuple(x.shape) if getattr(x, "_keras_symbolic", False) else plain_shape(x)
    space["shape"] = shape


_wrap_public()

# Keras's sub-namespaces, last: they gather the functions above (wrapped)
from tapegrad.keras.ops import image, linalg, nn, numpy  # noqa: F401,E402
