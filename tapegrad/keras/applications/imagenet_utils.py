"""``keras.applications.imagenet_utils``: the input preprocessing of the ImageNet models,
``decode_predictions``, and what every architecture shares (checking ``weights``, the input
shape, the model's input and its weights file).

tapegrad downloads nothing: ``weights="imagenet"`` raises a ``ValueError`` that names the
file Keras would fetch and says how to pass a local one; ``decode_predictions`` reads the
class index from a local ``imagenet_class_index.json`` (``class_index_path=``, or the
``KERAS_HOME`` / ``~/.keras/models`` cache where Keras keeps it).

>>> import numpy as np
>>> from tapegrad.keras.applications import imagenet_utils
>>> imagenet_utils.preprocess_input(np.array([[[0.0, 127.5, 255.0]]]), mode="tf")
array([[[-1.,  0.,  1.]]])
"""
import json
import os
import warnings

import numpy as np

from tapegrad.keras import _tf as tf
from tapegrad.keras import activations, backend
from tapegrad.keras.layers.symbolic import KerasTensor

_MEANS = {"caffe": ([103.939, 116.779, 123.68], None),
          "torch": ([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])}
CLASS_INDEX_URL = ("https://storage.googleapis.com/download.tensorflow.org/data/"
                   "imagenet_class_index.json")
_CLASS_INDEX = {}


def preprocess_input(x, data_format=None, mode="caffe"):
    """Scale a batch of RGB images in [0, 255] as an ImageNet model was trained on.

    ``mode`` is ``"caffe"`` (RGB to BGR, minus each channel's ImageNet mean), ``"tf"``
    (to [-1, 1]) or ``"torch"`` (to [0, 1], then each channel's mean and standard
    deviation). A NumPy array of floats is changed in place, as in Keras; integers are first
    cast to ``floatx()``. Tensors are never changed.

    >>> import numpy as np
    >>> preprocess_input(np.array([[10.0, 20.0, 30.0]]), mode="caffe")
    array([[ -73.939,  -96.779, -113.68 ]])
    """
    if mode not in {"caffe", "tf", "torch"}:
        raise ValueError("Expected mode to be one of `caffe`, `tf` or `torch`. "
                         f"Received: mode={mode}")
    if data_format is None:
        data_format = backend.image_data_format()
    elif data_format not in {"channels_first", "channels_last"}:
        raise ValueError("Expected data_format to be one of `channels_first` or "
                         f"`channels_last`. Received: data_format={data_format}")
    if isinstance(x, np.ndarray):
        return _preprocess_array(x, data_format, mode)
    if isinstance(x, KerasTensor):  # a functional model's input: one layer of the model
        from tapegrad.keras.layers.core import Lambda
        return Lambda(lambda t: _preprocess_tensor(t, data_format, mode))(x)
    return _preprocess_tensor(tf.convert_to_tensor(x), data_format, mode)


def _channel_axis(ndim, data_format):
    # channels_first means axis 0 of one image (3-D) and axis 1 of a batch
    if data_format == "channels_last":
        return ndim - 1
    return 0 if ndim == 3 else 1


def _preprocess_array(x, data_format, mode):
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype(backend.floatx(), copy=False)
    if mode == "tf":
        x /= 127.5
        x -= 1.0
        return x
    axis = _channel_axis(x.ndim, data_format)
    if mode == "caffe":  # a reversed view: the arithmetic below lands in the caller's array
        x = np.flip(x, axis)
    else:
        x /= 255.0
    mean, std = _MEANS[mode]
    for c in range(3):
        channel = x[(slice(None),) * axis + (c,)]
        channel -= mean[c]
        if std is not None:
            channel /= std[c]
    return x


def _preprocess_tensor(x, data_format, mode):
    if mode == "tf":
        return x / 127.5 - 1.0
    axis = _channel_axis(len(x.shape), data_format)
    if mode == "caffe":
        x = tf.reverse(x, [axis])
    else:
        x = x / 255.0
    mean, std = _MEANS[mode]
    shape = [1] * len(x.shape)
    shape[axis] = 3
    x = x + tf.reshape(tf.constant(-np.array(mean), dtype=x.dtype), shape)
    if std is not None:
        x = x / tf.reshape(tf.constant(np.array(std), dtype=x.dtype), shape)
    return x


