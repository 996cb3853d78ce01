"""The ``checkpoint`` file of a checkpoint directory (TensorFlow's text format):

    model_checkpoint_path: "ckpt-3"
    all_model_checkpoint_paths: "ckpt-2"
    all_model_checkpoint_paths: "ckpt-3"

Paths are relative to the directory. Only these two fields are written or read.
"""
import os
import re

NAME = "checkpoint"
_LINE = re.compile(r'^(model_checkpoint_path|all_model_checkpoint_paths):\s*"((?:[^"\\]|\\.)*)"$')


def read(directory):
    """``(latest, [all])`` as absolute paths, or ``(None, [])`` without a state file."""
    path = os.path.join(directory, NAME)
    if not os.path.exists(path):
        return None, []
    latest, every = None, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = _LINE.match(line.strip())
            if not m:
                continue
            p = m.group(2).replace('\\"', '"').replace("\\\\", "\\")
            p = p if os.path.isabs(p) else os.path.join(directory, p)
            if m.group(1) == "model_checkpoint_path":
                latest = p
            else:
                every.append(p)
    return latest, every


def write(directory, latest, every):
    """Replace the state file: ``latest`` and the list ``every`` (absolute paths)."""
    def q(p):
        rel = os.path.relpath(p, directory)
        return '"' + rel.replace("\\", "\\\\").replace('"', '\\"') + '"'
    lines = [f"model_checkpoint_path: {q(latest)}"] + [
        f"all_model_checkpoint_paths: {q(p)}" for p in every]
    tmp = os.path.join(directory, NAME + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, os.path.join(directory, NAME))


def record(path):
    """Note a new checkpoint ``path`` as the latest of its directory."""
    directory = os.path.dirname(os.path.abspath(path))
    _, every = read(directory)
    path = os.path.abspath(path)
    every = [p for p in every if os.path.abspath(p) != path] + [path]
    write(directory, path, every)


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The newest checkpoint prefix recorded in ``checkpoint_dir``, or None.

    >>> import tempfile, tapegrad as tf
    >>> tf.train.latest_checkpoint(tempfile.mkdtemp()) is None
    True
    """
    latest, _ = read(os.fspath(checkpoint_dir))
    if latest is None or not os.path.exists(latest + ".index"):
        return None
    return latest
