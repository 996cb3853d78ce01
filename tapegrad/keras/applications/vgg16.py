"""``keras.applications.vgg16``: VGG16 (Simonyan & Zisserman, ICLR 2015), and the VGG
builder that ``vgg19`` shares: the layers, names and parameter counts of Keras 3.

>>> from tapegrad import keras
>>> model = keras.applications.VGG16(weights=None, include_top=False,
...                                  input_shape=(32, 32, 3), pooling="avg")
>>> model.output.shape, model.count_params()
((None, 512), 14714688)
"""
from tapegrad.keras import backend
from tapegrad.keras import layers
from tapegrad.keras.applications import imagenet_utils
from tapegrad.keras.applications.imagenet_utils import decode_predictions  # noqa: F401

BASE_URL = "https://storage.googleapis.com/tensorflow/keras-applications/"


def build_vgg(convs, include_top, weights, input_tensor, input_shape, pooling, classes,
              classifier_activation, name):
    """VGG with ``convs[i]`` 3x3 convolutions in block ``i + 1`` (64 to 512 filters)."""
    imagenet_utils.check_weights(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(
        input_shape, default_size=224, min_size=32,
        data_format=backend.image_data_format(), require_flatten=include_top,
        weights=weights)
    family = f"vgg{sum(convs) + 3}"
    filename = (f"{family}_weights_tf_dim_ordering_tf_kernels"
                f"{'' if include_top else '_notop'}.h5")
    imagenet_utils.refuse_download(weights, filename, f"{BASE_URL}{family}/{filename}")
    img_input = imagenet_utils.model_input(input_tensor, input_shape)
    x = img_input
    for block, (n, filters) in enumerate(zip(convs, (64, 128, 256, 512, 512)), start=1):
        for i in range(1, n + 1):
            x = layers.Conv2D(filters, (3, 3), activation="relu", padding="same",
                              name=f"block{block}_conv{i}")(x)
        x = layers.MaxPooling2D((2, 2), strides=(2, 2), name=f"block{block}_pool")(x)
    if include_top:
        x = layers.Flatten(name="flatten")(x)
        x = layers.Dense(4096, activation="relu", name="fc1")(x)
        x = layers.Dense(4096, activation="relu", name="fc2")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    elif pooling == "avg":
        x = layers.GlobalAveragePooling2D()(x)
    elif pooling == "max":
        x = layers.GlobalMaxPooling2D()(x)
    return imagenet_utils.finish(img_input, input_tensor, x, name, weights)


def VGG16(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
          pooling=None, classes=1000, classifier_activation="softmax", name="vgg16"):
    """VGG16: 13 convolutions in 5 blocks, then (``include_top``) two 4096-unit layers and
    the classifier. Inputs: ``preprocess_input`` (caffe mode) of RGB images in [0, 255].

    >>> from tapegrad import keras
    >>> keras.applications.VGG16(weights=None, include_top=False).output.shape
    (None, None, None, 512)
    """
    return build_vgg((2, 2, 3, 3, 3), include_top, weights, input_tensor, input_shape,
                     pooling, classes, classifier_activation, name)


def preprocess_input(x, data_format=None):
    """VGG's preprocessing: RGB to BGR and each channel minus its ImageNet mean ("caffe").

    >>> import numpy as np
    >>> preprocess_input(np.full((1, 1, 3), 128.0))
    array([[[24.061, 11.221,  4.32 ]]])
    """
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")
