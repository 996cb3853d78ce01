"""``keras.ops.numpy``: the NumPy-style functions (``from keras.ops import numpy as knp``) of ``keras.ops`` that Keras 3.15 lists in
that namespace (``catalog.py``), the same functions as ``keras.ops``'.

>>> from tapegrad.keras.ops import numpy as knp
>>> float(knp.sum(knp.ones(3)))
3.0
"""
from tapegrad.keras.ops.catalog import namespace

__all__ = namespace(globals(), "numpy")
