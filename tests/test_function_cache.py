"""tf.function's caches are bounded: least recently used concrete functions are evicted
(``tapegrad.config.function_cache_size``), and a ``None`` dimension keeps one program
family however many sizes it is called with."""
import gc
import weakref

import numpy as np
import pytest

import tapegrad as tf

pytestmark = pytest.mark.filterwarnings("ignore:tapegrad.function .* has been traced")


@pytest.fixture
def bound():
    def set_bound(n):
        tf.config.set_function_cache_size(n)
        return n
    yield set_bound
    tf.config.set_function_cache_size(None)


def _live(refs):
    gc.collect()
    return sum(r() is not None for r in refs)


def test_ten_thousand_new_shapes_keep_a_bounded_number_of_concrete_functions():
    f = tf.function(lambda x: x + 1.0)
    limit = tf.config.function_cache_size()
    assert limit == 128  # the documented default
    refs = []
    for n in range(1, 10001):
        x = np.full(n, 0.5)
        np.testing.assert_array_equal(f(x).numpy(), x + 1.0)
        if n <= 200:
            refs.append(weakref.ref(f.get_concrete_function(x)))
    assert f.trace_count == 10000
    assert len(f._cache) == limit and len(f._fast) <= limit // 2
    assert _live(refs) == 0  # nothing else keeps an evicted program alive
    x = np.full(3, 0.5)  # an evicted signature is traced again, and right
    np.testing.assert_array_equal(f(x).numpy(), x + 1.0)
    assert f.trace_count == 10001


def test_the_least_recently_used_signature_goes_first(bound):
    bound(4)
    f = tf.function(lambda x: x * 2.0)
    a, b, c, d, e = (np.ones(n) for n in (1, 2, 3, 4, 5))
    for x in (a, b, c, d):
        f(x)
    for _ in range(3):
        f(a)   # a is used again (through the fast path too)
    f(e)       # ... so b, the least recently used, is evicted
    assert f.trace_count == 5
    f(a), f(c), f(d), f(e)
    assert f.trace_count == 5
    f(b)
    assert f.trace_count == 6
    for x in (a, b, c, d, e):
        np.testing.assert_array_equal(f(x).numpy(), x * 2.0)


def test_a_hot_signature_among_a_stream_of_new_ones_is_not_retraced(bound):
    bound(16)
    f = tf.function(lambda x: x - 1.0)
    hot = np.ones(1)
    for n in range(2, 400):
        f(hot)
        f(np.ones(n))
    assert f.trace_count == 399  # one trace for the hot shape, one per new shape
    assert len(f._cache) == 16


def test_the_bound_is_configurable_and_checked(bound):
    f = tf.function(lambda x: x + 0.0)
    for n in range(1, 40):
        f(np.ones(n))
    assert len(f._cache) == 39
    bound(8)
    f(np.ones(100))  # the next insertion applies the new bound
    assert len(f._cache) == 8
    for bad in (0, -1, 2.5, True, "8"):
        with pytest.raises(ValueError):
            tf.config.set_function_cache_size(bad)
    tf.config.set_function_cache_size(None)
    assert tf.config.function_cache_size() == 128


def test_a_none_dimension_keeps_one_program_family(bound):
    bound(32)
    calls = []

    def fn(x):
        calls.append(1)
        return tf.reduce_sum(x * 2.0, axis=1) + tf.cast(tf.shape(x)[0], x.dtype)
    f = tf.function(fn, input_signature=[tf.TensorSpec([None, 3], tf.float64)])
    for n in range(2, 1002):
        x = np.full((n, 3), 0.25)
        np.testing.assert_allclose(f(x).numpy(), (x * 2.0).sum(1) + n, rtol=1e-13)
    # sizes 2 and 3 are not reused: their programs hold a constant 2.0, or a dimension 3,
    # equal to the size, which could be a size read past the guards (trace/symbolic.py's
    # second line of defence); the trace at size 4 holds for every size
    assert len(calls) == 3 and f.trace_count == 3
    assert len(f._templates) == 1 and sum(len(v) for v in f._templates.values()) == 1
    assert len(f._cache) == 32  # the programs instantiated per size are bounded too


def test_a_size_pinned_in_every_trace_keeps_few_families(bound):
    # int(n) binds each trace to its size: every size is traced, and the records kept per
    # signature stay bounded
    bound(16)
    f = tf.function(lambda x: x * int(x.shape[0]),
                    input_signature=[tf.TensorSpec([None], tf.float64)])
    for n in range(2, 300):
        np.testing.assert_array_equal(f(np.ones(n)).numpy(), np.full(n, float(n)))
    assert f.trace_count == 298
    assert len(f._cache) == 16
    assert all(len(v) <= 8 for v in f._templates.values())


def test_new_python_values_under_reduce_retracing_stay_bounded(bound):
    bound(16)
    f = tf.function(lambda x, k: x * k, reduce_retracing=True)
    for k in range(500):
        np.testing.assert_array_equal(f(np.ones(2 + k % 3), k).numpy(), np.full(2 + k % 3, k))
    for cache in (f._cache, f._relaxed, f._seen, f._templates, f._size_bound, f._leaky):
        assert len(cache) <= 16
