"""Keras 3.15 reference results of keras.utils's data helpers (tests/test_keras_dataset_utils.py):
timeseries_dataset_from_array windows, pad_sequences, split_dataset sizes and their errors.

    python -m benchmarks.keras_dataset_utils_reference OUT.json     (in the bench venv)
"""
import json
import sys

import keras
import numpy as np

out = {"windows": [], "pad": [], "split": [], "errors": []}
data = np.arange(100 * 2).reshape(100, 2)
targets = np.arange(100) * 10
window_cases = [
    dict(sequence_length=10, sequence_stride=3, sampling_rate=2, batch_size=5),
    dict(sequence_length=4, batch_size=None),
    dict(sequence_length=7, sequence_stride=5, start_index=11, end_index=73, batch_size=4),
    dict(sequence_length=3, sampling_rate=5, sequence_stride=9, batch_size=128),
    dict(sequence_length=6, shuffle=True, seed=3, batch_size=1000),
]
for with_targets in (False, True):
    for kw in window_cases:
        ds = keras.utils.timeseries_dataset_from_array(
            data, targets if with_targets else None, **kw)
        batches = []
        for b in ds:
            if with_targets:
                batches.append([np.asarray(b[0]).tolist(), np.asarray(b[1]).tolist()])
            else:
                batches.append(np.asarray(b).tolist())
        if kw.get("shuffle"):  # TF's shuffle stream is its own: compare the set of windows
            batches = sorted(map(json.dumps, batches[0] if not with_targets else
                                 [list(p) for p in zip(*batches[0])]))
        out["windows"].append({"kw": kw, "targets": with_targets, "out": batches})
seqs = [[1, 2, 3], [4, 5], [], [6, 7, 8, 9, 10]]
for kw in [{}, {"maxlen": 3}, {"maxlen": 3, "padding": "post"}, {"maxlen": 2, "truncating": "post"},
           {"maxlen": 6, "value": -1}, {"dtype": "float32", "value": 0.5, "maxlen": 4},
           {"maxlen": 1, "truncating": "post", "padding": "post"}]:
    out["pad"].append({"kw": kw, "out": keras.utils.pad_sequences(seqs, **kw).tolist(),
                       "dtype": str(keras.utils.pad_sequences(seqs, **kw).dtype)})
steps = [[[1, 0], [2, 0]], [[3, 1]]]
out["pad"].append({"kw": {"maxlen": 3}, "steps": True,
                   "out": keras.utils.pad_sequences(steps, maxlen=3).tolist(), "dtype": "int32"})
x = np.arange(10)
for kw in [{"left_size": 0.8}, {"right_size": 3}, {"left_size": 4, "right_size": 5},
           {"left_size": 0.25, "right_size": 0.5}, {"left_size": 0.33}]:
    left, right = keras.utils.split_dataset(x, **kw)
    out["split"].append({"kw": kw, "left": [int(v) for v in left], "right": [int(v) for v in right]})
for kw in [{"left_size": 0}, {"left_size": 10}, {"left_size": 1.5}, {"left_size": 0.7, "right_size": 0.6},
           {"left_size": 8, "right_size": 5}, {"left_size": "a"}, {}]:
    try:
        keras.utils.split_dataset(x, **kw)
    except Exception as e:  # noqa: BLE001 (the reference is the error itself)
        out["errors"].append({"fn": "split", "kw": kw, "type": type(e).__name__, "msg": str(e)})
for kw in [{"sampling_rate": 0}, {"sequence_stride": 100}, {"start_index": -1}, {"start_index": 200},
           {"end_index": 100}, {"start_index": 5, "end_index": 3}]:
    try:
        keras.utils.timeseries_dataset_from_array(data, None, 4, **kw)
    except Exception as e:  # noqa: BLE001
        out["errors"].append({"fn": "timeseries", "kw": kw, "type": type(e).__name__, "msg": str(e)})
for kw in [{"padding": "mid", "maxlen": 2}, {"truncating": "mid", "maxlen": 2}, {"value": "x"}]:
    try:
        keras.utils.pad_sequences(seqs, **kw)
    except Exception as e:  # noqa: BLE001
        out["errors"].append({"fn": "pad", "kw": kw, "type": type(e).__name__, "msg": str(e)})
with open(sys.argv[1], "w") as f:
    json.dump(out, f)
