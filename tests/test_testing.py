"""The checkers themselves: they must catch wrong rules, or every table-driven test is void."""
import warnings

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.core.dispatch import PRIMITIVES, Primitive
from tapegrad.primitives.families import elementwise_abstract, elementwise_batch
from tapegrad.testing import check_batching, check_grads


@pytest.fixture
def make_prim():
    made = []

    def make(name, impl, **rules):
        p = Primitive(name, impl, nin=1, abstract=elementwise_abstract, emit="{0}", **rules)
        p.batch = elementwise_batch(p)
        made.append(name)
        return p
    yield make
    for name in made:
        PRIMITIVES.pop(name, None)


def test_check_grads_passes_on_correct_rules():
    check_grads(lambda x, y: tf.sin(x) * tf.exp(y) / (1 + x * x), [[0.3, -1.2], 0.7], order=2)


def test_check_grads_catches_a_wrong_vjp_only(make_prim):
    p = make_prim("_t_wrong_vjp", np.sin, vjp=(lambda g, ans, x: g * 2 * tf.cos(x),),
                  jvp=(lambda t, ans, x: t * tf.cos(x),))
    check_grads(p, [[0.3, 1.0]], modes=("fwd",), order=1)
    with pytest.raises(AssertionError, match="reverse-mode"):
        check_grads(p, [[0.3, 1.0]], modes=("rev",), order=1)


def test_check_grads_catches_a_wrong_jvp_only(make_prim):
    p = make_prim("_t_wrong_jvp", np.sin, vjp=(lambda g, ans, x: g * tf.cos(x),),
                  jvp=(lambda t, ans, x: -t * tf.cos(x),))
    check_grads(p, [[0.3, 1.0]], modes=("rev",), order=1)
    with pytest.raises(AssertionError, match="forward-mode"):
        check_grads(p, [[0.3, 1.0]], modes=("fwd",), order=1)


def test_order_2_catches_a_rule_that_is_right_only_at_first_order(make_prim):
    # cos(x) computed without recording: the first derivative is right, the second is 0.
    def cos_untaped(x):
        return tf.constant(np.cos(np.asarray(x)))
    p = make_prim("_t_first_order_only", np.sin, vjp=(lambda g, ans, x: g * cos_untaped(x),),
                  jvp=(lambda t, ans, x: t * cos_untaped(x),))
    check_grads(p, [[0.3, 1.0]], order=1)
    for mode in ("fwd", "rev"):
        with pytest.raises(AssertionError, match=r"vjp\(f\)|jvp\(f\)"):
            check_grads(p, [[0.3, 1.0]], modes=(mode,), order=2)


def test_check_grads_leaves_integer_arguments_alone():
    check_grads(lambda x, i: tf.gather(x, i) ** 2, [[1.0, 2.0, 3.0], np.array([2, 0, 2])])


def test_check_grads_needs_a_float_argument_and_known_modes():
    with pytest.raises(ValueError, match="no floating argument"):
        check_grads(lambda i: i * 2, [np.array([1, 2])])
    with pytest.raises(ValueError, match="unknown mode"):
        check_grads(tf.sin, [1.0], modes=("sideways",))


def test_check_batching_catches_a_wrong_batching_rule(make_prim):
    p = make_prim("_t_wrong_batch", np.sin, vjp=(lambda g, ans, x: g * tf.cos(x),),
                  jvp=(lambda t, ans, x: t * tf.cos(x),))
    check_batching(p, [np.arange(6.0).reshape(3, 2)])
    p.batch = lambda args, batched: PRIMITIVES["sin"].bind_raw(args[0][::-1])
    with pytest.raises(AssertionError, match="differs from the loop"):
        check_batching(p, [np.arange(6.0).reshape(3, 2)])


def test_check_batching_reports_a_loop_fallback(make_prim):
    p = make_prim("_t_no_batch", np.sin, vjp=(lambda g, ans, x: g * tf.cos(x),),
                  jvp=(lambda t, ans, x: t * tf.cos(x),))
    p.batch = lambda args, batched: None
    with pytest.warns(UserWarning, match="falling back to a Python loop"):
        check_batching(p, [np.ones((3, 2))])
    with pytest.raises(AssertionError, match="fell back"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_batching(p, [np.ones((3, 2))], fallback_ok=False)


def test_check_batching_with_unbatched_arguments():
    check_batching(lambda x, y: tf.matmul(x, y), [np.ones((4, 2, 3)), np.ones((3, 5))],
                   batched=[True, False])
    with pytest.raises(ValueError, match="one common batch size"):
        check_batching(tf.add, [np.ones((3, 2)), np.ones((4, 2))])
