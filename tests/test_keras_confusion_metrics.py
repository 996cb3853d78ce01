"""Keras 3's confusion-matrix metrics (Precision, Recall, the four counts, AUC, MeanIoU),
top-k accuracies, RMSE and the crossentropy metrics, checked against their definitions
computed here with NumPy."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras
from tapegrad.errors import InvalidArgumentError

M = keras.metrics
rng = np.random.default_rng(7)
YT = (rng.random(40) > 0.5).astype(np.float32)
YP = rng.random(40).astype(np.float32)
YP[:4] = [0.5, 0.0, 1.0, 0.25]  # on the thresholds: a prediction must be strictly above
SW = rng.random(40).astype(np.float32)


def _counts(yt, yp, t, w=None):
    w = np.ones_like(yp, np.float64) if w is None else np.asarray(w, np.float64)
    pos, pred = yt != 0, yp > t
    return (np.sum(w * (pos & pred)), np.sum(w * (~pos & pred)), np.sum(w * (~pos & ~pred)),
            np.sum(w * (pos & ~pred)))


def _no_nan(a, b):
    return np.where(b != 0, a / np.where(b != 0, b, 1), 0.0)


@pytest.mark.parametrize("weighted", [False, True])
def test_counts_precision_recall(weighted):
    w = SW if weighted else None
    for thresholds in (None, 0.25, [0.0, 0.5, 1.0]):
        ts = [0.5] if thresholds is None else np.atleast_1d(thresholds)
        want = np.array([_counts(YT, YP, t, w) for t in ts])  # (thresholds, 4)
        got = {}
        for name, cls in [("tp", M.TruePositives), ("fp", M.FalsePositives),
                          ("tn", M.TrueNegatives), ("fn", M.FalseNegatives),
                          ("p", M.Precision), ("r", M.Recall)]:
            m = cls(thresholds=thresholds)
            m.update_state(YT[:20], YP[:20], sample_weight=None if w is None else w[:20])
            m.update_state(YT[20:], YP[20:], sample_weight=None if w is None else w[20:])
            got[name] = np.atleast_1d(m.result().numpy())
        for i, name in enumerate(("tp", "fp", "tn", "fn")):
            np.testing.assert_allclose(got[name], want[:, i], rtol=1e-5)
        np.testing.assert_allclose(got["p"], _no_nan(want[:, 0], want[:, 0] + want[:, 1]),
                                   rtol=1e-5)
        np.testing.assert_allclose(got["r"], _no_nan(want[:, 0], want[:, 0] + want[:, 3]),
                                   rtol=1e-5)
    m = M.Precision()
    m.update_state([1.0, 0.0], [0.1, 0.2])  # nothing predicted positive: 0, not NaN
    assert float(m.result()) == 0.0
    m.reset_state()
    assert float(m.result()) == 0.0


def test_precision_top_k_and_class_id():
    yt = (rng.random((10, 4)) > 0.5).astype(np.float32)
    yp = rng.random((10, 4)).astype(np.float32)
    top2 = np.argsort(-yp, axis=1)[:, :2]
    keep = np.zeros_like(yp, bool)
    np.put_along_axis(keep, top2, True, axis=1)
    m = M.Precision(top_k=2)  # the top 2 of each row are the positive predictions
    m.update_state(yt, yp)
    np.testing.assert_allclose(float(m.result()), np.sum(keep & (yt != 0)) / np.sum(keep),
                               rtol=1e-6)
    m = M.Recall(class_id=1)
    m.update_state(yt, yp)
    pos = yt[:, 1] != 0
    np.testing.assert_allclose(float(m.result()), np.sum(pos & (yp[:, 1] > 0.5)) / np.sum(pos),
                               rtol=1e-6)


def _auc_reference(yt, yp, w, n, curve, method):
    eps = 1e-7
    ts = [0.0 - eps] + [(i + 1) / (n - 1) for i in range(n - 2)] + [1.0 + eps]
    c = np.array([_counts(yt, yp, np.float32(t), w) for t in ts])
    tp, fp, tn, fn = c.T
    with np.errstate(invalid="ignore", divide="ignore"):
        recall = np.nan_to_num(tp / (tp + fn))
        if curve == "ROC":
            x, y = np.nan_to_num(fp / (fp + tn)), recall
        else:
            x, y = recall, np.nan_to_num(tp / (tp + fp))
    if curve == "PR" and method == "interpolation":  # Davis & Goadrich, Keras's closed form
        dtp, p = tp[:-1] - tp[1:], tp + fp
        dp = p[:-1] - p[1:]
        with np.errstate(invalid="ignore", divide="ignore"):
            slope = np.where(np.maximum(dp, 0) != 0, dtp / np.maximum(dp, 0), 0.0)
            ratio = np.where((p[:-1] > 0) & (p[1:] > 0), p[:-1] / np.where(p[1:] > 0, p[1:], 1),
                             1.0)
            inc = slope * (dtp + (tp[1:] - slope * p[1:]) * np.log(ratio))
            den = np.maximum(tp[1:] + fn[1:], 0)
            return np.sum(np.where(den != 0, inc / np.where(den != 0, den, 1), 0.0))
    heights = {"interpolation": (y[:-1] + y[1:]) / 2, "minoring": np.minimum(y[:-1], y[1:]),
               "majoring": np.maximum(y[:-1], y[1:])}[method]
    return np.sum((x[:-1] - x[1:]) * heights)


@pytest.mark.parametrize("curve", ["ROC", "PR"])
@pytest.mark.parametrize("method", ["interpolation", "minoring", "majoring"])
@pytest.mark.parametrize("n", [3, 200])
def test_auc_matches_its_riemann_sum(curve, method, n):
    m = M.AUC(num_thresholds=n, curve=curve, summation_method=method)
    m.update_state(YT[:25], YP[:25], sample_weight=SW[:25])
    m.update_state(YT[25:], YP[25:], sample_weight=SW[25:])
    want = _auc_reference(YT, YP, SW, n, curve, method)
    np.testing.assert_allclose(float(m.result()), want, rtol=1e-5, atol=1e-7)


def test_auc_extremes_multi_label_and_logits():
    m = M.AUC()
    m.update_state([0.0, 0.0, 1.0, 1.0], [0.1, 0.2, 0.8, 0.9])
    assert float(m.result()) == pytest.approx(1.0, abs=1e-6)
    assert float(M.AUC().result()) == 0.0
    yt = (rng.random((30, 3)) > 0.5).astype(np.float32)
    yp = rng.random((30, 3)).astype(np.float32)
    m = M.AUC(multi_label=True, num_thresholds=50)
    m.update_state(yt, yp)
    want = np.mean([_auc_reference(yt[:, j], yp[:, j], None, 50, "ROC", "interpolation")
                    for j in range(3)])
    np.testing.assert_allclose(float(m.result()), want, rtol=1e-5)
    logits = rng.standard_normal(40).astype(np.float32)
    m = M.AUC(from_logits=True)
    m.update_state(YT, logits)
    want = _auc_reference(YT, (1 / (1 + np.exp(-logits))).astype(np.float32), None, 200,
                          "ROC", "interpolation")
    np.testing.assert_allclose(float(m.result()), want, rtol=1e-5)


def _iou(cm):
    rows, cols, d = cm.sum(0), cm.sum(1), np.diag(cm)
    den = (rows + cols - d).astype(np.float32)
    valid = den > 1e-9
    return np.sum(np.where(valid, d / (den + 1e-7), 0)) / max(valid.sum(), 1)


def test_mean_iou_follows_keras_integer_matrix():
    yt = np.array([0, 1, 2, 1, 3, 3, 0, 9, -1])
    yp = np.array([0, 1, 1, 1, 3, 0, 0, 1, 2])
    m = M.MeanIoU(num_classes=4)
    m.update_state(yt, yp)
    cm = np.zeros((4, 4), np.int64)
    for t, p in zip(yt, yp):
        if 0 <= t < 4 and 0 <= p < 4:  # classes outside [0, 4) count for nothing
            cm[t, p] += 1
    np.testing.assert_array_equal(m.total_cm.numpy(), cm)
    np.testing.assert_allclose(float(m.result()), _iou(cm), rtol=1e-6)
    m = M.MeanIoU(num_classes=3)  # float labels and weights truncate in the int64 matrix
    with pytest.warns(UserWarning, match="weight as `float`"):
        m.update_state([0.7, 1.9, 1.0], [0, 1, 1], sample_weight=[1.0, 2.5, 0.5])
    np.testing.assert_array_equal(m.total_cm.numpy(), [[1, 0, 0], [0, 2, 0], [0, 0, 0]])
    m = M.MeanIoU(num_classes=4, dtype="float32", ignore_class=0)
    w = np.linspace(0.1, 1.0, len(yt)).astype(np.float32)
    m.update_state(yt, yp, sample_weight=w)
    cmf = np.zeros((4, 4))
    for t, p, wi in zip(yt, yp, w):
        if 0 < t < 4 and 0 <= p < 4:
            cmf[t, p] += wi
    np.testing.assert_allclose(m.total_cm.numpy(), cmf, rtol=1e-6)
    np.testing.assert_allclose(float(m.result()), _iou(cmf), rtol=1e-5)


def test_top_k_accuracy_counts_ties_in_and_non_finite_rows_out():
    p = np.array([[0.2, 0.2, 0.2, 0.4], [0.1, np.nan, 0.5, 0.3], [0.3, 0.3, 0.1, 0.3],
                  [np.inf, 0.0, 0.0, 1.0]], np.float32)
    labels = np.array([0, 2, 2, 3])
    for k in (1, 2, 3, 5):
        higher = np.array([np.sum(p[i] > p[i, t]) for i, t in enumerate(labels)])
        finite = np.isfinite(p).all(axis=1)
        want = np.mean(finite & (higher < k))
        assert float(M.SparseTopKCategoricalAccuracy(k=k)(labels, p)) == pytest.approx(want)
        assert float(M.TopKCategoricalAccuracy(k=k)(np.eye(4)[labels], p)) == pytest.approx(
            want)


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int64])
def test_top_k_accuracy_takes_float32_scores_only(dtype):
    # TensorFlow's InTopKV2 kernel has float32 scores alone: Keras 3.15 on TensorFlow 2.21
    # refuses NumPy float64/float16/int scores (a Python list of floats converts to float32)
    p = np.array([[0.1, 0.9, 0.8], [0.05, 0.95, 0.0]]).astype(dtype)
    for metric in (M.SparseTopKCategoricalAccuracy(k=1), M.TopKCategoricalAccuracy(k=2)):
        labels = np.array([2, 1]) if isinstance(metric, M.SparseTopKCategoricalAccuracy) \
            else np.eye(3)[[2, 1]]
        with pytest.raises(InvalidArgumentError, match="InTopKV2"):
            metric(labels, p)
    if dtype is np.int64:  # a list of ints converts to int32: refused too
        with pytest.raises(InvalidArgumentError, match="int32 tensor"):
            M.SparseTopKCategoricalAccuracy(k=1)(np.array([2, 1]), p.tolist())
    else:
        assert float(M.SparseTopKCategoricalAccuracy(k=1)(np.array([2, 1]), p.tolist())) == 0.5
    # tf.math.in_top_k itself converts NumPy scores to float32, as TensorFlow does
    assert tf.math.in_top_k([2, 1], p, 2).numpy().tolist() == [True, True]


def test_rmse_and_crossentropy_metrics():
    yt, yp, w = np.array([[1.0], [2.0], [3.0]]), np.array([[1.5], [2.0], [0.0]]), np.array(
        [1.0, 0.0, 2.0])
    got = float(M.RootMeanSquaredError()(yt, yp, sample_weight=w))
    assert got == pytest.approx(np.sqrt(np.sum(w * (yp - yt)[:, 0] ** 2) / w.sum()), rel=1e-6)
    logits = np.array([[2.0, -1.0, 0.5], [0.1, 0.2, 3.0]], np.float32)
    labels = np.array([0, 2])
    lsm = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
    want = -np.mean(lsm[np.arange(2), labels])
    assert float(M.SparseCategoricalCrossentropy(from_logits=True)(labels, logits)) == (
        pytest.approx(want, rel=1e-6))
    assert float(M.CategoricalCrossentropy(from_logits=True)(np.eye(3)[labels], logits)) == (
        pytest.approx(want, rel=1e-6))
    assert isinstance(M.get("AUC"), M.AUC) and isinstance(M.get("Precision"), M.Precision)
    assert isinstance(M.get("top_k_categorical_accuracy"), M.TopKCategoricalAccuracy)


def test_metrics_work_in_compile_and_fit():
    x = rng.standard_normal((32, 3)).astype(np.float32)
    y = (x[:, :1] > 0).astype(np.float32)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1, activation="sigmoid")])
    model.compile("sgd", "binary_crossentropy",
                  metrics=[M.AUC(), M.Precision(), M.Recall(thresholds=[0.3, 0.7])])
    h = model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    assert {"auc", "precision", "recall", "loss"} <= set(h.history)
    assert isinstance(h.history["auc"][0], float) and h.history["recall"][0].shape == (2,)
    values = model.evaluate(x, y, verbose=0, return_dict=True)
    assert values["recall"].shape == (2,)


def test_metric_names_and_string_identifiers():
    assert M.AUC().name == "auc" and M.MeanIoU(2).name == "mean_io_u"
    assert M.TruePositives().name == "true_positives"
    assert M.RootMeanSquaredError().name == "root_mean_squared_error"
    for name, cls in [("auc", M.AUC), ("precision", M.Precision), ("recall", M.Recall),
                      ("true_positives", M.TruePositives)]:
        m = M.get(name)
        assert isinstance(m, cls) and m.name == name
