"""tapegrad: tape-based automatic differentiation on NumPy, with TensorFlow's API.

>>> import tapegrad as tf
>>> x = tf.Variable(2.0)
>>> with tf.GradientTape() as t2:
...     with tf.GradientTape() as t1:
...         y = x * x * x
...     dy_dx = t1.gradient(y, x)
>>> float(dy_dx), float(t2.gradient(dy_dx, x))
(12.0, 12.0)
"""
from tapegrad.util import allocator as _allocator
from tapegrad.util import fp_warnings as _fp_warnings
from tapegrad import ops as _ops  # registers the primitives via the op modules
from tapegrad import primitives as _primitives  # noqa: F401
from tapegrad.core.dtypes import (  # noqa: F401
    as_dtype, bool_ as bool, complex64, complex128, double, float16, float32, float64, half,
    int8, int16, int32, int64, uint8, uint16, uint32, uint64, string)
from tapegrad.core.tensor import Tensor, Variable, constant, convert_to_tensor, is_tensor  # noqa: F401
from tapegrad.core.variable_options import VariableAggregation, VariableSynchronization  # noqa: F401
from tapegrad.errors import InvalidArgumentError  # noqa: F401
from tapegrad import errors  # noqa: F401
from tapegrad import config  # noqa: F401
from tapegrad.config import device  # noqa: F401
from tapegrad.ops.math_ops import *  # noqa: F401,F403
from tapegrad.ops.array_ops import *  # noqa: F401,F403
from tapegrad.ops.indexing_ops import row_gather as gather  # noqa: F401,E402 (TF's Gather)
from tapegrad.ops.linalg_ops import clip_by_norm, einsum, matmul, norm, tensordot  # noqa: F401
from tapegrad.ops.nn_ops import sigmoid  # noqa: F401
from tapegrad.ops.clip_ops import clip_by_global_norm, saturate_cast  # noqa: F401
from tapegrad.ops.unique_ops import unique, unique_with_counts  # noqa: F401
from tapegrad.ops.tensor_array import TensorArray  # noqa: F401
from tapegrad.tape.gradient_tape import GradientTape, UnconnectedGradients  # noqa: F401
from tapegrad.tape.graph_gradients import gradients, hessians  # noqa: F401
from tapegrad.ops.framework_ops import TensorShape, executing_eagerly, name_scope  # noqa: F401
from tapegrad.ops.framework_ops import (  # noqa: F401
    control_dependencies, get_static_value, group, identity_n, no_op, slice)
from tapegrad.module import Module  # noqa: F401
from tapegrad.tape.custom_gradient import custom_gradient, recompute_grad  # noqa: F401
from tapegrad.compile import derivative_cache as _derivative_cache  # noqa: F401  (installs its hooks)
from tapegrad.compile import recorded_pass as _recorded_pass  # noqa: F401  (installs its hook)
from tapegrad.transforms.functional import (  # noqa: F401
    grad, hessian, hvp, jacfwd, jacobian, jacrev, jvp, linearize, value_and_grad, vjp)
from tapegrad.batching.vmap import vectorized_map, vmap  # noqa: F401
from tapegrad import math, nn, linalg, random, autodiff, bitwise, strings  # noqa: F401
from tapegrad.ops.ragged import RaggedTensor  # noqa: F401  (what tf.strings.split returns)
from tapegrad.util import nest  # noqa: F401
from tapegrad.compile import TensorSpec, function  # noqa: F401
from tapegrad.control_flow.ops import cond, while_loop  # noqa: F401
from tapegrad import autograph  # noqa: F401  (tf.autograph)
from tapegrad import saved  # noqa: F401
from tapegrad import sparsity  # noqa: F401
from tapegrad import sparse  # noqa: F401  (tf.sparse and tf.SparseTensor)
from tapegrad import signal  # noqa: F401  (tf.signal)
from tapegrad.ops.sparse_ops import SparseTensor  # noqa: F401
from tapegrad.ops.indexed_slices import IndexedSlices  # noqa: F401
from tapegrad.drawing import draw  # noqa: F401  (tf.draw: pictures of tapes and programs)
from tapegrad import data  # noqa: F401
from tapegrad.ops.functional_ops import foldl, foldr, map_fn, scan  # noqa: F401
from tapegrad.ops.script_ops import ensure_shape, numpy_function, py_function  # noqa: F401
from tapegrad.ops.gather_ops import repeat, roll  # noqa: F401
from tapegrad.ops.binning_ops import (  # noqa: F401
    histogram_fixed_width, histogram_fixed_width_bins, searchsorted)
from tapegrad.ops.partition_ops import dynamic_partition, dynamic_stitch  # noqa: F401
from tapegrad.ops.special_ops import acosh, asinh, atanh  # noqa: F401
from tapegrad.ops.scatter_ops import *  # noqa: F401,F403
from tapegrad import dtypes, image, summary, train, version  # noqa: F401
from tapegrad import debugging  # noqa: F401
from tapegrad.debugging import (  # noqa: F401  (TensorFlow's top-level aliases)
    Assert, assert_equal, assert_greater, assert_less, assert_rank)
__version__ = version.VERSION  # the TF API followed + tapegrad's own: see tapegrad/version.py
saved_model = saved  # TensorFlow's name: tf.saved_model.save / load

newaxis = None
del _ops
_allocator.tune()  # malloc keeps a step's freed arrays for the next one (util/allocator.py)
_fp_warnings.install()  # log(0) is -inf without NumPy's note, as in TensorFlow
# tf.keras sits on top of everything above: imported last
from tapegrad import keras  # noqa: E402
optimizers, losses, metrics, initializers = (  # TensorFlow's aliases: tf.optimizers, ...
    keras.optimizers, keras.losses, keras.metrics, keras.initializers)
