"""Compile once, evaluate many: ``tapegrad.function`` and its per-signature cache.

- ``signature.py``: ``TensorSpec`` and the cache key of a call;
- ``function.py``: ``tapegrad.function`` (``Function``), the per-signature cache;
- ``concrete.py``: ``ConcreteFunction``: one traced, optimised, compiled program;
- ``derivative_cache.py``: tape replays compiled once per tape structure.

Tracing and code generation, which these build on, live in ``tapegrad.trace``.
"""
from tapegrad.compile.function import Function, function  # noqa: F401
from tapegrad.compile.concrete import ConcreteFunction  # noqa: F401
from tapegrad.compile.signature import TensorSpec  # noqa: F401
from tapegrad.trace.tracer import (GraphBuilder, OperatorNotAllowedInGraphError,  # noqa: F401
                                   SymbolicTensor, tracing)
