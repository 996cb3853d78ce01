"""``tapegrad.function``: trace once per input signature, then run generated NumPy code.

A call looks up its signature (shapes and dtypes of tensor arguments, values of Python
arguments) in a cache; on a miss it traces the Python function into a ``Program``
(``ConcreteFunction``), which is optimised and compiled to NumPy source. With nothing active
(no tape, accumulator or vmap) a call runs the generated code; otherwise it evaluates the
program through ``bind``, so an outer tape differentiates it and vmap batches it. Inside
another trace, a call simply inlines the Python function.

Programs have static shapes, like ``jax.jit``. A ``None`` dimension of an
``input_signature`` (or of the relaxed specs of ``reduce_retracing``'s second trace) is
traced once with a symbolic size (``trace/symbolic.py``); later sizes rebuild that program
without running the Python function, as TensorFlow's generalised traces do, for every size
that passes the trace's guards. Where that cannot be shown to hold, the function is traced
at the new size, and two guarded traces with the same guards may still make a template
(``trace/template.py``). Every cache is bounded (``compile/lru.py``).
"""
import functools
import types
import warnings
import weakref

import numpy as np

from tapegrad import autograph, config
from tapegrad.compile.concrete import ConcreteFunction
from tapegrad.compile.fast_call import _fast_arity, _signature, fast_class, flat_key
from tapegrad.compile.lru import LRU
from tapegrad.compile import signature
from tapegrad.trace import symbolic
from tapegrad.trace import template
from tapegrad.compile.signature import (STATIC, TENSOR, VARIABLE, TensorSpec, conform,
                                        leaf_names, placeholder, rebuild, walk)
from tapegrad.trace.tracer import GraphBuilder, tracing
from tapegrad.core.state import STATE
from tapegrad.core.tensor import Tensor

RETRACE_WARNING = 10  # warn once when a function has traced this many times
TEMPLATES_PER_SIGNATURE = 8  # program families kept per signature skeleton
# every Function, so that tf.config.run_functions_eagerly can empty their fast-call tables
# (the generated fast path does not read the setting: it costs nothing per call)
_ALL = weakref.WeakSet()


def _run_eagerly_changed():
    for f in list(_ALL):
        f._fast.clear()


config._listeners.append(_run_eagerly_changed)

LEAKY_TRACES = 3  # symbolic traces that leaked a size before a signature is traced per size


