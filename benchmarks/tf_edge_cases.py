"""The differential table of ``benchmarks/tf_edge_reference.py``: elementwise ``tf.math`` ops
at the special values (NaN, ±inf, ±0, subnormal, huge), integer ops at the ends of every
integer dtype, reductions at the edges (empty, size-1 and negative axes, keepdims, integer
dtypes), Keras losses and metrics with their defaults and options, ``tf.nn`` ops at
extreme inputs, and gradients at the points where TensorFlow defines them by convention
(abs, relu and sqrt at 0, pow at 0, ties of maximum and reduce_max, clip at its bounds,
norms of zero).

Each case is ``(name, source, args, modes)``: ``source`` a lambda over tensors (``tf``,
``keras`` and ``np`` in scope), ``modes`` among ``"eager"``, ``"function"``, ``"grad"``
(the gradient of the sum of the output by the first argument, eagerly).
"""
import numpy as np

EAGER_FN = ("eager", "function")
ALL = ("eager", "function", "grad")

F_SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 1e-300, 3e38, -3e38, 0.5, -0.5,
             1.0, -1.0, 2.0, -2.0, 2.5, -3.5, 0.9999, 1.0001, 10.0, -10.0, 89.0, -104.0, 1e6]
F_PAIR = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, 1.0, -1.0, 2.5, -3.0, 1e30]


def a(values, dtype):
    return np.asarray(values, dtype=dtype)


def _grid(values, dtype):
    v = a(values, dtype)
    return [np.repeat(v, len(v)), np.tile(v, len(v))]


UNARY_FLOAT = ["abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh",
               "digamma", "erf", "erfc", "exp", "expm1", "floor", "is_finite", "is_inf",
               "is_nan", "lgamma", "log", "log1p", "log_sigmoid", "negative", "reciprocal",
               "reciprocal_no_nan", "rint", "round", "rsqrt", "sigmoid", "sign", "sin", "sinh",
               "softplus", "softsign", "sqrt", "square", "tan", "tanh"]
BINARY_FLOAT = ["add", "subtract", "multiply", "divide", "divide_no_nan", "floordiv", "floormod",
                "maximum", "minimum", "pow", "atan2", "squared_difference", "xdivy", "xlogy",
                "xlog1py", "multiply_no_nan", "equal", "not_equal", "less", "greater_equal"]
INTS = ["int8", "int16", "int32", "int64", "uint8"]
UNARY_INT = ["abs", "negative", "sign", "square"]
BINARY_INT = ["math.add", "math.subtract", "math.multiply", "math.floordiv", "math.floormod",
              "math.maximum", "math.minimum", "math.divide"]
BITWISE = ["bitwise_and", "bitwise_or", "bitwise_xor"]


def _ints(dtype):
    info = np.iinfo(dtype)
    v = [info.min, info.min + 1, -7, -1, 0, 1, 3, 7, info.max - 1, info.max]
    return sorted({int(x) for x in v if info.min <= x <= info.max})


def elementwise():
    cases = []
    for dt in ("float32", "float64"):
        x = a(F_SPECIAL, dt)
        for op in UNARY_FLOAT:
            # erf(±inf) is ±1 (TensorFlow's float64 kernel: NaN; README, differences)
            v = x[np.isfinite(x)] if (op, dt) == ("erf", "float64") else x
            cases.append((f"{op}_{dt}", f"lambda x: tf.math.{op}(x)", [v], EAGER_FN))
        for op in BINARY_FLOAT:
            # x = -0.0 gives +0.0 in the x-is-zero ops (README, differences)
            pair = [v for v in F_PAIR if not (v == 0 and np.signbit(v))] \
                if op in ("xdivy", "xlogy", "xlog1py") else F_PAIR
            cases.append((f"{op}_{dt}", f"lambda x, y: tf.math.{op}(x, y)", _grid(pair, dt),
                          EAGER_FN))
    for dt in INTS:
        v = _ints(dt)
        for op in UNARY_INT:
            if dt.startswith("u") and op in ("negative", "abs", "sign"):
                continue  # TensorFlow has no kernel (its message lists the dtypes otherwise)
            cases.append((f"{op}_{dt}", f"lambda x: tf.math.{op}(x)", [a(v, dt)], EAGER_FN))
        nz = [x for x in v if x != 0]
        for op in BINARY_INT:
            cases.append((f"{op.split('.')[-1]}_{dt}", f"lambda x, y: tf.{op}(x, y)",
                          [np.repeat(a(v, dt), len(nz)), np.tile(a(nz, dt), len(v))], EAGER_FN))
        for op in ("math.floordiv", "math.floormod"):
            cases.append((f"{op.split('.')[-1]}_by_zero_{dt}", f"lambda x, y: tf.{op}(x, y)",
                          [a([5], dt), a([0], dt)], EAGER_FN))
        small = [x for x in v if -8 <= x <= 8]
        if not dt.startswith("u"):  # (TensorFlow's pow has no unsigned kernel)
            cases.append((f"pow_{dt}", "lambda x, y: tf.math.pow(x, y)",
                          [np.repeat(a(small, dt), 4), np.tile(a([0, 1, 2, 5], dt), len(small))],
                          EAGER_FN))
        if not dt.startswith("u"):
            cases.append((f"pow_negative_exponent_{dt}", "lambda x, y: tf.math.pow(x, y)",
                          [a([2, 1, -1], dt), a([-1, -2, -3], dt)], EAGER_FN))
            cases.append((f"pow_operator_negative_exponent_{dt}", "lambda x, y: x ** y",
                          [a([2, 1], dt), a([3, -2], dt)], EAGER_FN))
        for op in BITWISE:
            cases.append((f"{op}_{dt}", f"lambda x, y: tf.bitwise.{op}(x, y)",
                          _grid(v, dt), EAGER_FN))
        cases.append((f"invert_{dt}", "lambda x: tf.bitwise.invert(x)", [a(v, dt)], EAGER_FN))
    return cases


