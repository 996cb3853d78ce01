"""``keras.applications.resnet``: ResNet50, ResNet101 and ResNet152 (He et al., CVPR 2015),
the bottleneck residual networks of Keras 3, with its layer names and parameter counts.

>>> from tapegrad import keras
>>> model = keras.applications.ResNet50(weights=None, include_top=False,
...                                     input_shape=(32, 32, 3), pooling="avg")
>>> model.output.shape, len(model.layers)
((None, 2048), 176)
"""
from tapegrad.keras import backend
from tapegrad.keras import layers
from tapegrad.keras.applications import imagenet_utils
from tapegrad.keras.applications.imagenet_utils import decode_predictions  # noqa: F401

BASE_URL = "https://storage.googleapis.com/tensorflow/keras-applications/resnet/"
EPSILON = 1.001e-5


def residual_block(x, filters, stride=1, conv_shortcut=True, name=None):
    """A bottleneck block: 1x1 (``filters``), 3x3, 1x1 (``4 * filters``) convolutions,
    each batch-normalised, added to the input (or to a 1x1 projection of it)."""
    axis = 3 if backend.image_data_format() == "channels_last" else 1
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(x)
        shortcut = layers.BatchNormalization(axis=axis, epsilon=EPSILON,
                                             name=f"{name}_0_bn")(shortcut)
    else:
        shortcut = x
    x = layers.Conv2D(filters, 1, strides=stride, name=f"{name}_1_conv")(x)
    x = layers.BatchNormalization(axis=axis, epsilon=EPSILON, name=f"{name}_1_bn")(x)
    x = layers.Activation("relu", name=f"{name}_1_relu")(x)
    x = layers.Conv2D(filters, 3, padding="SAME", name=f"{name}_2_conv")(x)
    x = layers.BatchNormalization(axis=axis, epsilon=EPSILON, name=f"{name}_2_bn")(x)
    x = layers.Activation("relu", name=f"{name}_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x)
    x = layers.BatchNormalization(axis=axis, epsilon=EPSILON, name=f"{name}_3_bn")(x)
    x = layers.Add(name=f"{name}_add")([shortcut, x])
    return layers.Activation("relu", name=f"{name}_out")(x)


def residual_stack(x, filters, blocks, stride1=2, name=None):
    """``blocks`` bottleneck blocks, the first projecting (and striding by ``stride1``)."""
    x = residual_block(x, filters, stride=stride1, name=f"{name}_block1")
    for i in range(2, blocks + 1):
        x = residual_block(x, filters, conv_shortcut=False, name=f"{name}_block{i}")
    return x


def build_resnet(blocks, include_top, weights, input_tensor, input_shape, pooling, classes,
                 classifier_activation, name):
    """ResNet v1 with ``blocks`` bottleneck blocks in stages conv2 to conv5."""
    imagenet_utils.check_weights(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(
        input_shape, default_size=224, min_size=32,
        data_format=backend.image_data_format(), require_flatten=include_top,
        weights=weights)
    filename = (f"{name}_weights_tf_dim_ordering_tf_kernels"
                f"{'' if include_top else '_notop'}.h5")
    imagenet_utils.refuse_download(weights, filename, BASE_URL + filename)
    img_input = imagenet_utils.model_input(input_tensor, input_shape)
    axis = 3 if backend.image_data_format() == "channels_last" else 1
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(img_input)
    x = layers.Conv2D(64, 7, strides=2, use_bias=True, name="conv1_conv")(x)
    x = layers.BatchNormalization(axis=axis, epsilon=EPSILON, name="conv1_bn")(x)
    x = layers.Activation("relu", name="conv1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    for stage, (n, filters) in enumerate(zip(blocks, (64, 128, 256, 512)), start=2):
        x = residual_stack(x, filters, n, stride1=1 if stage == 2 else 2, name=f"conv{stage}")
    x = imagenet_utils.top(x, include_top, pooling, classes, classifier_activation, weights)
    return imagenet_utils.finish(img_input, input_tensor, x, name, weights)


def _resnet(blocks, default_name):
    def constructor(include_top=True, weights="imagenet", input_tensor=None,
                    input_shape=None, pooling=None, classes=1000,
                    classifier_activation="softmax", name=default_name):
        return build_resnet(blocks, include_top, weights, input_tensor, input_shape, pooling,
                            classes, classifier_activation, name)
    constructor.__name__ = constructor.__qualname__ = default_name.replace("resnet", "ResNet")
    constructor.__doc__ = (
        f"{constructor.__name__}: ResNet v1 with {sum(blocks)} bottleneck blocks "
        f"{tuple(blocks)}; ``preprocess_input`` is caffe mode.\n\n"
        "    >>> from tapegrad import keras\n"
        f"    >>> keras.applications.{constructor.__name__}.__name__\n"
        f"    '{constructor.__name__}'\n    ")
    return constructor


ResNet50 = _resnet((3, 4, 6, 3), "resnet50")
ResNet101 = _resnet((3, 4, 23, 3), "resnet101")
ResNet152 = _resnet((3, 8, 36, 3), "resnet152")


def preprocess_input(x, data_format=None):
    """ResNet's preprocessing: RGB to BGR and each channel minus its ImageNet mean
    ("caffe").

    >>> import numpy as np
    >>> preprocess_input(np.zeros((1, 1, 3)))
    array([[[-103.939, -116.779, -123.68 ]]])
    """
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")
