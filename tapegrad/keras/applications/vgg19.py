"""``keras.applications.vgg19``: VGG19 (Simonyan & Zisserman, ICLR 2015).

>>> from tapegrad import keras
>>> len(keras.applications.VGG19(weights=None, include_top=False, input_shape=(32, 32, 3)).layers)
22
"""
from tapegrad.keras.applications.imagenet_utils import decode_predictions  # noqa: F401
from tapegrad.keras.applications.vgg16 import build_vgg, preprocess_input  # noqa: F401


def VGG19(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
          pooling=None, classes=1000, classifier_activation="softmax", name="vgg19"):
    """VGG19: 16 convolutions in 5 blocks (2, 2, 4, 4, 4), then (``include_top``) two
    4096-unit layers and the classifier; ``preprocess_input`` is caffe mode.

    >>> from tapegrad import keras
    >>> keras.applications.VGG19.__name__
    'VGG19'
    """
    return build_vgg((2, 2, 4, 4, 4), include_top, weights, input_tensor, input_shape,
                     pooling, classes, classifier_activation, name)