def reductions():
    cases = []
    x = a([[1.0, np.nan, 3.0], [-np.inf, 2.0, -0.0]], "float32")
    y = a([[1.5, -2.0, 3.0], [4.0, 2.0, -0.0]], "float64")
    e = np.zeros((0, 3), "float32")
    ops = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod",
           "reduce_std", "reduce_variance", "reduce_logsumexp", "reduce_euclidean_norm"]
    for op in ops:
        for tag, arg in (("nan", x), ("f64", y), ("empty", e)):
            for axis, keep in ((None, False), (0, False), (-1, True), ([0, 1], True), (1, False)):
                name = f"{op}_{tag}_axis{axis}_keep{keep}".replace(" ", "")
                cases.append((name, f"lambda x: tf.math.{op}(x, axis={axis!r}, keepdims={keep})",
                              [arg], EAGER_FN))
    ones = np.arange(6.0, dtype="float32").reshape(1, 6, 1) - 2.5
    for op in ops:
        cases.append((f"{op}_size1_axes", f"lambda x: tf.math.{op}(x, axis=[0, -1])", [ones],
                      ALL))
    for dt in INTS:
        v = a(_ints(dt), dt).reshape(2, -1)  # (an even number of values for every dtype)
        for op in ("reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod"):
            for axis in (None, 0, -1):
                cases.append((f"{op}_{dt}_axis{axis}", f"lambda x: tf.math.{op}(x, axis={axis})",
                              [v], EAGER_FN))
        cases.append((f"reduce_mean_{dt}_truncates", "lambda x: tf.math.reduce_mean(x, axis=0)",
                      [a([[1, 3, 2], [2, 4, 7 if dt.startswith("u") else -7]], dt)], EAGER_FN))
        cases.append((f"reduce_mean_empty_{dt}", "lambda x: tf.math.reduce_mean(x, axis=0)",
                      [np.zeros((0, 2), dt)], EAGER_FN))
    b = a([[True, False], [True, True]], "bool")
    for op in ("reduce_all", "reduce_any"):
        for axis in (None, 0, -1):
            cases.append((f"{op}_axis{axis}", f"lambda x: tf.math.{op}(x, axis={axis})", [b],
                          EAGER_FN))
        cases.append((f"{op}_empty", f"lambda x: tf.math.{op}(x)", [np.zeros((0,), bool)],
                      EAGER_FN))
    cases.append(("count_nonzero_nan", "lambda x: tf.math.count_nonzero(x, axis=0)", [x],
                  EAGER_FN))
    cases.append(("argmax_ties", "lambda x: tf.math.argmax(x, axis=0)",
                  [a([1.0, 3.0, 3.0, 2.0], "float32")], EAGER_FN))
    cases.append(("cumsum_exclusive_reverse",
                  "lambda x: tf.math.cumsum(x, axis=1, exclusive=True, reverse=True)", [y], ALL))
    cases.append(("cumprod_exclusive", "lambda x: tf.math.cumprod(x, axis=-1, exclusive=True)",
                  [y], ALL))
    return cases


Y_BIN = a([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]], "float32")
P_BIN = a([[0.0, 1.0, 0.6], [1e-9, 0.3, 1.0], [0.5, 0.999, 0.01], [0.2, 0.7, 0.0]], "float32")
LOGITS = a([[0.0, 40.0, -3.0], [-100.0, 2.0, 0.5], [1.0, -1.0, 90.0], [-0.5, 0.25, -40.0]],
           "float32")
Y_CAT = a([[0, 1, 0], [1, 0, 0], [0, 0, 1], [0.2, 0.3, 0.5]], "float32")
Y_SPARSE = a([1, 0, 2, 1], "int32")
SW = a([1.0, 0.0, 2.0, 0.5], "float32")
Y_REG = a([[1.0, -2.0], [0.0, 3.0], [2.0, 0.0], [-1.0, 5.0]], "float32")
P_REG = a([[1.5, -2.0], [0.0, 1.0], [-2.0, 1e-8], [-1.0, 50.0]], "float32")


def _loss(src, p, y, weighted=True):
    """A Keras loss class ``src`` (its constructor call) on predictions ``p`` and labels
    ``y``, and its gradient; also with sample weights unless they would not fit (``axis=0``:
    both raise, with other messages)."""
    name = "loss_" + "".join(c for c in src if c.isalnum() or c == "_")
    out = [(name, f"lambda p, y: keras.losses.{src}(y, p)", [p, y], ALL)]
    if weighted and "axis=0" not in src:
        out.append((name + "_weighted", f"lambda p, y, w: keras.losses.{src}(y, p, "
                    "sample_weight=w)", [p, y, SW], EAGER_FN))
    return out