class Function:
    """A Python function compiled per input signature (see ``tapegrad.function``)."""

    autograph = True  # trace the function converted by tapegrad/autograph (if/while/for)

    def __init__(self, fn, input_signature=None, reduce_retracing=False, jit_compile=None):
        functools.update_wrapper(self, fn)
        self.python_function = fn
        self.input_signature = None if input_signature is None else tuple(input_signature)
        self.reduce_retracing = bool(reduce_retracing)
        self.jit_compile = jit_compile  # accepted for TF compatibility: code is always generated
        self.trace_count = 0
        # Every cache is bounded (compile/lru.py, tapegrad.config.function_cache_size):
        # full signature key -> ConcreteFunction, least recently used evicted first
        self._cache = LRU(on_evict=self._evicted)
        # (shape, dtype, ...) of plain positional tensors -> runner: a plain dict, so the
        # fast path pays nothing; emptied when half the bound is reached (hot signatures
        # come back through _lookup, which also refreshes their place in _cache)
        self._fast = {}
        self._relaxed = LRU()  # structure key -> relaxed TensorSpecs (reduce_retracing)
        self._bound = weakref.WeakKeyDictionary()
        self._sig = _signature(fn)  # None for builtins: no introspection, no kwargs binding
        # With reduce_retracing or None dimensions, a program traced with symbolic sizes is
        # rebuilt for other sizes (trace/symbolic.py), or two such traces make a template
        # (trace/template.py).
        self._generalizes = self.reduce_retracing or any(
            isinstance(s, TensorSpec) and not s.is_fully_defined()
            for s in (self.input_signature or ()))
        # skeleton -> (ConcreteFunction, input shapes, symbolic.Sizes) of the last guarded
        # trace that could not be rebuilt alone (a two-trace template needs a second one)
        self._seen = LRU()
        # skeleton -> [(Template or SymbolicTemplate, its ConcreteFunction, input shapes)]
        self._templates = LRU()
        self._leaky = LRU()       # skeleton -> symbolic traces in which a size leaked
        self._size_bound = LRU()  # skeletons traced per size from now on (-> True)
        self._nfast = _fast_arity(self._sig)
        _ALL.add(self)

    def __get__(self, obj, objtype=None):
        """``@tapegrad.function`` on a method: one compiled function per instance."""
        if obj is None:
            return self
        try:
            return self._bound[obj]
        except (KeyError, TypeError):
            pass
        bound = make_function(types.MethodType(self.python_function, obj),
                              self.input_signature, self.reduce_retracing, self.jit_compile)
        bound.autograph = self.autograph
        try:
            self._bound[obj] = bound
        except TypeError:  # not weak-referenceable: the caller gets a fresh cache each time
            pass
        return bound

    def __call__(self, *args, **kwargs):
        # make_function gives most functions a subclass with an unrolled fast path
        return self._call(args, kwargs)

    def _call(self, args, kwargs):
        if config._run_eagerly:  # tf.config.run_functions_eagerly(True): plain Python
            return self.python_function(*args, **kwargs)
        if STATE.stack.tracers:  # a nested tapegrad.function inside a trace is inlined
            return autograph.traced_function(self)(*args, **kwargs)
        cf, leaves = self._lookup(args, kwargs)
        if cf.custom_gradient_dropped and STATE.stack.recorders:
            # the program holds a tf.custom_gradient's forward operations only: a tape
            # differentiating it would get the plain gradient, so the Python function runs
            # (its custom_gradient then records grad_fn, as TensorFlow's function would)
            return self.python_function(*args, **kwargs)
        return cf._run(leaves)

    def _lookup(self, args, kwargs):
        args, kwargs = self._canonicalize(args, kwargs)
        if self.input_signature is not None:
            if kwargs:
                raise TypeError(f"{self.__name__}(): keyword-only arguments are not allowed "
                                f"with an input_signature, got {sorted(kwargs)}.")
            args = conform(args, self.input_signature, self.__name__)
        leaves = []
        key = walk((args, kwargs), leaves)
        cf = self._cache.get(key)
        if cf is None and self._generalizes:
            cf = self._from_template(leaves, key)
        if cf is None:
            symbols = self._symbols(leaves, key) if self._generalizes else None
            cf = self._trace(args, kwargs, leaves, key, symbols)
        if not kwargs and len(args) == self._nfast and cf._runner is not None:
            if all(type(a) is Tensor or type(a) is np.ndarray for a in args):
                fk = []
                for a in args:
                    v = a if type(a) is np.ndarray else a._value
                    fk += [v.shape, v.dtype]
                fk = tuple(fk)
            else:
                fk = flat_key(args)
                fk = None if fk is None else fk[0]
            if fk is not None:
                if len(self._fast) >= max(1, config.function_cache_size() // 2):
                    self._fast.clear()
                self._fast[fk] = cf._runner
        return cf, leaves

    def _canonicalize(self, args, kwargs):
        if self._sig is None or (not kwargs and len(args) == self._nfast):
            return tuple(args), dict(kwargs)
        try:
            ba = self._sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.__name__}(): {e}") from None
        ba.apply_defaults()
        return tuple(ba.args), dict(ba.kwargs)

    def _names(self, args, kwargs):
        params = []
        if self._sig is not None:
            for p in self._sig.parameters.values():
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                    params.append(p.name)
                elif p.kind == p.VAR_POSITIONAL:
                    params += [f"{p.name}_{i}" for i in range(len(args) - len(params))]
        params += [f"arg{i}" for i in range(len(params), len(args))]
        keys = sorted(kwargs)
        return leaf_names(params[:len(args)] + keys, list(args) + [kwargs[k] for k in keys])

    def _symbols(self, leaves, key):
        """``[(tensor input, axis)]`` to trace with symbolic sizes, or None: the ``None``
        dimensions of the signature (or of the relaxed specs under ``reduce_retracing``)."""
        skel = signature.skeleton(key)
        if skel in self._size_bound:
            return None
        shapes = [tuple(v.shape) for k, v in leaves if k == TENSOR]
        if self.input_signature is not None:
            specs = _spec_leaves(self.input_signature)
        else:
            old = self._relaxed.get(skel)
            specs = None if old is None else [
                a.most_specific_compatible_type(TensorSpec(s, a.dtype))
                for a, s in zip(old, shapes)]
        if specs is None or len(specs) != len(shapes):
            return None
        symbols = [(i, axis) for i, spec in enumerate(specs) if spec.shape is not None
                   for axis, s in enumerate(spec.shape) if s is None]
        if not symbols or any(shapes[i][axis] < symbolic.MIN_SIZE for i, axis in symbols):
            return None
        return symbols

    def _trace(self, args, kwargs, leaves, key, symbols=None):
        first = self.trace_count == 0
        cf = self._trace_once(args, kwargs, leaves, key, symbols, first)
        if first and cf.created_variables:
            # As TensorFlow does: trace again, now with variable creation forbidden, so a
            # function that creates a tf.Variable on every call raises ValueError.
            cf = self._trace_once(args, kwargs, leaves, key, symbols, False)
        return cf

    def _trace_once(self, args, kwargs, leaves, key, symbols, may_create):
        builder = GraphBuilder(self.__name__)
        builder.may_create_variables = may_create
        builder.example_inputs = [v for kind, v in leaves if kind == TENSOR]
        if symbols:
            builder.sizes = symbolic.Sizes(builder, symbols)
        names = iter(self._names(args, kwargs))
        sym, arg_vars = [], []
        for kind, v in leaves:
            if kind == TENSOR:
                sym.append(builder.add_input(v.shape, v.dtype, next(names)))
            else:
                if kind == VARIABLE:
                    arg_vars.append(v)
                sym.append(v)
                next(names)
        args_s, kwargs_s = rebuild((args, kwargs), iter(sym))
        with tracing(builder):
            out = autograph.traced_function(self)(*args_s, **kwargs_s)
            out_leaves, tensors = [], []
            walk(out, out_leaves)
            kinds = []
            for kind, v in out_leaves:
                if kind == STATIC:
                    kinds.append((STATIC, v))
                    continue
                if kind == VARIABLE:
                    v = v.read_value()
                elif not isinstance(v, Tensor):
                    v = Tensor._wrap(np.asarray(v))
                kinds.append((TENSOR, len(tensors)))
                tensors.append(v)
            program = builder.build(tensors)
        self.trace_count += 1
        if self.trace_count == RETRACE_WARNING:
            warnings.warn(f"tapegrad.function {self.__name__!r} has been traced "
                          f"{self.trace_count} times. Tracing is expensive; frequent "
                          "retracing comes from Python scalars or new shapes as arguments. "
                          "Pass tensors, or fix the shapes.", stacklevel=4)
        slots = [next((j for j, av in enumerate(arg_vars) if av is var), var)
                 for var in builder.variables]
        specs = self._specs(leaves, key)
        cf = ConcreteFunction(program, slots, out, kinds, key, specs,
                              keep=[v for k, v in leaves if k == STATIC])
        cf.created_variables = builder.created_variables
        cf.custom_gradient_dropped = getattr(builder, "dropped_custom_gradient", False)
        if cf.custom_gradient_dropped:
            cf._python_function = self.python_function
        self._cache[key] = cf
        if symbols:
            sizes = builder.sizes
            tpl = sizes.finish(program, builder.sym_shapes)
            skel = signature.skeleton(key)
            shapes = [tuple(v.shape) for k, v in leaves if k == TENSOR]
            if tpl is not None:
                self._add_template(skel, (tpl, cf, shapes))
            elif sizes.leaks:  # a size may have been read unguarded: no template from it
                # (mostly a coincidence: a constant 2.0 traced at size 2); after a few, the
                # signature is traced per size without symbolic sizes
                self._leaky[skel] = self._leaky.get(skel, 0) + 1
                if self._leaky[skel] >= LEAKY_TRACES:
                    self._size_bound[skel] = True
            else:
                self._learn(cf, shapes, skel, sizes)
        return cf

    def _learn(self, cf, shapes, skel, sizes):
        """After a guarded trace that could not be rebuilt alone: with an earlier one at
        another size that recorded the same guards, try a two-trace template."""
        first = self._seen.get(skel)
        self._seen[skel] = (cf, shapes, sizes)
        if first is None or first[2].guards != sizes.guards or first[2].symbols != sizes.symbols:
            return
        d = template.varying_size(first[1], shapes)
        if d is None:
            return
        try:
            tpl = template.learn(first[0].raw_program, d[0], cf.raw_program, d[1],
                                 first[2].params, first[2].guards)
        except Exception:  # any surprise: no template, tracing stays correct
            tpl = None
        if tpl is not None:
            tpl.symbols = sizes.symbols  # the guards and expressions name these sizes
            self._add_template(skel, (tpl, first[0], first[1]))
            self._seen.pop(skel)

    def _add_template(self, skel, entry):
        # several per signature: one per side of a Python branch on the size, say; the
        # newest few are kept (a size pinned by int(n) gives a template for that size only)
        entries = self._templates.get(skel, [])[-(TEMPLATES_PER_SIGNATURE - 1):]
        self._templates[skel] = entries + [entry]

    def _evicted(self, key, cf):
        """``cf`` left ``_cache``: its fast-path entries go too, so nothing keeps it."""
        runner = cf._runner
        if runner is not None:
            for k in [k for k, r in self._fast.items() if r is runner]:
                del self._fast[k]

    def _from_template(self, leaves, key):
        """A ConcreteFunction for a new size from a template, without running Python."""
        for entry in self._templates.get(signature.skeleton(key), ()):
            cf = self._instantiate(entry, leaves, key)
            if cf is not None:
                return cf
        return None

    def _instantiate(self, entry, leaves, key):
        tpl, base, base_shapes = entry
        shapes = [tuple(v.shape) for k, v in leaves if k == TENSOR]
        if isinstance(tpl, symbolic.SymbolicTemplate):
            new_size = shapes
        else:
            sizes = template.varying_size(base_shapes, shapes)
            if sizes is None or sizes[0] != tpl.d1:
                return None
            if any(s != t and i not in axes for a, b, axes in zip(base_shapes, shapes,
                                                                  tpl.input_axes)
                   for i, (s, t) in enumerate(zip(a, b))):
                return None
            new_size = sizes[1]
        try:
            if isinstance(tpl, symbolic.SymbolicTemplate):
                program = tpl.instantiate(new_size)
            else:
                resolve = symbolic.resolver(tpl.symbols, shapes)
                program, env = tpl.instantiate(new_size, resolve)
                symbolic.check_guards(tpl.guards, resolve.leaf_in(env))
            cf = ConcreteFunction(program, base._slots, base._out_struct, base._kinds, key,
                                  self._specs(leaves, key),
                                  keep=[v for k, v in leaves if k == STATIC])
            # one run on zeros: a fitted size that does not hold fails here, not later
            cf._fn(*[np.zeros(v.shape, v.dtype) for v in cf.program.inputs + cf.program.captures])
        except Exception:  # the fitted params do not hold at this size: trace instead
            return None
        self._cache[key] = cf
        return cf

    def _specs(self, leaves, key):
        """The TensorSpecs this trace advertises (generalised under ``reduce_retracing``)."""
        specs = [TensorSpec(tuple(v.shape), v.dtype) for k, v in leaves if k == TENSOR]
        if not self.reduce_retracing:
            return specs
        skeleton = signature.skeleton(key)
        old = self._relaxed.get(skeleton)
        if old is not None:
            specs = [a.most_specific_compatible_type(b) for a, b in zip(old, specs)]
        self._relaxed[skeleton] = specs
        return specs

    def get_concrete_function(self, *args, **kwargs):
        """The traced program for these arguments (tensors, arrays, TensorSpecs or values).

        >>> import tapegrad as tf
        >>> f = tf.function(lambda x: x * 2.0)
        >>> cf = f.get_concrete_function(tf.TensorSpec([2], tf.float32))
        >>> cf(tf.constant([1.0, 2.0])).numpy().tolist()
        [2.0, 4.0]
        """
        if not args and not kwargs and self.input_signature is not None:
            args = self.input_signature
        args = tuple(placeholder(a) for a in args)
        kwargs = {k: placeholder(v) for k, v in kwargs.items()}
        cf, _ = self._lookup(args, kwargs)
        return cf

    def experimental_get_tracing_count(self):
        """TensorFlow's name for ``trace_count``."""
        return self.trace_count

    def __repr__(self):
        return f"<tapegrad.function {self.__name__} traced {self.trace_count} time(s)>"


