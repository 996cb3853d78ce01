"""``tf.version`` and ``tf.__version__``.

``VERSION`` is the TensorFlow API that tapegrad follows, with tapegrad's own version as a
PEP 440 local label: version checks written for TensorFlow (``startswith('2')``,
``int(VERSION.split('.')[0]) >= 2``, ``packaging.version.parse(VERSION) >= '2.4'``) behave
as with TensorFlow 2.16, the release whose ``tf.keras`` is Keras 3, and the string still
says it is tapegrad.

>>> import tapegrad as tf
>>> tf.__version__.startswith('2'), tf.version.TAPEGRAD_VERSION in tf.__version__
(True, True)
"""
TF_API_VERSION = "2.16.0"
TAPEGRAD_VERSION = "0.1.0"  # keep equal to pyproject.toml's version
VERSION = f"{TF_API_VERSION}+tapegrad.{TAPEGRAD_VERSION}"
