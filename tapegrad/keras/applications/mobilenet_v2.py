"""``keras.applications.mobilenet_v2``: MobileNetV2 (Sandler et al., CVPR 2018), the
inverted-residual network of Keras 3 with its layer names and parameter counts; ``alpha``
scales every layer's width.

>>> from tapegrad import keras
>>> model = keras.applications.MobileNetV2(weights=None, include_top=False, alpha=0.35,
...                                        input_shape=(32, 32, 3))
>>> model.name, model.output.shape
('mobilenetv2_0.35_32', (None, 1, 1, 1280))
"""
import warnings

from tapegrad.keras import backend
from tapegrad.keras import layers
from tapegrad.keras.applications import imagenet_utils
from tapegrad.keras.applications.imagenet_utils import decode_predictions  # noqa: F401
from tapegrad.keras.layers.symbolic import KerasTensor

BASE_URL = "https://storage.googleapis.com/tensorflow/keras-applications/mobilenet_v2/"
SIZES = (96, 128, 160, 192, 224)  # the input sizes ImageNet weights exist for
# (filters, stride, expansion) of blocks 0 to 16
BLOCKS = ((16, 1, 1), (24, 2, 6), (24, 1, 6), (32, 2, 6), (32, 1, 6), (32, 1, 6),
          (64, 2, 6), (64, 1, 6), (64, 1, 6), (64, 1, 6), (96, 1, 6), (96, 1, 6),
          (96, 1, 6), (160, 2, 6), (160, 1, 6), (160, 1, 6), (320, 1, 6))


def _make_divisible(v, divisor, min_value=None):
    """``v`` rounded to a multiple of ``divisor``, never below 90% of ``v``."""
    min_value = divisor if min_value is None else min_value
    new = max(min_value, int(v + divisor / 2) // divisor * divisor)
    return new + divisor if new < 0.9 * v else new


def _bn(x, name):
    axis = 1 if backend.image_data_format() == "channels_first" else -1
    return layers.BatchNormalization(axis=axis, epsilon=1e-3, momentum=0.999, name=name)(x)


def _inverted_res_block(inputs, expansion, stride, alpha, filters, block_id):
    """Expand (1x1), depthwise 3x3, project (1x1, linear); added to the input when the
    shapes agree."""
    axis = 1 if backend.image_data_format() == "channels_first" else -1
    in_channels = inputs.shape[axis]
    pointwise = _make_divisible(int(filters * alpha), 8)
    x, prefix = inputs, f"block_{block_id}_"
    if block_id:
        x = layers.Conv2D(expansion * in_channels, kernel_size=1, padding="same",
                          use_bias=False, activation=None, name=f"{prefix}expand")(x)
        x = _bn(x, f"{prefix}expand_BN")
        x = layers.ReLU(6.0, name=f"{prefix}expand_relu")(x)
    else:
        prefix = "expanded_conv_"
    if stride == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, 3),
                                 name=f"{prefix}pad")(x)
    x = layers.DepthwiseConv2D(kernel_size=3, strides=stride, activation=None, use_bias=False,
                               padding="same" if stride == 1 else "valid",
                               name=f"{prefix}depthwise")(x)
    x = _bn(x, f"{prefix}depthwise_BN")
    x = layers.ReLU(6.0, name=f"{prefix}depthwise_relu")(x)
    x = layers.Conv2D(pointwise, kernel_size=1, padding="same", use_bias=False,
                      activation=None, name=f"{prefix}project")(x)
    x = _bn(x, f"{prefix}project_BN")
    if in_channels == pointwise and stride == 1:
        return layers.Add(name=f"{prefix}add")([inputs, x])
    return x


def _default_size(input_shape, input_tensor):
    """The square input size named in the model's name (224 unless one of ``SIZES``)."""
    first = backend.image_data_format() == "channels_first"
    if input_shape is not None:
        rows, cols = input_shape[1:3] if first else input_shape[:2]
    elif isinstance(input_tensor, KerasTensor):
        rows, cols = input_tensor.shape[2:4] if first else input_tensor.shape[1:3]
    else:
        return 224
    return rows if rows == cols and rows in SIZES else 224


