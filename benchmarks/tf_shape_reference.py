"""TensorFlow's ``TensorShape`` API (results, their types and errors) for
tests/test_tensor_shape.py. Each case is an expression over ``tf``, ``S`` (``tf.TensorShape``),
``x`` (a float32 zeros tensor of shape (2, 3)) and ``v`` (a Variable of shape (2,)); the
reference is the type name and ``repr`` of its value, or the type of the error it raises.
Run in the bench environment:

    /work/venv-bench/bin/python -m benchmarks.tf_shape_reference
"""
import json
import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "tf_shape_reference.json"
CASES = [
    "x.shape", "v.shape", "x.get_shape()", "str(x.shape)", "str(S([3]))", "str(S([]))",
    "str(S([None, 3]))", "repr(S([None, 3]))", "repr(S(None))", "str(S(None))",
    "x.shape[0]", "x.shape[-1]", "x.shape[1:]", "x.shape[:0]", "x.shape[5]",
    "S([None, 3])[0]", "S(None)[0]", "S(None)[1:]", "S(None)[:2]", "S(None)[-1:]",
    "S(None)[::2]", "S([1, 2, 3])[::2]", "S([1, 2])[1.0]",
    "x.shape == (2, 3)", "x.shape == [2, 3]", "x.shape != [2, 3]", "x.shape != (2, 4)",
    "S([None, 3]) == S([None, 3])", "S([None, 3]) == [None, 3]", "S(None) == S(None)",
    "S(None) == S([1])", "S([1]) == S(None)", "x.shape == 'ab'", "x.shape == 3",
    "S([3]) == 3", "x.shape == None", "S([1, 2]) == S([1, 2, 3])",
    "bool(S(None))", "len(x.shape)", "len(S([]))", "len(S(None))", "list(S(None))",
    "list(x.shape)", "hash(x.shape) == hash((2, 3))", "2 in S([1, 2])",
    "list(reversed(S([1, 2])))", "tuple(S([None, 1]))",
    "x.shape.dims", "S([None, 2]).dims", "S(None).dims", "x.shape.dims[1].value",
    "x.shape.rank", "x.shape.ndims", "S(None).rank", "S([]).rank",
    "x.shape.as_list()", "S([None, 1]).as_list()", "S(None).as_list()",
    "x.shape.num_elements()", "S([]).num_elements()", "S([None, 3]).num_elements()",
    "S(None).num_elements()", "S([0, 3]).num_elements()",
    "S([None, 3]).is_fully_defined()", "x.shape.is_fully_defined()", "S(None).is_fully_defined()",
    "S([None, 2]).assert_is_fully_defined()", "x.shape.assert_is_fully_defined()",
    "x.shape.concatenate([4])", "x.shape.concatenate(None)", "S(None).concatenate([1])",
    "x.shape.concatenate(S([]))", "x.shape + [4]", "x.shape + (4,)", "(4,) + x.shape",
    "[4] + x.shape", "x.shape + S(None)", "x.shape + [-1]",
    "S([None, 3]).merge_with([2, None])", "S([2, 3]).merge_with([3, 3])",
    "S([2, 3]).merge_with([3])", "S(None).merge_with([1])", "S([1]).merge_with(None)",
    "S([None, 3]).is_compatible_with([2, 3])", "S([None, 3]).is_compatible_with([2])",
    "S([None, 3]).is_compatible_with(S(None))", "S([1]).is_compatible_with(3)",
    "S([None, 3]).assert_is_compatible_with([2, 4])",
    "S([None, 3]).assert_is_compatible_with([2, 3])",
    "S(None).with_rank(2)", "S([1, 2]).with_rank(3)", "S([1, 2]).with_rank(2)",
    "S([1, 2]).with_rank_at_least(3)", "S([1, 2]).with_rank_at_least(1)",
    "S([1, 2]).with_rank_at_most(1)", "S([1, 2]).with_rank_at_most(2)",
    "S(None).with_rank_at_least(3)",
    "S([1, 2]).assert_has_rank(3)", "S([1, 2]).assert_has_rank(2)",
    "S([1, 2]).assert_same_rank(S([3]))", "S([1, 2]).assert_same_rank(S(None))",
    "S([1, 2]).most_specific_compatible_shape(S([1, 3]))",
    "S([1, 2]).most_specific_compatible_shape(S([1]))",
    "S([1, 2]).is_subtype_of(S([None, 2]))", "S([None, 2]).is_subtype_of(S([1, 2]))",
    "S([1, 2]).is_subtype_of(S(None))",
    "S([-1, 2])", "S([1.5, 2])", "S(['a'])", "S(3)", "S(S([1, 2]))", "S((1, 2))", "S([])",
    "S(np.int64(3))", "S([np.int64(3)])", "type(S([np.int64(3)])[0])", "S(1.5)",
    "S([1, 2]) < (1, 3)", "S([1, 2]) * 2", "2 * S([1, 2])",
    "tf.TensorSpec([None, 3]).shape",
    "pickle.loads(pickle.dumps(S([None, 3])))", "pickle.loads(pickle.dumps(S(None)))",
    "pickle.loads(pickle.dumps(x.shape))", "copy.deepcopy(S([None, 3]))",
    "np.zeros(x.shape).shape", "tf.reshape(x, x.shape[:1] + [3]).shape",
    "tf.zeros(x.shape).shape", "tf.ones(x.shape[1:]).shape",
    "tf.TensorShape(x.shape).as_list()",
]


def run(tf, np, extra=None):
    """``{case: {"type": name, "repr": text} | {"error": name}}`` for every case."""
    import copy
    import pickle

    env = {"tf": tf, "np": np, "S": tf.TensorShape, "x": tf.zeros((2, 3)),
           "v": tf.Variable([1.0, 2.0]), "pickle": pickle, "copy": copy}
    out = {}
    for case in CASES + list(extra or ()):
        try:
            r = eval(case, dict(env))  # noqa: S307 - the cases above, nothing read from outside
        except Exception as e:  # noqa: BLE001 - the error type is the reference
            out[case] = {"error": type(e).__name__}
        else:
            out[case] = {"type": type(r).__name__, "repr": repr(r)}
    return out


def main():
    import numpy as np
    import tensorflow as tf

    OUT.write_text(json.dumps({"tensorflow_version": tf.__version__, "cases": run(tf, np)},
                              indent=1) + "\n")
    print(f"wrote {OUT} (TensorFlow {tf.__version__})")


if __name__ == "__main__":
    main()
