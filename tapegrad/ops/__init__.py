"""User-facing operations. Derivative rules call these (as ``T.name``), so they nest.

The modules: ``math_ops`` (elementwise, reductions), ``array_ops`` (shape, indexing,
creation, sorting: it gathers ``shape_ops``, ``indexing_ops``, ``creation_ops``, ``sort_ops``
and ``logging_ops``), ``linalg_ops``, ``nn_ops`` and ``random_ops``.
"""
from tapegrad.ops.math_ops import *  # noqa: F401,F403
from tapegrad.ops.array_ops import *  # noqa: F401,F403
from tapegrad.ops.linalg_ops import matmul  # noqa: F401
from tapegrad.core.tensor import convert_to_tensor  # noqa: F401
from tapegrad.ops import linalg_ops as linalg  # noqa: F401
from tapegrad.ops import nn_ops as nn  # noqa: F401
from tapegrad.ops import random_ops as random  # noqa: F401
from tapegrad.ops.overloads import install as _install

_install()
