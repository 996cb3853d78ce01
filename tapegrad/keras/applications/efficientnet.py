"""``keras.applications.efficientnet``: EfficientNetB0 to B7 (Tan & Le, ICML 2019), with
Keras 3's layer names and parameter counts. The models take pixels in [0, 255]: the
rescaling and normalisation are their first layers, so ``preprocess_input`` passes the
input through.

>>> from tapegrad import keras
>>> model = keras.applications.EfficientNetB0(weights=None, include_top=False,
...                                           input_shape=(32, 32, 3), pooling="avg")
>>> model.output.shape, model.count_params()
((None, 1280), 4049571)
"""
import math

from tapegrad.keras import backend
from tapegrad.keras import layers
from tapegrad.keras.applications import imagenet_utils
from tapegrad.keras.applications.imagenet_utils import decode_predictions  # noqa: F401

BASE_URL = "https://storage.googleapis.com/keras-applications/"
# (kernel size, repeats, filters in, filters out, expansion, strides) of the seven stages;
# every block has a skip connection where shapes allow and squeeze-excitation of 0.25
DEFAULT_BLOCKS = ((3, 1, 32, 16, 1, 1), (3, 2, 16, 24, 6, 2), (5, 2, 24, 40, 6, 2),
                  (3, 3, 40, 80, 6, 2), (5, 3, 80, 112, 6, 1), (5, 4, 112, 192, 6, 2),
                  (3, 1, 192, 320, 6, 1))
SE_RATIO = 0.25
CONV_INIT = {"class_name": "VarianceScaling",
             "config": {"scale": 2.0, "mode": "fan_out", "distribution": "truncated_normal"}}
DENSE_INIT = {"class_name": "VarianceScaling",
              "config": {"scale": 1.0 / 3.0, "mode": "fan_out", "distribution": "uniform"}}
IMAGENET_STDDEV_RGB = (0.229, 0.224, 0.225)


def _axis():
    return 3 if backend.image_data_format() == "channels_last" else 1


def block(inputs, activation="swish", drop_rate=0.0, name="", filters_in=32, filters_out=16,
          kernel_size=3, strides=1, expand_ratio=1, se_ratio=0.0, id_skip=True):
    """An inverted-residual block with squeeze-and-excitation (MBConv)."""
    filters = filters_in * expand_ratio
    x = inputs
    if expand_ratio != 1:
        x = layers.Conv2D(filters, 1, padding="same", use_bias=False,
                          kernel_initializer=CONV_INIT, name=f"{name}expand_conv")(x)
        x = layers.BatchNormalization(axis=_axis(), name=f"{name}expand_bn")(x)
        x = layers.Activation(activation, name=f"{name}expand_activation")(x)
    if strides == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, kernel_size),
                                 name=f"{name}dwconv_pad")(x)
    x = layers.DepthwiseConv2D(kernel_size, strides=strides,
                               padding="valid" if strides == 2 else "same", use_bias=False,
                               depthwise_initializer=CONV_INIT, name=f"{name}dwconv")(x)
    x = layers.BatchNormalization(axis=_axis(), name=f"{name}bn")(x)
    x = layers.Activation(activation, name=f"{name}activation")(x)
    if 0 < se_ratio <= 1:
        se = layers.GlobalAveragePooling2D(name=f"{name}se_squeeze")(x)
        shape = (filters, 1, 1) if _axis() == 1 else (1, 1, filters)
        se = layers.Reshape(shape, name=f"{name}se_reshape")(se)
        se = layers.Conv2D(max(1, int(filters_in * se_ratio)), 1, padding="same",
                           activation=activation, kernel_initializer=CONV_INIT,
                           name=f"{name}se_reduce")(se)
        se = layers.Conv2D(filters, 1, padding="same", activation="sigmoid",
                           kernel_initializer=CONV_INIT, name=f"{name}se_expand")(se)
        x = layers.multiply([x, se], name=f"{name}se_excite")
    x = layers.Conv2D(filters_out, 1, padding="same", use_bias=False,
                      kernel_initializer=CONV_INIT, name=f"{name}project_conv")(x)
    x = layers.BatchNormalization(axis=_axis(), name=f"{name}project_bn")(x)
    if id_skip and strides == 1 and filters_in == filters_out:
        if drop_rate > 0:
            x = layers.Dropout(drop_rate, noise_shape=(None, 1, 1, 1),
                               name=f"{name}drop")(x)
        x = layers.add([x, inputs], name=f"{name}add")
    return x


