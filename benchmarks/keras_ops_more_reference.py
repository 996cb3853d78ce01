"""Keras 3's ``keras.ops`` results (values and dtypes) for the functions of
tapegrad/keras/ops/more_numeric.py, for tests/test_keras_ops_more.py. Each case is an
expression over ``ops`` and ``np``; its result (an array, or a tuple/list of them) is stored.
Run in the bench environment:

    KERAS_BACKEND=tensorflow /work/venv-bench/bin/python -m benchmarks.keras_ops_more_reference
"""
import json
import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

OUT = (pathlib.Path(__file__).resolve().parent.parent / "tests" / "data"
       / "keras_ops_more_reference.json")
F = "np.array([-2.5, -0.5, 0.0, 0.5, 1.5, 3.0], 'float32')"
U = "np.array([0.1, 0.4, 0.9], 'float32')"
M = "(np.arange(12, dtype='float32').reshape(3, 4) - 5.0)"
I = "np.array([3, -1, 2, 0, 7], 'int32')"
N = "np.array([np.nan, np.inf, -np.inf, 1.0], 'float32')"
CASES = [
    f"ops.arccos({U})", f"ops.arcsin({U})", f"ops.arctan({F})", f"ops.arccosh({F} + 4.0)",
    f"ops.arcsinh({F})", f"ops.arctanh({U})", f"ops.cosh({F})", f"ops.sinh({F})",
    f"ops.log2({F} + 3.0)", f"ops.log10({F} + 3.0)", "ops.arccos(np.array([0, 1], 'int32'))",
    f"ops.floor_divide({F}, 0.75)", f"ops.floor_divide({I}, 2)", f"ops.mod({F}, 0.75)",
    f"ops.mod({I}, 3)", f"ops.mod({I}, -3)", f"ops.logical_xor({I}, {F}[:5])",
    f"ops.arctan2({F}, {F}[::-1])", f"ops.arctan2({I}, 2)", f"ops.logaddexp({F}, {F}[::-1])",
    f"ops.logaddexp({N}, {N})", f"ops.divide_no_nan({F}, {F}[::-1])", f"ops.divide_no_nan({I}, {I})",
    f"ops.trunc({F})", f"ops.trunc({I})", f"ops.isnan({N})", f"ops.isinf({N})", f"ops.isfinite({N})",
    f"ops.isnan({I})", f"ops.isfinite({I})", f"ops.nan_to_num({N})",
    f"ops.nan_to_num({N}, nan=1.0, posinf=2.0, neginf=-2.0)",
    f"ops.isclose({F}, {F} + 1e-6)", f"ops.isclose({N}[::3], {N}[::3])",
    f"ops.isclose({N}[::3], {N}[::3], equal_nan=True)",
    f"ops.allclose({F}, {F} + 1e-3)", f"ops.logsumexp({M})", f"ops.logsumexp({M}, axis=1)",
    f"ops.logsumexp({F}, keepdims=True)", f"ops.cumprod({M}, axis=1)", f"ops.cumprod({I})",
    "ops.cumprod(np.array([True, False]))", f"ops.count_nonzero({F})", f"ops.count_nonzero({M}, axis=0)",
    f"ops.sort({M}[:, ::-1])", f"ops.sort({I})", f"ops.sort({M}, axis=0)", f"ops.sort({M}, axis=None)",
    f"ops.argsort({I})", "ops.argsort(np.array([1, 0, 1, 0], 'int32'))", f"ops.argsort({M}, axis=0)",
    "ops.argsort(np.array([True, False, True]))", f"ops.top_k({F}, 3)", f"ops.top_k({M}, 2)",
    f"ops.ravel({M})", "ops.moveaxis(np.zeros((2, 3, 4)), 0, -1).shape",
    "ops.moveaxis(np.arange(24).reshape(2, 3, 4), [0, 1], [-1, 0])",
    "ops.swapaxes(np.arange(24).reshape(2, 3, 4), 0, 2)", f"ops.roll({F}, 2)",
    f"ops.roll({M}, -1, axis=1)", f"ops.roll({M}, 5)", f"ops.tril({M})", f"ops.tril({M}, k=1)",
    f"ops.triu({M}, k=-1)", "ops.triu(np.ones((2, 3, 3), 'int32'))", f"ops.diagonal({M})",
    f"ops.diagonal({M}, offset=1)", f"ops.diagonal({M}, offset=-1)",
    "ops.diagonal(np.arange(24).reshape(2, 3, 4), axis1=1, axis2=2)", f"ops.diag({M})",
    f"ops.diag({M}, k=2)", f"ops.diag({F}[:3])", f"ops.diag({F}[:3], k=1)", f"ops.diag({F}[:3], k=-2)",
    f"ops.trace({M})", f"ops.trace({M}, offset=1)", "ops.trace(np.eye(3, dtype='int32'))",
    f"ops.outer({F}[:3], {I}[:2])", f"ops.tensordot({M}, {M}.T, axes=1)",
    f"ops.tensordot({M}, {M}, axes=2)", f"ops.pad({M}, ((1, 1), (1, 1)))", f"ops.pad({M}, ((0, 1), (2, 0)))",
    f"ops.pad({M}, ((1, 2), (1, 2)), constant_values=7.0)",
    f"ops.pad({M}, ((1, 1), (1, 1)), mode='reflect')",
    f"ops.pad({M}, ((1, 1), (2, 1)), mode='symmetric')", f"ops.unstack({M})", f"ops.unstack({M}, axis=1)",
    f"ops.hstack([{F}, {F}])", f"ops.hstack([{M}, {M}])",
    f"ops.vstack([{M}, {M}])", f"ops.hstack([{I}, {F}[:5]])", f"ops.meshgrid({F}[:2], {F}[:3])",
    f"ops.meshgrid({I}[:2], {I}[:3], indexing='ij')", f"ops.full_like({M}, 3)",
    f"ops.full_like({I}, 2.5, dtype='float32')", f"ops.copy({M})", f"ops.hard_sigmoid({F})",
    f"ops.hard_silu({F})", f"ops.hard_swish({F})",
]


def encode(r, np):
    if isinstance(r, (tuple, list)) and not (r and isinstance(r[0], int)):
        return {"items": [encode(v, np) for v in r]}
    a = np.asarray(r)
    return {"dtype": a.dtype.name, "shape": list(a.shape),
            "values": np.where(np.isnan(a), None, a).tolist() if a.dtype.kind == "f"
            else a.tolist()}


def run(ops, np, cases=None):
    """``{case: its encoded result}`` for ``cases`` (this module's by default)."""
    out = {}
    for case in CASES if cases is None else cases:
        try:
            out[case] = encode(eval(case, {"ops": ops, "np": np}), np)  # noqa: S307
        except Exception as e:  # noqa: BLE001 - the error type is the reference
            out[case] = {"error": type(e).__name__}
    return out


def write(out, cases=None):
    """Run ``cases`` with Keras (its TensorFlow backend) and store them in ``out``."""
    import keras
    import numpy as np

    out.write_text(json.dumps({"keras_version": keras.__version__,
                               "cases": run(keras.ops, np, cases)}) + "\n")
    print(f"wrote {out} (Keras {keras.__version__})")


def main():
    write(OUT)


if __name__ == "__main__":
    main()
