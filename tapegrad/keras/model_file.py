"""``model.save`` / ``keras.models.load_model``: Keras 3's ``.keras`` file, a zip of

- ``metadata.json``: ``{"keras_version": ..., "date_saved": ...}``;
- ``config.json``: the model's config in Keras 3's layout (``serialization.py``), with its
  ``compile_config`` (optimizer, loss, metrics) when it was compiled;
- ``model.weights.npz``: every weight, and the optimizer's variables, as plain arrays named
  by Keras's variable paths (``layers/dense/vars/0``, ``optimizer/vars/1``). It is written
  with ``allow_pickle=False`` semantics and read with ``allow_pickle=False``. (Keras writes
  ``model.weights.h5``, HDF5, which needs h5py; tapegrad needs only NumPy. Keras's own
  ``npz`` variant pickles dictionaries, so it is not used either.)

A ``.keras`` file written by Keras itself (``model.weights.h5``) loads where h5py is
installed: the model, its weights, its compile settings and its optimizer's state (an
optimizer's variables are in Keras's order: by model variable, see
``keras/optimizers/base.py``). Files that tapegrad wrote before session 9 hold the
optimizer's slots kind by kind (every momentum, then every velocity); their metadata lacks
``"optimizer_order": "keras"``, and their slots are put back on their own variables.

Loading rebuilds the model from the config (classes only from tapegrad.keras, registered
ones and ``custom_objects``; nothing a file names is imported or run), checks every
weight's path, shape and dtype, then assigns them, and compiles the model again when the
file says so (``compile=False`` skips it).

>>> import os, tempfile, numpy as np
>>> from tapegrad import keras
>>> model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, activation="tanh")])
>>> path = os.path.join(tempfile.mkdtemp(), "model.keras")
>>> model.save(path)
>>> again = keras.models.load_model(path)
>>> x = np.ones((1, 3), "float32")
>>> bool((again.predict(x, verbose=0) == model.predict(x, verbose=0)).all())
True
"""
import datetime
import io
import json
import os
import warnings
import zipfile

import numpy as np

from tapegrad.keras import backend, serialization

CONFIG, METADATA, WEIGHTS = "config.json", "metadata.json", "model.weights.npz"
_MAX_JSON_BYTES = 64 << 20
_OK_KINDS = "biufc"


def weight_paths(model):
    """``{path: variable}`` in Keras's layout: a model's layers under ``layers/``, each
    named by its class in snake case (``dense``, ``dense_1``, ...), its own weights under
    ``vars/0``, ``vars/1``, ...; sublayers below their layer the same way; the optimizer's
    variables under ``optimizer/vars/``."""
    out, seen = {}, set()

    def own(layer, path):
        mine = [v for v in layer._trainable_variables + layer._non_trainable_variables]
        for i, v in enumerate(mine):
            if id(v) not in seen:
                seen.add(id(v))
                out[f"{path}/vars/{i}" if path else f"vars/{i}"] = v

    def walk(layer, path):
        own(layer, path)
        named = getattr(layer, "_saved_children", None)
        if named is not None:  # Keras's attribute paths (an RNN's ``cell``)
            for name, child in named():
                walk(child, f"{path}/{name}" if path else name)
            return
        children = _sublayers(layer)
        used = {}
        for child in children:
            base = backend.to_snake_case(type(child).__name__)
            used[base] = used.get(base, -1) + 1
            name = base if used[base] == 0 else f"{base}_{used[base]}"
            walk(child, f"{path}/layers/{name}" if path else f"layers/{name}")

    walk(model, "")
    opt = getattr(model, "optimizer", None)
    if opt is not None and getattr(opt, "built", False):
        for i, v in enumerate(opt.variables):
            out[f"optimizer/vars/{i}"] = v
    return out


def _sublayers(layer):
    from tapegrad.keras.models import Functional, Sequential
    if isinstance(layer, Sequential):
        return [x for x in layer._stack if type(x).__name__ != "InputLayer"]
    if isinstance(layer, Functional):
        return [x for x in layer.layers if type(x).__name__ != "InputLayer"]
    return list(layer._layers)


