"""Keras 3's ``keras.ops`` results (values and dtypes) for the functions of
tapegrad/keras/ops/extra.py, for tests/test_keras_ops_extra.py, in the form of
benchmarks/keras_ops_more_reference.py (an expression over ``ops`` and ``np`` per case; an
exception's type is its result). Run in the bench environment:

    KERAS_BACKEND=tensorflow /work/venv-bench/bin/python -m benchmarks.keras_ops_extra_reference
"""
import os
import pathlib

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

from benchmarks import keras_ops_more_reference as more  # noqa: E402

OUT = (pathlib.Path(__file__).resolve().parent.parent / "tests" / "data"
       / "keras_ops_extra_reference.json")
F, M, I = more.F, more.M, more.I  # the same sample arrays as keras_ops_more_reference
P = "np.array([4, 6, 9, 12], 'int32')"
N = "np.array([np.nan, np.inf, -np.inf, 1.0, -2.0], 'float32')"
S = "np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], 'float32')"
B = "np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]], 'float32')"
CASES = [
    # elementwise
    f"ops.cbrt({F})", f"ops.cbrt({I})", f"ops.deg2rad({F})", f"ops.deg2rad({I})",
    f"ops.rad2deg({F})", f"ops.exp2({F})", f"ops.exp2({I})", f"ops.hypot({F}, {F}[::-1])",
    f"ops.hypot({I}, 2)", f"ops.heaviside({F}, 0.5)", f"ops.heaviside({I}, {I})",
    f"ops.logaddexp2({F}, {F}[::-1])", f"ops.sinc({F})", f"ops.sinc({I})", f"ops.signbit({F})",
    f"ops.signbit({I})", "ops.signbit(np.array([-0.0, 0.0, -np.inf], 'float32'))",
    f"ops.fmod({F}, 0.75)", f"ops.fmod({I}, 3)", f"ops.fmod({I}, -3)", f"ops.gcd({I}, 6)",
    f"ops.lcm({P}, 4)", f"ops.erfc({F})", f"ops.isneginf({N})", f"ops.isposinf({N})",
    f"ops.isneginf({I})", f"ops.isreal({F})", f"ops.real({F})", f"ops.imag({F})",
    f"ops.conj({F})", f"ops.conjugate({I})",
    # arrays
    f"ops.fliplr({M})", f"ops.flipud({M})", f"ops.rot90({M})", f"ops.rot90({M}, k=2)",
    f"ops.rot90({M}, k=-1)", f"ops.diff({F})", f"ops.diff({M}, n=2, axis=0)", f"ops.diff({I})",
    f"ops.append({F}, {F})", f"ops.append({M}, {M}, axis=0)", f"ops.append({M}, {F})",
    f"ops.average({M})", f"ops.average({M}, axis=1)",
    f"ops.average({M}, axis=0, weights=np.array([1.0, 2.0, 3.0], 'float32'))",
    f"ops.average({I})", f"ops.ptp({M})", f"ops.ptp({M}, axis=1)", f"ops.ptp({I})",
    f"ops.trapezoid({F})", f"ops.trapezoid({M}, axis=0)", f"ops.trapezoid({F}, dx=0.5)",
    f"ops.vander({F}[:3])", f"ops.vander({F}[:3], N=2)", "ops.tri(3)", "ops.tri(3, 4, k=1)",
    "ops.tri(3, dtype='int32')", f"ops.diagflat({F}[:3])", f"ops.diagflat({M}[:2, :2], k=1)",
    f"ops.kron({M}[:2, :2], {M}[:2, :2])", f"ops.inner({F}, {F})", f"ops.inner({M}, {M})",
    f"ops.vdot({F}, {F})", f"ops.cross({F}[:3], {F}[3:])", f"ops.dstack([{M}, {M}])",
    f"ops.hsplit({M}, 2)", f"ops.vsplit({M}, 3)", f"ops.array_split({F}, 4)",
    "ops.empty((2, 3)).shape", f"ops.empty_like({M}).shape", "ops.array([1, 2])",
    "ops.array([1.5, 2.0])", "ops.array([1, 2], dtype='float32')", f"ops.is_tensor({F})",
    f"ops.is_tensor(ops.array({F}))", f"ops.dtype(ops.array({F}))", f"ops.dtype(ops.array({I}))",
    "ops.saturate_cast(np.array([-300, 5, 300], 'int32'), 'uint8')",
    f"ops.saturate_cast({F} * 100.0, 'int8')",
    f"ops.select([{I} > 2, {I} < 0], [{I}, -{I}], 7)",
    f"ops.take_along_axis({M}, ops.argsort(-{M}, axis=1), axis=1)",
    f"ops.take_along_axis({F}, np.array([5, 0, 2]), axis=0)",
    "ops.unravel_index(np.array([1, 5, 7], 'int32'), (3, 4))",
    f"ops.digitize({F}, [0.0, 1.0, 2.0])", f"ops.isin({I}, [2, 7])",
    "ops.logspace(0.0, 2.0, 5)", "ops.geomspace(1.0, 100.0, 3)",
    "ops.bartlett(5)", "ops.blackman(5)", "ops.hamming(5)", "ops.hanning(5)",
    # activations
    f"ops.celu({F})", f"ops.celu({F}, alpha=2.0)", f"ops.glu({M})", f"ops.hard_shrink({F})",
    f"ops.hard_shrink({F}, threshold=1.0)", f"ops.hard_tanh({F})", f"ops.soft_shrink({F})",
    f"ops.sparse_plus({F})", f"ops.squareplus({F})", f"ops.squareplus({F}, b=2.0)",
    f"ops.tanh_shrink({F})", f"ops.threshold({F}, 0.5, 9.0)", f"ops.sparse_sigmoid({F})",
    # NaN-aware reductions
    f"ops.nansum({N})", f"ops.nanmean({N}[::3])", f"ops.nanmax({N})", f"ops.nanmin({N})",
    f"ops.nanprod({N}[3:])", "ops.nanprod(np.array([np.nan, 2.0, 3.0], 'float32'))",
    "ops.nanvar(np.array([np.nan, 2.0, 3.0, 7.0], 'float32'))",
    "ops.nanstd(np.array([np.nan, 2.0, 3.0, 7.0], 'float32'))",
    "ops.nansum(np.array([[np.nan, 1.0], [2.0, np.nan]], 'float32'), axis=0)",
    f"ops.nansum({I})", "ops.nanmean(np.array([[np.nan, 1.0], [2.0, 4.0]], 'float32'), axis=1)",
    # bitwise
    f"ops.bitwise_and({I}, 6)", f"ops.bitwise_or({I}, 6)", f"ops.bitwise_xor({I}, 6)",
    f"ops.bitwise_not({I})", f"ops.bitwise_invert({I})", f"ops.bitwise_left_shift({I}, 2)",
    f"ops.bitwise_right_shift({I}, 1)", f"ops.left_shift({I}, 1)", f"ops.right_shift({I}, 1)",
    # linear algebra
    f"ops.cholesky({S})", f"ops.det({S})", f"ops.inv({S})", f"ops.solve({S}, {B})",
    f"ops.solve_triangular(ops.cholesky({S}), {B}, lower=True)", f"ops.slogdet({S})",
    f"ops.logdet({S})", f"ops.eigh({S})[0]", f"ops.lstsq({B}, {S}[:, :2])",
    f"ops.pinv({B})", f"ops.matrix_rank({M})", f"ops.matrix_rank({S})",
    # segments, sorting, scatter and slices
    f"ops.segment_sum({F}, np.array([0, 0, 1, 1, 2, 2], 'int32'))",
    f"ops.segment_max({F}, np.array([0, 0, 1, 1, 2, 2], 'int32'))",
    f"ops.segment_sum({F}, np.array([0, 0, 1, 1, 2, 2], 'int32'), num_segments=4)",
    "ops.searchsorted(np.array([1.0, 2.0, 3.0], 'float32'), np.array([2.5, 0.0, 2.0], 'float32'))",
    "ops.searchsorted(np.array([1.0, 2.0, 3.0], 'float32'), np.array([2.0], 'float32'), side='right')",
    "ops.bincount(np.array([0, 1, 1, 3], 'int32'))",
    "ops.bincount(np.array([0, 1, 1, 3], 'int32'), weights=np.array([0.5, 1.0, 2.0, 4.0], 'float32'), minlength=6)",
    f"ops.slice({M}, (1, 0), (2, 3))",
    f"ops.slice_update({M}, (1, 1), np.ones((1, 2), 'float32'))",
    "ops.scatter(np.array([[0], [2]], 'int32'), np.array([5.0, 6.0], 'float32'), (4,))",
    "ops.scatter(np.array([[0], [0]], 'int32'), np.array([5.0, 6.0], 'float32'), (2,))",
    "ops.scatter_update(np.zeros((3,), 'float32'), np.array([[0], [2]], 'int32'), np.array([1.0, 2.0], 'float32'))",
    f"ops.median({M})", f"ops.median({M}, axis=1)", f"ops.median({F}, keepdims=True)",
    f"ops.quantile({M}, 0.5)", f"ops.quantile({F}, np.array([0.25, 0.9], 'float32'))",
    f"ops.quantile({M}, 0.3, axis=0)", f"ops.quantile({F}, 0.3, method='lower')",
    f"ops.quantile({F}, 0.3, method='higher')", f"ops.quantile({F}, 0.3, method='nearest')",
    f"ops.quantile({F}, 0.3, method='midpoint')", f"ops.percentile({F}, 25.0)",
    # control flow
    "ops.cond(True, lambda: 1.0, lambda: 2.0)",
    "ops.fori_loop(0, 5, lambda i, x: x + i, 0.0)",
    "ops.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s * 2.0), (0, 1.0))",
    "ops.scan(lambda c, x: (c + x, c * x), 0.0, np.array([1.0, 2.0, 3.0], 'float32'))",
    "ops.scan(lambda c, x: (c + x, c * x), 0.0, np.array([1.0, 2.0, 3.0], 'float32'), reverse=True)",
    "ops.map(lambda x: x * 2.0, np.array([1.0, 2.0], 'float32'))",
    "ops.vectorized_map(lambda x: ops.sum(x), np.ones((3, 2), 'float32'))",
]


def run(ops, np, cases=CASES):
    return more.run(ops, np, cases)


def main():
    more.write(OUT, CASES)


if __name__ == "__main__":
    main()
