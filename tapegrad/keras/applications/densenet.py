"""``keras.applications.densenet``: DenseNet121, DenseNet169 and DenseNet201 (Huang et
al., CVPR 2017), with Keras 3's layer names and parameter counts.

>>> from tapegrad import keras
>>> model = keras.applications.DenseNet121(weights=None, include_top=False,
...                                        input_shape=(32, 32, 3), pooling="avg")
>>> model.output.shape, model.count_params()
((None, 1024), 7037504)
"""
from tapegrad.keras import backend
from tapegrad.keras import layers
from tapegrad.keras.applications import imagenet_utils
from tapegrad.keras.applications.imagenet_utils import decode_predictions  # noqa: F401

BASE_URL = "https://storage.googleapis.com/tensorflow/keras-applications/densenet/"
EPSILON = 1.001e-5


def _axis():
    return 3 if backend.image_data_format() == "channels_last" else 1


def conv_block(x, growth_rate, name):
    """BN-ReLU-1x1 conv (4 x growth) and BN-ReLU-3x3 conv (growth), concatenated to ``x``."""
    y = layers.BatchNormalization(axis=_axis(), epsilon=EPSILON, name=f"{name}_0_bn")(x)
    y = layers.Activation("relu", name=f"{name}_0_relu")(y)
    y = layers.Conv2D(4 * growth_rate, 1, use_bias=False, name=f"{name}_1_conv")(y)
    y = layers.BatchNormalization(axis=_axis(), epsilon=EPSILON, name=f"{name}_1_bn")(y)
    y = layers.Activation("relu", name=f"{name}_1_relu")(y)
    y = layers.Conv2D(growth_rate, 3, padding="same", use_bias=False,
                      name=f"{name}_2_conv")(y)
    return layers.Concatenate(axis=_axis(), name=f"{name}_concat")([x, y])


def dense_block(x, blocks, name):
    """``blocks`` conv blocks, each adding 32 channels."""
    for i in range(blocks):
        x = conv_block(x, 32, name=f"{name}_block{i + 1}")
    return x


def transition_block(x, reduction, name):
    """BN-ReLU-1x1 conv to ``reduction`` of the channels, then 2x2 average pooling."""
    x = layers.BatchNormalization(axis=_axis(), epsilon=EPSILON, name=f"{name}_bn")(x)
    x = layers.Activation("relu", name=f"{name}_relu")(x)
    x = layers.Conv2D(int(x.shape[_axis()] * reduction), 1, use_bias=False,
                      name=f"{name}_conv")(x)
    return layers.AveragePooling2D(2, strides=2, name=f"{name}_pool")(x)


def DenseNet(blocks, include_top=True, weights="imagenet", input_tensor=None,
             input_shape=None, pooling=None, classes=1000, classifier_activation="softmax",
             name="densenet"):
    """DenseNet with ``blocks`` conv blocks in its four dense blocks.

    >>> DenseNet([1, 1, 1, 1], weights=None, include_top=False).output.shape
    (None, None, None, 68)
    """
    imagenet_utils.check_weights(weights, include_top, classes, quote="`")
    input_shape = imagenet_utils.obtain_input_shape(
        input_shape, default_size=224, min_size=32,
        data_format=backend.image_data_format(), require_flatten=include_top,
        weights=weights)
    if weights == "imagenet":
        depth = {(6, 12, 24, 16): 121, (6, 12, 32, 32): 169, (6, 12, 48, 32): 201}.get(
            tuple(blocks))
        if depth is None:
            raise ValueError("Weights for this DenseNet variant are not available. "
                             f"Received blocks={blocks}")
        filename = (f"densenet{depth}_weights_tf_dim_ordering_tf_kernels"
                    f"{'' if include_top else '_notop'}.h5")
        imagenet_utils.refuse_download(weights, filename, BASE_URL + filename)
    img_input = imagenet_utils.model_input(input_tensor, input_shape)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)))(img_input)
    x = layers.Conv2D(64, 7, strides=2, use_bias=False, name="conv1_conv")(x)
    x = layers.BatchNormalization(axis=_axis(), epsilon=EPSILON, name="conv1_bn")(x)
    x = layers.Activation("relu", name="conv1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)))(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1")(x)
    for i, n in enumerate(blocks):
        x = dense_block(x, n, name=f"conv{i + 2}")
        if i < 3:
            x = transition_block(x, 0.5, name=f"pool{i + 2}")
    x = layers.BatchNormalization(axis=_axis(), epsilon=EPSILON, name="bn")(x)
    x = layers.Activation("relu", name="relu")(x)
    x = imagenet_utils.top(x, include_top, pooling, classes, classifier_activation, weights)
    return imagenet_utils.finish(img_input, input_tensor, x, name, weights)


def _densenet(blocks, default_name):
    def constructor(include_top=True, weights="imagenet", input_tensor=None,
                    input_shape=None, pooling=None, classes=1000,
                    classifier_activation="softmax", name=default_name):
        return DenseNet(blocks, include_top, weights, input_tensor, input_shape, pooling,
                        classes, classifier_activation, name)
    constructor.__name__ = constructor.__qualname__ = default_name.replace("densenet",
                                                                           "DenseNet")
    constructor.__doc__ = (
        f"{constructor.__name__}: dense blocks of {tuple(blocks)} conv blocks; "
        "``preprocess_input`` is torch mode.\n\n"
        "    >>> from tapegrad import keras\n"
        f"    >>> keras.applications.{constructor.__name__}.__name__\n"
        f"    '{constructor.__name__}'\n    ")
    return constructor


DenseNet121 = _densenet([6, 12, 24, 16], "densenet121")
DenseNet169 = _densenet([6, 12, 32, 32], "densenet169")
DenseNet201 = _densenet([6, 12, 48, 32], "densenet201")


def preprocess_input(x, data_format=None):
    """DenseNet's preprocessing: pixels to [0, 1], then each channel's ImageNet mean and
    standard deviation ("torch" mode).

    >>> import numpy as np
    >>> preprocess_input(np.full((1, 3), 255.0)).round(3)
    array([[2.249, 2.429, 2.64 ]])
    """
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="torch")
