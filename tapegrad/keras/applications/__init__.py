"""``keras.applications``: the ImageNet architectures of Keras 3 (built with
``weights=None``: tapegrad downloads nothing), each family's ``preprocess_input`` and
``decode_predictions``.

>>> from tapegrad import keras
>>> model = keras.applications.MobileNetV2(weights=None, input_shape=(32, 32, 3), classes=10)
>>> model.output.shape
(None, 10)
"""
from tapegrad.keras.applications import densenet, efficientnet, imagenet_utils  # noqa: F401
from tapegrad.keras.applications import mobilenet_v2, resnet, resnet50, vgg16, vgg19  # noqa: F401
from tapegrad.keras.applications.densenet import DenseNet121, DenseNet169, DenseNet201  # noqa: F401
from tapegrad.keras.applications.efficientnet import (  # noqa: F401
    EfficientNetB0, EfficientNetB1, EfficientNetB2, EfficientNetB3, EfficientNetB4,
    EfficientNetB5, EfficientNetB6, EfficientNetB7)
from tapegrad.keras.applications.mobilenet_v2 import MobileNetV2  # noqa: F401
from tapegrad.keras.applications.resnet import ResNet50, ResNet101, ResNet152  # noqa: F401
from tapegrad.keras.applications.vgg16 import VGG16  # noqa: F401
from tapegrad.keras.applications.vgg19 import VGG19  # noqa: F401