def losses():
    cases = []
    for src in ["MeanSquaredError()", "MeanAbsoluteError()", "MeanAbsolutePercentageError()",
                "MeanSquaredLogarithmicError()", "Huber()", "Huber(delta=0.5)", "LogCosh()",
                "CosineSimilarity()", "CosineSimilarity(axis=0)",
                "MeanSquaredError(reduction='sum')", "MeanSquaredError(reduction=None)",
                "MeanAbsoluteError(reduction='mean_with_sample_weight')"]:
        cases += _loss(src, P_REG, Y_REG)
    for src in ["Poisson()", "KLDivergence()", "Hinge()", "SquaredHinge()",
                "CategoricalHinge()"]:
        cases += _loss(src, P_BIN, Y_BIN)
    for src in ["BinaryCrossentropy()", "BinaryCrossentropy(from_logits=True)",
                "BinaryCrossentropy(label_smoothing=0.2)",
                "BinaryCrossentropy(from_logits=True, label_smoothing=0.1)",
                "BinaryFocalCrossentropy()",
                "BinaryFocalCrossentropy(from_logits=True, gamma=3.0)",
                "BinaryCrossentropy(axis=0)"]:
        cases += _loss(src, LOGITS if "logits" in src else P_BIN, Y_BIN)
    for src in ["CategoricalCrossentropy()", "CategoricalCrossentropy(from_logits=True)",
                "CategoricalCrossentropy(label_smoothing=0.3)",
                "CategoricalCrossentropy(from_logits=True, label_smoothing=0.1)",
                "CategoricalCrossentropy(axis=0)", "CategoricalFocalCrossentropy()",
                "CategoricalFocalCrossentropy(from_logits=True)"]:
        cases += _loss(src, LOGITS if "logits" in src else P_BIN, Y_CAT, weighted=False)
    for src in ["SparseCategoricalCrossentropy()",
                "SparseCategoricalCrossentropy(from_logits=True)",
                "SparseCategoricalCrossentropy(from_logits=True, ignore_class=1)"]:
        cases += _loss(src, LOGITS if "logits" in src else P_BIN, Y_SPARSE)
    return cases


def metrics():
    cases = []
    one = [("BinaryAccuracy()", P_BIN, Y_BIN), ("BinaryAccuracy(threshold=0.7)", P_BIN, Y_BIN),
           ("CategoricalAccuracy()", P_BIN, Y_CAT), ("SparseCategoricalAccuracy()", P_BIN,
                                                    Y_SPARSE),
           ("TopKCategoricalAccuracy(k=2)", P_BIN, Y_CAT),
           ("SparseTopKCategoricalAccuracy(k=2)", P_BIN, Y_SPARSE),
           ("Accuracy()", a([1, 2, 3, 4], "int32"), a([1, 2, 0, 4], "int32")),
           ("MeanSquaredError()", P_REG, Y_REG), ("MeanAbsoluteError()", P_REG, Y_REG),
           ("RootMeanSquaredError()", P_REG, Y_REG), ("LogCoshError()", P_REG, Y_REG),
           ("MeanAbsolutePercentageError()", P_REG, Y_REG),
           ("CosineSimilarity()", P_REG, Y_REG), ("Precision()", P_BIN, Y_BIN),
           ("Recall()", P_BIN, Y_BIN), ("Precision(thresholds=0.7)", P_BIN, Y_BIN),
           ("TruePositives()", P_BIN, Y_BIN), ("FalseNegatives()", P_BIN, Y_BIN),
           ("BinaryCrossentropy()", P_BIN, Y_BIN),
           ("CategoricalCrossentropy(from_logits=True)", LOGITS, Y_CAT),
           ("SparseCategoricalCrossentropy()", P_BIN, Y_SPARSE),
           ("Hinge()", P_BIN, Y_BIN), ("KLDivergence()", P_BIN, Y_BIN),
           ("Poisson()", P_BIN, Y_BIN), ("AUC()", P_BIN, Y_BIN),
           ("AUC(curve='PR')", P_BIN, Y_BIN), ("R2Score()", P_REG, Y_REG)]
    for src, p, y in one:
        name = "metric_" + "".join(c for c in src if c.isalnum() or c == "_")
        cases.append((name, "lambda p, y: (lambda m: (m.update_state(y, p), m.result())[1])("
                      f"keras.metrics.{src})", [p, y], ("eager",)))
        if src.startswith(("BinaryAccuracy(", "MeanSquaredError", "Precision()",
                           "CategoricalAccuracy")):
            cases.append((name + "_weighted", "lambda p, y, w: (lambda m: (m.update_state(y, p, "
                          f"sample_weight=w), m.result())[1])(keras.metrics.{src})",
                          [p, y, SW], ("eager",)))
        cases.append((name + "_no_updates", f"lambda p: keras.metrics.{src}.result()", [p],
                      ("eager",)))
    cases.append(("metric_Sum_Mean", "lambda x: (lambda m, s: (m.update_state(x), s.update_state"
                  "(x), m.result(), s.result())[2:])(keras.metrics.Mean(), keras.metrics.Sum())",
                  [a([1.0, np.inf, 2.0], "float32")], ("eager",)))
    return cases


S = a([[0.0, -np.inf, 1.0], [-np.inf, -np.inf, -np.inf], [1e30, -1e30, 0.0],
       [np.inf, 0.0, 1.0], [np.nan, 1.0, 2.0]], "float32")
Z = a([[0.0, 0.0, 0.0], [3.0, -4.0, 0.0], [1e-30, 0.0, 0.0], [1e30, 1e30, 0.0]], "float32")
X = a([-np.inf, -100.0, -20.0, -6.0, -1.0, -1e-8, -0.0, 0.0, 1e-8, 0.5, 1.0, 6.0, 20.0, 100.0,
       np.inf, np.nan], "float32")


