"""``tf.summary``: scalars and histograms for TensorBoard, written to event files in
TensorFlow 2's format (``events.py``: TFRecord framing around hand-encoded protocol buffers;
no TensorFlow, no protobuf).

>>> import tempfile, tapegrad as tf
>>> writer = tf.summary.create_file_writer(tempfile.mkdtemp())
>>> with writer.as_default():
...     tf.summary.scalar("loss", 0.25, step=1)
True
>>> tf.summary.scalar("loss", 0.25, step=2)  # no default writer: nothing is written
False
"""
import contextlib
import os
import socket
import time

import numpy as np

from tapegrad.core.state import STATE
from tapegrad.core.tensor import Tensor
from tapegrad.summary import events

_default = []       # the writers of the active ``as_default`` scopes, innermost last
_step = [None]      # tf.summary.experimental.set_step
_record = [True]    # tf.summary.record_if conditions, innermost last
_counter = [0]


class SummaryWriter:
    """Writes summaries to one event file in ``logdir`` (``create_file_writer``)."""

    def __init__(self, logdir, filename_suffix=None):
        os.makedirs(logdir, exist_ok=True)
        _counter[0] += 1
        name = (f"events.out.tfevents.{int(time.time())}.{socket.gethostname()}."
                f"{os.getpid()}.{_counter[0]}.v2{filename_suffix or ''}")
        self.logdir, self.path = str(logdir), os.path.join(str(logdir), name)
        self._file = open(self.path, "wb")
        self._write(events.encode_event(time.time(), 0, file_version="brain.Event:2"))
        self._default_step = None

    def _write(self, record):
        if self._file is None:
            raise RuntimeError("The summary writer is closed.")
        self._file.write(events.frame(record))
        self._file.flush()  # TensorBoard reads a live file

    @contextlib.contextmanager
    def as_default(self, step=None):
        """Make this the writer ``tf.summary.scalar`` and the others write to."""
        _default.append(self)
        old = _step[0]
        if step is not None:
            _step[0] = step
        try:
            yield self
        finally:
            _default.remove(self)
            if step is not None:
                _step[0] = old
            self.flush()

    def set_as_default(self, step=None):
        _default.append(self)
        if step is not None:
            _step[0] = step

    def flush(self):
        if self._file is not None:
            self._file.flush()

    def close(self):
        if self._file is not None:
            self._file.close()
            self._file = None

    def init(self):
        """Accepted for TensorFlow compatibility: the file is open from the start."""


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None,
                       name=None, experimental_trackable=False, experimental_mesh=None):
    """A ``SummaryWriter`` for a new event file in ``logdir`` (made if missing)."""
    return SummaryWriter(logdir, filename_suffix)


class _NoopWriter:
    @contextlib.contextmanager
    def as_default(self, step=None):
        yield self

    def set_as_default(self, step=None):
        pass

    def flush(self):
        pass

    def close(self):
        pass


def create_noop_writer():
    """A writer that writes nothing."""
    return _NoopWriter()


@contextlib.contextmanager
def record_if(condition):
    """Write summaries only while ``condition`` (a bool, or a function giving one) holds."""
    _record.append(condition)
    try:
        yield
    finally:
        _record.pop()


def should_record_summaries():
    cond = _record[-1]
    cond = cond() if callable(cond) else cond
    return bool(_default) and isinstance(_default[-1], SummaryWriter) and bool(
        np.asarray(cond._value if isinstance(cond, Tensor) else cond))


def _number(x):
    return np.asarray(x._value if isinstance(x, Tensor) else x)


def _writer_and_step(step, what):
    if STATE.stack.tracers:
        raise NotImplementedError(
            f"tf.summary.{what} inside tf.function: tapegrad's compiled programs cannot call "
            "back into Python to write the file. Return the value from the function and write "
            "it after the call.")
    if not should_record_summaries():
        return None, None
    step = _step[0] if step is None else step
    if step is None:
        raise ValueError("No step set. Please specify one either through the `step` argument "
                         "or through tf.summary.experimental.set_step()")
    return _default[-1], int(_number(step))


