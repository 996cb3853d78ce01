"""``keras.ops.linalg``: the linear algebra of ``keras.ops`` that Keras 3.15 lists in
that namespace (``catalog.py``), the same functions as ``keras.ops``'.

>>> from tapegrad.keras.ops import linalg
>>> float(linalg.det([[2.0, 0.0], [0.0, 3.0]]))
6.0
"""
from tapegrad.keras.ops.catalog import namespace

__all__ = namespace(globals(), "linalg")
