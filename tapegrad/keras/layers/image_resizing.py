"""Keras's image sizing layers: ``Resizing`` (``tf.image.resize``, optionally cropping or
padding to the target's aspect ratio first), ``CenterCrop`` and ``RandomCrop``.

>>> import numpy as np
>>> from tapegrad import keras
>>> images = np.zeros((2, 6, 8, 3), "float32")
>>> keras.layers.Resizing(3, 3, crop_to_aspect_ratio=True)(images).shape
TensorShape([2, 3, 3, 3])
>>> keras.layers.CenterCrop(4, 4)(images).shape, keras.layers.RandomCrop(4, 4)(images).shape
(TensorShape([2, 4, 4, 3]), TensorShape([2, 4, 4, 3]))
"""
import numpy as np

from tapegrad.keras import _tf as tf
from tapegrad.keras.layers.image_augmentation import ImageLayer

RESIZE_INTERPOLATIONS = ("bilinear", "nearest", "lanczos3", "lanczos5", "bicubic", "area")


def _to_last(x, data_format):
    if data_format != "channels_first":
        return x
    return tf.transpose(x, [0, 2, 3, 1] if len(x.shape) == 4 else [1, 2, 0])


def _to_first(x, data_format):
    if data_format != "channels_first":
        return x
    return tf.transpose(x, [0, 3, 1, 2] if len(x.shape) == 4 else [2, 0, 1])


def _last(layer, inputs, dtype=None):
    """The layer's inputs channels last (cast to ``dtype``), with their height and width."""
    x, _ = layer._images(inputs)
    images = _to_last(x if dtype is None else tf.cast(x, dtype), layer.data_format)
    h_axis = len(images.shape) - 3
    return images, int(images.shape[h_axis]), int(images.shape[h_axis + 1])


def _window(x, top, left, height, width):
    """Rows top:top+height and columns left:left+width of channels-last images."""
    if len(x.shape) == 4:
        return x[:, top:top + height, left:left + width, :]
    return x[top:top + height, left:left + width, :]


def _aspect_box(h, w, target_h, target_w, f=float):
    """The largest centred window of the target's aspect ratio (Keras's arithmetic:
    ``f`` is Python's float, or float32 in the TensorFlow backend's resize)."""
    crop_h = max(min(h, int(f(w * target_h) / f(target_w))), 1)
    crop_w = max(min(w, int(f(h * target_w) / f(target_h))), 1)
    return int(f(h - crop_h) / f(2)), int(f(w - crop_w) / f(2)), crop_h, crop_w


def smart_resize(x, height, width, interpolation="bilinear"):
    """Crop channels-last images to the target's aspect ratio, then resize them (Keras's
    ``smart_resize``); a window already of the target size is returned as it is."""
    h_axis = len(x.shape) - 3
    h, w = int(x.shape[h_axis]), int(x.shape[h_axis + 1])
    top, left, crop_h, crop_w = _aspect_box(h, w, height, width)
    x = _window(x, top, left, crop_h, crop_w)
    if (crop_h, crop_w) == (height, width):
        return x
    return tf.image.resize(x, [height, width], method=interpolation)