def save_model(model, filepath, overwrite=True, zipped=None, **kwargs):
    """Write ``model`` to a ``.keras`` file (see the module's description)."""
    filepath = os.fspath(filepath)
    if filepath.endswith((".h5", ".hdf5")):
        raise ValueError("tapegrad.keras does not write the legacy HDF5 format (it needs "
                         f"h5py); save to a `.keras` file instead. Received: "
                         f"filepath={filepath}.")
    if not filepath.endswith(".keras"):
        raise ValueError("Invalid filepath extension for saving. Please add either a "
                         "`.keras` extension for the native Keras format (recommended) or "
                         "a `.h5` extension. Use `model.export(filepath)` if you want to "
                         "export a SavedModel for use with TFLite/TFServing/etc. Received: "
                         f"filepath={filepath}.")
    if os.path.exists(filepath) and not overwrite:
        raise FileExistsError(f"{filepath} exists and overwrite=False.")
    config = serialization.serialize_keras_object(model)
    compile_config = model.get_compile_config() if hasattr(model, "get_compile_config") \
        else None
    if compile_config is not None:
        config["compile_config"] = compile_config
    from tapegrad.keras import __version__
    metadata = {"keras_version": __version__, "tapegrad": True, "optimizer_order": "keras",
                "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")}
    arrays = {}
    for path, v in weight_paths(model).items():
        arr = np.asarray(v.numpy())
        if arr.dtype.kind not in _OK_KINDS:
            raise ValueError(f"Cannot save weight {path} of dtype {arr.dtype}.")
        arrays[path] = arr
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as weights:  # an .npz: one .npy per array
        for path, arr in arrays.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, arr, allow_pickle=False)
            weights.writestr(path + ".npy", member.getvalue())
    tmp = filepath + ".tmp"
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr(METADATA, json.dumps(metadata))
        z.writestr(CONFIG, json.dumps(config))
        z.writestr(WEIGHTS, buf.getvalue())
    os.replace(tmp, filepath)


def _read_json(z, name, filepath):
    info = z.getinfo(name)
    if info.file_size > _MAX_JSON_BYTES:
        raise ValueError(f"{filepath}: {name} is too large.")
    try:
        return json.loads(z.read(name))
    except ValueError as e:
        raise ValueError(f"{filepath}: {name} is not valid JSON ({e}).") from None


def _read_h5_weights(z, filepath):
    """The arrays of a Keras-written ``model.weights.h5`` (needs h5py, optional)."""
    try:
        import h5py
    except ImportError:
        raise ValueError(f"{filepath} holds its weights in HDF5 (model.weights.h5, written "
                         "by Keras): reading it needs h5py (`pip install h5py`); "
                         "tapegrad.keras itself writes model.weights.npz.") from None
    out = {}

    def take(name, obj):
        if isinstance(obj, h5py.Dataset):
            arr = np.asarray(obj[()])
            if arr.dtype.kind not in _OK_KINDS:
                raise ValueError(f"{filepath}: weight {name} has unsupported dtype "
                                 f"{arr.dtype}.")
            out[name] = arr
    try:
        f = h5py.File(io.BytesIO(z.read("model.weights.h5")), "r")
    except OSError as e:
        raise ValueError(f"{filepath}: model.weights.h5 is not a readable HDF5 file "
                         f"({e}).") from None
    with f:
        f.visititems(take)
    return out


