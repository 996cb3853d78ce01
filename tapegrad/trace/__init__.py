"""Tracing: record a Python function as an IR ``Program`` and turn programs into NumPy code.

- ``tracer.py``: ``GraphBuilder`` (the tracing interpreter) and ``SymbolicTensor``;
- ``symint.py``, ``symbolic.py``, ``template.py``: symbolic sizes, so one trace serves many
  batch sizes;
- ``codegen.py``, ``emit_forms.py``, ``blocking.py``: ``Program`` -> readable NumPy source,
  compiled once.
"""
