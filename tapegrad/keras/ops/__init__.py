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
# Keras's sub-namespaces, last: they gather the functions above
from tapegrad.keras.ops import linalg, nn, numpy  # noqa: F401,E402
