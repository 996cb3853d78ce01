"""A primitive's facts live in its registry block, and each fact is checked here for every
primitive: its abstract rule, elementwise-ness, its sparsity kind (against numerical
Jacobians, dense and sparse propagation both), the scatter/copy pairs, its algebraic
identities, fresh outputs, cacheability; and no block patches a rule on afterwards.

``tests/test_primitives.py`` checks the derivative, batching and emit rules of the same
blocks; ``tests/test_abstract_rules.py`` checks the abstract rules against every dtype.
"""
import ast
import pathlib
import sys

import numpy as np
import pytest

import tapegrad as tf
import test_primitives as tp
from tapegrad.core.dispatch import COMPLEX_KINDS, PRIMITIVES, SPARSITY_KINDS, Primitive, bind
from tapegrad.sparsity import detect

ROOT = pathlib.Path(tf.__file__).parent
SLOTS = set(Primitive.__slots__)


def test_every_primitive_states_every_fact():
    wrong = []
    for name, prim in sorted(PRIMITIVES.items()):
        for fact in ("fresh", "cacheable", "nondiff", "stateful", "elementwise",
                     "broadcast_view"):
            if not isinstance(getattr(prim, fact), bool):
                wrong.append(f"{name}.{fact} is not a bool")
        if not callable(prim.abstract):
            wrong.append(f"{name}.abstract: every primitive has its own shape and dtype rule")
        if prim.sparsity is not None and prim.sparsity not in SPARSITY_KINDS:
            wrong.append(f"{name}.sparsity {prim.sparsity!r} is not a kind")
        if prim.elementwise and prim.sparsity != "elementwise":
            wrong.append(f"{name} is elementwise but its sparsity is {prim.sparsity!r}")
        scatter = prim.sparsity in ("scatter", "scatter_along_axis")
        if scatter != (prim.transposes is not None):
            wrong.append(f"{name}.transposes must name a copy exactly for scatters")
        if scatter:
            copy = PRIMITIVES.get(prim.transposes)
            kind = prim.sparsity.replace("scatter", "copy")
            if copy is None or copy.sparsity != kind:
                wrong.append(f"{name}.transposes {prim.transposes!r} is not a {kind}")
        if prim.complex not in COMPLEX_KINDS:
            wrong.append(f"{name}.complex {prim.complex!r} is not a kind")
        if type(prim.value_params) is not tuple or not all(
                isinstance(k, str) for k in prim.value_params):
            wrong.append(f"{name}.value_params is not a tuple of param names")
        for rule in ("identities", "blas_work", "validate"):
            r = getattr(prim, rule)
            if r is not None and not callable(r):
                wrong.append(f"{name}.{rule} is not callable")
    assert not wrong, "; ".join(wrong)


def test_a_sparsity_kind_must_exist():
    with pytest.raises(ValueError, match="unknown sparsity kind"):
        Primitive("facts_test_bad_kind", lambda x: x, nin=1, sparsity="diagonalish")
    assert "facts_test_bad_kind" not in PRIMITIVES


def _module_level_patches(path):
    """``x.rule = ...`` at a module's top level (or in a top-level loop) for a rule slot."""
    tree = ast.parse(path.read_text())
    found = []
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.For, ast.If, ast.With, ast.Try)):
            stack.extend(node.body)
            continue
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Attribute) and t.attr in SLOTS - {"impl", "doc"}:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} .{t.attr}")
    return found


def test_no_rule_is_patched_onto_a_primitive_after_its_block():
    """Every rule is given where the primitive is made: reading a block tells all of it.
    (``primitives/complex.py`` adapts each block's derivative rules to TensorFlow's
    complex convention as the primitive is made, through ``core/hooks.py: complex_rules``.)"""
    found = [f for path in sorted(ROOT.rglob("*.py")) for f in _module_level_patches(path)]
    assert not found, f"rules set after the block: {found}"


