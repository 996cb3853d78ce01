"""``keras.applications.resnet50``: ResNet50 and its preprocessing (see ``resnet``).

>>> from tapegrad.keras.applications import resnet50
>>> resnet50.ResNet50.__name__
'ResNet50'
"""
from tapegrad.keras.applications.resnet import (  # noqa: F401
    ResNet50, decode_predictions, preprocess_input)
