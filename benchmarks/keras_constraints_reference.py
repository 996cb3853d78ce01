"""Keras 3.15 reference results of weight constraints (tests/test_keras_constraints.py):
each constraint on fixed weights, and a small model with constrained layers after three SGD
steps of fit (so the optimizer applies the constraints after each update).

    python -m benchmarks.keras_constraints_reference OUT.npz     (in the bench venv)
"""
import sys

import keras
import numpy as np

rng = np.random.default_rng(5)
out = {}
w = rng.normal(size=(3, 3, 2, 4)).astype("float32") * 2
w[..., 0] = 0.0  # a zero filter: the epsilon keeps it finite
out["w"] = w
C = keras.constraints
cases = {"maxnorm": C.MaxNorm(1.5), "maxnorm012": C.MaxNorm(2.0, axis=[0, 1, 2]),
         "nonneg": C.NonNeg(), "unitnorm": C.UnitNorm(), "unitnorm3": C.UnitNorm(axis=3),
         "minmax": C.MinMaxNorm(0.5, 1.0, rate=0.5, axis=[0, 1, 2]), "minmax_default": C.MinMaxNorm()}
for k, c in cases.items():
    out["c/" + k] = np.asarray(c(w))
x = rng.normal(size=(16, 6, 6, 2)).astype("float32")
y = rng.normal(size=(16, 3)).astype("float32")
model = keras.Sequential([
    keras.Input((6, 6, 2)),
    keras.layers.Conv2D(4, 3, kernel_constraint=C.UnitNorm(axis=[0, 1, 2]), bias_constraint="non_neg"),
    keras.layers.Flatten(),
    keras.layers.Dense(5, kernel_constraint=C.MaxNorm(0.7), bias_constraint=C.NonNeg()),
    keras.layers.Dense(3, kernel_constraint=C.MinMaxNorm(0.2, 0.9, rate=0.7)),
])
init = [rng.normal(size=v.shape).astype("float32") for v in model.get_weights()]
model.set_weights(init)
for i, a in enumerate(init):
    out[f"init/{i}"] = a
model.compile(optimizer=keras.optimizers.SGD(0.3), loss="mse")
model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
for i, a in enumerate(model.get_weights()):
    out[f"fit/{i}"] = a
out["x"], out["y"] = x, y
np.savez(sys.argv[1], **out)
