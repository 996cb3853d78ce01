"""Batching: the interpreter that adds a batch dimension to every primitive, and ``vmap``.

- ``interpreter.py``: ``BatchedTensor``, the batch levels and each primitive's batching rule;
- ``vmap.py``: ``tapegrad.vmap`` and ``tapegrad.vectorized_map`` on top of it.
"""
