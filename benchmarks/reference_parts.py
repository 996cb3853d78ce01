"""Run a reference generator's parts, each in its own process (Keras fixes its backend at
import), and merge what they write into one ``.npz`` with a JSON manifest inside.

A generator module defines ``PARTS = {name: (keras backend, fn(arrays, manifest))}`` and
calls ``main(module_name, PARTS, out, keys)`` (``keys``: the manifest's list entries). Run
with two arguments (``part``, ``out``), the module runs that one part (``run_part``).
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def run_part(parts, part, out, keys):
    """Run ``parts[part]`` here and save its arrays and manifest to ``out``."""
    arrays, manifest = {}, {k: [] for k in keys}
    parts[part][1](arrays, manifest)
    arrays["manifest"] = np.array(json.dumps(manifest))
    np.savez(out, **arrays)


def main(module, parts, out, keys):
    """Every part in a fresh process on its backend; the merged arrays and manifest are
    written to ``out`` (compressed), and the manifest returned."""
    arrays, manifest = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for part, (backend, _) in parts.items():
            path = os.path.join(tmp, part + ".npz")
            subprocess.run([sys.executable, "-m", module, part, path], check=True,
                           env={**os.environ, "KERAS_BACKEND": backend})
            with np.load(path, allow_pickle=False) as data:
                for k in data.files:
                    if k != "manifest":
                        arrays[k] = data[k]
                for k, v in json.loads(str(data["manifest"])).items():
                    manifest[k] = manifest.get(k, []) + v if isinstance(v, list) else v
    arrays["manifest"] = np.array(json.dumps(manifest, sort_keys=True))
    out.parent.mkdir(exist_ok=True)
    np.savez_compressed(out, **arrays)
    return manifest
