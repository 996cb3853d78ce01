"""Reference streams from TensorFlow 2.21 for ``tf.random.stateless_*``,
``tf.random.experimental.stateless_split`` / ``stateless_fold_in`` and
``tf.random.Generator``, for tests/test_stateless_random.py.

Run in the bench environment (it needs tensorflow; the tests never import it):

    /work/venv-bench/bin/python -m benchmarks.tf_random_reference

The manifest is JSON inside the same ``.npz`` (read with ``allow_pickle=False``).
"""
import json
import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

OUT = (pathlib.Path(__file__).resolve().parent.parent / "tests" / "data"
       / "tf_random_reference.npz")
SEEDS = {"small": [1, 2], "zero": [0, 0], "negative": [-1, 123456789],
         "extremes": [2**31 - 1, -2**31]}
SEEDS64 = {"wide": [2**62 + 5, -2**63]}
SHAPES = [[7], [3, 5], [1001]]
FLOATS = ["float16", "float32", "float64"]
INT_RANGES = [("int32", -5, 17), ("int64", -3, 2**40), ("int32", -2**31, 2**31 - 1),
              ("int64", -2**63, 2**63 - 1)]


def main():
    import tensorflow as tf
    arrays, manifest = {}, {"stateless": [], "generator": []}

    def add(case, value, **info):
        arrays[case] = np.asarray(value)
        manifest["stateless"].append(dict(info, case=case))

    seeds = [(k, tf.constant(v, tf.int32)) for k, v in SEEDS.items()]
    seeds += [(k, tf.constant(v, tf.int64)) for k, v in SEEDS64.items()]
    for sname, seed in seeds:
        for shape in SHAPES:
            tag = f"{sname}/{'x'.join(map(str, shape))}"
            for dt in FLOATS:
                add(f"uniform/{tag}/{dt}", tf.random.stateless_uniform(shape, seed, dtype=dt),
                    fn="uniform", seed=sname, shape=shape, dtype=dt)
                add(f"uniform_range/{tag}/{dt}", tf.random.stateless_uniform(
                    shape, seed, minval=-2.5, maxval=4.0, dtype=dt), fn="uniform", seed=sname,
                    shape=shape, dtype=dt, minval=-2.5, maxval=4.0)
                add(f"normal/{tag}/{dt}", tf.random.stateless_normal(
                    shape, seed, mean=1.5, stddev=3.0, dtype=dt), fn="normal", seed=sname,
                    shape=shape, dtype=dt, mean=1.5, stddev=3.0)
                add(f"truncated/{tag}/{dt}", tf.random.stateless_truncated_normal(
                    shape, seed, dtype=dt), fn="truncated_normal", seed=sname, shape=shape,
                    dtype=dt)
            for dt in ["int32", "int64", "uint32", "uint64"]:
                add(f"full/{tag}/{dt}", tf.random.stateless_uniform(
                    shape, seed, minval=None, maxval=None, dtype=dt), fn="uniform",
                    seed=sname, shape=shape, dtype=dt, minval=None, maxval=None)
            for i, (dt, lo, hi) in enumerate(INT_RANGES):
                add(f"int{i}/{tag}/{dt}", tf.random.stateless_uniform(
                    shape, seed, minval=lo, maxval=hi, dtype=dt), fn="uniform", seed=sname,
                    shape=shape, dtype=dt, minval=lo, maxval=hi)
        add(f"split/{sname}", tf.random.experimental.stateless_split(seed, num=3),
            fn="split", seed=sname, num=3)
        add(f"fold/{sname}", tf.random.experimental.stateless_fold_in(seed, 7),
            fn="fold_in", seed=sname, data=7)
    for seed in [1, 12345678901, -1, [1, 2], 2**70 + 3]:
        g = tf.random.Generator.from_seed(seed)
        name = f"gen/{seed}"
        steps = []
        for i, (method, kwargs) in enumerate([
                ("uniform", {"shape": [3]}), ("normal", {"shape": [2, 3]}),
                ("uniform", {"shape": [5], "minval": 0, "maxval": 10, "dtype": "int64"}),
                ("uniform", {"shape": [4], "dtype": "float64", "minval": 1.0, "maxval": 2.0}),
                ("truncated_normal", {"shape": [9]}),
                ("uniform_full_int", {"shape": [3], "dtype": "int32"}),
                ("uniform_full_int", {"shape": [2]}),
                ("normal", {"shape": [], "dtype": "float64"}),
                ("make_seeds", {"count": 2}), ("skip", {"delta": 10}),
                ("uniform", {"shape": [0]})]):
            out = getattr(g, method)(**kwargs)
            if out is not None:
                arrays[f"{name}/{i}/out"] = np.asarray(out)
            arrays[f"{name}/{i}/state"] = g.state.numpy()
            steps.append({"method": method, "kwargs": kwargs, "out": out is not None})
        children = g.split(2)
        arrays[f"{name}/split"] = np.stack([c.state.numpy() for c in children])
        arrays[f"{name}/split_state"] = g.state.numpy()
        arrays[f"{name}/child_normal"] = children[1].normal([4]).numpy()
        manifest["generator"].append({"name": name, "seed": seed, "steps": steps})
    g = tf.random.Generator.from_state([-1, -1, 5], alg="philox")
    arrays["gen/wrap/out"] = g.uniform([3]).numpy()
    arrays["gen/wrap/state"] = g.state.numpy()
    arrays["manifest"] = np.asarray(json.dumps(manifest))
    np.savez_compressed(OUT, **arrays)
    print("wrote", OUT, len(arrays))


if __name__ == "__main__":
    main()
