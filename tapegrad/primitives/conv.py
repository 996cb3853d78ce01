"""Convolution primitives: the convolution and its two transposes, closed under differentiation.

One layout, channels last (the op layer, ``ops/conv_ops.py``, turns TensorFlow's formats and
padding strings into it):

- image ``x``: ``(N, S_1..S_d, C)``, ``C = groups * Cg``;
- filter ``w``: ``(K_1..K_d, Cg, Co)``, ``Co = groups * Cog`` (TensorFlow's HWIO);
- output ``y``: ``(N, O_1..O_d, Co)``.

Params, all JSON-friendly: ``strides`` and ``dilations`` (d positive ints), ``padding``
(d ``(lo, hi)`` pairs of non-negative ints), ``groups``; the transposes also name the spatial
size they produce (``input_spatial``, ``kernel_spatial``). The three bilinear primitives

    conv(x, w) -> y                         the convolution (a cross-correlation, as in TF)
    conv_input_grad(y, w) -> x              the transposed convolution
    conv_filter_grad(x, y) -> w             the filter's cotangent

are each other's derivatives: <conv(x, w), y> = <x, conv_input_grad(y, w)> =
<w, conv_filter_grad(x, y)>. So every order of derivative stays within these three.

Each is one BLAS GEMM per group on the im2col matrix of windows: ``(N*O, K*C) @ (K*C, Co)``
(the forward one on offset-major columns in blocks of rows where that pays: ``PANEL_BYTES``;
the implementations and their cost models are in ``conv_gemm.py``, the windows in
``conv_geometry.py``).
The windows are gathered with ``sliding_window_view`` (one copy) or, for a few channels, as
the transposed matrix ``(K*C, N*O)`` by copying one strided slice per kernel offset into
contiguous rows (measured: 2-5x faster than either layout's alternative at C = 1..3, slower
from C = 4 on); the transposed convolution scatters its columns back with one strided add per
kernel offset.
"""
import numpy as np

from tapegrad.core.dispatch import PRIMITIVES, Primitive
from tapegrad.primitives.conv_gemm import _conv, _conv_filter_grad, _conv_input_grad
from tapegrad.primitives.conv_geometry import (check_geometry, check_ints, check_padding, fold,
                                               unfold)
from tapegrad.primitives.params import check_int, fail


# ---- shape rules ---------------------------------------------------------------------------
def _groups_fit(name, c, cg, co, groups):
    if groups < 1 or cg < 1 or c % cg or c // cg != groups:
        raise ValueError(f"{name}: input depth must be evenly divisible by filter depth: "
                         f"{c} vs {cg} (groups {groups})")
    if co % groups:
        raise ValueError(f"{name}: output depth must be evenly divisible by number of groups: "
                         f"{co} vs {groups}")


def _ranks(name, a, b):
    if a.ndim < 3 or a.ndim != b.ndim:
        raise ValueError(f"{name}: operands of ranks {a.ndim} and {b.ndim}; expected equal "
                         "ranks of at least 3 (batch, spatial axes, channels)")


def _conv_abstract(x, w, *, strides, dilations, padding, groups):
    _numeric("conv", x, w)
    _ranks("conv", x, w)
    d = x.ndim - 2
    _groups_fit("conv", x.shape[-1], w.shape[-2], w.shape[-1], groups)
    out = check_geometry("conv", tuple(x.shape[1:-1]), tuple(w.shape[:d]), strides, dilations,
                         padding)
    return (x.shape[0],) + out + (w.shape[-1],), np.result_type(x.dtype, w.dtype)