def nn():
    cases = []
    for op in ("softmax", "log_softmax"):
        # (rows holding +inf or NaN: README, differences)
        cases.append((f"nn_{op}_extremes", f"lambda x: tf.nn.{op}(x)", [S[:3]], EAGER_FN))
        cases.append((f"nn_{op}_axis0", f"lambda x: tf.nn.{op}(x, axis=0)", [Z], ALL))
    for op in ("relu", "relu6", "elu", "selu", "sigmoid", "tanh", "softplus", "softsign",
               "silu", "swish", "leaky_relu", "gelu"):
        cases.append((f"nn_{op}", f"lambda x: tf.nn.{op}(x)", [X], EAGER_FN))
    cases.append(("nn_gelu_approximate", "lambda x: tf.nn.gelu(x, approximate=True)", [X],
                  EAGER_FN))
    cases.append(("nn_leaky_relu_alpha", "lambda x: tf.nn.leaky_relu(x, alpha=0.3)", [X],
                  EAGER_FN))
    xl = a([-1e4, -100.0, -20.0, -1.0, 0.0, 1.0, 20.0, 100.0, 1e4, np.inf, -np.inf], "float32")
    lab = a([0.0, 1.0, 0.0, 1.0, 0.5, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0], "float32")
    cases.append(("nn_sigmoid_ce_extremes",
                  "lambda x, z: tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x)",
                  [xl, lab], ALL))
    cases.append(("nn_softmax_ce", "lambda x, z: tf.nn.softmax_cross_entropy_with_logits("
                  "labels=z, logits=x)", [LOGITS, Y_CAT], ALL))
    cases.append(("nn_sparse_softmax_ce", "lambda x, z: tf.nn.sparse_softmax_cross_entropy_"
                  "with_logits(labels=z, logits=x)", [LOGITS, Y_SPARSE], ALL))
    for axis in (-1, 0, None):
        cases.append((f"nn_l2_normalize_zeros_axis{axis}",
                      f"lambda x: tf.math.l2_normalize(x, axis={axis})", [Z], ALL))
    cases.append(("nn_moments", "lambda x: tf.nn.moments(x, axes=[0, 1])", [Z], EAGER_FN))
    cases.append(("nn_l2_loss", "lambda x: tf.nn.l2_loss(x)", [Z], ALL))
    cases.append(("nn_bias_add", "lambda x, b: tf.nn.bias_add(x, b)",
                  [Z, a([1.0, np.nan, -0.0], "float32")], EAGER_FN))
    cases.append(("clip_by_norm_zero", "lambda x: tf.clip_by_norm(x, 1.0, axes=[1])", [Z], ALL))
    cases.append(("clip_by_global_norm", "lambda x: tf.clip_by_global_norm([x], 1.0)[0][0]",
                  [Z], EAGER_FN))
    return cases


G = a([-2.0, -1.0, -0.0, 0.0, 1e-30, 0.5, 1.0, 2.0, 6.0], "float64")


def gradients():
    cases = []
    for src in ("tf.abs(x)", "tf.nn.relu(x)", "tf.nn.relu6(x)", "tf.sqrt(tf.abs(x))",
                "tf.sign(x)", "tf.floor(x)", "tf.round(x)", "tf.nn.elu(x)", "tf.nn.selu(x)",
                "tf.nn.leaky_relu(x)", "tf.nn.softplus(x)", "tf.math.log(tf.abs(x))",
                "tf.math.rsqrt(tf.abs(x))", "tf.pow(x, 2.0)", "tf.pow(x, 0.5)",
                "tf.pow(x, 3.0)", "tf.pow(x, -1.0)", "tf.math.square(x)", "tf.math.xlogy(x, x)",
                "tf.math.xdivy(x, 2.0)", "tf.math.xdivy(1.0, x)",
                "tf.math.divide_no_nan(1.0, x)",
                "tf.math.reciprocal_no_nan(x)", "tf.math.maximum(x, 1.0)",
                "tf.math.minimum(x, 1.0)", "tf.math.maximum(x, 0.0)", "tf.math.minimum(x, 0.0)",
                "tf.clip_by_value(x, -1.0, 1.0)", "tf.clip_by_value(x, 0.0, 2.0)",
                "tf.norm(x * 0.0)", "tf.norm(x)", "tf.math.reduce_euclidean_norm(x * 0.0)",
                "tf.math.atan2(x, x)", "tf.math.atan2(x * 0.0, x)", "tf.math.sigmoid(x * 1e3)",
                "tf.math.tanh(x * 1e3)", "tf.math.reduce_logsumexp(x * 0.0 - np.inf)",
                "tf.math.l2_normalize(x * 0.0)", "tf.math.reduce_std(x * 0.0)",
                "tf.math.softsign(x)", "tf.math.erf(x)", "tf.math.acos(x * 0.5)",
                "tf.math.log1p(x)", "tf.math.lgamma(x)", "tf.math.digamma(x)",
                "tf.nn.gelu(tf.cast(x, tf.float32))", "tf.nn.silu(x)", "tf.math.cumprod(x + 3.0)",
                "tf.math.reduce_prod(x)", "tf.math.squared_difference(x, 1.0)",
                "tf.math.floormod(x, 1.5)", "tf.math.floordiv(x, 1.5)",
                "tf.where(x > 0, tf.sqrt(x), x)", "tf.math.multiply_no_nan(x, x * 0.0)"):
        name = "grad_" + "".join(c if c.isalnum() else "_" for c in src).strip("_")
        cases.append((name, f"lambda x: {src}", [G], ("grad",)))
    cases.append(("grad_pow_exponent_at_zero_base", "lambda y, x: tf.pow(x, y)",
                  [a([0.0, 0.5, 1.0, 2.0, -1.0], "float64"), a([0.0, 0.0, 0.0, 0.0, 0.0],
                                                                 "float64")], ("grad",)))
    cases.append(("grad_pow_exponent_negative_base", "lambda y, x: tf.pow(x, y)",
                  [a([2.0, 3.0, 0.5], "float64"), a([-2.0, -1.0, -0.5], "float64")], ("grad",)))
    cases.append(("grad_pow_base_at_zero", "lambda x, y: tf.pow(x, y)",
                  [a([0.0, 0.0, 0.0, -0.0], "float64"), a([0.5, 1.0, 2.0, -1.0], "float64")],
                  ("grad",)))  # (d/dx x ** 0 at 0: 0, TensorFlow NaN; README, differences)
    cases.append(("grad_maximum_ties", "lambda x, y: tf.maximum(x, y)",
                  [a([1.0, 2.0, -0.0, 0.0], "float64"), a([1.0, 3.0, 0.0, -0.0], "float64")],
                  ("grad",)))
    cases.append(("grad_maximum_ties_y", "lambda y, x: tf.maximum(x, y)",
                  [a([1.0, 2.0, -0.0, 0.0], "float64"), a([1.0, 3.0, 0.0, -0.0], "float64")],
                  ("grad",)))
    cases.append(("grad_minimum_ties_y", "lambda y, x: tf.minimum(x, y)",
                  [a([1.0, 2.0, 0.0], "float64"), a([1.0, 3.0, 0.0], "float64")], ("grad",)))
    for op in ("reduce_max", "reduce_min"):
        cases.append((f"grad_{op}_ties", f"lambda x: tf.math.{op}(x)",
                      [a([3.0, 1.0, 3.0, 3.0, -1.0], "float64")], ("grad",)))
        cases.append((f"grad_{op}_ties_axis", f"lambda x: tf.math.{op}(x, axis=1)",
                      [a([[3.0, 1.0, 3.0], [2.0, 2.0, 2.0]], "float64")], ("grad",)))
        cases.append((f"grad_{op}_nan", f"lambda x: tf.math.{op}(x)",
                      [a([3.0, np.nan, 1.0], "float64")], ("grad",)))
    cases.append(("grad_clip_bounds_tensor", "lambda x, lo: tf.clip_by_value(x, lo, 2.0)",
                  [a([-1.0, 0.0, 1.0, 2.0, 3.0], "float64"), a(0.0, "float64")], ("grad",)))
    cases.append(("grad_clip_lo", "lambda lo, x: tf.clip_by_value(x, lo, 2.0)",
                  [a(0.0, "float64"), a([-1.0, 0.0, 1.0, 2.0, 3.0], "float64")], ("grad",)))
    cases.append(("grad_norm_rows_zero", "lambda x: tf.norm(x, axis=1)", [Z.astype("float64")],
                  ("grad",)))
    cases.append(("grad_norm_ord1", "lambda x: tf.norm(x, ord=1)", [G], ("grad",)))
    cases.append(("grad_norm_inf", "lambda x: tf.norm(x, ord=np.inf)",
                  [a([1.0, -3.0, 3.0], "float64")], ("grad",)))
    cases.append(("grad_softmax_neg_inf", "lambda x: tf.nn.softmax(x)[..., 0]",
                  [a([[0.0, -np.inf, 1.0], [2.0, 2.0, 2.0]], "float64")], ("grad",)))
    cases.append(("grad_log_softmax_neg_inf", "lambda x: tf.nn.log_softmax(x)[..., 0]",
                  [a([[0.0, -np.inf, 1.0], [2.0, 2.0, 2.0]], "float64")], ("grad",)))
    return cases


