"""``tf.train.CheckpointManager``: numbered saves in one directory, keeping the newest."""
import os

from tapegrad.train import state_file
from tapegrad.train.checkpoint import read_values


class CheckpointManager:
    """Save ``checkpoint`` as ``directory/ckpt-N``, keep the ``max_to_keep`` newest (None:
    all) and list them; picks up the checkpoints already recorded in ``directory``.

    >>> import tempfile, tapegrad as tf
    >>> v = tf.Variable(1.0)
    >>> manager = tf.train.CheckpointManager(tf.train.Checkpoint(v=v), tempfile.mkdtemp(),
    ...                                      max_to_keep=2)
    >>> paths = [manager.save() for _ in range(3)]
    >>> [p.rsplit('/', 1)[-1] for p in manager.checkpoints], manager.latest_checkpoint == paths[-1]
    (['ckpt-2', 'ckpt-3'], True)
    """

    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt", step_counter=None, checkpoint_interval=None,
                 init_fn=None):
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(f"Expected a positive integer or `None` for `max_to_keep`, got "
                             f"{max_to_keep}.")
        if keep_checkpoint_every_n_hours is not None or checkpoint_interval is not None:
            raise NotImplementedError("CheckpointManager: keep_checkpoint_every_n_hours and "
                                      "checkpoint_interval are not supported.")
        self._checkpoint, self._directory = checkpoint, os.fspath(directory)
        self._max_to_keep, self._name = max_to_keep, checkpoint_name
        self._step_counter, self._init_fn = step_counter, init_fn
        _, every = state_file.read(self._directory)
        self._checkpoints = [p for p in every if os.path.exists(p + ".index")]

    @property
    def directory(self):
        return self._directory

    @property
    def checkpoints(self):
        """The prefixes kept, oldest first."""
        return list(self._checkpoints)

    @property
    def latest_checkpoint(self):
        """The newest prefix, or None."""
        return self._checkpoints[-1] if self._checkpoints else None

    def save(self, checkpoint_number=None, check_interval=True, options=None):
        """Save the next checkpoint (numbered ``checkpoint_number``, else the step counter,
        else the checkpoint's save counter) and delete those beyond ``max_to_keep``."""
        ckpt = self._checkpoint
        ckpt.save_counter.assign_add(1)
        if checkpoint_number is None and self._step_counter is not None:
            checkpoint_number = int(self._step_counter)
        n = int(ckpt.save_counter) if checkpoint_number is None else int(checkpoint_number)
        path = ckpt.write(os.path.join(self._directory, f"{self._name}-{n}"))
        path = os.path.abspath(path)
        self._checkpoints = [p for p in self._checkpoints if os.path.abspath(p) != path]
        self._checkpoints.append(path)
        if self._max_to_keep is not None:
            while len(self._checkpoints) > self._max_to_keep:
                old = self._checkpoints.pop(0)
                for suffix in (".index", ".data-00000-of-00001"):
                    if os.path.exists(old + suffix):
                        os.remove(old + suffix)
        state_file.write(self._directory, path, self._checkpoints)
        return path

    def restore_or_initialize(self):
        """Restore the latest checkpoint, or call ``init_fn`` where there is none."""
        if self.latest_checkpoint is not None:
            self._checkpoint.restore(self.latest_checkpoint)
            return self.latest_checkpoint
        if self._init_fn is not None:
            self._init_fn()
        return None


def list_variables(ckpt_dir_or_file):
    """``[(name, shape)]`` of the values a checkpoint holds (a prefix, or a directory's
    latest)."""
    return [(n, list(a.shape)) for n, a in sorted(read_values(_prefix(ckpt_dir_or_file)).items())]


def load_variable(ckpt_dir_or_file, name):
    """One saved value, as a NumPy array (``name`` with or without the attribute suffix)."""
    values = read_values(_prefix(ckpt_dir_or_file))
    for key in (name, name + "/.ATTRIBUTES/VARIABLE_VALUE"):
        if key in values:
            return values[key]
    raise ValueError(f"Key {name} not found in checkpoint")


def _prefix(path):
    path = os.fspath(path)
    if os.path.isdir(path):
        latest = state_file.latest_checkpoint(path)
        if latest is None:
            raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given "
                             f"directory {path}")
        return latest
    return path