def _check_input_tensor(input_shape, input_tensor):
    if input_shape is None or input_tensor is None:
        return
    if not isinstance(input_tensor, KerasTensor):
        raise ValueError(f"input_tensor is not a Keras tensor; Received "
                         f"`input_tensor={input_tensor}`")
    if backend.image_data_format() == "channels_first":
        if input_tensor.shape[1] != input_shape[1]:
            raise ValueError("input_shape[1] must equal shape(input_tensor)[1] when "
                             "`image_data_format` is `channels_first`; Received "
                             f"`input_tensor.shape={input_tensor.shape}`, "
                             f"`input_shape={input_shape}`")
    elif input_tensor.shape[2] != input_shape[1]:
        raise ValueError("input_tensor.shape[2] must equal input_shape[1]; Received "
                         f"`input_tensor.shape={input_tensor.shape}`, "
                         f"`input_shape={input_shape}`")


def MobileNetV2(input_shape=None, alpha=1.0, include_top=True, weights="imagenet",
                input_tensor=None, pooling=None, classes=1000,
                classifier_activation="softmax", name=None):
    """MobileNetV2: 17 inverted-residual blocks between a 3x3 stride-2 convolution and a
    1x1 convolution to 1280 channels (more when ``alpha > 1``); ReLU6 throughout.
    ``preprocess_input`` is "tf" mode (pixels to [-1, 1]).

    >>> from tapegrad import keras
    >>> keras.applications.MobileNetV2(weights=None, input_shape=(32, 32, 3)).count_params()
    3538984
    """
    imagenet_utils.check_weights(weights, include_top, classes, quote="`")
    _check_input_tensor(input_shape, input_tensor)
    input_shape = imagenet_utils.obtain_input_shape(
        input_shape, default_size=_default_size(input_shape, input_tensor), min_size=32,
        data_format=backend.image_data_format(), require_flatten=include_top,
        weights=weights)
    first = backend.image_data_format() == "channels_first"
    rows, cols = input_shape[1:3] if first else input_shape[:2]
    if weights == "imagenet":
        if alpha not in [0.35, 0.50, 0.75, 1.0, 1.3, 1.4]:
            raise ValueError("If imagenet weights are being loaded, alpha must be one of "
                             "`0.35`, `0.50`, `0.75`, `1.0`, `1.3` or `1.4` only; Received "
                             f"`alpha={alpha}`")
        if rows != cols or rows not in SIZES:
            rows = 224
            warnings.warn("`input_shape` is undefined or non-square, or `rows` is not in "
                          "[96, 128, 160, 192, 224]. Weights for input shape (224, 224) "
                          "will be loaded as the default.", stacklevel=2)
        filename = ("mobilenet_v2_weights_tf_dim_ordering_tf_kernels_"
                    f"{float(alpha)}_{rows}{'' if include_top else '_no_top'}.h5")
        imagenet_utils.refuse_download(weights, filename, BASE_URL + filename)
    img_input = imagenet_utils.model_input(input_tensor, input_shape)
    x = layers.Conv2D(_make_divisible(32 * alpha, 8), kernel_size=3, strides=(2, 2),
                      padding="same", use_bias=False, name="Conv1")(img_input)
    x = _bn(x, "bn_Conv1")
    x = layers.ReLU(6.0, name="Conv1_relu")(x)
    for block_id, (filters, stride, expansion) in enumerate(BLOCKS):
        x = _inverted_res_block(x, filters=filters, alpha=alpha, stride=stride,
                                expansion=expansion, block_id=block_id)
    last = _make_divisible(1280 * alpha, 8) if alpha > 1.0 else 1280
    x = layers.Conv2D(last, kernel_size=1, use_bias=False, name="Conv_1")(x)
    x = _bn(x, "Conv_1_bn")
    x = layers.ReLU(6.0, name="out_relu")(x)
    x = imagenet_utils.top(x, include_top, pooling, classes, classifier_activation, weights,
                           pool_names=(None, None))
    if name is None:
        name = f"mobilenetv2_{alpha:0.2f}_{rows}"
    return imagenet_utils.finish(img_input, input_tensor, x, name, weights)


def preprocess_input(x, data_format=None):
    """MobileNetV2's preprocessing: pixels in [0, 255] to [-1, 1] ("tf" mode).

    >>> import numpy as np
    >>> preprocess_input(np.array([0.0, 255.0]))
    array([-1.,  1.])
    """
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")
