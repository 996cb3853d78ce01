"""The public ops of issue 2 (tf.*, tf.math.*, tf.nn.*, tf.linalg.*), against NumPy.

Three tables:

- ``OPS``: each public op with NumPy (or SciPy) as the reference, in float64; float32 inputs
  must give float32 outputs; and for differentiable ops, ``check_grads`` in float64 at order 2,
  forward and reverse (each op is differentiable to any order where that is defined).
- ``EXACT``: values known in closed form (sigmoid(0) = 0.5, det [[1, 2], [3, 4]] = -2, ...).
- aliases: the same function under each TensorFlow name.

An op the library does not define yet is skipped with its name (see ``_resolve``).
"""
import math
import warnings

import numpy as np
import pytest
from scipy import special

import tapegrad as tf
from tapegrad.testing import check_grads

RNG = np.random.RandomState(1234)


def _resolve(path):
    obj = tf
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            pytest.skip(f"tf.{path} is not implemented yet")
    return obj


def real(*shape):
    return RNG.standard_normal(shape)


def pos(*shape):
    return RNG.uniform(0.5, 2.0, shape)


def unit(*shape):
    return RNG.uniform(-0.9, 0.9, shape)


def away(*shape):
    return RNG.uniform(0.3, 2.0, shape) * RNG.choice([-1.0, 1.0], shape)


def distinct(*shape):
    """Values far apart from each other (no ties for max/min/argmax)."""
    n = int(np.prod(shape))
    return (RNG.permutation(n) * 0.37 - n * 0.15).reshape(shape) + RNG.uniform(-0.05, 0.05, shape)


def wellcond(*shape):
    return np.eye(shape[-1]) + 0.3 * RNG.standard_normal(shape)


def spd(*shape):
    m = RNG.standard_normal(shape)
    return m @ np.swapaxes(m, -1, -2) / shape[-1] + np.eye(shape[-1])


def sym(a):
    return 0.5 * (a + tf.linalg.matrix_transpose(a))


class Op:
    """A public op, how to call it, its NumPy reference, and arguments.

    ``call(op, *args)`` defaults to ``op(*args)``; ``ref(*numpy_args)`` gives the expected
    value(s); ``grad`` says whether to run ``check_grads`` (order ``order``). ``bug`` names
    a known bug in a file this suite does not own: the value test is then a strict xfail.
    """

    def __init__(self, path, ref, args, call=None, grad=True, order=2, rtol=1e-10,
                 label="", dtype_check=True, bug=None):
        self.path, self.ref, self.args = path, ref, args
        self.call = call or (lambda op, *a: op(*a))
        self.grad, self.order, self.rtol, self.label = grad, order, rtol, label
        self.dtype_check, self.bug = dtype_check, bug


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_logsumexp(x, axis=None, keepdims=False):
    return special.logsumexp(x, axis=axis, keepdims=keepdims)


def np_gelu(x):
    return 0.5 * x * (1 + special.erf(x / np.sqrt(2)))


def np_gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def np_selu(x):
    a, s = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return s * np.where(x > 0, x, a * np.expm1(np.minimum(x, 0)))


def np_cumsum(x, axis=0, exclusive=False, reverse=False):
    if reverse:
        x = np.flip(x, axis)
    out = np.cumsum(x, axis=axis)
    if exclusive:
        out = out - x
    return np.flip(out, axis) if reverse else out


def np_clip_by_norm(t, c, axes=None):
    n = np.sqrt(np.sum(t * t, axis=axes, keepdims=True))
    return t * c / np.maximum(n, c)