def scalar(name, data, step=None, description=None):
    """Write the scalar ``data`` under ``name`` at ``step``; False if no writer is active.

    >>> import tapegrad as tf
    >>> tf.summary.scalar("x", 1.0, step=0)
    False
    """
    writer, step = _writer_and_step(step, "scalar")
    if writer is None:
        return False
    value = _number(data)
    if value.size != 1:
        raise ValueError(f"tf.summary.scalar: data must be a scalar, got shape {value.shape}")
    writer._write(events.encode_event(time.time(), step, [events.scalar_value(name, value)]))
    return True


def histogram_buckets(data, bucket_count=30):
    """TensorBoard's histogram of ``data``: ``[bucket_count, 3]`` rows (left edge, right
    edge, count) of equal width from the minimum to the maximum, in float64; one value fills
    the last bucket of zero width; no data gives zeros; no buckets (0 or fewer) give no rows.

    As TensorBoard computes it: a value whose bucket index is not a number (a NaN; an
    infinity where the range is infinite) is counted in no bucket, and the edges run from
    the minimum to the maximum whatever they are (NaN edges for data holding a NaN).

    >>> histogram_buckets([0.0, 1.0, 2.0, 4.0], 2).tolist()
    [[0.0, 2.0, 2.0], [2.0, 4.0, 2.0]]
    >>> histogram_buckets([1.0, float("inf")], 2).tolist()
    [[1.0, inf, 1.0], [inf, inf, 0.0]]
    """
    bucket_count = int(bucket_count)
    if bucket_count <= 0:
        return np.zeros((0, 3))
    x = np.asarray(data, np.float64).reshape(-1)
    if x.size == 0:
        return np.zeros((bucket_count, 3))
    lo, hi = x.min(), x.max()
    with np.errstate(invalid="ignore"):
        span = hi - lo  # NaN for data holding a NaN, or infinities of one sign only
    if span == 0:
        counts = np.zeros(bucket_count)
        counts[-1] = x.size
        return np.stack([np.full(bucket_count, lo), np.full(bucket_count, lo), counts], 1)
    width = span / bucket_count
    with np.errstate(invalid="ignore"):
        where = np.floor((x - lo) / width)
    where = where[~np.isnan(where)]  # a NaN index falls in no bucket (TensorBoard's one-hot)
    idx = np.minimum(where, bucket_count - 1).astype(np.int64)
    counts = np.bincount(idx, minlength=bucket_count).astype(np.float64)
    # the edges as tf.linspace makes them: the ends exactly, lo + i * step between, so an
    # infinite step still gives the minimum as the first edge
    with np.errstate(invalid="ignore"):
        inner = np.arange(1, bucket_count, dtype=np.float64) * width + lo
    edges = np.concatenate([[lo], inner, [hi]])
    return np.stack([edges[:-1], edges[1:], counts], 1)


def histogram(name, data, step=None, buckets=None, description=None):
    """Write a histogram of ``data`` (``buckets`` of them, 30 by default) at ``step``."""
    writer, step = _writer_and_step(step, "histogram")
    if writer is None:
        return False
    table = histogram_buckets(_number(data), 30 if buckets is None else int(buckets))
    writer._write(events.encode_event(time.time(), step,
                                      [events.histogram_value(name, table)]))
    return True


class experimental:  # noqa: N801 - TensorFlow's namespace ``tf.summary.experimental``
    @staticmethod
    def set_step(step):
        """The step summaries use when they are given none."""
        _step[0] = step

    @staticmethod
    def get_step():
        return _step[0]


__all__ = ["SummaryWriter", "create_file_writer", "create_noop_writer", "experimental",
           "histogram", "record_if", "scalar", "should_record_summaries"]
