"""Control flow: ``tapegrad.cond`` and ``tapegrad.while_loop``, eager and traced.

- ``primitives.py``: the ``cond`` and ``while`` primitives, whose parameters are subprograms;
- ``trace.py``: tracing a branch or a loop body into a subprogram;
- ``derive.py``: their derivatives (reverse, forward) and batching;
- ``ops.py``: the TensorFlow-named ``cond`` and ``while_loop``.
"""