C64 = a([1 + 2j, -3 - 4j, 0.5 - 2j, 2 + 1j, -1.5 + 0.25j, 0.1j], "complex64")


def complex_and_keras_ops():
    """Complex elementwise ops and reductions (finite nonzero values: at zeros, overflow
    and infinite parts TensorFlow's complex kernels give NaN where NumPy's follow C99's
    annex G, README), integer
    reductions and segment ops with keepdims and int dtypes, and ``keras.ops`` at specials."""
    cases = []
    for dt in ("complex64", "complex128"):
        c = C64.astype(dt)
        for op in ("abs", "exp", "log", "sqrt", "square", "negative", "sign", "reciprocal",
                   "tanh", "sin", "cos", "real", "imag", "conj"):
            cases.append((f"c_{op}_{dt}", f"lambda x: tf.math.{op}(x)", [c], EAGER_FN))
        for op in ("add", "multiply", "divide", "subtract", "pow", "equal"):
            cases.append((f"c_{op}_{dt}", f"lambda x, y: tf.math.{op}(x, y)",
                          [c, c[::-1].copy()], EAGER_FN))
        for op in ("reduce_sum", "reduce_mean", "reduce_prod"):
            cases.append((f"c_{op}_{dt}", f"lambda x: tf.math.{op}(x)", [c], EAGER_FN))
    cg = a([1 + 2j, -3 - 4j, 0.5j], "complex128")
    for src in ("tf.abs(x)", "tf.math.real(x * x)", "tf.math.imag(tf.exp(x))",
                "tf.math.abs(tf.sqrt(x))", "tf.math.real(x * tf.math.conj(x))"):
        cases.append(("cgrad_" + "".join(ch if ch.isalnum() else "_" for ch in src),
                      f"lambda x: {src}", [cg], ("grad",)))
    for d in INTS:
        v = a([[7, 3, 0], [5, 2, 9]] if d.startswith("u") else [[-7, 3, 0], [5, -2, 9]], d)
        for src in ("tf.math.reduce_sum(x, axis=-1, keepdims=True)",
                    "tf.math.reduce_prod(x, axis=-1, keepdims=True)",
                    "tf.math.reduce_max(x, axis=-1, keepdims=True)",
                    "tf.math.reduce_mean(x, axis=-1, keepdims=True)",
                    "tf.math.cumsum(x, axis=1)", "tf.clip_by_value(x, 1, 5)",
                    "tf.math.argmax(x, axis=1, output_type=tf.int32)",
                    "tf.math.unsorted_segment_sum(x, [1, 0], 3)",
                    "tf.math.unsorted_segment_max(x, [1, 1], 3)",
                    "tf.math.unsorted_segment_mean(x, [1, 1], 2)",
                    "tf.math.segment_mean(x, [0, 0])", "tf.math.count_nonzero(x, axis=0)",
                    "keras.ops.sum(x, axis=0)", "keras.ops.mean(x, axis=0)",
                    "keras.ops.prod(x)", "keras.ops.max(x)", "keras.ops.var(x)",
                    "keras.ops.cumsum(x)", "keras.ops.square(x)", "keras.ops.divide(x, 2)",
                    "keras.ops.round(x)", "keras.ops.argmax(x, axis=1)",
                    "keras.ops.clip(x, 1, 5)", "keras.ops.one_hot(x, 4)"):
            name = "".join(ch if ch.isalnum() else "_" for ch in src)
            cases.append((f"{name}_{d}", f"lambda x: {src}", [v], EAGER_FN))
    # (no -0.0: relu and maximum give +0.0, TensorFlow's kernels either sign, README)
    f = a([[0.5, 1.5, 2.5, -0.5, -1.5, -2.5], [np.nan, np.inf, 0.0, 1e30, -1e-30, 3.0]],
          "float32")
    for src in ("keras.ops.round(x)", "tf.round(x)", "keras.ops.mean(x, axis=1)",
                "keras.ops.std(x, axis=0)", "keras.ops.log_softmax(x)", "keras.ops.sigmoid(x)",
                "keras.ops.relu6(x)", "keras.ops.elu(x)", "keras.ops.selu(x)",
                "keras.ops.gelu(x)", "keras.ops.gelu(x, approximate=False)",
                "keras.ops.leaky_relu(x)", "keras.ops.softplus(x)", "keras.ops.log_sigmoid(x)",
                "keras.ops.silu(x)", "keras.ops.sign(x)", "keras.ops.floor(x)",
                "keras.ops.ceil(x)", "keras.ops.clip(x, -1.0, 1.0)",
                "keras.ops.maximum(x, 0.0)", "keras.ops.power(x, 2.0)",
                "keras.ops.power(x, 0.5)", "keras.ops.square(x)",
                "keras.ops.sqrt(x)", "keras.ops.log1p(x)", "keras.ops.expm1(x)",
                "keras.ops.abs(x)", "keras.ops.exp(x)", "keras.ops.log(x)",
                "keras.ops.tanh(x)", "keras.ops.true_divide(x, 0.0)", "keras.ops.var(x)",
                "keras.ops.max(x, axis=1)", "keras.ops.norm(x)",
                "keras.ops.norm(x, ord=1, axis=1)", "keras.ops.softsign(x)",
                "keras.ops.relu(x)", "keras.ops.normalize(x)"):
        cases.append(("kf_" + "".join(ch if ch.isalnum() else "_" for ch in src),
                      f"lambda x: {src}", [f], EAGER_FN))
    # pow's values at -0.0 and -inf (+0.0, +inf); TensorFlow's tf.function rewrites the
    # exponent 0.5 to sqrt (-0.0, NaN), so only its eager numbers are pow's (README)
    cases.append(("kf_power_negative_half", "lambda x: keras.ops.power(-x, 0.5)", [f],
                  ("eager",)))
    g = a([-2.0, -1.0, -0.0, 0.0, 0.5, 1.0, 2.0, 6.0], "float64")
    for src in ("keras.ops.relu(x)", "keras.ops.relu6(x)", "keras.ops.abs(x)",
                "keras.ops.sqrt(keras.ops.abs(x))", "keras.ops.clip(x, -1.0, 1.0)",
                "keras.ops.maximum(x, 1.0)", "keras.ops.elu(x)", "keras.ops.leaky_relu(x)",
                "keras.ops.norm(x * 0.0)", "keras.ops.std(x)", "keras.ops.round(x)",
                "keras.ops.sign(x)", "keras.ops.softplus(x)", "keras.ops.log_sigmoid(x)"):
        cases.append(("kg_" + "".join(ch if ch.isalnum() else "_" for ch in src),
                      f"lambda x: {src}", [g], ("grad",)))
    return cases


