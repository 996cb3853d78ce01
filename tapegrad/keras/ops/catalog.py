"""The names of Keras 3.15's ``keras.ops`` sub-namespaces (``keras.ops.numpy``,
``keras.ops.linalg``, ``keras.ops.nn``, ``keras.ops.image``), and the function that fills
tapegrad's modules of those names with the functions ``keras.ops`` has (Keras has no
``keras.ops.math`` or ``keras.ops.core`` namespace; ``keras.ops.image``'s functions are
its own, in ``image.py``).

>>> from tapegrad.keras.ops.catalog import KERAS_NAMES
>>> "matmul" in KERAS_NAMES["numpy"], "softmax" in KERAS_NAMES["nn"]
(True, True)
"""

# fmt: off
KERAS_NAMES = {
    "numpy": (
        "abs", "absolute", "add", "all", "allclose", "amax", "amin", "angle", "any",
        "append", "arange", "arccos", "arccosh", "arcsin", "arcsinh", "arctan",
        "arctan2", "arctanh", "argmax", "argmin", "argpartition", "argsort", "array",
        "array_split", "average", "bartlett", "bincount", "bitwise_and",
        "bitwise_invert", "bitwise_left_shift", "bitwise_not", "bitwise_or",
        "bitwise_right_shift", "bitwise_xor", "blackman", "broadcast_to", "cbrt",
        "ceil", "clip", "concatenate", "conj", "conjugate", "copy", "corrcoef",
        "correlate", "cos", "cosh", "count_nonzero", "cross", "cumprod", "cumsum",
        "deg2rad", "diag", "diagflat", "diagonal", "diff", "digitize", "divide",
        "divide_no_nan", "dot", "dsplit", "dstack", "einsum", "empty", "empty_like",
        "equal", "exp", "exp2", "expand_dims", "expm1", "eye", "fabs", "flip", "fliplr",
        "flipud", "floor", "floor_divide", "fmax", "fmin", "fmod", "full", "full_like",
        "gcd", "geomspace", "get_item", "greater", "greater_equal", "hamming",
        "hanning", "heaviside", "histogram", "hsplit", "hstack", "hypot", "i0",
        "identity", "imag", "inner", "isclose", "isfinite", "isin", "isinf", "isnan",
        "isneginf", "isposinf", "isreal", "kaiser", "kron", "lcm", "ldexp",
        "left_shift", "less", "less_equal", "linspace", "log", "log10", "log1p", "log2",
        "logaddexp", "logaddexp2", "logical_and", "logical_not", "logical_or",
        "logical_xor", "logspace", "matmul", "max", "maximum", "mean", "median",
        "meshgrid", "min", "minimum", "mod", "moveaxis", "multiply", "nan_to_num",
        "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean",
        "nanmedian", "nanmin", "nanpercentile", "nanprod", "nanquantile", "nanstd",
        "nansum", "nanvar", "ndim", "negative", "nextafter", "nonzero", "not_equal",
        "ones", "ones_like", "outer", "pad", "percentile", "power", "prod", "ptp",
        "quantile", "rad2deg", "ravel", "real", "reciprocal", "repeat", "reshape",
        "right_shift", "roll", "rot90", "round", "searchsorted", "select", "sign",
        "signbit", "sin", "sinc", "sinh", "size", "slogdet", "sort", "split", "sqrt",
        "square", "squeeze", "stack", "std", "subtract", "sum", "swapaxes", "take",
        "take_along_axis", "tan", "tanh", "tensordot", "tile", "trace", "transpose",
        "trapezoid", "tri", "tril", "triu", "true_divide", "trunc", "unique",
        "unravel_index", "vander", "var", "vdot", "vectorize", "view", "vsplit",
        "vstack", "where", "zeros", "zeros_like",
    ),
    "linalg": (
        "cholesky", "cholesky_inverse", "det", "eig", "eigh", "inv", "jvp", "lstsq",
        "lu_factor", "matrix_rank", "norm", "pinv", "qr", "solve", "solve_triangular",
        "svd",
    ),
    "nn": (
        "adaptive_average_pool", "adaptive_max_pool", "average_pool",
        "batch_normalization", "binary_crossentropy", "categorical_crossentropy",
        "celu", "conv", "conv_transpose", "ctc_decode", "ctc_loss", "depth_to_space",
        "depthwise_conv", "dot_product_attention", "elu", "fold", "gelu", "glu",
        "hard_shrink", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh",
        "layer_normalization", "leaky_relu", "log_sigmoid", "log_softmax", "max_pool",
        "moments", "multi_hot", "normalize", "one_hot", "polar", "psnr", "relu",
        "relu6", "rms_normalization", "selu", "separable_conv", "sigmoid", "silu",
        "soft_shrink", "softmax", "softplus", "softsign", "space_to_depth",
        "sparse_categorical_crossentropy", "sparse_plus", "sparse_sigmoid", "sparsemax",
        "squareplus", "swish", "tanh_shrink", "threshold", "unfold",
    ),
    "image": (
        "affine_transform", "crop_images", "elastic_transform", "extract_patches",
        "extract_patches_3d", "gaussian_blur", "hsv_to_rgb", "map_coordinates",
        "pad_images", "perspective_transform", "resize", "rgb_to_grayscale",
        "rgb_to_hsv", "scale_and_translate", "sobel_edges", "ssim",
    ),
}
# fmt: on


def namespace(scope, name):
    """Puts into ``scope`` (a module's globals) each function of Keras's ``name``
    namespace that ``keras.ops`` has; returns their names, the module's ``__all__``."""
    from tapegrad.keras import ops

    present = [n for n in KERAS_NAMES[name] if hasattr(ops, n)]
    scope.update({n: getattr(ops, n) for n in present})
    return present
