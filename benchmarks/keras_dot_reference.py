"""Keras 3.15 reference values of Dot and UnitNormalization (tests/test_keras_dot_unit.py).

    python -m benchmarks.keras_dot_reference OUT.npz     (in the bench venv)
"""
import sys

import keras
import numpy as np

rng = np.random.default_rng(11)
out = {}
cases = {"a": ((2, 3, 5), (2, 10, 3), (1, 2), False), "b": ((4, 6), (4, 6), 1, False),
         "c": ((4, 6), (4, 6), -1, True), "d": ((2, 3, 4, 5), (2, 5, 6), (3, 1), False),
         "e": ((2, 7, 3), (2, 3), (2, 1), True), "f": ((3, 4), (3, 4, 2, 5), (1, 1), False)}
for k, (s1, s2, axes, norm) in cases.items():
    x, y = rng.normal(size=s1).astype("float32"), rng.normal(size=s2).astype("float32")
    out[k + "/x"], out[k + "/y"] = x, y
    out[k + "/out"] = np.asarray(keras.layers.Dot(axes=axes, normalize=norm)([x, y]))
z = rng.normal(size=(3, 4, 5)).astype("float32")
z[0, 0] = 0
out["unit/x"] = z
out["unit/last"] = np.asarray(keras.layers.UnitNormalization()(z))
out["unit/12"] = np.asarray(keras.layers.UnitNormalization(axis=[1, 2])(z))
np.savez(sys.argv[1], **out)