# fmt: off
OPS = [
    # ---- elementwise, binary ------------------------------------------------------------------
    Op("add", np.add, [real(3, 1), real(4)]),
    Op("math.add", np.add, [real(2, 3), real()]),
    Op("subtract", np.subtract, [real(3, 1), real(4)]),
    Op("multiply", np.multiply, [real(), real(2, 3)]),
    Op("divide", np.divide, [real(2, 3), away(3)]),
    Op("pow", np.power, [pos(2, 3), real(3)]),
    Op("math.atan2", np.arctan2, [real(2, 3), away(2, 1)]),
    Op("maximum", np.maximum, [real(3, 1), real(4)]),
    Op("minimum", np.minimum, [real(3, 1), real(4)]),
    Op("math.squared_difference", lambda x, y: (x - y) ** 2, [real(2, 3), real(3)]),
    Op("where", np.where, [RNG.uniform(size=(2, 3)) < 0.5, real(2, 3), real(3)],
       call=lambda op, c, x, y: op(c, x, y)),
    Op("clip_by_value", np.clip, [RNG.uniform(-3, 3, (2, 5)), -1.0, 1.5],
       call=lambda op, x, lo, hi: op(x, lo, hi)),
    # ---- elementwise, unary -------------------------------------------------------------------
    Op("negative", np.negative, [real(2, 3)]),
    Op("square", np.square, [real(2, 3)]),
    Op("sqrt", np.sqrt, [pos(2, 3)]),
    Op("math.rsqrt", lambda x: 1 / np.sqrt(x), [pos(2, 3)]),
    Op("exp", np.exp, [real(2, 3)]),
    Op("math.log", np.log, [pos(2, 3)]),
    Op("math.log1p", np.log1p, [pos(2, 3)]),
    Op("math.expm1", np.expm1, [real(2, 3)]),
    Op("sin", np.sin, [real(2, 3)]),
    Op("cos", np.cos, [real(2, 3)]),
    Op("tan", np.tan, [unit(2, 3)]),
    Op("math.asin", np.arcsin, [unit(2, 3)]),
    Op("math.acos", np.arccos, [unit(2, 3)]),
    Op("math.atan", np.arctan, [real(2, 3)]),
    Op("tanh", np.tanh, [real(2, 3)]),
    Op("math.sinh", np.sinh, [real(2, 3)]),
    Op("math.cosh", np.cosh, [real(2, 3)]),
    Op("sigmoid", special.expit, [real(2, 3)]),
    Op("nn.relu", lambda x: np.maximum(x, 0), [away(2, 3)]),
    Op("nn.relu6", lambda x: np.clip(x, 0, 6), [RNG.uniform(-3, 9, (4, 5))]),
    Op("nn.elu", lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))), [away(2, 3)]),
    Op("nn.selu", np_selu, [away(2, 3)]),
    # alpha is a float32 attr in TensorFlow: float64 tensors see float32(0.2)
    Op("nn.leaky_relu", lambda x: np.where(x > 0, x, float(np.float32(0.2)) * x), [away(2, 3)]),
    Op("nn.leaky_relu", lambda x: np.where(x > 0, x, float(np.float32(0.01)) * x), [away(2, 3)],
       call=lambda op, x: op(x, alpha=0.01), label="alpha"),
    Op("nn.softplus", lambda x: np.logaddexp(0, x), [real(2, 3) * 5]),
    Op("nn.gelu", np_gelu, [real(2, 3)]),
    Op("nn.gelu", np_gelu_tanh, [real(2, 3)], call=lambda op, x: op(x, approximate=True),
       label="approximate"),
    Op("nn.swish", lambda x: x * special.expit(x), [real(2, 3)]),
    Op("abs", np.abs, [away(2, 3)]),
    Op("sign", np.sign, [real(2, 3)], grad=False),
    Op("math.reciprocal", np.reciprocal, [away(2, 3)]),
    Op("math.erf", special.erf, [real(2, 3)]),
    Op("clip_by_norm", np_clip_by_norm, [real(2, 3) * 3, 1.5],
       call=lambda op, t, c: op(t, c)),
    Op("clip_by_norm", lambda t, c: np_clip_by_norm(t, c, axes=1), [real(2, 3), 1.0],
       call=lambda op, t, c: op(t, c, axes=[1]), label="axes"),
    Op("clip_by_norm", lambda t, c: t, [real(2, 3) * 0.1, 10.0],
       call=lambda op, t, c: op(t, c), label="no clipping"),
    # ---- norms ------------------------------------------------------------------------------
    Op("norm", lambda x: np.linalg.norm(x.ravel()), [real(2, 3)]),
    Op("norm", lambda x: np.linalg.norm(x.ravel(), 1), [away(2, 3)],
       call=lambda op, x: op(x, ord=1), label="ord 1"),
    Op("norm", lambda x: np.linalg.norm(x.ravel(), 2), [real(4)],
       call=lambda op, x: op(x, ord=2), label="ord 2"),
    Op("norm", lambda x: np.max(np.abs(x)), [distinct(2, 3)],
       call=lambda op, x: op(x, ord=np.inf), label="ord inf"),
    Op("norm", lambda x: np.linalg.norm(x, "fro"), [real(2, 3)],
       call=lambda op, x: op(x, ord="fro", axis=[0, 1]), label="fro"),
    Op("norm", lambda x: np.linalg.norm(x, axis=1), [real(2, 3)],
       call=lambda op, x: op(x, axis=1), label="axis 1"),
    Op("norm", lambda x: np.linalg.norm(x, axis=0, keepdims=True), [real(2, 3)],
       call=lambda op, x: op(x, axis=0, keepdims=True), label="keepdims"),
    Op("norm", lambda x: np.linalg.norm(x, 1, axis=(1, 2)), [distinct(2, 3, 4)],
       call=lambda op, x: op(x, ord=1, axis=[1, 2]), label="matrix ord 1"),
    Op("norm", lambda x: np.linalg.norm(x, np.inf, axis=(1, 2)), [distinct(2, 3, 4)],
       call=lambda op, x: op(x, ord=np.inf, axis=[1, 2]), label="matrix ord inf"),
    Op("linalg.norm", lambda x: np.linalg.norm(x, axis=-1), [real(2, 3)],
       call=lambda op, x: op(x, axis=-1)),
    # ---- reductions --------------------------------------------------------------------------
    Op("reduce_sum", np.sum, [real(2, 3)]),
    Op("reduce_sum", lambda x: np.sum(x, axis=1), [real(2, 3)],
       call=lambda op, x: op(x, axis=1), label="axis"),
    Op("reduce_sum", lambda x: np.sum(x, axis=(0, 2), keepdims=True), [real(2, 3, 4)],
       call=lambda op, x: op(x, axis=[0, -1], keepdims=True), label="keepdims"),
    Op("reduce_mean", lambda x: np.mean(x, axis=0), [real(2, 3)],
       call=lambda op, x: op(x, axis=0)),
    Op("reduce_mean", np.mean, [real(2, 3)], label="all"),
    Op("reduce_max", lambda x: np.max(x, axis=1, keepdims=True), [distinct(2, 3)],
       call=lambda op, x: op(x, axis=1, keepdims=True)),
    Op("reduce_min", lambda x: np.min(x, axis=0), [distinct(2, 3)],
       call=lambda op, x: op(x, axis=0)),
    Op("reduce_prod", lambda x: np.prod(x, axis=1), [real(2, 3)],
       call=lambda op, x: op(x, axis=1)),
    Op("reduce_logsumexp", lambda x: np_logsumexp(x, axis=1), [real(2, 3) * 10],
       call=lambda op, x: op(x, axis=1)),
    Op("math.reduce_logsumexp", np_logsumexp, [real(2, 3)]),
    Op("math.reduce_std", lambda x: np.std(x, axis=1), [real(2, 3)],
       call=lambda op, x: op(x, axis=1)),
    Op("math.reduce_variance", lambda x: np.var(x, axis=0, keepdims=True), [real(2, 3)],
       call=lambda op, x: op(x, axis=0, keepdims=True)),
    Op("math.cumsum", np_cumsum, [real(3, 4)]),
    Op("math.cumsum", lambda x: np_cumsum(x, axis=1, exclusive=True, reverse=True), [real(3, 4)],
       call=lambda op, x: op(x, axis=1, exclusive=True, reverse=True), label="exclusive reverse"),
    # ---- linear algebra ------------------------------------------------------------------------
    Op("matmul", np.matmul, [real(2, 3), real(3, 4)]),
    Op("matmul", np.matmul, [real(2, 2, 3), real(2, 3, 4)], label="batched"),
    Op("matmul", np.matmul, [real(2, 1, 2, 3), real(3, 3, 4)], label="broadcast batch"),
    Op("matmul", lambda a, b: a.T @ b.T, [real(3, 2), real(4, 3)],
       call=lambda op, a, b: op(a, b, transpose_a=True, transpose_b=True), label="transposes"),
    Op("linalg.matmul", np.matmul, [real(3, 4), real(4, 2)]),
    Op("tensordot", lambda a, b: np.tensordot(a, b, 1), [real(2, 3), real(3, 4)],
       call=lambda op, a, b: op(a, b, axes=1)),
    Op("tensordot", lambda a, b: np.tensordot(a, b, ([0, 2], [2, 0])), [real(2, 3, 4),
                                                                        real(4, 5, 2)],
       call=lambda op, a, b: op(a, b, axes=[[0, 2], [2, 0]]), label="pairs"),
    Op("tensordot", lambda a, b: np.tensordot(a, b, 0), [real(2), real(3)],
       call=lambda op, a, b: op(a, b, axes=0), label="outer"),
    Op("einsum", lambda a, b: np.einsum("ij,jk->ik", a, b), [real(2, 3), real(3, 4)],
       call=lambda op, a, b: op("ij,jk->ik", a, b)),
    Op("einsum", lambda a: np.einsum("bxby->bxy", a), [real(2, 3, 2, 4)],
       call=lambda op, a: op("bxby->bxy", a), label="repeated index"),
    Op("einsum", lambda a: np.einsum("ii", a), [real(3, 3)],
       call=lambda op, a: op("ii", a), label="implicit trace"),
    Op("einsum", lambda a, b: np.einsum("...ij,...jk->...ik", a, b), [real(2, 2, 3),
                                                                      real(3, 4)],
       call=lambda op, a, b: op("...ij,...jk->...ik", a, b), label="ellipsis"),
    Op("einsum", lambda a, b, c: np.einsum("ij,jk,kl->il", a, b, c),
       [real(2, 3), real(3, 4), real(4, 2)],
       call=lambda op, a, b, c: op("ij,jk,kl->il", a, b, c), label="three operands"),
    Op("linalg.einsum", lambda a: np.einsum("ij->ji", a), [real(2, 3)],
       call=lambda op, a: op("ij->ji", a)),
    Op("transpose", lambda a: np.transpose(a, (2, 0, 1)), [real(2, 3, 4)],
       call=lambda op, a: op(a, perm=[2, 0, 1])),
    Op("transpose", np.transpose, [real(2, 3)], label="default perm"),
    Op("linalg.inv", np.linalg.inv, [wellcond(2, 3, 3)]),
    Op("linalg.det", np.linalg.det, [wellcond(2, 3, 3)]),
    Op("linalg.slogdet", lambda a: np.linalg.slogdet(a), [wellcond(3, 3)], grad=False),
    Op("linalg.slogdet", lambda a: np.linalg.slogdet(a)[1], [wellcond(2, 3, 3)],
       call=lambda op, a: op(a)[1], label="log|det|"),
    Op("linalg.solve", np.linalg.solve, [wellcond(3, 3), real(3, 2)]),
    Op("linalg.solve", lambda a, b: np.linalg.solve(np.swapaxes(a, -1, -2), b),
       [wellcond(2, 3, 3), real(2, 3, 1)], call=lambda op, a, b: op(a, b, adjoint=True),
       label="adjoint batched"),
    Op("linalg.cholesky", lambda a: np.linalg.cholesky(a), [spd(2, 3, 3)],
       call=lambda op, a: op(sym(a))),
    Op("linalg.triangular_solve", lambda a, b: np.linalg.solve(np.tril(a), b),
       [wellcond(3, 3), real(3, 2)]),
    Op("linalg.triangular_solve", lambda a, b: np.linalg.solve(np.triu(a).T, b),
       [wellcond(3, 3), real(3, 2)],
       call=lambda op, a, b: op(a, b, lower=False, adjoint=True), label="upper adjoint"),
    Op("linalg.diag", lambda v: np.apply_along_axis(np.diag, -1, v), [real(2, 3)]),
    Op("linalg.diag_part", lambda a: np.diagonal(a, axis1=-2, axis2=-1), [real(2, 3, 4)]),
    Op("linalg.trace", lambda a: np.trace(a, axis1=-2, axis2=-1), [real(2, 3, 3)]),
    # ---- shape -----------------------------------------------------------------------------------
    Op("reshape", lambda x: x.reshape(3, 2), [real(2, 3)], call=lambda op, x: op(x, [3, -1])),
    Op("concat", lambda a, b: np.concatenate([a, b], 1), [real(2, 3), real(2, 1)],
       call=lambda op, a, b: op([a, b], axis=1)),
    Op("stack", lambda a, b: np.stack([a, b], 1), [real(2, 3), real(2, 3)],
       call=lambda op, a, b: op([a, b], axis=1)),
    Op("unstack", lambda a: list(np.moveaxis(a, 1, 0)), [real(2, 3)],
       call=lambda op, a: op(a, axis=1)),
    Op("split", lambda a: np.split(a, [1, 4], axis=1), [real(2, 6)],
       call=lambda op, a: op(a, [1, 3, 2], axis=1)),
    Op("split", lambda a: np.split(a, 2, axis=0), [real(4, 3)],
       call=lambda op, a: op(a, 2), label="equal parts"),
    Op("squeeze", lambda a: a.reshape(2, 3), [real(2, 1, 3, 1)]),
    Op("squeeze", lambda a: a.reshape(2, 3, 1), [real(2, 1, 3, 1)],
       call=lambda op, a: op(a, axis=1), label="axis"),
    Op("expand_dims", lambda a: a[:, None], [real(2, 3)], call=lambda op, a: op(a, 1)),
    Op("expand_dims", lambda a: a[..., None], [real(2, 3)], call=lambda op, a: op(a, -1),
       label="-1"),
    Op("tile", lambda a: np.tile(a, (2, 3)), [real(2, 3)], call=lambda op, a: op(a, [2, 3])),
    Op("broadcast_to", lambda a: np.broadcast_to(a, (4, 2, 3)), [real(2, 1)],
       call=lambda op, a: op(a, [4, 2, 3])),
    Op("gather", lambda a: a[[2, 0, 2]], [real(3, 4)], call=lambda op, a: op(a, [2, 0, 2])),
    Op("gather", lambda a: a[:, [[1, 0], [3, 3]]], [real(3, 4)],
       call=lambda op, a: op(a, [[1, 0], [3, 3]], axis=1), label="axis 1"),
    Op("gather_nd", lambda a: a[[1, 0], [2, 1]], [real(3, 4)],
       call=lambda op, a: op(a, [[1, 2], [0, 1]])),
    Op("gather_nd", lambda a: a[[1, 2]], [real(3, 4)], call=lambda op, a: op(a, [[1], [2]]),
       label="slices"),
    Op("pad", lambda a: np.pad(a, ((1, 0), (2, 1))), [real(2, 3)],
       call=lambda op, a: op(a, [[1, 0], [2, 1]])),
    Op("pad", lambda a: np.pad(a, ((1, 1), (2, 2)), constant_values=3.0), [real(2, 3)],
       call=lambda op, a: op(a, [[1, 1], [2, 2]], constant_values=3.0), label="value"),
    Op("pad", lambda a: np.pad(a, ((1, 2), (2, 1)), mode="reflect"), [real(4, 3)],
       call=lambda op, a: op(a, [[1, 2], [2, 1]], mode="REFLECT"), label="reflect"),
    Op("pad", lambda a: np.pad(a, ((1, 2), (3, 1)), mode="symmetric"), [real(4, 3)],
       call=lambda op, a: op(a, [[1, 2], [3, 1]], mode="SYMMETRIC"), label="symmetric"),
    Op("reverse", lambda a: a[::-1, :, ::-1], [real(2, 3, 4)], call=lambda op, a: op(a, [0, -1])),
    Op("cast", lambda a: a.astype(np.float32), [real(2, 3)],
       call=lambda op, a: op(a, tf.float32), grad=False, dtype_check=False),
    Op("cast", lambda a: np.trunc(a).astype(np.int32), [real(2, 3) * 5],
       call=lambda op, a: op(a, tf.int32), grad=False, dtype_check=False, label="to int"),
    Op("identity", lambda a: a, [real(2, 3)]),
    Op("size", lambda a: np.int32(a.size), [real(2, 3)], grad=False, dtype_check=False),
    Op("shape", lambda a: np.array(a.shape, np.int32), [real(2, 3)], grad=False,
       dtype_check=False),
    # ---- nn ---------------------------------------------------------------------------------------
    Op("nn.softmax", np_softmax, [real(2, 3) * 10]),
    Op("nn.softmax", lambda x: np_softmax(x, 0), [real(2, 3)], call=lambda op, x: op(x, axis=0),
       label="axis 0"),
    Op("nn.log_softmax", lambda x: x - np_logsumexp(x, axis=-1, keepdims=True), [real(2, 3) * 10]),
    Op("nn.sigmoid_cross_entropy_with_logits",
       lambda z, x: np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x))),
       [RNG.uniform(0, 1, (2, 3)), real(2, 3) * 5],
       call=lambda op, z, x: op(labels=z, logits=x)),
    Op("nn.softmax_cross_entropy_with_logits",
       lambda z, x: -np.sum(z * (x - np_logsumexp(x, axis=-1, keepdims=True)), axis=-1),
       [np_softmax(real(2, 3)), real(2, 3) * 3], call=lambda op, z, x: op(labels=z, logits=x)),
    Op("nn.l2_loss", lambda x: np.sum(x * x) / 2, [real(2, 3)]),
    # ---- comparison and logic (no gradient) ---------------------------------------------------
    Op("equal", np.equal, [RNG.randint(0, 3, (3, 4)), RNG.randint(0, 3, (4,))], grad=False),
    Op("not_equal", np.not_equal, [RNG.randint(0, 3, (3, 4)), RNG.randint(0, 3, (4,))],
       grad=False),
    Op("less", np.less, [real(3, 4), real(4)], grad=False),
    Op("less_equal", np.less_equal, [RNG.randint(0, 3, (3, 4)) * 1.0, 1.0], grad=False),
    Op("greater", np.greater, [real(3, 4), real(4)], grad=False),
    Op("greater_equal", np.greater_equal, [RNG.randint(0, 3, (3, 4)) * 1.0, 1.0], grad=False),
    Op("logical_and", np.logical_and, [RNG.uniform(size=(2, 3)) < 0.5,
                                       RNG.uniform(size=(3,)) < 0.5], grad=False),
    Op("logical_or", np.logical_or, [RNG.uniform(size=(2, 3)) < 0.5,
                                     RNG.uniform(size=(3,)) < 0.5], grad=False),
    Op("logical_not", np.logical_not, [RNG.uniform(size=(2, 3)) < 0.5], grad=False),
    Op("argmax", lambda x: np.argmax(x, axis=0), [distinct(3, 4)], grad=False,
       dtype_check=False),
    Op("argmax", lambda x: np.argmax(x, axis=1), [distinct(3, 4)],
       call=lambda op, x: op(x, axis=1), grad=False, dtype_check=False, label="axis 1"),
    Op("argmin", lambda x: np.argmin(x, axis=0), [distinct(3, 4)], grad=False,
       dtype_check=False),
]
# fmt: on