def _input_grad_abstract(y, w, *, input_spatial, strides, dilations, padding, groups):
    _numeric("conv_input_grad", y, w)
    _ranks("conv_input_grad", y, w)
    d = y.ndim - 2
    c = w.shape[-2] * groups
    _groups_fit("conv_input_grad", c, w.shape[-2], w.shape[-1], groups)
    if y.shape[-1] != w.shape[-1]:
        raise ValueError("conv_input_grad: filter and out_backprop must have the same out_depth "
                         f"({w.shape[-1]} vs {y.shape[-1]})")
    out = check_geometry("conv_input_grad", tuple(input_spatial), tuple(w.shape[:d]), strides,
                         dilations, padding)
    _sizes_match("conv_input_grad", out, tuple(y.shape[1:-1]), input_spatial)
    return (y.shape[0],) + tuple(input_spatial) + (c,), np.result_type(y.dtype, w.dtype)


def _filter_grad_abstract(x, y, *, kernel_spatial, strides, dilations, padding, groups):
    _numeric("conv_filter_grad", x, y)
    _ranks("conv_filter_grad", x, y)
    if x.shape[-1] % groups or y.shape[-1] % groups or groups < 1:
        raise ValueError(f"conv_filter_grad: depths {x.shape[-1]} and {y.shape[-1]} are not "
                         f"divisible by {groups} groups")
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"conv_filter_grad: batch sizes {x.shape[0]} and {y.shape[0]} differ")
    out = check_geometry("conv_filter_grad", tuple(x.shape[1:-1]), tuple(kernel_spatial),
                         strides, dilations, padding)
    _sizes_match("conv_filter_grad", out, tuple(y.shape[1:-1]), tuple(x.shape[1:-1]))
    return (tuple(kernel_spatial) + (x.shape[-1] // groups, y.shape[-1]),
            np.result_type(x.dtype, y.dtype))


def _sizes_match(name, computed, actual, spatial):
    if tuple(computed) != tuple(actual):
        raise ValueError(f"{name}: size of out_backprop doesn't match computed: actual = "
                         f"{tuple(actual)}, computed = {tuple(computed)} for input "
                         f"{tuple(spatial)}")



def _validate(name, extra=None):
    def rule(a, b, *, strides, dilations, padding, groups, **params):
        d = len(strides) if isinstance(strides, tuple) else -1
        if d < 1 or a.ndim != d + 2:
            fail(name, "strides", f"must hold one int per spatial axis of the rank-{a.ndim} "
                                  f"operand, got {strides!r}"[:120])
        check_ints(name, "strides", strides, d, 1)
        check_ints(name, "dilations", dilations, d, 1)
        check_padding(name, padding, d)
        check_int(name, "groups", groups, 1)
        if extra:
            check_ints(name, extra, params[extra], d, 0 if extra == "input_spatial" else 1)
    return rule


def _numeric(name, *avals):
    for a in avals:
        if np.dtype(a.dtype).kind not in "iuf":
            raise TypeError(f"{name}: expected numeric operands, got {np.dtype(a.dtype).name}")



# Where a batch axis of one operand goes when the other is shared: to the free axis of that
# operand that the result keeps. (axis, grouped?) for the operand, then for the result.
# Images are (N, ..., C), filters (K..., Cg, Co).
_FREE_AXIS = {
    "conv": (((0, False), (0, False)), ((-1, True), (-1, True))),                # x: N; w: Co
    "conv_input_grad": (((0, False), (0, False)), ((-2, False), (-1, True))),    # y: N; w: Cg
    "conv_filter_grad": (((-1, True), (-2, False)), ((-1, True), (-1, True))),   # x: C; y: Co
}


def _batch_rule(name):
    """The batching rule of convolution primitive ``name`` (the block's own, made with it)."""
    def rule(args, batched, *, groups, **params):
        prim = PRIMITIVES[name]
        if all(batched):
            # both carry B: B independent problems side by side as B * groups groups
            b = args[0].shape[0]
            out = prim.bind_raw(*[fold(a, -1, 1) for a in args], groups=b * groups, **params)
            return unfold(out, -1, 1, b)
        i = 0 if batched[0] else 1
        b = args[i].shape[0]
        (ax, grp), (rax, rgrp) = _FREE_AXIS[prim.name][i]
        ops = list(args)
        ops[i] = fold(args[i], ax, groups if grp else 1)
        out = prim.bind_raw(*ops, groups=groups, **params)
        return unfold(out, rax, groups if rgrp else 1, b)
    return rule


# ---- the registry blocks -------------------------------------------------------------------
_EMIT = "strides={strides}, dilations={dilations}, padding={padding}, groups={groups})"


def _p(params, drop=()):
    return {k: v for k, v in params.items() if k not in drop}


conv_p = Primitive(
    "conv", _conv, nin=2, abstract=_conv_abstract,
    vjp=(lambda g, ans, x, w, **p: conv_input_grad_p.bind_raw(
            g, w, input_spatial=tuple(x.shape[1:-1]), **p),
         lambda g, ans, x, w, **p: conv_filter_grad_p.bind_raw(
            x, g, kernel_spatial=tuple(w.shape[:-2]), **p)),
    jvp=(lambda x_dot, ans, x, w, **p: conv_p.bind_raw(x_dot, w, **p),
         lambda w_dot, ans, x, w, **p: conv_p.bind_raw(x, w_dot, **p)),
    batch=_batch_rule("conv"), validate=_validate("conv"),
    emit="_conv({0}, {1}, " + _EMIT, sparsity="multilinear",
    # multiply-adds of one call, for the BLAS-thread cost model (util/blas.py): output
    # elements times filter taps times input channels, whichever operand is the output here
    blas_work=lambda ins, outs, p: outs[0].size * ins[1].size // max(1, ins[1].shape[-1]),
    doc="N-d convolution (cross-correlation), channels last, HWIO filter")

conv_input_grad_p = Primitive(
    "conv_input_grad", _conv_input_grad, nin=2, abstract=_input_grad_abstract,
    vjp=(lambda g, ans, y, w, **p: conv_p.bind_raw(g, w, **_p(p, ("input_spatial",))),
         lambda g, ans, y, w, **p: conv_filter_grad_p.bind_raw(
            g, y, kernel_spatial=tuple(w.shape[:-2]), **_p(p, ("input_spatial",)))),
    jvp=(lambda y_dot, ans, y, w, **p: conv_input_grad_p.bind_raw(y_dot, w, **p),
         lambda w_dot, ans, y, w, **p: conv_input_grad_p.bind_raw(y, w_dot, **p)),
    batch=_batch_rule("conv_input_grad"), validate=_validate("conv_input_grad", "input_spatial"),
    emit="_conv_input_grad({0}, {1}, input_spatial={input_spatial}, " + _EMIT,
    sparsity="multilinear",
    blas_work=lambda ins, outs, p: ins[0].size * ins[1].size // max(1, ins[1].shape[-1]),
    doc="the transposed convolution: the convolution's cotangent of its input")

conv_filter_grad_p = Primitive(
    "conv_filter_grad", _conv_filter_grad, nin=2, abstract=_filter_grad_abstract,
    vjp=(lambda g, ans, x, y, **p: conv_input_grad_p.bind_raw(
            y, g, input_spatial=tuple(x.shape[1:-1]), **_p(p, ("kernel_spatial",))),
         lambda g, ans, x, y, **p: conv_p.bind_raw(x, g, **_p(p, ("kernel_spatial",)))),
    jvp=(lambda x_dot, ans, x, y, **p: conv_filter_grad_p.bind_raw(x_dot, y, **p),
         lambda y_dot, ans, x, y, **p: conv_filter_grad_p.bind_raw(x, y_dot, **p)),
    batch=_batch_rule("conv_filter_grad"),
    validate=_validate("conv_filter_grad", "kernel_spatial"),
    emit="_conv_filter_grad({0}, {1}, kernel_spatial={kernel_spatial}, " + _EMIT,
    sparsity="multilinear",
    blas_work=lambda ins, outs, p: ins[1].size * outs[0].size // max(1, outs[0].shape[-1]),
    doc="the convolution's cotangent of its filter")

# The code generator imports these by name for the ``emit`` strings above.
EMIT_HELPERS = {"_conv": _conv, "_conv_input_grad": _conv_input_grad,
                "_conv_filter_grad": _conv_filter_grad}