def _read_weights(z, filepath):
    names = set(z.namelist())
    if WEIGHTS not in names:
        if "model.weights.h5" in names:
            return _read_h5_weights(z, filepath)
        raise ValueError(f"{filepath}: no {WEIGHTS} in the archive.")
    out = {}
    with zipfile.ZipFile(io.BytesIO(z.read(WEIGHTS))) as w:
        for info in w.infolist():
            if not info.filename.endswith(".npy"):
                raise ValueError(f"{filepath}: unexpected member {info.filename!r} in "
                                 f"{WEIGHTS}.")
            with w.open(info) as f:
                arr = np.lib.format.read_array(f, allow_pickle=False)
            if arr.dtype.kind not in _OK_KINDS:
                raise ValueError(f"{filepath}: weight {info.filename} has unsupported "
                                 f"dtype {arr.dtype}.")
            out[info.filename[:-4]] = arr
    return out


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """Read a model written by ``model.save`` (``.keras``)."""
    filepath = os.fspath(filepath)
    if not os.path.exists(filepath):
        if filepath.endswith(".keras"):
            raise ValueError(f"File not found: filepath={filepath}. Please ensure the file "
                             "is an accessible `.keras` zip file.")
        raise ValueError(f"File format not supported: filepath={filepath}. Keras 3 only "
                         "supports V3 `.keras` files, legacy H5 format files (`.h5` "
                         "extension).")
    if not zipfile.is_zipfile(filepath):
        raise ValueError(f"File format not supported: filepath={filepath}. Keras 3 only "
                         "supports V3 `.keras` files, legacy H5 format files (`.h5` "
                         "extension). (tapegrad.keras reads `.keras` zip files only.)")
    with zipfile.ZipFile(filepath) as z:
        if CONFIG not in z.namelist():
            raise ValueError(f"{filepath} is not a `.keras` file (no {CONFIG}).")
        config = _read_json(z, CONFIG, filepath)
        arrays = _read_weights(z, filepath)
        metadata = _read_json(z, METADATA, filepath) if METADATA in z.namelist() else {}
    # tapegrad before session 9 saved an optimizer's slots kind by kind
    legacy = isinstance(metadata, dict) and metadata.get("tapegrad") is True and \
        metadata.get("optimizer_order") != "keras"
    if not isinstance(config, dict):
        raise ValueError(f"{filepath}: {CONFIG} does not describe a model.")
    compile_config = config.pop("compile_config", None)
    model = serialization.deserialize_keras_object(config, custom_objects, safe_mode)
    from tapegrad.keras.models import Model
    if not isinstance(model, Model):
        raise ValueError(f"{filepath} describes a {type(model).__name__}, not a model.")
    if compile and compile_config:
        model.compile_from_config(compile_config, custom_objects)
        if any(p.startswith("optimizer/") for p in arrays) and not model.optimizer.built:
            model.optimizer.build(model.trainable_variables)
    _assign(model, arrays, filepath, compile and bool(compile_config), legacy)
    return model


def _assign(model, arrays, filepath, with_optimizer, legacy=False):
    mine = weight_paths(model)
    for p in mine:
        # before session 9 a recurrent layer held its cell's weights itself
        old = p.replace("/cell/vars/", "/vars/")
        if p not in arrays and old != p and old in arrays and old not in mine:
            arrays[p] = arrays.pop(old)
    model_paths = {p for p in arrays if not p.startswith("optimizer/")}
    missing = sorted(p for p in mine if not p.startswith("optimizer/") and p not in arrays)
    extra = sorted(model_paths - set(mine))
    if missing or extra:
        raise ValueError(f"A total of {len(missing) + len(extra)} objects could not be loaded "
                         f"from {filepath}: weights the model has but the file lacks "
                         f"{missing[:5]}, weights in the file the model lacks {extra[:5]}.")
    pairs = []
    for path, v in mine.items():
        if path.startswith("optimizer/"):
            continue
        pairs.append((path, v, arrays[path]))
    opt_saved = sorted((p for p in arrays if p.startswith("optimizer/")),
                       key=lambda p: int(p.rsplit("/", 1)[1]))
    opt_mine = [p for p in mine if p.startswith("optimizer/")]
    if with_optimizer and opt_saved:
        # the saved list pairs with the variables in the order it was written in: Keras's
        # (by model variable), or before session 9 tapegrad's (kind by kind)
        targets = model.optimizer._legacy_variable_order() if legacy else \
            [mine[p] for p in opt_mine]
        if len(opt_saved) != len(targets) or any(
                tuple(arrays[p].shape) != tuple(v.shape) for p, v in zip(opt_saved, targets)):
            warnings.warn(f"Skipping variable loading for optimizer "
                          f"'{model.optimizer.name}', because it has {len(opt_mine)} "
                          f"variables whereas the saved optimizer has {len(opt_saved)} "
                          "variables.", stacklevel=3)
        else:
            pairs.extend((p, v, arrays[p]) for p, v in zip(opt_saved, targets))
    for path, v, arr in pairs:
        if tuple(v.shape) != arr.shape:
            raise ValueError(f"{filepath}: weight {path} has shape {arr.shape}, the model's "
                             f"has shape {tuple(v.shape)}.")
        if np.dtype(v.dtype).kind != arr.dtype.kind and not (
                np.dtype(v.dtype).kind in "iu" and arr.dtype.kind in "iu"):
            raise ValueError(f"{filepath}: weight {path} is {arr.dtype}, the model's is "
                             f"{np.dtype(v.dtype).name}.")
    for _, v, arr in pairs:
        v.assign(arr.astype(v.dtype, copy=False))