def _class_index(path):
    if path is None:
        home = os.environ.get("KERAS_HOME", os.path.join(os.path.expanduser("~"), ".keras"))
        path = os.path.join(home, "models", "imagenet_class_index.json")
        if not os.path.exists(path):
            raise ValueError(
                "decode_predictions needs ImageNet's class index, imagenet_class_index.json, "
                f"and tapegrad downloads nothing: fetch {CLASS_INDEX_URL} yourself and pass "
                "decode_predictions(preds, class_index_path='/path/to/"
                f"imagenet_class_index.json'), or put it at {path}.")
    path = os.fspath(path)
    if path not in _CLASS_INDEX:
        with open(path) as f:
            _CLASS_INDEX[path] = json.load(f)
    return _CLASS_INDEX[path]


def decode_predictions(preds, top=5, class_index_path=None):
    """The ``top`` classes of each row of ImageNet predictions, as lists of
    ``(class_name, class_description, score)``, best first.

    ``class_index_path`` (tapegrad only) is a local ``imagenet_class_index.json``; without
    it the file is looked up where Keras caches it (``~/.keras/models``).

    >>> import json, os, tempfile, numpy as np
    >>> path = os.path.join(tempfile.mkdtemp(), "index.json")
    >>> with open(path, "w") as f:
    ...     json.dump({str(i): [f"n{i:08d}", f"class{i}"] for i in range(1000)}, f)
    >>> preds = np.zeros((1, 1000), np.float32); preds[0, 7] = 0.9
    >>> decode_predictions(preds, top=1, class_index_path=path)[0][0][:2]
    ('n00000007', 'class7')
    """
    shape = tuple(preds.shape)
    if len(shape) != 2 or shape[1] != 1000:
        raise ValueError("`decode_predictions` expects a batch of predictions (i.e. a 2D "
                         f"array of shape (samples, 1000)). Received array with shape: "
                         f"{shape}")
    index = _class_index(class_index_path)
    preds = preds.numpy() if hasattr(preds, "numpy") else np.asarray(preds)
    results = []
    for row in preds:
        best = row.argsort()[-top:][::-1]
        result = [tuple(index[str(i)]) + (row[i],) for i in best]
        result.sort(key=lambda r: r[2], reverse=True)
        results.append(result)
    return results


def obtain_input_shape(input_shape, default_size, min_size, data_format, require_flatten,
                       weights=None):
    """The model's input shape (H, W, C) from the user's ``input_shape``, checked as Keras
    does: three entries, at least ``min_size`` pixels, static when the top is flattened."""
    first = data_format == "channels_first"
    if weights != "imagenet" and input_shape and len(input_shape) == 3:
        channels = input_shape[0] if first else input_shape[-1]
        if channels not in {1, 3}:
            warnings.warn("This model usually expects 1 or 3 input channels. However, it "
                          f"was passed an input_shape with {channels} input channels.",
                          stacklevel=3)
        default = ((channels, default_size, default_size) if first
                   else (default_size, default_size, channels))
    else:
        default = (3, default_size, default_size) if first else (default_size, default_size, 3)
    if weights == "imagenet" and require_flatten:
        if input_shape is not None and tuple(input_shape) != default:
            raise ValueError("When setting `include_top=True` and loading `imagenet` "
                             f"weights, `input_shape` should be {default}.  Received: "
                             f"input_shape={input_shape}")
        return default
    if input_shape:
        input_shape = tuple(input_shape)
        if len(input_shape) != 3:
            raise ValueError("`input_shape` must be a tuple of three integers.")
        channels, sizes = ((input_shape[0], input_shape[1:]) if first
                           else (input_shape[-1], input_shape[:2]))
        if channels != 3 and weights == "imagenet":
            raise ValueError("The input must have 3 channels; Received "
                             f"`input_shape={input_shape}`")
        if any(s is not None and s < min_size for s in sizes):
            raise ValueError(f"Input size must be at least {min_size}x{min_size}; "
                             f"Received: input_shape={input_shape}")
    elif require_flatten:
        input_shape = default
    else:
        input_shape = (3, None, None) if first else (None, None, 3)
    if require_flatten and None in input_shape:
        raise ValueError("If `include_top` is True, you should specify a static "
                         f"`input_shape`. Received: input_shape={input_shape}")
    return input_shape


