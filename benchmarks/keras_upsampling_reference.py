"""Keras 3.15 reference values of UpSampling2D(interpolation='bilinear')
(tests/test_keras_upsampling.py).

    python -m benchmarks.keras_upsampling_reference OUT.npz     (in the bench venv)
"""
import sys

import keras
import numpy as np

x = np.random.default_rng(0).normal(size=(2, 3, 5, 4)).astype("float32")
np.savez(sys.argv[1], x=x,
         last=np.asarray(keras.layers.UpSampling2D((2, 3), interpolation="bilinear")(x)),
         first=np.asarray(keras.layers.UpSampling2D(2, data_format="channels_first",
                                                    interpolation="bilinear")(x)))
