"""Tapes free their records by reference counting alone; memory stays flat in loops."""
import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import tapegrad as tf


def _no_gc(fn):
    def wrapped():
        was = gc.isenabled()
        gc.disable()
        try:
            fn()
        finally:
            if was:
                gc.enable()
    wrapped.__name__ = fn.__name__
    return wrapped


@_no_gc
def test_non_persistent_tape_frees_intermediates_when_gradient_returns():
    x = tf.constant(np.ones(1000))
    with tf.GradientTape() as t:
        t.watch(x)
        h = tf.exp(x)
        y = tf.reduce_sum(h)
    ref = weakref.ref(h)
    del h
    assert ref() is not None            # the tape keeps the intermediate alive
    g = t.gradient(y, x)
    assert ref() is None                # ... only until gradient returns
    assert float(tf.reduce_sum(g)) == pytest.approx(1000 * np.e)


def test_100000_tape_uses_keep_memory_flat():
    w = tf.Variable(np.ones(8))
    x = tf.constant(np.linspace(0, 1, 8))

    def step():
        with tf.GradientTape() as t:
            y = tf.reduce_sum(tf.tanh(x * w))
        g = t.gradient(y, w)
        w.assign_sub(1e-6 * g)

    for _ in range(1000):  # warm caches before measuring
        step()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for i in range(100_000):
            step()
            if i == 10_000:
                early = tracemalloc.get_traced_memory()[0]
        late = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    # a leak of even one small object per step would add megabytes over 90,000 steps
    assert late - early < 64 * 1024, (base, early, late)
