"""What ``GradientTape`` and the other recorders of tape/ share: the unconnected-gradient
choice, the default target cotangent (ones), and ``_recording_derivatives``, which lets the
tapes on the stack record a derivative computation and mark it as such."""
import enum

import numpy as np

from tapegrad.primitives.api import UNITS, is_unit, ones_like, unit, zeros
from tapegrad.core.state import STATE, recording
from tapegrad.core.tensor import Tensor


class UnconnectedGradients(enum.Enum):
    """What ``gradient`` returns for a source the target does not depend on."""

    NONE = "none"
    ZERO = "zero"


def _unconnected(value):
    if isinstance(value, UnconnectedGradients):
        return value
    try:
        return UnconnectedGradients(value)
    except ValueError:
        raise ValueError(f"Unknown value for unconnected_gradients: '{value}'") from None


_ONES = {}


def _ones_like(t):
    """The cotangent of a target when none is given (ones); scalar ones are shared
    (tensors are immutable), and a real one is the unit that derivative rules' products
    skip (``api.times``)."""
    if t.ndim == 0:
        dtype = t.dtype
        if dtype.kind == "f":
            one = UNITS.get(dtype)
            return one if one is not None else unit(dtype)
        one = _ONES.get(dtype)
        if one is None:
            arr = np.ones((), dtype)
            arr.flags.writeable = False  # shared by every tape: nothing may write into it
            one = _ONES[dtype] = Tensor._wrap(arr)
        return one
    return ones_like(t)


def _own(c):
    """A result for the user: never the shared unit cotangent itself (a target that is also
    a source gets its own cotangent), which derivative rules treat as the number one
    (``api.times``)."""
    return Tensor._wrap(c._value) if is_unit(c) else c


def _zeros_for(s):
    return zeros(s.shape, dtype=s.dtype)


def _is_float(x):
    return x.dtype.kind in "fc"


def _float_tensors(xs):
    """Whether every item of ``xs`` is a float Tensor (a loop: a generator in ``all`` costs
    ~0.1 us more per item, and a model's weights are many)."""
    for x in xs:
        if not isinstance(x, Tensor) or x.dtype.kind not in "fc":
            return False
    return True


def _concrete_floats(xs):
    """Whether every item of ``xs`` is a concrete float Tensor (a loop, as
    ``_float_tensors``)."""
    for t in xs:
        if type(t) is not Tensor or t._value.dtype.kind not in "fc":
            return False
    return True


class _WeakDict(dict):
    """A dict that can be weakly referenced."""

    __slots__ = ("__weakref__",)



class _recording_derivatives:
    """``recording(recs)`` for a derivative computation: each recorder in ``recs`` that
    notes derivative code (``derivative_mark``: tapes) marks the entries it records meanwhile
    as such (``tf.draw`` tells them apart)."""

    __slots__ = ("swap", "marks")

    def __init__(self, recs):
        # the recorders already on the stack (an inner tape's gradient under its outer
        # tapes, the nested-tape case): nothing to switch
        st = STATE.stack
        same = recs is st.recorders and len(recs) == len(st.interpreters)
        self.swap = None if same else recording(recs)
        self.marks = [(r, m) for r in recs if (m := r.derivative_mark()) is not None]

    def __enter__(self):
        if self.swap is not None:
            self.swap.__enter__()

    def __exit__(self, *exc):
        if self.swap is not None:
            self.swap.__exit__(*exc)
        for r, mark in self.marks:
            r.derivative_done(mark)
        return False
