"""``keras.ops.nn``: the neural-network functions of ``keras.ops`` that Keras 3.15 lists in
that namespace (``catalog.py``), the same functions as ``keras.ops``'.

>>> from tapegrad.keras.ops import nn
>>> nn.relu([-1.0, 2.0]).numpy().tolist()
[0.0, 2.0]
"""
from tapegrad.keras.ops.catalog import namespace

__all__ = namespace(globals(), "nn")
