"""Reference values from real Keras 3 and TensorFlow for the image preprocessing layers,
for tests/test_keras_image_layers.py: ``tf.raw_ops.ImageProjectiveTransformV3`` on fixed
transforms (every fill mode and interpolation), the transforms Keras builds for given
angles, zooms and shifts, the geometric layers with a one-point factor range (so their
"random" parameter is fixed), and ``Resizing`` / ``CenterCrop`` outputs.

Run in the bench environment (it needs keras and tensorflow; the tests never import them):

    /work/venv-bench/bin/python -m benchmarks.keras_image_reference

The manifest is JSON inside the same ``.npz`` (read with ``allow_pickle=False``).
"""
import json
import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import numpy as np  # noqa: E402

OUT = (pathlib.Path(__file__).resolve().parent.parent / "tests" / "data"
       / "keras_image_reference.npz")
CF = {"data_format": "channels_first"}

# (case name, layer class, config, input shape, input dtype)
LAYERS = [
    ("rotation_90", "RandomRotation", {"factor": (0.25, 0.25)}, (2, 5, 5, 2), "float32"),
    ("rotation_30_constant", "RandomRotation",
     {"factor": (30 / 360, 30 / 360), "fill_mode": "constant", "fill_value": -1.0},
     (2, 5, 7, 1), "float32"),
    ("rotation_m40_wrap_nearest", "RandomRotation",
     {"factor": (-40 / 360, -40 / 360), "fill_mode": "wrap", "interpolation": "nearest"},
     (1, 6, 4, 3), "float32"),
    ("rotation_cf_single", "RandomRotation",
     {"factor": (0.1, 0.1), "fill_mode": "nearest", **CF}, (2, 6, 5), "float32"),
    ("rotation_uint8", "RandomRotation", {"factor": (0.05, 0.05)}, (1, 4, 4, 1), "uint8"),
    ("zoom_out", "RandomZoom", {"height_factor": (0.3, 0.3)}, (2, 6, 7, 2), "float32"),
    ("zoom_in_xy_constant", "RandomZoom",
     {"height_factor": (-0.4, -0.4), "width_factor": (0.2, 0.2), "fill_mode": "constant"},
     (1, 7, 5, 1), "float32"),
    ("zoom_cf_wrap", "RandomZoom", {"height_factor": (0.5, 0.5), "fill_mode": "wrap", **CF},
     (1, 2, 5, 6), "float32"),
    ("translation_reflect", "RandomTranslation",
     {"height_factor": (0.2, 0.2), "width_factor": (-0.3, -0.3)}, (2, 5, 6, 1), "float32"),
    ("translation_nearest_fill", "RandomTranslation",
     {"height_factor": (-0.5, -0.5), "width_factor": (0.25, 0.25), "fill_mode": "nearest",
      "interpolation": "nearest"}, (1, 4, 8, 2), "float32"),
    ("translation_single", "RandomTranslation",
     {"height_factor": (0.1, 0.1), "width_factor": (0.15, 0.15), "fill_mode": "constant",
      "fill_value": 3.0}, (6, 7, 2), "float32"),
    ("brightness", "RandomBrightness", {"factor": (0.2, 0.2)}, (2, 3, 4, 3), "float32"),
    ("brightness_range", "RandomBrightness", {"factor": (-0.4, -0.4), "value_range": (0, 1)},
     (2, 3, 3, 1), "float32"),
    ("resize_up", "Resizing", {"height": 7, "width": 9}, (2, 4, 5, 2), "float32"),
    ("resize_down_nearest", "Resizing", {"height": 3, "width": 2, "interpolation": "nearest"},
     (1, 7, 5, 3), "float32"),
    ("resize_uint8", "Resizing", {"height": 5, "width": 3}, (2, 4, 6, 1), "uint8"),
    ("resize_crop", "Resizing", {"height": 4, "width": 4, "crop_to_aspect_ratio": True},
     (2, 5, 9, 2), "float32"),
    ("resize_crop_tall", "Resizing", {"height": 3, "width": 6, "crop_to_aspect_ratio": True},
     (1, 8, 5, 1), "float32"),
    ("resize_pad", "Resizing", {"height": 6, "width": 6, "pad_to_aspect_ratio": True,
                                "fill_value": 7.0}, (2, 3, 8, 2), "float32"),
    ("resize_pad_odd", "Resizing", {"height": 5, "width": 4, "pad_to_aspect_ratio": True},
     (1, 5, 7, 1), "float32"),
    ("resize_cf_single", "Resizing", {"height": 5, "width": 4, **CF}, (3, 3, 6), "float32"),
    ("center_crop", "CenterCrop", {"height": 3, "width": 4}, (2, 6, 7, 2), "float32"),
    ("center_crop_uint8_single", "CenterCrop", {"height": 2, "width": 2}, (5, 4, 3), "uint8"),
    ("center_crop_small", "CenterCrop", {"height": 8, "width": 3}, (2, 5, 6, 1), "float32"),
    ("center_crop_cf", "CenterCrop", {"height": 2, "width": 3, **CF}, (1, 2, 5, 5), "float32"),
]


