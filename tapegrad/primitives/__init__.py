"""The closed set of primitives. Importing this package registers all of them."""
from tapegrad.primitives import elementwise, reductions, shape, linalg  # noqa: F401
from tapegrad.primitives import control_flow, random, sorting  # noqa: F401
from tapegrad.primitives import conv, pooling  # noqa: F401
from tapegrad.core.dispatch import PRIMITIVES  # noqa: F401
