"""``tf.train``: ``Checkpoint``, ``CheckpointManager``, ``latest_checkpoint`` (no pickle:
JSON index plus ``.npz``; see ``checkpoint.py`` for the format)."""
from tapegrad.train.checkpoint import Checkpoint, CheckpointLoadStatus  # noqa: F401
from tapegrad.train.manager import CheckpointManager, list_variables, load_variable  # noqa: F401
from tapegrad.train.state_file import latest_checkpoint  # noqa: F401
