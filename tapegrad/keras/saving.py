"""``keras.saving``: ``save_weights`` / ``load_weights`` (here), whole models
(``save_model`` / ``load_model``, see ``model_file.py``) and object configs
(``serialize_keras_object``, ``register_keras_serializable``, see ``serialization.py``).

The weights file holds a model's weights in a zip of ``.npy`` arrays with a JSON manifest.
Nothing in the file is executed or unpickled when it is read.

The file (whatever its name: ``model.weights.h5`` in Keras code works, but the content is
this format, not HDF5) holds:

- ``manifest.json``: ``{"format": "tapegrad.keras.weights", "version": 1, "weights":
  [{"path": "dense/kernel", "shape": [3, 4], "dtype": "float32", "file": "w0.npy"}, ...]}``,
  the weights in ``model.weights`` order;
- ``w0.npy``, ``w1.npy``, ...: the arrays, in NumPy's ``.npy`` format (numeric dtypes only).

Loading checks the format and version, the number of weights and every shape and dtype
against the model before assigning anything.

>>> import os, tempfile, numpy as np
>>> from tapegrad import keras
>>> model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
>>> path = os.path.join(tempfile.mkdtemp(), "m.weights.h5")
>>> model.save_weights(path)
>>> other = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
>>> other.load_weights(path)
>>> all((a == b).all() for a, b in zip(model.get_weights(), other.get_weights()))
True
"""
import io
import json
import os
import warnings
import zipfile

import numpy as np

FORMAT, VERSION = "tapegrad.keras.weights", 1
_OK_KINDS = "biufc"


def _path(v):
    from tapegrad.keras.layers.base import variable_path
    return variable_path(v)


def save_weights(model, filepath, overwrite=True):
    filepath = os.fspath(filepath)
    if os.path.exists(filepath) and not overwrite:
        raise FileExistsError(f"{filepath} exists and overwrite=False.")
    entries = []
    with zipfile.ZipFile(filepath, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for i, v in enumerate(model.weights):
            arr = v.numpy()
            buf = io.BytesIO()
            np.lib.format.write_array(buf, arr, allow_pickle=False)
            name = f"w{i}.npy"
            z.writestr(name, buf.getvalue())
            entries.append({"path": _path(v), "shape": list(arr.shape),
                            "dtype": arr.dtype.name, "file": name})
        z.writestr("manifest.json", json.dumps(
            {"format": FORMAT, "version": VERSION, "weights": entries}, indent=1))


def _manifest(z, filepath):
    try:
        m = json.loads(z.read("manifest.json"))
    except KeyError:
        raise ValueError(f"{filepath} is not a tapegrad.keras weights file (no "
                         "manifest.json).") from None
    if not isinstance(m, dict) or m.get("format") != FORMAT:
        raise ValueError(f"{filepath}: unknown weights format {m.get('format')!r}.")
    if m.get("version") != VERSION:
        raise ValueError(f"{filepath}: unsupported weights format version "
                         f"{m.get('version')!r} (this tapegrad reads version {VERSION}).")
    entries = m.get("weights")
    if not isinstance(entries, list) or not all(
            isinstance(e, dict) and isinstance(e.get("file"), str) and isinstance(
                e.get("shape"), list) for e in entries):
        raise ValueError(f"{filepath}: malformed manifest.")
    return entries


def _read(z, entry, filepath):
    arr = np.lib.format.read_array(io.BytesIO(z.read(entry["file"])), allow_pickle=False)
    if arr.dtype.kind not in _OK_KINDS:
        raise ValueError(f"{filepath}: weight {entry.get('path')} has unsupported dtype "
                         f"{arr.dtype}.")
    if list(arr.shape) != entry["shape"] or arr.dtype.name != entry.get("dtype"):
        raise ValueError(f"{filepath}: weight {entry.get('path')} does not match its "
                         "manifest entry.")
    return arr


def load_weights(model, filepath, skip_mismatch=False):
    filepath = os.fspath(filepath)
    if not os.path.exists(filepath):
        raise FileNotFoundError(f"No such file: {filepath}")
    with zipfile.ZipFile(filepath) as z:
        entries = _manifest(z, filepath)
        arrays = [_read(z, e, filepath) for e in entries]
    weights = model.weights
    if len(weights) != len(arrays):
        raise ValueError(f"A total of {len(arrays)} objects could not be loaded: the file "
                         f"has {len(arrays)} weights, model '{model.name}' has "
                         f"{len(weights)}. (Has the model been built? Call it on data "
                         "first.)")
    pairs = []
    for v, a, e in zip(weights, arrays, entries):
        if tuple(v.shape) != a.shape:
            msg = (f"Weight {e.get('path')} of shape {a.shape} in {filepath} does not fit "
                   f"{_path(v)} of shape {tuple(v.shape)}.")
            if skip_mismatch:
                warnings.warn("Skipping: " + msg, stacklevel=3)
                continue
            raise ValueError(msg)
        pairs.append((v, a))
    for v, a in pairs:
        v.assign(a.astype(v.dtype, copy=False))


# the whole-model ``.keras`` file and the object configs it holds (keras.saving.*)
from tapegrad.keras.model_file import load_model, save_model  # noqa: E402,F401
from tapegrad.keras.serialization import (  # noqa: E402,F401
    CustomObjectScope, custom_object_scope, deserialize_keras_object, get_custom_objects,
    get_registered_name, get_registered_object, register_keras_serializable,
    serialize_keras_object)
