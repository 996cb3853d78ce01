"""Transforms: batching (vmap), forward mode, Jacobians and the functional API."""
