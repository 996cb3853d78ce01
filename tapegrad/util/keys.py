"""Cache keys that tell apart every two values a computation can tell apart.

Python's ``==`` (and so dict lookup) says ``0.0 == -0.0`` although ``1 / -0.0`` is ``-inf``,
and ``nan != nan`` although two NaN constants compute alike. A cache keyed by such values
would hand a trace, a merged equation or a constant made for one zero to the other. Floats
and complex numbers are keyed by ``repr``, which round-trips exactly.

>>> import numpy as np
>>> exact(0.0) == exact(-0.0), exact(float("nan")) == exact(float("nan"))
(False, True)
>>> exact((1, 2.5)) == exact((1, 2.5)), exact(3) == exact(3.0)
(True, False)
>>> exact(np.float64(0.0)) == exact(np.float64(-0.0)), exact(np.float32(1)) == exact(1.0)
(False, False)
"""
import numpy as np

# the scalar types keyed by repr (also a cheap test for params: no primitive's params hold
# tuples of floats)
FLOAT_TYPES = frozenset({float, complex, np.float16, np.float32, np.float64, np.longdouble,
                         np.complex64, np.complex128, np.clongdouble})


def exact(v):
    """A hashable-where-``v``-is key: equal only for values that compute alike."""
    t = type(v)
    if t in FLOAT_TYPES:
        return (t, repr(v))
    if t is tuple or t is list:
        return (t,) + tuple(map(exact, v))
    return (t, v)
