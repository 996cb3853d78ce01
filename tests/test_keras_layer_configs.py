"""Layers' ``get_config()`` hold every constructor argument, defaults included, with
Keras 3.15's keys and values (tests/data/keras_layer_configs.json, written by
benchmarks/keras_layer_configs.py for every layer class tapegrad has, made with the fewest
arguments it needs): ``config["activation"]`` of a default ``Dense`` is ``'linear'``, not
a KeyError. Two documented differences (README): ``dtype`` is the dtype's name where Keras
writes a ``DTypePolicy`` (Keras reads both), and Keras draws a seed for a ``RandomCrop``
made without one.
"""
import json
import pathlib

import pytest

from tapegrad import keras
from tapegrad.keras.serialization import serialize_keras_object

REF = json.loads((pathlib.Path(__file__).parent / "data" / "keras_layer_configs.json")
                 .read_text())
CASES = sorted(REF["cases"])
DRAWN_SEED = {"RandomCrop"}


def _make(cls, args):
    args = {k: _make(v[1], v[2]) if isinstance(v, list) and v and v[0] == "layer" else v
            for k, v in args.items()}
    return getattr(keras.layers, cls)(**args)


def _differences(mine, want, path=""):
    """Paths where ``mine`` (tapegrad's serialized config) differs from Keras's ``want``;
    names are not compared (counters), a DTypePolicy matches its name."""
    if isinstance(want, dict) and want.get("class_name") == "DTypePolicy":
        return [] if mine == want["config"]["name"] else [(path, mine, want)]
    if isinstance(mine, dict) and isinstance(want, dict):
        out = []
        for k in sorted(set(mine) | set(want)):
            if k == "name" or k == "build_config":
                continue
            if k not in mine or k not in want:
                out.append((f"{path}/{k}", mine.get(k, "<missing>"), want.get(k, "<missing>")))
            else:
                out += _differences(mine[k], want[k], f"{path}/{k}")
        return out
    if isinstance(mine, (list, tuple)) and isinstance(want, (list, tuple)):
        if len(mine) != len(want):
            return [(path, mine, want)]
        return [d for i, (a, b) in enumerate(zip(mine, want))
                for d in _differences(a, b, f"{path}/{i}")]
    return [] if mine == want else [(path, mine, want)]


@pytest.mark.parametrize("case", CASES)
def test_config_has_keras_keys_and_values(case):
    c = REF["cases"][case]
    layer = _make(c["class"], c["args"])
    config = json.loads(json.dumps(serialize_keras_object(layer)["config"]))
    diffs = _differences(config, c["config"])
    if case in DRAWN_SEED:
        diffs = [d for d in diffs if d[0] != "/seed"]
    assert not diffs, diffs


@pytest.mark.parametrize("case", CASES)
def test_from_config_makes_the_same_layer(case):
    c = REF["cases"][case]
    layer = _make(c["class"], c["args"])
    config = layer.get_config()
    again = type(layer).from_config(config)
    assert again.get_config() == config
    # Keras's own config (its dtype policy, its extra inert keys) is read as well
    from tapegrad.keras.serialization import deserialize_keras_object
    theirs = deserialize_keras_object({"class_name": c["class"], "module": "keras.layers",
                                       "config": c["config"], "registered_name": None})
    mine = theirs.get_config()
    assert _differences(json.loads(json.dumps(serialize_keras_object(theirs)["config"])),
                        c["config"]) == [] or case in DRAWN_SEED, mine


def test_a_default_layer_config_answers_what_keras_answers():
    config = keras.layers.Dense(3).get_config()
    assert config["activation"] == "linear" and config["kernel_regularizer"] is None
    assert config["kernel_initializer"]["class_name"] == "GlorotUniform"
    assert keras.layers.Conv2D(2, 3).get_config()["data_format"] == "channels_last"
    assert keras.layers.MultiHeadAttention(2, 4).get_config()["value_dim"] == 4
