"""Every abstract (shape and dtype) rule says what the implementation and the generated code
compute, for every dtype it accepts; and it computes nothing.

The calls come from the SPECS table of ``test_primitives``: each call's inputs are given
each dtype in turn (one input at a time, then all at once). Where the abstract rule accepts
the inputs, the implementation must give that shape and dtype, and so must the code generated
for a one-equation program (with the same values). Where it refuses them, nothing is
claimed: a rule may be stricter than NumPy (it may refuse what the two paths would compute
differently). The ``index_shape`` arithmetic is checked against NumPy on random keys.
"""
import tracemalloc
import warnings

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.trace.codegen import compile_program
from tapegrad.core.dispatch import PRIMITIVES
from tapegrad.ir import Equation, Program, Var, check, make_params
from tapegrad.primitives.indexing import index_shape
from tapegrad.primitives.params import DTYPE_NAMES

import test_primitives as tp

DTYPES = [np.dtype(n) for n in DTYPE_NAMES]


def _calls(name):
    """(arrays, params) of the calls of ``name`` that its SPECS cases make."""
    prim, out = PRIMITIVES[name], []
    for k, case in enumerate(tp.SPECS[name]):
        args = [tf.constant(a) for a in tp._draw(case, 10 + k)]
        with tp._Spy(prim) as spy:
            case.fn(*args)
        out += [(arrays, params) for arrays, params, _ in spy.calls]
    return out


def _as(a, d):
    """``a``'s values in dtype ``d`` (small non-negative integers for integer dtypes)."""
    a = np.asarray(a)
    if d.kind in "iub" and a.dtype.kind in "fc":
        a = np.round(np.abs(a.real) * 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return a.astype(d)


def _variants(arrays):
    if not arrays:  # random numbers: the dtype is a param
        yield []
    for d in DTYPES:
        for i in range(len(arrays)):
            yield [_as(a, d) if j == i else np.asarray(a) for j, a in enumerate(arrays)]
        if len(arrays) > 1:
            yield [_as(a, d) for a in arrays]


def _abstract(prim, arrays, params):
    avals = [Var(f"a{i}", a.shape, a.dtype) for i, a in enumerate(arrays)]
    try:
        if prim.validate is not None:
            prim.validate(*avals, **params)
        shape, dtype = prim.abstract(*avals, **params)
    except (TypeError, ValueError, IndexError):
        return avals, None
    return avals, (tuple(shape), np.dtype(dtype))


def _compiled(prim, avals, params, want):
    out = Var("out", want[0], want[1])
    program = check(Program(tuple(avals), (), (), (Equation(prim, tuple(avals),
                                                            make_params(params), (out,)),),
                            (out,), (), "one"))
    return compile_program(program)[0]


def _same_values(a, b):
    if a.dtype.kind in "fc":
        tol = 1e-2 if a.dtype.itemsize <= 2 or a.dtype == np.complex64 else 1e-5
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(a, b)


NAMES = sorted(n for n in tp.SPECS if n in PRIMITIVES and n != "read_variable")


@pytest.mark.parametrize("name", NAMES)
def test_abstract_rule_agrees_with_impl_and_generated_code_for_every_dtype(name):
    prim = PRIMITIVES[name]
    checked = 0
    for arrays, params in _calls(name):
        for variant in _variants(arrays):
            avals, want = _abstract(prim, variant, params)
            if want is None:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = np.asarray(prim.impl(*variant, **params))
                fn = _compiled(prim, avals, params, want)
                gen = np.asarray(fn(*variant))
            assert (got.shape, got.dtype) == want, \
                f"{name} on {[a.dtype.name for a in variant]}: rule {want}, impl " \
                f"{(got.shape, got.dtype)}"
            assert (gen.shape, gen.dtype) == want, \
                f"{name} on {[a.dtype.name for a in variant]}: rule {want}, generated code " \
                f"{(gen.shape, gen.dtype)}"
            if not prim.stateful:
                _same_values(gen, got)
            checked += 1
    assert checked, f"no dtype was accepted by {name}'s rules"


def test_no_abstract_rule_evaluates_its_primitive():
    # declared sizes of 2**40 elements: a rule that made an array of them would fail here
    big = Var("x", (2 ** 20, 2 ** 20), np.dtype("float64"))
    tracemalloc.start()
    try:
        for name, params in [("argmax", dict(axis=1, output_type="int64")),
                             ("pad", dict(paddings=((1, 1), (0, 2)), constant_values=0.0)),
                             ("diag_part", {}), ("stop_gradient", {}), ("exp", {}),
                             ("reduce_max", dict(axis=(0,), keepdims=False)),
                             ("cumsum", dict(axis=0, exclusive=True, reverse=False))]:
            prim = PRIMITIVES[name]
            if prim.validate is not None:
                prim.validate(big, **params)
            prim.abstract(big, **params)
        PRIMITIVES["concat"].abstract(big, big, axis=0)
        PRIMITIVES["matmul"].abstract(big, big)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 ** 20


def _random_key(rng, shape):
    key = []
    for n in shape:
        r = rng.randint(6)
        if r == 0:
            key.append(int(rng.randint(-n, n)) if n else slice(None))
        elif r == 1:
            key.append(slice(*[None if rng.rand() < 0.4 else int(rng.randint(-n - 2, n + 2))
                               for _ in range(2)], [None, 1, -1, 2, -3][rng.randint(5)]))
        elif r == 2:
            key.append(rng.randint(-n, n, size=rng.randint(1, 3)) if n else slice(None))
        elif r == 3:
            key.append(rng.rand(n) < 0.5)
        elif r == 4:
            key.append(None)
            key.append(slice(None))
        else:
            key.append(slice(None))
    cut = rng.randint(len(key) + 1)
    key = key[:cut]
    if rng.rand() < 0.4:
        key.insert(rng.randint(len(key) + 1), Ellipsis)
    if rng.rand() < 0.3:
        key.insert(rng.randint(len(key) + 1), None)
    return tuple(key)


def test_index_shape_is_numpys_indexing():
    rng = np.random.RandomState(0)
    tried = 0
    for _ in range(3000):
        shape = tuple(rng.randint(0, 4, size=rng.randint(0, 4)))
        key = _random_key(rng, shape)
        try:
            want = np.empty(shape)[key].shape
        except (IndexError, ValueError):
            with pytest.raises((IndexError, ValueError, TypeError)):
                index_shape(shape, key)
            continue
        assert index_shape(shape, key) == want, (shape, key)
        tried += 1
    assert tried > 1500
