"""``keras.callbacks.TensorBoard``: each epoch's logs as scalars (``epoch_loss``, ...) in
``log_dir/train`` and ``log_dir/validation``, the learning rate, per-batch scalars with
``update_freq``, weight histograms with ``histogram_freq`` and ``evaluation_*_vs_iterations``
after validation, as Keras 3 writes them (``tapegrad.summary`` makes the event files). The
graph, profiles, images and embeddings are not written."""
import os

import numpy as np

from tapegrad import summary
from tapegrad.keras.callbacks.base import Callback
from tapegrad.keras.layers.base import variable_path


class TensorBoard(Callback):
    """Write training logs for TensorBoard.

    >>> import tempfile
    >>> from tapegrad import keras
    >>> cb = keras.callbacks.TensorBoard(log_dir=tempfile.mkdtemp())
    >>> cb.update_freq
    'epoch'
    """

    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
                 write_steps_per_second=False, update_freq="epoch", profile_batch=0,
                 embeddings_freq=0, embeddings_metadata=None):
        super().__init__()
        self.log_dir = str(log_dir)
        self.histogram_freq = histogram_freq
        self.write_graph, self.write_images = write_graph, write_images
        self.write_steps_per_second = write_steps_per_second
        self.update_freq = 1 if update_freq == "batch" else update_freq
        self.profile_batch = profile_batch
        self.embeddings_freq, self.embeddings_metadata = embeddings_freq, embeddings_metadata
        self._writers = {}
        self._global_train_batch = 0

    def _writer(self, which):
        w = self._writers.get(which)
        if w is None:
            w = self._writers[which] = summary.create_file_writer(
                os.path.join(self.log_dir, which))
        return w

    def _scalars(self, which, items, step):
        with self._writer(which).as_default():
            for name, value in items:
                summary.scalar(name, float(np.asarray(value)), step=step)

    def on_train_begin(self, logs=None):
        self._global_train_batch = 0

    def on_train_end(self, logs=None):
        for w in self._writers.values():
            w.close()
        self._writers = {}

    def on_train_batch_end(self, batch, logs=None):
        self._global_train_batch += 1
        freq = self.update_freq
        if freq == "epoch" or not logs or self._global_train_batch % freq:
            return
        self._scalars("train", [(f"batch_{k}", v) for k, v in logs.items()],
                      self._global_train_batch)

    def on_test_end(self, logs=None):
        opt = getattr(self.model, "optimizer", None)
        if logs and opt is not None and hasattr(opt, "iterations"):
            step = int(np.asarray(opt.iterations))
            self._scalars("validation", [(f"evaluation_{k}_vs_iterations", v)
                                         for k, v in logs.items()], step)

    def on_epoch_end(self, epoch, logs=None):
        logs = dict(logs or {})
        train = [(f"epoch_{k}", v) for k, v in logs.items() if not k.startswith("val_")]
        opt = getattr(self.model, "optimizer", None)
        if opt is not None and hasattr(opt, "learning_rate"):
            train.append(("epoch_learning_rate", float(np.asarray(opt.learning_rate))))
        if train:
            self._scalars("train", train, epoch)
        val = [(f"epoch_{k[4:]}", v) for k, v in logs.items() if k.startswith("val_")]
        if val:
            self._scalars("validation", val, epoch)
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            with self._writer("train").as_default():
                for layer in self.model.layers:
                    for w in layer.weights:
                        name = variable_path(w).replace(":", "_")
                        summary.histogram(f"{name}/histogram", w, step=epoch)
