"""Real TensorFlow/Keras programs (session 13's probe: text classifiers, a VAE's and a
WGAN-GP's training steps, attention layers, warmup schedules and metrics in custom loops,
weighted fit, BatchNormalization/Dropout modes, tf.data into fit, weight round trips,
tf.function signatures and tf.vectorized_map, segment-op message passing, a tf.linalg
physics step), run as written with ``import tapegrad as tf`` and compared with what
TensorFlow 2.21 / Keras 3.15 computed for the same fixed weights
(tests/data/real_programs_s13.json, made by benchmarks/real_programs_s13_reference.py from
the same program text).

Tolerances: the programs compute in float32 (the physics one in float64). One layer or op
differs from TensorFlow's by a few float32 ulps; a program chains a few dozen of them and
up to a dozen optimizer steps, so values are compared with rtol 2e-4 and an atol of 2e-5
times the result's largest magnitude (at least 1). The largest differences seen were
about 3e-6 against gradients of magnitude 20 (gnn_message_passing)."""
import json
import os

import numpy as np
import pytest

import tapegrad as tf

import _real_programs_s13 as programs

with open(os.path.join(os.path.dirname(__file__), "data", "real_programs_s13.json")) as _f:
    REF = json.load(_f)["results"]


def _decode(entry):
    if entry["dtype"] == "str":
        return np.array(entry["data"], dtype=str).reshape(entry["shape"])
    data = np.array(entry["data"])
    if entry["dtype"].startswith("complex"):
        data = data[..., 0] + 1j * data[..., 1] if data.size else data
    return data.astype(entry["dtype"]).reshape(entry["shape"])


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", programs.NAMES + tuple(
    pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=why))
    for n, why in programs.XFAIL.items()))
def test_program_matches_tensorflow(name):
    got = programs.run(tf, name)
    keys = sorted(k.split("/", 1)[1] for k in REF if k.startswith(name + "/"))
    assert sorted(got) == keys
    for key in keys:
        want, have = _decode(REF[f"{name}/{key}"]), np.asarray(got[key])
        assert have.shape == want.shape, key
        if want.dtype.kind in "fc":
            assert have.dtype == want.dtype, key
            scale = float(np.max(np.abs(want))) if want.size else 1.0
            np.testing.assert_allclose(have, want, rtol=2e-4, atol=2e-5 * max(scale, 1.0),
                                       err_msg=key)
        else:
            np.testing.assert_array_equal(have, want, err_msg=key)


def test_sgd_program_matches_to_the_last_digits():
    # the same model and data as text_classifier_pooling_adam, fit with SGD: its embedding's
    # IndexedSlices gradient steps as its dense sum, and the loss matches TensorFlow's closely
    ref = np.array(REF["text_classifier_pooling/loss"]["data"])
    got = programs.run(tf, "text_classifier_pooling")["loss"]
    np.testing.assert_allclose(got, ref, rtol=1e-6)


def test_vectorized_program_gives_tensorflows_vocabulary_and_ids():
    # text_classifier_gru_vectorized's TextVectorization gives TensorFlow's vocabulary and
    # ids exactly (its Adam fit steps the embedding per slice, as Keras on TensorFlow)
    got = programs.run(tf, "text_classifier_gru_vectorized")
    for key in ("vocab", "ids"):
        np.testing.assert_array_equal(np.asarray(got[key]),
                                      _decode(REF[f"text_classifier_gru_vectorized/{key}"]))
