"""Every primitive of the SPECS table (``test_primitives.py``), in a small random program:
eager execution, ``tf.function``'s generated code, the IR interpreter (the traced and the
optimised program) and the gradient, eager and compiled, give the same bits; ``vmap`` gives
the loop's bits.

The program around the primitive: its inputs drawn at random (two seeds), each float input
first scaled by a random ``1 + eps`` (a traced multiply that the graph rewrites must keep),
the loss a weighted sum of its float outputs. One documented exception: primitives that
make BLAS calls (``blas_work``: matmul, einsum, convolutions) run a batch as one GEMM over
the stacked examples, which OpenBLAS rounds differently from one small product per example
(README); their vmap is compared to a tolerance.
"""
import warnings

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.core.dispatch import PRIMITIVES
from tapegrad.ir import evaluate
from tapegrad.testing import assert_same_bits
from test_primitives import SPECS, _batch_flag_sets, _cases, _draw, _need


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


def _outputs(out):
    """The arrays of a nest of tensors; None (an unconnected gradient) stays None."""
    if isinstance(out, (list, tuple)):
        return [None if o is None else np.asarray(o.numpy()) for o in out]
    return [np.asarray(o.numpy()) for o in tf.nest.flatten(out)]


def _assert_all(got, want, what):
    assert len(got) == len(want), what
    for k, (a, b) in enumerate(zip(got, want)):
        if a is None or b is None:
            assert a is None and b is None, f"{what}, output {k}: connected on one side only"
        elif a.dtype.kind in "fc":
            assert_same_bits(a, b, f"{what}, output {k}")
        else:
            np.testing.assert_array_equal(a, b, err_msg=f"{what}, output {k}")


def _program(case, scales):
    """The case's primitive with each float input scaled first; scales[k] None: as given."""
    def f(*xs):
        xs = [x if s is None else x * s for x, s in zip(xs, scales)]
        return case.fn(*xs)
    return f


def _loss_gradient(f, floats):
    def g(*xs):
        with tf.GradientTape() as t:
            for k in floats:
                t.watch(xs[k])
            outs = [o for o in tf.nest.flatten(f(*xs)) if o.dtype.kind == "f"]
            loss = 0.0
            for j, o in enumerate(outs):
                w = tf.sin(tf.cast(tf.reshape(tf.range(tf.size(o)), tf.shape(o)), o.dtype) + j)
                loss = loss + tf.reduce_sum(o * w)
        return t.gradient(loss, [xs[k] for k in floats])
    return g


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name,case", _cases())
def test_eager_compiled_and_interpreted_give_the_same_bits(name, case, seed):
    _need(name)
    rng = np.random.default_rng(seed)
    args = _draw(case, seed + 11)
    floats = [k for k, (a, spec) in enumerate(zip(args, case.args))
              if np.asarray(a).dtype.kind == "f" and spec.kind != "const"]
    scales = [float(1 + rng.uniform(-1e-3, 1e-3)) if k in floats else None
              for k in range(len(args))]
    f = _program(case, scales)
    xs = [tf.constant(a) for a in args]
    want = _outputs(f(*xs))
    compiled = tf.function(f)
    _assert_all(_outputs(compiled(*xs)), want, "tf.function")
    cf = compiled.get_concrete_function(*xs)
    for what, program in [("traced program", cf.raw_program), ("optimised", cf.program)]:
        _assert_all([o.numpy() for o in evaluate(program, xs)[0]], want, f"the {what}")
    if case.order > 0 and floats:
        g = _loss_gradient(f, floats)
        _assert_all(_outputs(tf.function(g)(*xs)), _outputs(g(*xs)), "the gradient, compiled")


def _vmap_params():
    out = []
    for param in _cases():
        name, case = param.values
        if case.batch:
            for flags in _batch_flag_sets(case):
                out.append(pytest.param(name, case, flags, id=param.id + "-" + "".join(
                    "B" if f else "u" for f in flags)))
    return out


@pytest.mark.parametrize("name,case,flags", _vmap_params())
def test_vmap_gives_the_loops_bits(name, case, flags):
    _need(name)
    rng = np.random.RandomState(4)
    args = [a.draw(rng, (3,) if f else ()) for a, f in zip(case.args, flags)]
    loop = [_outputs(case.fn(*[tf.constant(np.array(v[k] if f else v))
                               for v, f in zip(args, flags)])) for k in range(3)]
    got = _outputs(tf.vmap(case.fn, in_axes=[0 if f else None for f in flags])(
        *[tf.constant(v) for v in args]))
    want = [np.stack([r[j] for r in loop]) for j in range(len(got))]
    if getattr(PRIMITIVES.get(name), "blas_work", None) is not None:
        for a, b in zip(got, want):  # one GEMM over the examples: see the module doc
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        return
    _assert_all(got, want, "vmap against the loop")


def test_every_spec_is_swept():
    assert {p.values[0] for p in _cases()} == set(SPECS)
