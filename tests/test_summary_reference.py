"""tf.summary.histogram's buckets against TensorFlow 2.21 with TensorBoard 2.21
(tests/data/tf_histogram_reference.npz, from benchmarks/tf_summary_reference.py): bit for
bit, for data with NaN and infinities, one value, no values, integers and bools, and for
bucket counts down to none."""
import pathlib

import numpy as np
import pytest

import tapegrad as tf

REF = np.load(pathlib.Path(__file__).parent / "data" / "tf_histogram_reference.npz")
TAGS = sorted(k for k in REF.files if not k.endswith("/data"))


def test_the_reference_covers_the_edge_cases():
    names = {t.split("/")[0] for t in TAGS}
    assert {"with_nan", "with_inf", "both_infs", "empty", "constant", "no_buckets"} <= names
    assert len(TAGS) >= 25


@pytest.mark.parametrize("tag", TAGS)
def test_buckets_match_tensorflow(tag):
    name, b = tag.split("/")
    want = REF[tag]
    got = tf.summary.histogram_buckets(REF[f"{name}/data"], int(b[1:]))
    assert got.dtype == np.float64 and got.shape == want.shape
    # the same bits, NaN edges included
    assert np.array_equal(got, want, equal_nan=True), (got, want)


@pytest.mark.parametrize("tag", ["with_nan/b4", "with_inf/b4", "no_buckets/b0"])
def test_the_written_event_holds_those_buckets(tmp_path, tag):
    from tapegrad.summary import events
    name, b = tag.split("/")
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        assert tf.summary.histogram("h", REF[f"{name}/data"], step=3, buckets=int(b[1:]))
    writer.flush()
    (path,) = tmp_path.iterdir()
    read = [(e["step"], v) for e in events.read_events(str(path)) for v in e["summary"]]
    assert len(read) == 1 and read[0][0] == 3 and read[0][1]["tag"] == "h"
    assert read[0][1]["plugin"] == "histograms"
    assert np.array_equal(read[0][1]["value"], REF[tag], equal_nan=True)