def _name_tests(source, where):
    """Comparisons of something's ``.name`` with a primitive's name (``e.prim.name ==
    "broadcast_to"``, ``prim.name in ("a", "b")``): a fact about that primitive kept
    outside its block."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left] + node.comparators
        if not any(isinstance(o, ast.Attribute) and o.attr == "name" for o in operands):
            continue
        literals = []
        for o in operands:
            for c in (o.elts if isinstance(o, (ast.Tuple, ast.List, ast.Set)) else [o]):
                if isinstance(c, ast.Constant) and isinstance(c.value, str):
                    literals.append(c.value)
        if set(literals) & set(PRIMITIVES):
            found.append(f"{where}:{node.lineno} {ast.unparse(node)}")
    return found


def test_no_code_outside_the_blocks_tests_a_primitives_name():
    """What a primitive is or does is an attribute its block sets (``broadcast_view``, a
    sparsity kind, ``value_params``, ...), never a test of its name elsewhere."""
    found = [f for path in sorted(ROOT.rglob("*.py"))
             if "primitives" not in path.relative_to(ROOT).parts
             for f in _name_tests(path.read_text(), path.relative_to(ROOT))]
    assert not found, f"name tests outside primitives/: {found}"


def test_the_name_test_finds_name_tests():
    bad = 'def f(e):\n    return e.prim.name == "broadcast_to" or e.prim.name in ("mul", "x")\n'
    assert len(_name_tests(bad, "bad")) == 2
    # names of other things (a Keras layer's) are not primitives' names
    assert _name_tests('def f(layer):\n    return layer.name == "dense_1"\n', "ok") == []


def test_broadcast_views_are_read_only_views_of_their_input():
    """``broadcast_view`` (the IR folds such a constant at any size, as a view): the output
    shares the input's memory, is read-only, and has zero strides where it grew."""
    views = sorted(n for n, p in PRIMITIVES.items() if p.broadcast_view)
    assert views == ["broadcast_to"]
    checked = 0
    for name in views:
        prim = PRIMITIVES[name]
        for case in tp.SPECS[name]:
            args = [tf.constant(a) for a in tp._draw(case, 2)]
            with tf.GradientTape() as tape:
                tape.watch(args)
                case.fn(*args)
            for p, ins, params, _ in tape._entries:
                if p is not prim:
                    continue
                x = ins[0]._value
                v = prim.impl(*[a._value for a in ins], **params)
                assert np.shares_memory(v, x) and not v.flags.writeable, (name, case.label)
                if v.size > x.size:
                    assert 0 in v.strides, (name, case.label)
                    checked += 1
    assert checked


def test_value_params_are_the_unbounded_integers_of_a_loaded_program(tmp_path):
    """The saved-program reader bounds every integer param by the program's sizes except
    a block's ``value_params``: a pad value or a seed far above any size loads."""
    assert PRIMITIVES["pad"].value_params == ("constant_values",)
    assert PRIMITIVES["integer_pow"].value_params == ("y",)
    assert all(PRIMITIVES[n].value_params == ("seed",)
               for n in ("random_normal", "random_uniform"))
    assert PRIMITIVES["while_loop"].value_params == ("maximum_iterations",)
    f = tf.function(lambda v: tf.pad(v, [[1, 1]], constant_values=10**9) + v[0] ** 11)
    cf = f.get_concrete_function(tf.TensorSpec([2], tf.int64))
    tf.saved.save(cf, tmp_path / "f.tgz")
    loaded = tf.saved.load(tmp_path / "f.tgz")
    x = tf.constant([2, 3], tf.int64)
    np.testing.assert_array_equal(loaded(x).numpy(), cf(x).numpy())


def test_primitives_live_in_the_primitive_layer():
    """Every primitive's block is in the primitive layer (``name_p`` in a module of
    ``tapegrad/primitives/``), but control flow's (a layer above: their rules run tapes and
    traces); ``read_variable`` is one of them."""
    homes = {}
    for mod_name, mod in list(sys.modules.items()):
        if mod_name.startswith("tapegrad.") and mod is not None:
            for name, prim in PRIMITIVES.items():
                if getattr(mod, name + "_p", None) is prim:
                    homes.setdefault(name, set()).add(mod_name.split(".")[1])
    stray = {n: sorted(h) for n, h in homes.items()
             if "primitives" not in h and n not in ("cond", "while_loop")}
    assert not stray, f"blocks outside the primitive layer: {stray}"
    assert "primitives" in homes["read_variable"] and homes["cond"] == {"control_flow"}
    unfound = sorted(set(tp.SPECS) - set(homes) - {"while_loop"})
    assert not unfound, f"no module holds the block of {unfound}"


