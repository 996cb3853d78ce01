"""``tf.keras.callbacks``: the hooks ``fit``, ``evaluate`` and ``predict`` call
(``base.py``: the base class, ``History``, ``EarlyStopping``, ``LambdaCallback``, the
progress bar; ``training.py``: checkpoints, learning-rate schedules, CSV logs;
``tensorboard.py``: TensorBoard's event files).

>>> from tapegrad import keras
>>> keras.callbacks.EarlyStopping(patience=2).monitor
'val_loss'
"""
from tapegrad.keras.callbacks.base import (  # noqa: F401
    Callback, CallbackList, EarlyStopping, History, LambdaCallback, ProgbarLogger)
from tapegrad.keras.callbacks.training import (  # noqa: F401
    CSVLogger, LearningRateScheduler, ModelCheckpoint, ReduceLROnPlateau, TerminateOnNaN)
from tapegrad.keras.callbacks.tensorboard import TensorBoard  # noqa: F401