def correct_pad(inputs, kernel_size):
    """The zero padding before a stride-2 "valid" convolution that centres it as "same"."""
    axis = 2 if backend.image_data_format() == "channels_first" else 1
    size = inputs.shape[axis:axis + 2]
    if isinstance(kernel_size, int):
        kernel_size = (kernel_size, kernel_size)
    adjust = (1, 1) if size[0] is None else (1 - size[0] % 2, 1 - size[1] % 2)
    half = (kernel_size[0] // 2, kernel_size[1] // 2)
    return ((half[0] - adjust[0], half[0]), (half[1] - adjust[1], half[1]))


def validate_activation(classifier_activation, weights):
    """Pretrained weights go only with a softmax (or no) classifier activation."""
    if weights is None:
        return
    fn = activations.get(classifier_activation)
    if fn not in {activations.get("softmax"), activations.get(None)}:
        raise ValueError("Only `None` and `softmax` activations are allowed for the "
                         "`classifier_activation` argument when using pretrained weights, "
                         "with `include_top=True`; Received: "
                         f"classifier_activation={classifier_activation}")


def is_file(weights):
    """Whether ``weights`` names an existing file (a local weights file)."""
    return isinstance(weights, (str, os.PathLike)) and os.path.exists(weights)


def check_weights(weights, include_top, classes, quote="'"):
    """Keras's first checks of ``weights`` and ``classes``."""
    if not (weights in {"imagenet", None} or is_file(weights)):
        raise ValueError("The `weights` argument should be either `None` (random "
                         f"initialization), {quote}imagenet{quote} (pre-training on "
                         "ImageNet), or the path to the weights file to be loaded.  "
                         f"Received: weights={weights}")
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError("If using `weights='imagenet'` with `include_top=True`, `classes` "
                         f"should be 1000.  Received classes={classes}")


def model_input(input_tensor, input_shape):
    """The model's input: a new ``Input``, ``input_tensor`` itself when symbolic, or an
    ``Input`` wrapping it."""
    from tapegrad.keras.layers.core import Input
    if input_tensor is None:
        return Input(shape=input_shape)
    if isinstance(input_tensor, KerasTensor):
        return input_tensor
    return Input(tensor=input_tensor, shape=input_shape)


def source_inputs(tensor):
    """The ``Input`` tensors a symbolic tensor was computed from (Keras's
    ``get_source_inputs``), in the order first met."""
    found, seen, todo = [], set(), [tensor]
    while todo:
        t = todo.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        history = t._history
        node = history[0] if history else None
        if node is None or not node.inputs:
            found.append(t)
        else:
            todo.extend(reversed(node.inputs))
    return found[0] if len(found) == 1 else found


def refuse_download(weights, filename, url):
    """``weights="imagenet"`` needs a file tapegrad cannot fetch: a ``ValueError`` saying
    how to pass a local one (raised before the model is built, after Keras's checks)."""
    if weights == "imagenet":
        raise ValueError(
            "weights='imagenet': tapegrad downloads nothing, so the pretrained weights "
            f"file {filename} (Keras fetches it from {url}) cannot be downloaded. Build "
            "the model with weights=None, or pass a local weights file: "
            "weights='/path/to/file.weights.h5' (a file written by tapegrad's "
            "model.save_weights for this architecture).")


def top(x, include_top, pooling, classes, classifier_activation, weights, dropout_rate=0.0,
        pool_names=("avg_pool", "max_pool"), **dense):
    """What every family ends with, under Keras's layer names: the classifier
    (``avg_pool``, an optional ``top_dropout``, ``predictions``), or without it the
    ``pooling`` asked for (``avg_pool`` / ``max_pool``), or nothing. ``pool_names``
    ``(None, None)``: the pools named by their class, as MobileNetV2's are."""
    from tapegrad.keras import layers
    avg_name, max_name = pool_names
    if include_top:
        x = layers.GlobalAveragePooling2D(name=avg_name)(x)
        if dropout_rate > 0:
            x = layers.Dropout(dropout_rate, name="top_dropout")(x)
        validate_activation(classifier_activation, weights)
        return layers.Dense(classes, activation=classifier_activation, name="predictions",
                            **dense)(x)
    if pooling == "avg":
        return layers.GlobalAveragePooling2D(name=avg_name)(x)
    if pooling == "max":
        return layers.GlobalMaxPooling2D(name=max_name)(x)
    return x


def finish(img_input, input_tensor, outputs, name, weights):
    """The functional model from ``img_input`` (or the sources of ``input_tensor``) to
    ``outputs``, with the local weights file ``weights`` loaded."""
    from tapegrad.keras.models.functional import Functional
    inputs = img_input if input_tensor is None else source_inputs(input_tensor)
    model = Functional(inputs, outputs, name=name)
    if weights is not None:
        model.load_weights(weights)
    return model