# ---- elementwise: permuting the elements permutes the output --------------------------------
ELEMENTWISE = sorted(n for n in tp.SPECS if n in PRIMITIVES and PRIMITIVES[n].elementwise)


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_elementwise_primitives_commute_with_permutations(name):
    checked = 0
    for case in tp.SPECS[name]:
        arrays = tp._draw(case, 3)
        out = case.fn(*[tf.constant(a) for a in arrays]).numpy()
        if out.size < 2:
            continue
        perm = np.random.RandomState(0).permutation(out.size)
        moved = [np.broadcast_to(a, out.shape).reshape(-1)[perm].reshape(out.shape)
                 for a in arrays]
        got = case.fn(*[tf.constant(a) for a in moved]).numpy()
        want = out.reshape(-1)[perm].reshape(out.shape)
        np.testing.assert_array_equal(got, want, err_msg=f"{name} {case.label}")
        checked += 1
    assert checked, name


# ---- sparsity kinds: the propagated pattern never misses a dependency ----------------------
SPARSE = sorted(n for n in tp.SPECS if n in PRIMITIVES and PRIMITIVES[n].sparsity
                and not PRIMITIVES[n].nondiff)


def _numerical_pattern(fn, arrays, i):
    """Where d out / d arrays[i] is nonzero, by central differences (above rounding: an
    exclusive cumsum computes ``(s + x) - x``)."""
    x = np.array(arrays[i], np.float64)
    cols = []
    for j in range(x.size):
        diffs = []
        for h in (1e-3, -1e-3):
            xh = x.copy()
            xh.reshape(-1)[j] += h
            args = [tf.constant(a) for a in arrays]
            args[i] = tf.constant(xh)
            diffs.append(np.asarray(fn(*args).numpy(), np.float64).reshape(-1))
        cols.append(np.abs(diffs[0] - diffs[1]) > 2e-3 * 1e-8)
    return np.stack(cols, axis=1)


@pytest.mark.parametrize("name", SPARSE)
def test_sparsity_kind_covers_the_jacobian(name):
    prim = PRIMITIVES[name]
    checked = 0
    for case in tp.SPECS[name]:
        arrays = tp._draw(case, 1)
        for i, arg in enumerate(case.args):
            if not arg.floating or np.size(arrays[i]) > 64:
                continue
            truth = _numerical_pattern(case.fn, arrays, i)
            args = [tf.constant(a) for a in arrays]
            with tf.GradientTape() as tape:
                tape.watch(args[i])
                out = case.fn(*args)
            if not any(e[0] is prim for e in tape._entries):
                continue  # the case computed it without the primitive (an empty axis...)
            dense = detect.tape_pattern(tape._entries, args[i], out)
            missed = truth & ~dense
            assert not missed.any(), f"{name} ({prim.sparsity}) misses dependencies"
            checked += 1
    assert checked, f"no case of {name} has a small float input to check"


@pytest.mark.parametrize("name", SPARSE)
def test_sparse_propagation_of_each_kind_covers_the_jacobian(name):
    pytest.importorskip("scipy")
    from tapegrad.sparsity import large
    for case in tp.SPECS[name]:
        arrays = tp._draw(case, 1)
        specs = [tf.TensorSpec(np.shape(a), np.asarray(a).dtype) for a in arrays]
        program = tf.function(case.fn).get_concrete_function(*specs).program
        for i, arg in enumerate(case.args):
            if not arg.floating or np.size(arrays[i]) > 64:
                continue
            truth = _numerical_pattern(case.fn, arrays, i)
            got = large.program_pattern(program, wrt=i).toarray()
            assert not (truth & ~got).any(), f"{name} ({PRIMITIVES[name].sparsity}) misses"


def test_sparsity_patterns_of_copies_are_exact():
    """Copies and scatters state where each element goes, so their patterns are exact."""
    x = tf.constant(np.arange(6.0))
    for f in (lambda v: tf.reshape(v, [2, 3])[:, 1:], lambda v: tf.reverse(v, [0]),
              lambda v: tf.gather(v, [4, 0, 4])):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        truth = _numerical_pattern(f, [x.numpy()], 0)
        np.testing.assert_array_equal(detect.tape_pattern(tape._entries, x, y), truth)


@pytest.mark.parametrize("name", ["take", "take_along_axis"])
def test_index_values_join_the_sparsity_fingerprint(name):
    """A pattern is reused only where the rules would see the same equations: the values of
    indices (take_along_axis after an argsort, say) are part of what they see; the values
    of floats are not."""
    keys = []
    for order, scale in (([0, 1, 2, 3], 1.0), ([0, 1, 2, 3], 2.0), ([0, 1, 3, 3], 1.0)):
        x = tf.constant(np.arange(4.0) * scale)
        with tf.GradientTape() as tape:
            tape.watch(x)
            bind(PRIMITIVES[name], x, tf.constant(order), axis=0)
        keys.append(detect.fingerprint(tape._entries, x))
    assert keys[0] == keys[1] and keys[0] != keys[2]