def _params(table, bugs=True):
    return [pytest.param(o, id=f"{o.path}{'-' + o.label if o.label else ''}-{i}",
                         marks=pytest.mark.xfail(strict=True, reason=o.bug)
                         if bugs and o.bug else ())
            for i, o in enumerate(table)]



def _flat(x):
    if isinstance(x, (list, tuple)):
        out = []
        for v in x:
            out += _flat(v)
        return out
    return [x]


def _to_tensor(a, dtype=None):
    if isinstance(a, float):
        return a
    a = np.asarray(a)
    if dtype is not None and a.dtype.kind == "f":
        a = a.astype(dtype)
    return tf.constant(a)


@pytest.mark.parametrize("o", _params(OPS))
def test_value_matches_numpy(o):
    op = _resolve(o.path)
    got = o.call(op, *[_to_tensor(a) for a in o.args])
    want = o.ref(*o.args)
    got, want = _flat(got), _flat(want)
    assert len(got) == len(want), f"{o.path}: {len(got)} outputs, expected {len(want)}"
    for g, w in zip(got, want):
        assert isinstance(g, tf.Tensor), f"{o.path} returned {type(g).__name__}"
        w = np.asarray(w)
        assert g.shape == w.shape, f"{o.path}: shape {g.shape}, expected {w.shape}"
        if w.dtype.kind in "fc":
            np.testing.assert_allclose(g.numpy(), w, rtol=o.rtol, atol=1e-12)
        else:
            np.testing.assert_array_equal(g.numpy(), w)
            assert g.dtype.kind == w.dtype.kind or w.dtype.kind in "iu" and g.dtype.kind in "iu"