NAN_ROWS = a([[2.0, np.nan, 1.0, 5.0, 0.0], [np.nan, np.inf, 1.0, np.nan, -np.inf],
              [np.nan, np.nan, np.nan, np.nan, np.nan], [np.nan, -np.inf, -np.inf, 3.0, np.nan],
              [-0.0, 0.0, -0.0, 0.0, np.nan], [np.inf, np.nan, np.inf, -np.inf, -np.inf]],
             "float32")


def arg_extremes():
    """argmax / argmin with NaN (TensorFlow's kernels skip it: a scan from the dtype's lowest
    finite value that moves only to a strictly larger element), infinities, the dtype's
    extreme finite values, -0.0, integers and bools; Keras's versions (float32 at least,
    -0.0 below +0.0)."""
    cases = []
    big = np.finfo(np.float32).max
    ext = a([[np.nan, big, np.inf], [np.nan, -big, -np.inf], [-big, np.nan, -np.inf],
             [big, np.nan, np.inf]], "float32")
    for dt in ("float32", "float64", "float16"):
        for op in ("argmax", "argmin"):
            for axis in (0, 1, -1):
                cases.append((f"{op}_nan_{dt}_axis{axis}", f"lambda x: tf.math.{op}(x, axis={axis})",
                              [NAN_ROWS.astype(dt)], EAGER_FN))
            if dt != "float16":
                cases.append((f"{op}_extremes_{dt}", f"lambda x: tf.{op}(x, axis=1)",
                              [ext.astype(dt)], EAGER_FN))
            cases.append((f"{op}_nan_long_{dt}", f"lambda x: tf.{op}(x)",
                          [np.concatenate([np.full(37, np.nan), [1.0, np.nan, 3.0, -2.0],
                                           np.full(20, np.nan)]).astype(dt)], EAGER_FN))
            cases.append((f"keras_{op}_nan_{dt}", f"lambda x: keras.ops.{op}(x, axis=1)",
                          [NAN_ROWS.astype(dt)], EAGER_FN))
            cases.append((f"keras_{op}_flat_keepdims_{dt}",
                          f"lambda x: keras.ops.{op}(x, keepdims=True)", [NAN_ROWS.astype(dt)],
                          EAGER_FN))
    for dt in ("int8", "uint8", "int32", "int64", "bool"):
        v = a([[0, 1, 1, 0], [1, 0, 0, 1]], dt) if dt == "bool" else \
            a(_ints(dt)[:6], dt).reshape(2, 3)
        for op in ("argmax", "argmin"):
            cases.append((f"{op}_{dt}", f"lambda x: tf.{op}(x, axis=1, output_type=tf.int32)",
                          [v], EAGER_FN))
    for op in ("reduce_max", "reduce_min"):
        cases.append((f"{op}_nan_rows", f"lambda x: tf.math.{op}(x, axis=1)", [NAN_ROWS],
                      EAGER_FN))
    return cases