def _input(rng, shape, dtype):
    if dtype == "uint8":
        return rng.integers(0, 256, shape).astype(np.uint8)
    return rng.uniform(0, 255, shape).astype(np.float32)


def main():
    import keras
    import tensorflow as tf
    from keras.src.layers.preprocessing.image_preprocessing import (random_rotation,
                                                                    random_translation,
                                                                    random_zoom)
    rng = np.random.default_rng(8)
    arrays, manifest = {}, {"layers": [], "transforms": [], "matrices": []}
    for name, cls, config, shape, dtype in LAYERS:
        x = _input(rng, shape, dtype)
        out = getattr(keras.layers, cls)(**config)(x, training=True)
        arrays[f"layer/{name}/input"] = x
        arrays[f"layer/{name}/output"] = np.asarray(out)
        manifest["layers"].append({"name": name, "class": cls, "config": config})
    # the transform kernel on fixed transforms, NaN and inf pixels included
    images = rng.normal(size=(2, 5, 6, 2)).astype(np.float32)
    images[0, 1, 2, 0], images[1, 3, 4, 1] = np.nan, np.inf
    c, s = np.cos(0.6), np.sin(0.6)
    transforms = {
        "rotate": [[c, -s, 1.0, s, c, -0.7, 0, 0], [c, s, -1.2, -s, c, 2.1, 0, 0]],
        "zoom_shift": [[0.7, 0, 1.3, 0, 1.4, -1.1, 0, 0], [1.9, 0, -2.6, 0, 0.6, 2.2, 0, 0]],
        "projective": [[0.9, 0.1, 0.4, -0.2, 1.1, 0.3, 0.03, -0.05],
                       [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.2, 0.0]],
        "far": [[1, 0, 13.5, 0, 1, -11.25, 0, 0], [-1, 0, 20.0, 0, 1, 17.0, 0, 0]],
    }
    arrays["transform/images"] = images
    for tname, t in transforms.items():
        t = np.asarray(t, np.float32)
        arrays[f"transform/{tname}"] = t
        for interpolation in ("nearest", "bilinear"):
            for fill_mode in ("reflect", "wrap", "constant", "nearest"):
                out = tf.raw_ops.ImageProjectiveTransformV3(
                    images=images, transforms=t, output_shape=[5, 6], fill_value=0.5,
                    interpolation=interpolation.upper(), fill_mode=fill_mode.upper())
                key = f"{tname}/{interpolation}/{fill_mode}"
                arrays[f"transform_out/{key}"] = out.numpy()
                manifest["transforms"].append(key)
    # the transforms Keras builds
    angle = np.array([90.0, -30.0, 180.0, 12.5], np.float32)
    rot = random_rotation.RandomRotation(0.1)._compute_affine_matrix(
        0.5, 0.5, tf.constant(angle), tf.zeros([4]), tf.zeros([4]), tf.ones([4]),
        tf.zeros([4]), tf.zeros([4]), 5, 7)
    arrays["matrix/rotation/angle"], arrays["matrix/rotation"] = angle, np.asarray(rot)
    zooms = np.array([[0.8, 1.3], [1.25, 0.6]], np.float32)  # (width, height) zoom
    zoom = random_zoom.RandomZoom(0.1)._get_zoom_matrix(tf.constant(zooms), 6, 9)
    arrays["matrix/zoom/zooms"], arrays["matrix/zoom"] = zooms, np.asarray(zoom)
    shifts = np.array([[1.5, -2.25], [-3.0, 4.0]], np.float32)  # (dx, dy)
    shift = random_translation.RandomTranslation(0.1, 0.1)._get_translation_matrix(
        tf.constant(shifts))
    arrays["matrix/translation/shifts"], arrays["matrix/translation"] = shifts, np.asarray(
        shift)
    arrays["manifest"] = np.array(json.dumps(manifest, sort_keys=True))
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {OUT}: {len(manifest['layers'])} layers, "
          f"{len(manifest['transforms'])} transforms (keras {keras.__version__}, "
          f"tensorflow {tf.__version__})")


if __name__ == "__main__":
    main()