@pytest.mark.parametrize("o", _params([o for o in OPS if o.dtype_check]))
def test_float32_in_float32_out(o):
    op = _resolve(o.path)
    args = [_to_tensor(a, np.float32) for a in o.args]
    for g in _flat(o.call(op, *args)):
        if g.dtype.kind == "f":
            assert g.dtype == tf.float32, f"{o.path} gave {g.dtype} for float32 input"
    want = _flat(o.ref(*o.args))
    for g, w in zip(_flat(o.call(op, *args)), want):
        if np.asarray(w).dtype.kind == "f":
            np.testing.assert_allclose(g.numpy(), w, rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("o", _params([o for o in OPS if o.grad], bugs=False))
def test_gradients_to_second_order(o):
    op = _resolve(o.path)
    check_grads(lambda *a: o.call(op, *a), o.args, modes=("fwd", "rev"), order=o.order)


def _has_float_arg(o):
    return any(np.asarray(a).dtype.kind == "f" for a in o.args)


@pytest.mark.parametrize("o", _params([o for o in OPS if not o.grad and _has_float_arg(o) and
                                       o.path not in ("size", "shape", "cast", "linalg.slogdet")]))
def test_nondifferentiable_ops_give_none(o):
    op = _resolve(o.path)
    args = [_to_tensor(a) for a in o.args]
    floats = [a for a in args if isinstance(a, tf.Tensor) and a.dtype.kind == "f"]
    with tf.GradientTape() as t:
        t.watch(floats)
        # bool and int results become floats again: the chain is still broken
        outs = [tf.cast(g, tf.float64) for g in _flat(o.call(op, *args))]
        y = sum(outs[1:], outs[0]) + 0.0 * tf.reduce_sum(floats[0])
    g = t.gradient(y, floats)
    assert g[0] is not None and not np.any(g[0].numpy())     # connected only through 0 * x
    assert g[1:] == [None] * (len(floats) - 1)


# ==== exact values ===================================================================================
E = math.e
EXACT = [
    ("sqrt", [4.0], 2.0), ("math.rsqrt", [4.0], 0.5), ("exp", [0.0], 1.0),
    ("math.log", [1.0], 0.0), ("math.log1p", [0.0], 0.0), ("math.expm1", [0.0], 0.0),
    ("sigmoid", [0.0], 0.5), ("math.sigmoid", [0.0], 0.5), ("nn.sigmoid", [0.0], 0.5),
    ("nn.relu6", [[-1.0, 3.0, 7.0]], [0.0, 3.0, 6.0]),
    ("nn.relu", [[-1.0, 0.0, 2.0]], [0.0, 0.0, 2.0]),
    ("nn.elu", [[-1.0, 0.0, 2.0]], [1 / E - 1, 0.0, 2.0]),
    ("nn.selu", [[1.0, -1.0]], [1.0507009873554805, 1.0507009873554805 * 1.6732632423543772
                                * (1 / E - 1)]),
    ("nn.leaky_relu", [[-1.0, 2.0]], [-0.2, 2.0]),
    ("nn.softplus", [0.0], math.log(2.0)), ("math.softplus", [0.0], math.log(2.0)),
    ("nn.gelu", [1.0], 0.8413447460685429),
    ("nn.swish", [1.0], 1 / (1 + 1 / E)), ("nn.silu", [1.0], 1 / (1 + 1 / E)),
    ("math.erf", [1.0], 0.8427007929497149),
    ("math.squared_difference", [3.0, 5.0], 4.0),
    ("math.reciprocal", [4.0], 0.25),
    ("abs", [[-2.0, 3.0]], [2.0, 3.0]), ("sign", [[-2.0, 0.0, 3.0]], [-1.0, 0.0, 1.0]),
    ("negative", [[1.0, -2.0]], [-1.0, 2.0]),
    ("pow", [2.0, 10.0], 1024.0), ("square", [-3.0], 9.0),
    ("math.atan2", [1.0, 1.0], math.pi / 4), ("math.atan2", [1.0, -1.0], 3 * math.pi / 4),
    ("math.asin", [1.0], math.pi / 2), ("math.acos", [-1.0], math.pi),
    ("math.atan", [1.0], math.pi / 4), ("tanh", [0.0], 0.0), ("math.cosh", [0.0], 1.0),
    ("clip_by_value", [[-2.0, 0.5, 3.0], 0.0, 1.0], [0.0, 0.5, 1.0]),
    ("clip_by_norm", [[3.0, 4.0], 1.0], [0.6, 0.8]),
    ("clip_by_norm", [[3.0, 4.0], 10.0], [3.0, 4.0]),
    ("norm", [[3.0, 4.0]], 5.0),
    ("reduce_logsumexp", [[0.0, 0.0]], math.log(2.0)),
    ("reduce_logsumexp", [[1000.0, 1000.0]], 1000.0 + math.log(2.0)),
    ("math.reduce_std", [[1.0, 3.0]], 1.0), ("math.reduce_variance", [[1.0, 3.0]], 1.0),
    ("reduce_prod", [[2.0, 3.0, 4.0]], 24.0), ("reduce_mean", [[1.0, 2.0, 6.0]], 3.0),
    ("linalg.det", [[[1.0, 2.0], [3.0, 4.0]]], -2.0),
    ("linalg.trace", [[[1.0, 2.0], [3.0, 4.0]]], 5.0),
    ("linalg.inv", [[[2.0, 0.0], [0.0, 4.0]]], [[0.5, 0.0], [0.0, 0.25]]),
    ("linalg.cholesky", [[[4.0, 2.0], [2.0, 2.0]]], [[2.0, 0.0], [1.0, 1.0]]),
    ("nn.l2_loss", [[3.0, 4.0]], 12.5),
    ("nn.softmax", [[0.0, 0.0]], [0.5, 0.5]),
    ("nn.softmax", [[1000.0, 1000.0]], [0.5, 0.5]),
    ("nn.log_softmax", [[0.0, 0.0]], [-math.log(2.0)] * 2),
]


@pytest.mark.parametrize("path,args,want", EXACT, ids=[f"{p}-{i}" for i, (p, _, _) in
                                                        enumerate(EXACT)])
def test_exact_values(path, args, want):
    op = _resolve(path)
    got = op(*args)
    assert got.dtype == tf.float32
    np.testing.assert_allclose(got.numpy(), np.asarray(want, np.float32), rtol=1e-6, atol=1e-7)


def test_exact_values_of_tuple_and_keyword_ops():
    s, l = _resolve("linalg.slogdet")([[-2.0, 0.0], [0.0, 1.0]])
    assert float(s) == -1.0 and float(l) == pytest.approx(math.log(2.0))
    np.testing.assert_allclose(
        tf.nn.sigmoid_cross_entropy_with_logits(labels=[1.0], logits=[0.0]).numpy(),
        [math.log(2.0)], rtol=1e-6)
    np.testing.assert_allclose(
        tf.nn.softmax_cross_entropy_with_logits(labels=[[1.0, 0.0]], logits=[[0.0, 0.0]]).numpy(),
        [math.log(2.0)], rtol=1e-6)
    np.testing.assert_allclose(float(tf.nn.gelu(1.0, approximate=True)), 0.8411919906082768,
                               rtol=1e-6)
    np.testing.assert_allclose(tf.math.cumsum([1.0, 2.0, 3.0], exclusive=True).numpy(),
                               [0.0, 1.0, 3.0])
    np.testing.assert_allclose(tf.math.cumsum([1.0, 2.0, 3.0], reverse=True).numpy(),
                               [6.0, 5.0, 3.0])
    assert tf.argmax([[1.0, 5.0], [7.0, 2.0]]).numpy().tolist() == [1, 0]     # axis 0 default
    assert tf.argmax([[1.0, 5.0], [7.0, 2.0]], axis=1).numpy().tolist() == [1, 0]
    assert tf.argmin([[1.0, 5.0], [7.0, 2.0]], axis=1).numpy().tolist() == [0, 1]
    assert tf.argmax([1.0, 3.0]).dtype == tf.int64
    assert tf.argmax([1.0, 3.0], output_type=tf.int32).dtype == tf.int32
    assert tf.norm([[1.0, 2.0], [2.0, 4.0]], ord="fro", axis=[0, 1]).numpy() == 5.0
    assert float(tf.norm([3.0, -4.0], ord=1)) == 7.0
    assert float(tf.norm([3.0, -4.0], ord=np.inf)) == 4.0
    assert tf.linalg.solve([[2.0, 0.0], [0.0, 4.0]], [[1.0], [1.0]]).numpy().tolist() \
        == [[0.5], [0.25]]
    assert tf.linalg.triangular_solve([[2.0, 0.0], [1.0, 1.0]], [[2.0], [3.0]]).numpy().tolist() \
        == [[1.0], [2.0]]
    assert tf.linalg.diag([1.0, 2.0]).numpy().tolist() == [[1.0, 0.0], [0.0, 2.0]]
    assert tf.linalg.diag_part([[1.0, 2.0], [3.0, 4.0]]).numpy().tolist() == [1.0, 4.0]
    assert tf.einsum("ii->i", [[1.0, 2.0], [3.0, 4.0]]).numpy().tolist() == [1.0, 4.0]


# ==== creation and random ================================================================================
def test_creation_ops():
    assert tf.zeros([2, 3]).numpy().tolist() == [[0.0] * 3] * 2 and tf.zeros([2]).dtype == tf.float32
    assert tf.ones((2,), dtype=tf.int32).numpy().tolist() == [1, 1]
    assert tf.ones((2,), dtype=tf.int32).dtype == tf.int32
    x = tf.constant([[1, 2]], dtype=tf.int64)
    assert tf.zeros_like(x).dtype == tf.int64 and tf.zeros_like(x).shape == (1, 2)
    assert tf.ones_like(x, dtype=tf.float32).numpy().tolist() == [[1.0, 1.0]]
    f = tf.fill([2, 2], 7)
    assert f.dtype == tf.int32 and f.numpy().tolist() == [[7, 7], [7, 7]]
    assert tf.fill([2], 0.5).dtype == tf.float32
    np.testing.assert_array_equal(tf.eye(2, 3).numpy(), np.eye(2, 3))
    assert tf.eye(2, batch_shape=[3]).shape == (3, 2, 2)
    r = tf.range(5)
    assert r.dtype == tf.int32 and r.numpy().tolist() == [0, 1, 2, 3, 4]
    assert tf.range(1, 10, 3).numpy().tolist() == [1, 4, 7]
    rf = tf.range(1.0, 2.0, 0.5)
    assert rf.dtype == tf.float32 and rf.numpy().tolist() == [1.0, 1.5]
    ls = tf.linspace(0.0, 1.0, 5)
    assert ls.dtype == tf.float32 and ls.numpy().tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert tf.size(tf.ones((2, 3))).numpy() == 6 and tf.size(tf.ones((2, 3))).dtype == tf.int32
    assert tf.shape(tf.ones((2, 3))).numpy().tolist() == [2, 3]


def test_creation_ops_are_not_differentiable_and_not_recorded():
    x = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.zeros_like(x) + tf.ones_like(x) * 3.0
    assert t.gradient(y, x) is None


def test_random_seed_normal_uniform():
    tf.random.set_seed(7)
    a = tf.random.normal([1000])
    b = tf.random.uniform([1000], minval=2.0, maxval=5.0)
    tf.random.set_seed(7)
    np.testing.assert_array_equal(tf.random.normal([1000]).numpy(), a.numpy())
    np.testing.assert_array_equal(tf.random.uniform([1000], minval=2.0, maxval=5.0).numpy(),
                                  b.numpy())
    assert a.dtype == tf.float32 and a.shape == (1000,)
    assert abs(float(tf.reduce_mean(a))) < 0.15 and abs(float(tf.math.reduce_std(a)) - 1) < 0.1
    assert float(tf.reduce_min(b)) >= 2.0 and float(tf.reduce_max(b)) < 5.0
    n = tf.random.normal([2, 3], mean=10.0, stddev=0.1, dtype=tf.float64)
    assert n.dtype == tf.float64 and n.shape == (2, 3) and abs(float(tf.reduce_mean(n)) - 10) < 1
    i = tf.random.uniform([100], minval=0, maxval=3, dtype=tf.int32)
    assert i.dtype == tf.int32 and set(i.numpy().tolist()) <= {0, 1, 2}
    tf.random.set_seed(8)
    assert not np.array_equal(tf.random.normal([1000]).numpy(), a.numpy())


# ==== aliases ================================================================================================
ALIASES = [
    (["sigmoid", "math.sigmoid", "nn.sigmoid"], [real(5)]),
    (["nn.softplus", "math.softplus"], [real(5)]),
    (["nn.swish", "nn.silu"], [real(5)]),
    (["reduce_logsumexp", "math.reduce_logsumexp"], [real(2, 3)]),
    (["norm", "linalg.norm"], [real(2, 3)]),
    (["matmul", "linalg.matmul"], [real(2, 3), real(3, 2)]),
    (["add", "math.add"], [real(3), real(3)]),
    (["exp", "math.exp"], [real(3)]),
    (["reduce_sum", "math.reduce_sum"], [real(2, 3)]),
    (["einsum", "linalg.einsum"], [real(2, 3)]),
]


@pytest.mark.parametrize("paths,args", ALIASES, ids=[a[0][0] for a in ALIASES])
def test_aliases_agree(paths, args):
    outs = []
    for p in paths:
        op = _resolve(p)
        a = [tf.constant(x) for x in args]
        outs.append((op("ij->i", *a) if p.endswith("einsum") else op(*a)).numpy())
    for o in outs[1:]:
        np.testing.assert_array_equal(o, outs[0])


def test_ops_signatures_have_tensorflow_defaults():
    import inspect
    sig = inspect.signature(tf.nn.gelu)
    assert list(sig.parameters)[:2] == ["features", "approximate"]
    assert sig.parameters["approximate"].default is False
    sig = inspect.signature(tf.reduce_sum)
    assert list(sig.parameters)[:3] == ["input_tensor", "axis", "keepdims"]
    assert sig.parameters["axis"].default is None and sig.parameters["keepdims"].default is False
    sig = inspect.signature(tf.nn.leaky_relu)
    assert sig.parameters["alpha"].default == 0.2
    sig = inspect.signature(tf.matmul)
    assert sig.parameters["transpose_a"].default is False


# ==== gradients at kinks: TensorFlow's conventions ===========================================
KINKS = [
    ("nn.relu", [-1.0, 0.0, 2.0], [0.0, 0.0, 1.0]),
    ("nn.relu6", [-1.0, 0.0, 3.0, 6.0, 7.0], [0.0, 0.0, 1.0, 0.0, 0.0]),
    ("nn.leaky_relu", [-1.0, 0.0, 2.0], [0.2, 0.2, 1.0]),
    ("nn.elu", [0.0], [1.0]),
    ("nn.selu", [0.0], [1.0507009873554805]),  # the linear branch, as TensorFlow 2.21
    ("abs", [-1.0, 0.0, 2.0], [-1.0, 0.0, 1.0]),
]


@pytest.mark.parametrize("path,x,want", KINKS, ids=[k[0] for k in KINKS])
def test_gradient_at_kinks(path, x, want):
    op = _resolve(path)
    x = tf.constant(x)
    with tf.GradientTape() as t:
        t.watch(x)
        y = op(x)
    np.testing.assert_allclose(t.gradient(y, x).numpy(), want, rtol=1e-6)


def test_sigmoid_cross_entropy_gradient_at_zero_logits():
    # zero-initialised logits are common: the gradient is sigmoid(0) - z = 0.5 - z
    z = tf.constant([0.0, 0.3, 1.0])
    x = tf.zeros((3,))
    with tf.GradientTape() as t:
        t.watch(x)
        loss = tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x)
    np.testing.assert_allclose(t.gradient(loss, x).numpy(), [0.5, 0.2, -0.5], rtol=1e-6)
    check_grads(lambda z, x: tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
                [np.array([0.0, 0.3, 1.0]), np.zeros(3)], order=2)


