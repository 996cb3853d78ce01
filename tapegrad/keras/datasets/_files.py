"""Where Keras keeps its downloaded datasets (``$KERAS_HOME/datasets``, by default
``~/.keras/datasets``), and the error for a file that is not there: tapegrad reads Keras's
cached files and downloads nothing."""
import os

_BASE = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"


def cached(fname, subdir="datasets", origin=None, what=""):
    """The path of Keras's cached copy of ``fname`` (an absolute ``fname`` is itself), or a
    FileNotFoundError saying where to put it."""
    home = os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras")
    if not os.access(home, os.W_OK):
        home = os.path.join("/tmp", ".keras")  # Keras's fallback for an unwritable home
    path = os.path.join(home, subdir, fname)
    if os.path.exists(path):
        return path
    origin = origin or _BASE + os.path.basename(fname)
    raise FileNotFoundError(
        f"{what}: {path} is not there, and tapegrad downloads nothing. Download {origin} "
        f"to that path (or pass path= the file), then call load_data again.")