def sorting():
    """Sorts and top_k without NaN (README: where TensorFlow's kernels put a NaN depends on
    its position), with ties, signed zeros, integers and TensorFlow's errors for k."""
    cases = []
    z = a([0.0, -0.0, 0.0, -0.0, 1.0, -1.0], "float32")
    t = a([[1.0, 3.0, 3.0, 1.0, 3.0], [np.inf, -np.inf, 2.0, 2.0, np.inf]], "float32")
    for src in ("tf.sort(x)", "tf.sort(x, direction='DESCENDING')", "tf.argsort(x)",
                "tf.argsort(x, direction='DESCENDING')", "tf.argsort(x, stable=True)"):
        name = "".join(ch if ch.isalnum() else "_" for ch in src)
        cases.append((f"{name}_zeros", f"lambda x: {src}", [z], EAGER_FN))
        cases.append((f"{name}_ties", f"lambda x: {src}", [t], EAGER_FN))
    for k in (0, 1, 3, 5):
        cases.append((f"top_k_ties_k{k}", f"lambda x: tf.math.top_k(x, {k})", [t], EAGER_FN))
    cases.append(("top_k_int32", "lambda x: tf.math.top_k(x, 2)", [a([3, 1, 3, 2], "int32")],
                  EAGER_FN))
    cases.append(("nn_top_k_zeros", "lambda x: tf.nn.top_k(x, 3)", [z], EAGER_FN))
    # (TensorFlow's tracing raises ValueError here, with its shape function's messages;
    # tapegrad's InvalidArgumentError, a ValueError, has the kernel's message)
    for k in (6, -1):
        cases.append((f"top_k_k{k}", f"lambda x: tf.math.top_k(x, {k})", [z], ("eager",)))
    cases.append(("top_k_scalar", "lambda x: tf.math.top_k(x, 1)", [a(1.0, "float32")],
                  ("eager",)))
    return cases


def strict_dtypes():
    """Dtypes TensorFlow's CPU kernels refuse, whose errors tapegrad raises (a compiled
    program alike: TensorFlow's tracing raises TypeError there, tapegrad the eager error, so
    these run eagerly only), and NumPy errors a compiled program must not let through."""
    cases = []
    for op in ("exp", "log", "sqrt", "rsqrt", "tanh", "sin", "cos", "tan", "asin", "acos",
               "atan", "sinh", "cosh", "log1p", "expm1", "erf"):
        for dt in ("int32", "int64", "uint8"):
            cases.append((f"{op}_of_{dt}", f"lambda x: tf.math.{op}(x)", [a([1, 2], dt)],
                          ("eager",)))
    cases.append(("atan2_of_int32", "lambda x, y: tf.math.atan2(x, y)",
                  [a([1, 2], "int32"), a([2, 1], "int32")], ("eager",)))
    for dt in ("int8", "int16", "bool", "uint8", "uint16", "int32", "int64", "float16"):
        m = np.ones((2, 2), dt)
        cases.append((f"matmul_{dt}", "lambda x, y: tf.matmul(x, y)", [m, m], ("eager",)))
        cases.append((f"batch_matmul_{dt}", "lambda x, y: tf.matmul(x, y)", [m[None], m[None]],
                      ("eager",)))
    cases.append(("matmul_operator_int8", "lambda x, y: x @ y",
                  [np.ones((2, 2), "int8"), np.ones((2, 2), "int8")], ("eager",)))
    for dt in ("bool", "int8", "uint8", "uint16", "uint32", "int64", "complex64", "float16"):
        cases.append((f"tile_{dt}", "lambda x: tf.tile(x, [2, 1])", [np.ones((1, 2), dt)],
                      EAGER_FN))
    cases.append(("tile_negative", "lambda x: tf.tile(x, [1, -1])",
                  [np.ones((1, 2), "float32")], EAGER_FN))
    cases.append(("tile_zero", "lambda x: tf.tile(x, [0, 2])", [np.ones((1, 2), "float32")],
                  EAGER_FN))
    cases.append(("tile_wrong_length", "lambda x: tf.tile(x, [1, 2, 3])",
                  [np.ones((1, 2), "float32")], ("eager",)))
    for dt in ("bool", "complex64"):
        v = a([True, False, True], dt) if dt == "bool" else a([1 + 1j, 2, 0j], dt)
        for src in ("tf.sort(x)", "tf.argsort(x)", "tf.sort(x, direction='DESCENDING')",
                    "tf.math.top_k(x, 2)"):
            name = "".join(ch if ch.isalnum() else "_" for ch in src)
            cases.append((f"{name}_{dt}", f"lambda x: {src}", [v], ("eager",)))
    p = a([1.0, 2.0, 3.0, 4.0], "float32")
    for dt in ("int8", "uint8", "int16", "uint16", "uint32", "int64"):
        cases.append((f"gather_indices_{dt}", "lambda p, i: tf.gather(p, i)", [p, a([1, 2], dt)],
                      ("eager",)))
        cases.append((f"embedding_lookup_indices_{dt}", "lambda p, i: tf.nn.embedding_lookup(p, i)",
                      [p, a([3], dt)], ("eager",)))
        cases.append((f"bincount_{dt}", "lambda x: tf.math.bincount(x)", [a([1, 2, 2], dt)],
                      ("eager",)))
    cases.append(("rint_float16", "lambda x: tf.math.rint(x)", [a([1.5, -0.5], "float16")],
                  ("eager",)))
    cases.append(("unique_complex64", "lambda x: tf.unique(x)", [a([1j, 1j, 2], "complex64")],
                  ("eager",)))
    cases.append(("polygamma_float16", "lambda a, x: tf.math.polygamma(a, x)",
                  [a([1.0], "float16"), a([2.0], "float16")], ("eager",)))
    h = a([[2.0, 1 - 1j], [1 + 1j, 3.0]], "complex128")
    cases.append(("eigvalsh_complex128", "lambda a: tf.linalg.eigvalsh(a)", [h], EAGER_FN))
    cases.append(("eigh_values_complex64", "lambda a: tf.linalg.eigh(a)[0]",
                  [h.astype("complex64")], EAGER_FN))
    cases.append(("logdet_complex128", "lambda a: tf.linalg.logdet(a)", [h], EAGER_FN))
    # tf.range infers its dtype from its arguments' dtypes (NumPy scalars keep theirs)
    for src in ("tf.range(np.int64(4))", "tf.range(np.float64(2.5))", "tf.range(np.float32(3))",
                "tf.range(np.int32(1), 3.5)", "tf.range(np.int64(1), np.int32(4))",
                "tf.range(np.int8(3))", "tf.range(True)", "tf.range(np.uint8(3))",
                "tf.range(4, dtype=tf.float64)", "tf.range(1, 7, 2, dtype=tf.int64)"):
        name = "".join(ch if ch.isalnum() else "_" for ch in src)
        cases.append((name, f"lambda x: {src}", [a(0, "int32")], EAGER_FN))
    for src in ("tf.range(np.float16(0), np.float16(3))", "tf.range(3, dtype=tf.float16)",
                "tf.range(3, dtype=tf.uint8)", "tf.range(3, dtype=tf.int16)",
                "tf.range(3, dtype=tf.int8)", "tf.range(3, dtype=tf.uint32)",
                "tf.range(3, dtype=tf.complex64)"):
        name = "".join(ch if ch.isalnum() else "_" for ch in src)
        cases.append((name, f"lambda x: {src}", [a(0, "int32")], ("eager",)))
    return cases