class Resizing(ImageLayer):
    """Resize images to ``height`` x ``width`` with ``tf.image.resize`` (``bilinear`` or
    ``nearest`` in tapegrad). ``crop_to_aspect_ratio`` first crops the largest centred
    window of the target's aspect ratio; ``pad_to_aspect_ratio`` pads with ``fill_value``
    instead. The output keeps the input's dtype (integers rounded and saturated), as
    Keras's layer does."""

    def __init__(self, height, width, interpolation="bilinear", crop_to_aspect_ratio=False,
                 pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0,
                 antialias=False, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.height, self.width, self.interpolation = height, width, interpolation
        self.crop_to_aspect_ratio = crop_to_aspect_ratio
        self.pad_to_aspect_ratio = pad_to_aspect_ratio
        self.fill_mode, self.fill_value = fill_mode, fill_value
        self.antialias = bool(antialias)

    def call(self, inputs, training=True):
        if self.interpolation not in RESIZE_INTERPOLATIONS:
            raise ValueError("Invalid value for argument `interpolation`. Expected of one "
                             f"{RESIZE_INTERPOLATIONS}. Received: "
                             f"interpolation={self.interpolation}")
        if self.fill_mode != "constant":
            raise ValueError("Invalid value for argument `fill_mode`. Only `'constant'` is "
                             f"supported. Received: fill_mode={self.fill_mode}")
        if self.pad_to_aspect_ratio and self.crop_to_aspect_ratio:
            raise ValueError("Only one of `pad_to_aspect_ratio` & `crop_to_aspect_ratio` "
                             "can be `True`.")
        images, h, w = _last(self, inputs)
        dtype = images.dtype
        if self.crop_to_aspect_ratio:
            top, left, crop_h, crop_w = _aspect_box(h, w, self.height, self.width,
                                                    np.float32)
            images = _window(images, top, left, crop_h, crop_w)
        elif self.pad_to_aspect_ratio:
            images = self._pad(images, h, w)
        out = tf.image.resize(images, [self.height, self.width], method=self.interpolation,
                              antialias=self.antialias)
        if out.dtype != dtype:
            if dtype.kind in "iu":
                info = np.iinfo(dtype)
                out = tf.clip_by_value(tf.round(out), float(info.min), float(info.max))
            out = tf.cast(out, dtype)
        return _to_first(out, self.data_format)

    def _pad(self, images, h, w):
        f = np.float32
        pad_h = max(h, int(f(w * self.height) / f(self.width)))
        pad_w = max(w, int(f(h * self.width) / f(self.height)))
        # Keras pads the half-difference on both sides: an odd difference loses a row
        top, left = int(f(pad_h - h) / f(2)), int(f(pad_w - w) / f(2))
        axis = len(images.shape) - 3
        for amount, ax in ((top, axis), (left, axis + 1)):
            if amount > 0:
                shape = list(images.shape)
                shape[ax] = amount
                band = tf.ones(shape, images.dtype) * tf.cast(self.fill_value, images.dtype)
                images = tf.concat([band, images, band], axis=ax)
        return images

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        h_axis, w_axis = self._hw_axes(len(shape))
        shape[h_axis], shape[w_axis] = self.height, self.width
        return tuple(shape)

    def get_config(self):
        config = {**super().get_config(), "height": self.height, "width": self.width,
                  "interpolation": self.interpolation,
                  "crop_to_aspect_ratio": self.crop_to_aspect_ratio,
                  "pad_to_aspect_ratio": self.pad_to_aspect_ratio,
                  "fill_mode": self.fill_mode, "fill_value": self.fill_value,
                  "antialias": self.antialias}
        config.pop("seed")
        return config


class CenterCrop(ImageLayer):
    """The central ``height`` x ``width`` window of each image (in the layer's dtype); an
    image smaller than that on an axis is cropped to the target's aspect ratio and
    resized (bilinear), as Keras does."""

    def __init__(self, height, width, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.height, self.width = height, width

    def call(self, inputs, training=True):
        images, h, w = _last(self, inputs, self._dtype)
        if h >= self.height and w >= self.width:
            out = _window(images, (h - self.height) // 2, (w - self.width) // 2,
                          self.height, self.width)
        else:
            out = smart_resize(images, self.height, self.width)
        return _to_first(out, self.data_format)

    compute_output_shape = Resizing.compute_output_shape

    def get_config(self):
        config = {**super().get_config(), "height": self.height, "width": self.width}
        config.pop("seed")
        return config


class RandomCrop(ImageLayer):
    """While training, a random ``height`` x ``width`` window (one offset for the whole
    batch, as in Keras) of images larger than that on both axes. Otherwise (inference,
    or a smaller image) Keras's documented rule: the largest centred window of the
    target's aspect ratio, resized to the target (Keras 3.15's code returns the images
    unchanged at inference)."""

    def __init__(self, height, width, seed=None, data_format=None, name=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, name=name, **kwargs)
        self.height, self.width = height, width

    def call(self, inputs, training=True):
        images, h, w = _last(self, inputs, self._dtype)
        if training and h > self.height and w > self.width:
            top = tf.cast(self._uniform([], 0.0, float(h - self.height + 1)), tf.int32)
            left = tf.cast(self._uniform([], 0.0, float(w - self.width + 1)), tf.int32)
            out = self._crop(images, top, left)
        else:
            out = smart_resize(images, self.height, self.width)
        return _to_first(out, self.data_format)

    def _crop(self, images, top, left):
        # offsets are tensors (random inside tf.function): a gather of rows and columns
        h_axis = len(images.shape) - 3
        rows = tf.range(self.height) + top
        cols = tf.range(self.width) + left
        return tf.gather(tf.gather(images, rows, axis=h_axis), cols, axis=h_axis + 1)

    compute_output_shape = Resizing.compute_output_shape

    def get_config(self):
        return {**super().get_config(), "height": self.height, "width": self.width}
