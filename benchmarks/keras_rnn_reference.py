"""Reference data of tests/test_keras_rnn_cells.py, made with the peers in the bench venv.

    python -m benchmarks.keras_rnn_reference cells OUT.npz      Keras 3.15's cell values
    python -m benchmarks.keras_rnn_reference keras-file DIR      a .keras file Keras wrote
    PYTHONPATH=<tapegrad at 1c8dcc1> python -m benchmarks.keras_rnn_reference old-file DIR
                                     a .keras file of tapegrad before cells (session 8)
"""
import sys

import numpy as np


def cases(L):
    """The layers compared, made with ``L``: Keras's ``keras.layers`` or tapegrad's."""
    return {
        "lstm_impl1": lambda: L.LSTM(3, implementation=1, return_sequences=True),
        "gru_impl1": lambda: L.GRU(3, implementation=1, return_sequences=True),
        "gru_impl1_classic": lambda: L.GRU(3, implementation=1, reset_after=False,
                                           return_sequences=True),
        "stacked": lambda: L.RNN([L.LSTMCell(3), L.GRUCell(2), L.SimpleRNNCell(2)],
                                 return_sequences=True, return_state=True),
        "rnn_zero_output": lambda: L.RNN(L.GRUCell(3), return_sequences=True,
                                         zero_output_for_mask=True),
    }


def cells(path):
    import keras
    out = {}
    rng = np.random.default_rng(7)
    x = rng.normal(size=(3, 5, 4)).astype("float32")
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 0, 1, 0], [0, 1, 1, 1, 1]], bool)
    out["x"], out["mask"] = x, mask
    for name, make in cases(keras.layers).items():
        layer = make()
        layer(x)
        ws = [rng.normal(scale=0.5, size=w.shape).astype("float32") for w in layer.weights]
        layer.set_weights(ws)
        for i, w in enumerate(ws):
            out[f"{name}/w{i}"] = w
        for key, kwargs in (("out", {}), ("masked", {"mask": mask})):
            for i, t in enumerate(keras.tree.flatten(layer(x, **kwargs))):
                out[f"{name}/{key}{i}"] = np.asarray(t)
        out[f"{name}/paths"] = np.array([w.path for w in layer.weights])
    np.savez(path, **out)


def keras_file(out):
    import keras
    inp = keras.Input((5, 3))
    h = keras.layers.GRU(4, return_sequences=True)(inp)
    h = keras.layers.RNN([keras.layers.LSTMCell(3), keras.layers.SimpleRNNCell(2)])(h)
    m = keras.Model(inp, keras.layers.Dense(1)(h))
    x = np.random.default_rng(0).normal(size=(4, 5, 3)).astype("float32")
    m.save(f"{out}/keras315_recurrent.keras")
    np.savez(f"{out}/keras315_recurrent_predictions.npz", x=x, pred=m.predict(x, verbose=0))


def old_file(out):
    import tapegrad as tf
    keras = tf.keras
    keras.utils.set_random_seed(3)
    inp = keras.Input((6, 3))
    h = keras.layers.GRU(5, return_sequences=True)(inp)
    h = keras.layers.Bidirectional(keras.layers.SimpleRNN(4, return_sequences=True))(h)
    h = keras.layers.LSTM(3)(h)
    model = keras.Model(inp, keras.layers.Dense(2)(h))
    model.compile(optimizer="adam", loss="mse")
    x = np.random.default_rng(0).normal(size=(8, 6, 3)).astype("float32")
    y = np.random.default_rng(1).normal(size=(8, 2)).astype("float32")
    model.fit(x, y, epochs=2, verbose=0)
    model.save(f"{out}/recurrent_s8.keras")
    np.savez(f"{out}/recurrent_s8_predictions.npz", x=x, y=y,
             pred=model.predict(x, verbose=0))


if __name__ == "__main__":
    {"cells": cells, "keras-file": keras_file, "old-file": old_file}[sys.argv[1]](sys.argv[2])
