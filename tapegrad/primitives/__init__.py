"""The closed set of primitives. Importing this package registers all of them but ``cond``
and ``while_loop`` (``control_flow.py``, a layer above: their rules run tapes and traces)."""
from tapegrad.primitives import elementwise, reductions, gather, shape, linalg, solvers  # noqa: F401
from tapegrad.primitives import philox, random, sorting  # noqa: F401
from tapegrad.primitives import conv, pooling, variables  # noqa: F401
from tapegrad.primitives import scans, scatter_extremes, segments, special  # noqa: F401
from tapegrad.primitives import special_more  # noqa: F401
from tapegrad.primitives import bitwise, bounds, decompositions, effects, fft  # noqa: F401
from tapegrad.core.dispatch import PRIMITIVES  # noqa: F401