# ---- algebraic identities --------------------------------------------------------------------
def test_identities_are_stated_by_the_blocks_that_have_them():
    """The IR pass has no table of its own: it asks each equation's primitive."""
    import tapegrad.ir.algebraic as algebraic
    names = {n for n, p in PRIMITIVES.items() if p.identities is not None}
    assert {"mul", "add", "sub", "div", "neg", "pow", "integer_pow", "matmul", "transpose",
            "reshape", "broadcast_to", "cast", "reduce_sum", "where", "logical_and",
            "logical_or"} <= names
    assert not hasattr(algebraic, "_RULES") and not hasattr(algebraic, "_ELEMENTWISE")


def test_an_identity_of_a_new_primitive_is_applied():
    """A block's identities reach the optimizer with no other registration."""
    from tapegrad.ir import optimize
    from tapegrad.primitives.families import unary, xp

    def twice_negated(e, ctx, out, x):
        inner = ctx.prod(x, "facts_test_neg")
        return ([], inner.inputs[0]) if inner is not None else None

    unary("facts_test_neg", xp.negative, lambda g, ans, x: -g, identities=twice_negated)
    try:
        neg = PRIMITIVES["facts_test_neg"]
        f = tf.function(lambda v: neg(neg(v)) * 2.0)
        program = optimize(f.get_concrete_function(tf.TensorSpec([3], tf.float64)).program)
        assert [e.prim.name for e in program.equations] == ["mul"]
        np.testing.assert_array_equal(f(tf.constant([1.0, -2.0, 0.5])).numpy(), [2, -4, 1])
    finally:
        del PRIMITIVES["facts_test_neg"]


def test_sparse_hessian_of_a_sort_follows_the_new_order():
    """The pattern of a sort depends on the order argsort found: a second call with another
    order must not reuse the first call's pattern (it gave a wrong Hessian)."""
    f = lambda x: tf.reduce_sum(tf.sort(x)[:2] ** 2 * tf.sort(x)[1:3])
    h = tf.sparsity.hessian(f)
    for v in ([1.0, 2.0, 3.0, 4.0], [4.0, 3.0, 2.0, 1.0]):
        x = tf.constant(v)
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = f(x)
            g = inner.gradient(y, x)
        np.testing.assert_allclose(h(x).numpy(), outer.jacobian(g, x).numpy(), atol=1e-12)


# ---- complex values: the kind a block states is what its derivatives do ---------------------
def _complex_derivatives(name, z):
    """The gradient and JVP of primitive ``name`` at complex ``z`` (None where refused)."""
    prim = PRIMITIVES[name]
    with tf.GradientTape() as tape:
        tape.watch(z)
        y = bind(prim, z)
    try:
        return tape.gradient(y, z, output_gradients=tf.ones_like(y)).numpy()
    except TypeError:
        return None


@pytest.mark.parametrize("name", ["exp", "sin", "square", "tanh", "neg", "abs"])
def test_complex_kinds_follow_tensorflows_convention(name):
    """Holomorphic: the gradient of a holomorphic f is conj(f'(z)); real-linear maps pass the
    cotangent through; abs (its own rules) gives z / |z|, as TensorFlow does."""
    z = tf.constant([0.3 + 0.4j, -1.0 + 0.5j], tf.complex128)
    prim = PRIMITIVES[name]
    got = _complex_derivatives(name, z)
    if prim.complex == "real_linear":
        np.testing.assert_allclose(got, [-1, -1])  # neg: -1, a real coefficient
        return
    h = 1e-6  # f'(z) by a complex central difference (holomorphic f: any direction)
    if prim.complex == "holomorphic":
        zz = z.numpy()
        d = (prim.impl(zz + h) - prim.impl(zz - h)) / (2 * h)
        np.testing.assert_allclose(got, np.conj(d), rtol=1e-6)
    else:
        assert prim.complex == "own" and name == "abs"
        np.testing.assert_allclose(got, z.numpy() / np.abs(z.numpy()), rtol=1e-12)


def test_a_derivative_of_no_complex_kind_refuses_complex_values():
    z = tf.constant([0.3 + 0.4j], tf.complex128)
    assert PRIMITIVES["reduce_prod"].complex is None
    with tf.GradientTape() as tape:
        tape.watch(z)
        y = bind(PRIMITIVES["reduce_prod"], z, axis=(0,), keepdims=False)
    with pytest.raises(TypeError, match="not defined for complex values"):
        tape.gradient(y, z)
