"""Transforms on functions: the functional API (``grad``, ``jacfwd``, ``jacrev``, ``hessian``...)."""
