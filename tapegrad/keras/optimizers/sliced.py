"""Keras's TensorFlow backend stepping a ``tf.IndexedSlices`` gradient (an embedding's).

Keras keeps the slices apart wherever its backend's op takes them: a square or an absolute
value of the gradient is taken per slice and the rows that repeat are summed afterwards,
so an optimizer's second moment holds the sum of the squared slices, not the square of
their sum (Adam, RMSprop, Adagrad, Adadelta, Ftrl, Lamb, Nadam, Adafactor; Adamax's absolute
value). The loss scale and ``clipnorm``/``clipvalue``/``global_clipnorm`` also act on the
slices, so a norm counts repeated rows apart. Everything else sees the dense sum, as in Keras.

The update rules stay as they are: ``step_ops`` gives each optimizer the dense sums, and an
ops namespace whose ``square`` and ``abs`` of such a gradient give the sums of the slices'.

>>> import tapegrad as tf
>>> v = tf.Variable([[1.0], [1.0]])
>>> opt = tf.keras.optimizers.Adagrad(learning_rate=1.0, initial_accumulator_value=0.0,
...                                   epsilon=0.0)
>>> g = tf.IndexedSlices(tf.constant([[3.0], [4.0]]), tf.constant([0, 0]), tf.constant([2, 1]))
>>> _ = opt.apply_gradients([(g, v)])  # 1 - 7 / sqrt(3**2 + 4**2), not 1 - 7 / 7
>>> round(float(v[0, 0]), 6)
-0.4
"""
from tapegrad.keras import _tf as tf


def step_ops(opt, grads, tensor_ops, own_step):
    """``(grads, xp)`` for ``opt._apply``: each IndexedSlices gradient scaled and clipped on
    its slices, then as its dense sum; ``xp``: ``tensor_ops`` whose ``square``/``abs`` of
    those sums are the sums of the squared / absolute slices. ``own_step``: the optimizer
    has an ``update_step`` of its own, which is given the (scaled, clipped) slices."""
    rows = [g.values if isinstance(g, tf.IndexedSlices) else g for g in grads]
    if opt.loss_scale_factor is not None:
        rows = [r / opt.loss_scale_factor for r in rows]
    if opt.global_clipnorm and opt.global_clipnorm > 0:
        # Keras's norm squares the slices, and its scaling (``g * scale``) makes them dense
        norm = tf.sqrt(tf.add_n([tf.reduce_sum(tf.square(r)) for r in rows]))
        scale = opt.global_clipnorm * tf.minimum(1.0 / norm, 1.0 / opt.global_clipnorm)
        scale = scale + (norm - norm)  # NaN for an infinite or NaN norm, as in Keras
        dense = [tf.convert_to_tensor(tf.IndexedSlices(r, g.indices, g.dense_shape))
                 if isinstance(g, tf.IndexedSlices) else r for g, r in zip(grads, rows)]
        return [d * scale for d in dense], tensor_ops
    rows = opt._clip_gradients(rows)
    out, table = [], {}
    for g, r in zip(grads, rows):
        if not isinstance(g, tf.IndexedSlices):
            out.append(r)
            continue
        if g.dense_shape is None:
            raise ValueError(f"An IndexedSlices gradient needs its dense_shape: {g}")
        if own_step:  # an update_step of its own (Adafactor, a user's) gets the slices
            out.append(tf.IndexedSlices(r, g.indices, g.dense_shape))
            continue
        n = tf.cast(g.dense_shape[0], "int32")
        dense = tf.math.unsorted_segment_sum(r, g.indices, n)
        table[id(dense)] = (dense, r, g.indices, n)
        out.append(dense)
    return out, _ops(tensor_ops, table)


def _ops(base, table):
    def per_slice(f, x):
        hit = table.get(id(x))
        if hit is None or hit[0] is not x:
            return None
        _, r, indices, n = hit
        return tf.math.unsorted_segment_sum(f(r), indices, n)

    class SlicedOps(base):
        """``base``, with the square and absolute value of a summed gradient per slice."""

        @staticmethod
        def square(x):
            got = per_slice(tf.square, x)
            return base.square(x) if got is None else got

        @staticmethod
        def abs(x):
            got = per_slice(tf.abs, x)
            return base.abs(x) if got is None else got

        @staticmethod
        def quotient_square(q, num, g, den):
            hit = table.get(id(g))
            if hit is None or hit[0] is not g:
                return base.quotient_square(q, num, g, den)
            _, r, indices, n = hit
            rows = -(tf.gather(num, indices) * r) / tf.gather(den, indices)
            return tf.math.unsorted_segment_sum(tf.square(rows), indices, n)

        @staticmethod
        def cast(x, dtype):
            if isinstance(x, tf.Tensor) and x.dtype == dtype:
                return x  # the same tensor: square and abs still know it
            return base.cast(x, dtype)

    return SlicedOps