def make_function(fn, input_signature=None, reduce_retracing=False, jit_compile=None):
    """A ``Function`` whose class has a ``__call__`` unrolled for ``fn``'s arity
    (``compile/fast_call.py``)."""
    n = _fast_arity(_signature(fn))
    if not 0 <= n <= 8:
        return Function(fn, input_signature, reduce_retracing, jit_compile)
    return fast_class(Function, n)(fn, input_signature, reduce_retracing, jit_compile)


def _spec_leaves(structure):
    """The TensorSpecs of an input signature, in order."""
    if isinstance(structure, TensorSpec):
        return [structure]
    if isinstance(structure, dict):
        return [s for k in sorted(structure) for s in _spec_leaves(structure[k])]
    if isinstance(structure, (list, tuple)):
        return [s for x in structure for s in _spec_leaves(x)]
    return []


def function(fn=None, *, input_signature=None, reduce_retracing=False, jit_compile=None,
             autograph=True, experimental_relax_shapes=None):
    """Compile a Python function: trace it once per input signature, then reuse the program.

    Python side effects (``print``) happen only while tracing. Variables are captured by
    reference, and ``assign``/``assign_add``/``assign_sub`` inside take effect on every call.
    Tapes, jacobians and forward accumulators inside are traced into the program; a tape
    outside differentiates the compiled function.

    >>> import tapegrad as tf
    >>> @tf.function
    ... def f(x):
    ...     print("tracing")
    ...     return tf.tanh(x) * 2.0
    >>> _ = f(tf.constant([0.5]))
    tracing
    >>> float(f(tf.constant([0.0]))[0]), f.trace_count
    (0.0, 1)
    """
    if experimental_relax_shapes is not None:
        reduce_retracing = reduce_retracing or bool(experimental_relax_shapes)
    def wrap(f):
        if not callable(f):
            raise TypeError(f"tapegrad.function expects a callable, got {f!r}")
        g = make_function(f, input_signature, reduce_retracing, jit_compile)
        g.autograph = bool(autograph)  # convert tensor control flow (tapegrad/autograph/)
        return g
    return wrap if fn is None else wrap(fn)