def EfficientNet(width_coefficient, depth_coefficient, default_size, dropout_rate=0.2,
                 drop_connect_rate=0.2, depth_divisor=8, activation="swish",
                 blocks_args="default", name="efficientnet", include_top=True,
                 weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                 classes=1000, classifier_activation="softmax"):
    """EfficientNet scaled by ``width_coefficient`` (channels) and ``depth_coefficient``
    (blocks per stage). ``blocks_args`` is a list of dicts of ``block``'s arguments with
    ``repeats``, or ``"default"``."""
    if blocks_args == "default":
        blocks_args = [dict(zip(("kernel_size", "repeats", "filters_in", "filters_out",
                                 "expand_ratio", "strides"), b), id_skip=True,
                            se_ratio=SE_RATIO) for b in DEFAULT_BLOCKS]
    if not (weights in {"imagenet", None} or imagenet_utils.is_file(weights)):
        raise ValueError("The `weights` argument should be either `None` (random "
                         "initialization), `imagenet` (pre-training on ImageNet), or the "
                         "path to the weights file to be loaded.")
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError('If using `weights="imagenet"` with `include_top` as true, '
                         "`classes` should be 1000")
    input_shape = imagenet_utils.obtain_input_shape(
        input_shape, default_size=default_size, min_size=32,
        data_format=backend.image_data_format(), require_flatten=include_top,
        weights=weights)
    filename = f"{name}{'.h5' if include_top else '_notop.h5'}"
    imagenet_utils.refuse_download(weights, filename, BASE_URL + filename)

    def round_filters(filters):
        filters *= width_coefficient
        new = max(depth_divisor, int(filters + depth_divisor / 2) // depth_divisor
                  * depth_divisor)
        return int(new + depth_divisor if new < 0.9 * filters else new)

    def round_repeats(repeats):
        return int(math.ceil(depth_coefficient * repeats))

    img_input = imagenet_utils.model_input(input_tensor, input_shape)
    x = layers.Rescaling(1.0 / 255.0)(img_input)
    x = layers.Normalization(axis=_axis())(x)
    x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, 3),
                             name="stem_conv_pad")(x)
    x = layers.Conv2D(round_filters(32), 3, strides=2, padding="valid", use_bias=False,
                      kernel_initializer=CONV_INIT, name="stem_conv")(x)
    x = layers.BatchNormalization(axis=_axis(), name="stem_bn")(x)
    x = layers.Activation(activation, name="stem_activation")(x)
    total = float(sum(round_repeats(args["repeats"]) for args in blocks_args))
    done = 0
    for i, args in enumerate(blocks_args):
        if args["repeats"] <= 0:
            raise ValueError("The number of repeats in `EfficientNet` must be > 0. "
                             f"Received: repeats={args['repeats']}")
        args = dict(args, filters_in=round_filters(args["filters_in"]),
                    filters_out=round_filters(args["filters_out"]))
        for j in range(round_repeats(args.pop("repeats"))):
            if j > 0:
                args["strides"], args["filters_in"] = 1, args["filters_out"]
            x = block(x, activation, drop_connect_rate * done / total,
                      name=f"block{i + 1}{chr(j + 97)}_", **args)
            done += 1
    x = layers.Conv2D(round_filters(1280), 1, padding="same", use_bias=False,
                      kernel_initializer=CONV_INIT, name="top_conv")(x)
    x = layers.BatchNormalization(axis=_axis(), name="top_bn")(x)
    x = layers.Activation(activation, name="top_activation")(x)
    x = imagenet_utils.top(x, include_top, pooling, classes, classifier_activation, weights,
                           dropout_rate, kernel_initializer=DENSE_INIT)
    return imagenet_utils.finish(img_input, input_tensor, x, name, weights)


def _efficientnet(width, depth, size, dropout, default_name):
    def constructor(include_top=True, weights="imagenet", input_tensor=None,
                    input_shape=None, pooling=None, classes=1000,
                    classifier_activation="softmax", name=default_name):
        return EfficientNet(width, depth, size, dropout, name=name, include_top=include_top,
                            weights=weights, input_tensor=input_tensor,
                            input_shape=input_shape, pooling=pooling, classes=classes,
                            classifier_activation=classifier_activation)
    title = default_name.replace("efficientnet", "EfficientNet").replace("b", "B")
    constructor.__name__ = constructor.__qualname__ = title
    constructor.__doc__ = (
        f"{title}: EfficientNet with width {width} and depth {depth}, for "
        f"{size}x{size} images in [0, 255].\n\n"
        "    >>> from tapegrad import keras\n"
        f"    >>> keras.applications.{title}.__name__\n"
        f"    '{title}'\n    ")
    return constructor


EfficientNetB0 = _efficientnet(1.0, 1.0, 224, 0.2, "efficientnetb0")
EfficientNetB1 = _efficientnet(1.0, 1.1, 240, 0.2, "efficientnetb1")
EfficientNetB2 = _efficientnet(1.1, 1.2, 260, 0.3, "efficientnetb2")
EfficientNetB3 = _efficientnet(1.2, 1.4, 300, 0.3, "efficientnetb3")
EfficientNetB4 = _efficientnet(1.4, 1.8, 380, 0.4, "efficientnetb4")
EfficientNetB5 = _efficientnet(1.6, 2.2, 456, 0.4, "efficientnetb5")
EfficientNetB6 = _efficientnet(1.8, 2.6, 528, 0.5, "efficientnetb6")
EfficientNetB7 = _efficientnet(2.0, 3.1, 600, 0.5, "efficientnetb7")


def preprocess_input(x, data_format=None):
    """A placeholder, as in Keras: EfficientNet rescales inside the model, so the input
    (pixels in [0, 255]) passes through unchanged.

    >>> preprocess_input([1.0, 2.0])
    [1.0, 2.0]
    """
    return x
