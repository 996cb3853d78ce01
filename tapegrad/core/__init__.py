"""Core values and the one dispatch point: Tensor, Variable, dtypes, ``bind``."""