def test_clip_by_value_gradient_is_one_inside_and_at_the_bounds():
    x = tf.constant([-2.0, 0.0, 0.5, 1.0, 3.0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.clip_by_value(x, 0.0, 1.0)
    assert t.gradient(y, x).numpy().tolist() == [0.0, 1.0, 1.0, 1.0, 0.0]


def test_reduce_logsumexp_of_infinities():
    with warnings.catch_warnings(), np.errstate(divide="ignore"):
        warnings.simplefilter("error")      # no "invalid value" from shifting by -inf
        assert float(tf.reduce_logsumexp([-np.inf, -np.inf])) == -np.inf
    assert float(tf.reduce_logsumexp([np.inf, 1.0])) == np.inf
    assert float(tf.reduce_logsumexp([-np.inf, 0.0])) == 0.0


def test_integer_reductions_keep_their_dtype():
    i = tf.constant([[1, 2], [3, 4]])
    assert tf.reduce_sum(i).dtype == tf.int32 and int(tf.reduce_sum(i)) == 10
    assert tf.reduce_prod(i, axis=0).dtype == tf.int32
    assert tf.math.cumsum(i, axis=1).dtype == tf.int32
    assert tf.reduce_max(i).dtype == tf.int32
    with pytest.raises(tf.errors.InvalidArgumentError):  # TensorFlow: no Sum of bools
        tf.reduce_sum(tf.constant([True, True, False]))
    assert tf.reduce_sum(tf.cast([True, True, False], tf.int32)).numpy() == 2