S2 = a([[1.0, 2.0], [2.0, 4.0]], "float64")
N2 = a([[1.0, 2.0], [2.0, 1.0]], "float64")
L3 = a([[2.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 3.0]], "float64")
B3 = a([[1.0], [2.0], [3.0]], "float64")
LOWER = "tf.linalg.band_part(tf.linalg.cholesky(a), -1, 0)"


def linalg():
    """Singular and indefinite matrices: TensorFlow's errors for inverse and solve (eager
    and compiled), a NaN factor for a Cholesky decomposition that fails, and the
    substitution's infinities for a triangular solve with a zero on the diagonal."""
    cases = [("inv_singular", "lambda a: tf.linalg.inv(a)", [S2], EAGER_FN),
             ("inv_batch_singular", "lambda a: tf.linalg.inv(a)", [np.stack([N2, S2])],
              EAGER_FN),
             ("solve_singular", "lambda a, b: tf.linalg.solve(a, b)", [S2, B3[:2]], EAGER_FN),
             # (the lower triangle: TensorFlow leaves the upper one of a failed factor
             # uninitialised, zeros or whatever the memory held)
             ("cholesky_indefinite", f"lambda a: {LOWER}", [N2], EAGER_FN),
             ("cholesky_singular", f"lambda a: {LOWER}", [S2], EAGER_FN),
             ("cholesky_batch_indefinite", f"lambda a: {LOWER}", [np.stack([N2 + 2 * np.eye(2),
                                                                            N2])], EAGER_FN),
             ("cholesky_float32_indefinite", f"lambda a: {LOWER}", [N2.astype("float32")],
              EAGER_FN),
             ("cholesky_solve_indefinite",
              f"lambda a, b: tf.linalg.cholesky_solve({LOWER}, b)", [N2, B3[:2]],
              EAGER_FN),
             ("triangular_solve_zero_diagonal", "lambda a, b: tf.linalg.triangular_solve(a, b)",
              [L3, B3], EAGER_FN),
             ("triangular_solve_zero_diagonal_adjoint",
              "lambda a, b: tf.linalg.triangular_solve(a, b, adjoint=True)", [L3, B3], EAGER_FN),
             ("triangular_solve_zero_diagonal_upper",
              "lambda a, b: tf.linalg.triangular_solve(a, b, lower=False)", [L3.T.copy(), B3],
              EAGER_FN),
             ("triangular_solve_zero_diagonal_float32",
              "lambda a, b: tf.linalg.triangular_solve(a, b)",
              [L3.astype("float32"), B3.astype("float32")], EAGER_FN),
             ("triangular_solve_zero_matrix", "lambda a, b: tf.linalg.triangular_solve(a, b)",
              [np.zeros((2, 2)), np.zeros((2, 1))], EAGER_FN),
             ("triangular_solve_regular", "lambda a, b: tf.linalg.triangular_solve(a, b)",
              [L3 + np.eye(3), B3], ALL)]
    return cases


def all_cases():
    return (elementwise() + reductions() + losses() + metrics() + nn() + gradients()
            + complex_and_keras_ops() + arg_extremes() + sorting() + strict_dtypes()
            + linalg())
