"""Writes tests/data/keras_files/old_optimizer_order_*.keras with tapegrad as it was before
session 9, when an optimizer's ``variables`` held its slots kind by kind (every momentum,
then every velocity), for tests/test_keras_optimizer_order.py: files written then must
load with each slot on its own variable. Run from a checkout of that version:

    PYTHONPATH=/path/to/old/checkout python tests/data/make_old_optimizer_files.py OUTDIR
"""
import sys

import numpy as np

import tapegrad as tf
from tapegrad import keras


def main(out):
    rng = np.random.default_rng(20261209)
    x = rng.normal(size=(16, 3)).astype("float32")
    y = rng.normal(size=(16, 3)).astype("float32")
    for name, opt in (("adam", keras.optimizers.Adam(0.01, amsgrad=True)),
                      ("rmsprop", keras.optimizers.RMSprop(0.01, momentum=0.5, centered=True)),
                      ("nadam", keras.optimizers.Nadam(0.01))):
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(3, name="first"),
                                  keras.layers.Dense(3, name="second")])
        model.compile(optimizer=opt, loss="mse")
        model.fit(x, y, epochs=3, batch_size=4, verbose=0)
        model.save(f"{out}/old_optimizer_order_{name}.keras")
        np.savez(f"{out}/old_optimizer_order_{name}.npz", x=x, y=y,
                 **{f"opt/{k}": v.numpy() for k, v in enumerate(opt.variables)},
                 **{f"opt_name/{k}": np.array(v.name) for k, v in enumerate(opt.variables)},
                 after=model.predict(x, verbose=0))
        # one more epoch: the state that the loaded model must reach from the file
        model.fit(x, y, epochs=1, batch_size=4, shuffle=False, verbose=0)
        np.save(f"{out}/old_optimizer_order_{name}_next.npy",
                np.concatenate([v.numpy().ravel() for v in model.trainable_variables]))
    print(f"wrote {out} with tapegrad {tf.__version__}")


if __name__ == "__main__":
    main(sys.argv[1])
