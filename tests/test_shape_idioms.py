"""Shape-polymorphic ``tf.function`` is never wrong: a table of Python idioms that read a
size, each compared with eager at sizes on both sides of its branches (the traced sizes
included), under an ``input_signature`` with ``None``, under ``reduce_retracing``, and
through the two-trace template (trace/template.py) alone."""
import math
import numbers
import operator

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.trace import symbolic

# every idiom gets x: float64 of shape (n,) + tail; n = x.shape[0]
IDIOMS = {
    "pad_to_multiple_of_8": lambda x: tf.pad(x, [[0, (-x.shape[0]) % 8]]),
    "pad_to_8": lambda x: tf.pad(x, [[0, max(0, 8 - x.shape[0])]]),
    "pad_to_8_if": lambda x: tf.pad(x, [[0, 8 - x.shape[0]]]) if x.shape[0] < 8 else x,
    "div_by_max": lambda x: x / max(x.shape[0], 3),
    "mul_by_min": lambda x: x * min(x.shape[0], 4),
    "branch_gt": lambda x: x * 2 if x.shape[0] > 4 else x * 3,
    "branch_eq": lambda x: x + 1.0 if x.shape[0] == 3 else x - 1.0,
    "branch_even": lambda x: x * 2.0 if x.shape[0] % 2 == 0 else -x,
    "branch_in": lambda x: x * 5.0 if x.shape[0] in (2, 3) else x,
    "bool_of_size": lambda x: x * 7.0 if bool(x.shape[0] - 3) else x,
    "int_of_size": lambda x: x * int(x.shape[0]),
    "index_of_size": lambda x: x * operator.index(x.shape[0]),
    "float_of_size": lambda x: x * float(x.shape[0]),
    "truediv_size": lambda x: x * (x.shape[0] / 2),
    "pow_size": lambda x: x * x.shape[0] ** 2,
    "sqrt_size": lambda x: x * x.shape[0] ** 0.5,
    "numpy_sqrt": lambda x: x * np.sqrt(x.shape[0]),
    "numpy_int64": lambda x: x * np.int64(x.shape[0]),
    "numpy_asarray": lambda x: x * np.asarray(x.shape[0]),
    "numpy_maximum": lambda x: x / np.maximum(x.shape[0], 3),
    "math_log": lambda x: x * math.log(x.shape[0]),
    "math_ceil": lambda x: tf.pad(x, [[0, math.ceil(x.shape[0] / 8) * 8 - x.shape[0]]]),
    "ceil_div_pad": lambda x: tf.pad(x, [[0, -(-x.shape[0] // 8) * 8 - x.shape[0]]]),
    "divmod": lambda x: x * divmod(x.shape[0], 3)[0] + divmod(x.shape[0], 3)[1],
    "abs": lambda x: x * abs(x.shape[0] - 5),
    "shift_and_mask": lambda x: x * (x.shape[0] >> 1) + (x.shape[0] & 1),
    "round": lambda x: x * round(x.shape[0] / 3),
    "sorted": lambda x: x * sorted([x.shape[0], 4])[0],
    "sum_list": lambda x: x * sum([x.shape[0], 1]),
    "len_range": lambda x: x * len(range(x.shape[0])),
    "range_loop_index": lambda x: _loop_sum(x),
    "range_loop_no_index": lambda x: _loop_scale(x),
    "list_index": lambda x: x * [9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8][x.shape[0]],
    "tuple_repeat_len": lambda x: x * len((0,) * x.shape[0]),
    "sum_of_range": lambda x: x * sum(reversed(range(x.shape[0]))),
    "math_gcd": lambda x: x * math.gcd(x.shape[0], 4),
    "math_isqrt": lambda x: x * math.isqrt(x.shape[0]),
    "min_of_list": lambda x: x * min([x.shape[0], 5, 7]),
    "hex_len": lambda x: x * len(hex(x.shape[0])),
    "bytes_len": lambda x: x * len(bytes(x.shape[0])),
    "numpy_full_constant": lambda x: x + tf.constant(np.full((x.shape[0],), 2.0)),
    "integral_check": lambda x: x * 2.0 if isinstance(x.shape[0], numbers.Integral) else x,
    "list_repeat_concat": lambda x: tf.concat([x] * x.shape[0], 0),
    "list_slice": lambda x: x * len([1, 2, 3, 4, 5, 6][:x.shape[0]]),
    "slice_half": lambda x: x[:x.shape[0] // 2],
    "slice_max": lambda x: x[:max(x.shape[0] - 3, 1)],
    "slice_min": lambda x: x[:min(x.shape[0], 4)],
    "index_last": lambda x: x[x.shape[0] - 1] * x,
    "index_middle": lambda x: x[x.shape[0] // 2] + x,
    "zeros_of_size": lambda x: tf.concat([x, tf.zeros([x.shape[0]], x.dtype)], 0),
    "ones_minus_one": lambda x: tf.concat([x, tf.ones([max(x.shape[0] - 4, 0)], x.dtype)], 0),
    "reshape_if_even": lambda x: tf.reshape(x, [2, -1]) if x.shape[0] % 2 == 0 else x[None],
    "split": lambda x: tf.split(x, [x.shape[0] // 2, x.shape[0] - x.shape[0] // 2])[1],
    "dict_lookup": lambda x: x * {2: 1.0, 3: 2.0, 6: 3.0}.get(x.shape[0], 4.0),
    "str_len": lambda x: x * len(str(x.shape[0])),
    "fstring": lambda x: x * float(f"{x.shape[0]}.5"),
    "bit_length": lambda x: x * x.shape[0].bit_length(),
    "numpy_arange": lambda x: x + np.arange(x.shape[0]) % 3,
    "numpy_zeros_sum": lambda x: x * np.zeros(x.shape[0]).size,
    "tf_range": lambda x: x * tf.cast(tf.range(x.shape[0]) % 3, x.dtype),
    "gather_reversed": lambda x: tf.gather(x, list(range(x.shape[0]))[::-1]),
    "shape_tensor": lambda x: x / tf.cast(tf.shape(x)[0], x.dtype),
    "mean_then_branch": lambda x: tf.reduce_mean(x) * (2.0 if x.shape[0] >= 8 else 1.0),
    "while_halving": lambda x: _halve(x),
    "comprehension_sizes": lambda x: tf.stack([tf.reduce_sum(x[:k]) for k in
                                               range(1, min(x.shape[0], 4) + 1)]),
    "comparison_chain": lambda x: x * 3.0 if 2 < x.shape[0] <= 6 else x,
    "numpy_prod_shape": lambda x: tf.reshape(x, [int(np.prod(x.shape)) // 2, -1])
    if x.shape[0] % 2 == 0 else x,
    "tuple_shape_eq": lambda x: x * 2.0 if tuple(x.shape) == (6,) else x,
    "deepcopy": lambda x: x * __import__("copy").deepcopy(x.shape[0]),
    "neg_index": lambda x: x[-min(x.shape[0], 3):],
}


def _loop_sum(x):
    total = x[0] * 0.0
    for i in range(x.shape[0]):
        total = total + x[i]
    return total


def _loop_scale(x):
    y = x
    for _ in range(x.shape[0]):
        y = y * 1.5
    return y


def _halve(x):
    n = x.shape[0]
    while n > 2:
        n = n // 2
        x = x[:n] + 1.0
    return x


pytestmark = pytest.mark.filterwarnings("ignore:tapegrad.function .* has been traced")
SIZES = (5, 6, 3, 2, 4, 7, 8, 9, 10, 12, 16, 17, 1)


def _outcome(fn, x):
    try:
        return np.asarray(fn(x).numpy()), None
    except Exception as e:  # noqa: BLE001 - the compiled function must fail the same way
        return None, type(e)


def _check(f, fn, sizes=SIZES):
    for n in sizes:
        x = tf.constant(np.arange(1.0, n + 1.0) * 0.5)
        want, werr = _outcome(fn, x)
        got, gerr = _outcome(f, x)
        if werr is not None:
            assert gerr is not None, f"size {n}: eager raised {werr.__name__}, compiled did not"
            continue
        assert gerr is None, f"size {n}: compiled raised {gerr.__name__}, eager did not"
        assert got.shape == want.shape, f"size {n}: shape {got.shape}, eager {want.shape}"
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=0, err_msg=f"size {n}")


@pytest.mark.parametrize("name", sorted(IDIOMS))
def test_none_signature(name):
    fn = IDIOMS[name]
    _check(tf.function(fn, input_signature=[tf.TensorSpec([None], tf.float64)]), fn)


@pytest.mark.parametrize("name", sorted(IDIOMS))
def test_reduce_retracing(name):
    fn = IDIOMS[name]
    _check(tf.function(fn, reduce_retracing=True), fn)


@pytest.mark.parametrize("name", sorted(IDIOMS))
def test_two_trace_template(name, monkeypatch):
    # no program is rebuilt from one trace: every other size comes from a template of two
    # guarded traces (template.py), or from a new trace
    finish = symbolic.Sizes.finish

    def structural_only(self, program, sym_shapes):
        finish(self, program, sym_shapes)
        self.reasons.append("forced by the test")
        return None
    monkeypatch.setattr(symbolic.Sizes, "finish", structural_only)
    fn = IDIOMS[name]
    _check(tf.function(fn, input_signature=[tf.TensorSpec([None], tf.float64)]), fn)
    _check(tf.function(fn, reduce_retracing=True), fn)


@pytest.mark.parametrize("mode", ["signature", "reduce_retracing"])
def test_the_three_reported_cases_in_their_order(mode):
    # issue 9: pad-to-8 at length 3; x / max(n, 3) traced at 2 and 3, then 6; the branch
    # n > 4 traced below it, then called at 10
    kw = ({"input_signature": [tf.TensorSpec([None], tf.float64)]} if mode == "signature"
          else {"reduce_retracing": True})
    cases = [(IDIOMS["pad_to_8"], (5, 6, 3)), (IDIOMS["div_by_max"], (2, 3, 6)),
             (IDIOMS["branch_gt"], (2, 3, 10))]
    for fn, sizes in cases:
        _check(tf.function(fn, **kw), fn, sizes)


def test_a_two_trace_template_is_reused_where_its_guards_hold(monkeypatch):
    finish = symbolic.Sizes.finish

    def structural_only(self, program, sym_shapes):
        finish(self, program, sym_shapes)
        self.reasons.append("forced by the test")
        return None
    monkeypatch.setattr(symbolic.Sizes, "finish", structural_only)
    fn = IDIOMS["branch_gt"]
    f = tf.function(fn, input_signature=[tf.TensorSpec([None], tf.float64)])
    _check(f, fn, (5, 6, 7, 9, 12))
    assert f.trace_count == 2  # the template of 5 and 6 serves 7, 9 and 12
    _check(f, fn, (4, 2, 1))   # the other side of the guard: traced, never the template
    assert f.trace_count == 4  # 4 and 2 make a second template, which serves 1
