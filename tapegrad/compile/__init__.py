"""Compile once, evaluate many: ``tapegrad.function``, tracing and code generation.

- ``tracer.py``: ``GraphBuilder`` (the tracer on ``STATE.tracers``) and ``SymbolicTensor``;
- ``signature.py``: ``TensorSpec`` and the cache key of a call;
- ``function.py``: ``tapegrad.function`` (``Function``), the per-signature cache;
- ``concrete.py``: ``ConcreteFunction``: one traced, optimised, compiled program;
- ``codegen.py``: ``Program`` -> readable NumPy source, compiled once.
"""
from tapegrad.compile.function import Function, function  # noqa: F401
from tapegrad.compile.concrete import ConcreteFunction  # noqa: F401
from tapegrad.compile.signature import TensorSpec  # noqa: F401
from tapegrad.compile.tracer import (GraphBuilder, OperatorNotAllowedInGraphError,  # noqa: F401
                                     SymbolicTensor, tracing)
