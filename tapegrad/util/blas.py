"""BLAS threads chosen per compiled program by measuring, so small GEMMs never spin on a
busy machine and large ones keep their threads on a quiet one.

OpenBLAS starts its thread pool for any GEMM past a small size. On a quiet machine that pays;
on one whose cores are busy with other work (another job, a Dask worker, a laptop doing
anything), the threads spin waiting for cores and a program of many GEMMs gets many times
slower. Which case holds is a fact about the machine at run time, not about the program, so
each compiled program that makes BLAS calls big enough to be threaded
(``THREADED_WORK`` multiply-adds) times itself: its first calls alternate between NumPy's
BLAS on one thread and the library's default, it keeps the faster, and it probes again
after ``REPROBE_SECONDS`` (at least ``REPROBE_RATIO`` times as long as a round of probes
took), so it follows a machine that gets busy or quiet. Switching costs about a
microsecond (``threadpoolctl``).

A probe is a run of calls in one mode lasting ``PROBE_SECONDS`` (at least one call), timed
as a whole: what counts is the time of many calls, not that of a typical one. On a loaded
machine most calls on two threads are as fast as on one or faster, but one in ten or so
waits a whole time slice (10-20 ms) for the second core: the median call on two threads
of W7's 0.3 ms gradient was 0.8x the one-thread median while 20 ms of its calls took 3-13x
as long as on one thread. The mode of the smaller mean over ``PROBES`` probes each wins;
two threads only where they are faster by ``MARGIN`` (they take twice the CPU time, and a
gain within the noise is none). The mean, not the median: a call longer than a probe (W7's
4-7 ms gradient at width 1,024) makes each probe one call, and on a machine where another
process takes a core now and then, two of three such calls on two threads ran at 0.6x the
one-thread time and the third at 3-10x; the median of the three chose two threads and the
program ran 1.6x slower than on one until the next round. The errors are not alike either:
one thread wrongly chosen on a quiet machine costs at most the second thread's gain until
the next round; two threads wrongly chosen on a loaded one cost many times the call. Where every probe of one mode took ``EARLY`` times as long
as every probe of the other, the round ends there: on a machine whose cores are all busy one
call on two threads can take 100-400x as long (W7's gradient: 50-380 ms against 0.5-2.5 ms),
and a round of three such probes cost more than the next two seconds saved.

OpenBLAS's results for some shapes depend on its thread count in the last bit (it splits the
output among threads, and the split moves the blocks' edges: most float64 GEMMs with a wide
output on this machine's two threads, none of the float32 ones measured), so a switch could
make a compiled program differ from eager execution, and one call from the next. Before its
first probe a program therefore checks each of its threaded BLAS calls once, on random
operands of its shapes, C-ordered and stored transposed (the split depends on the layout for
a few shapes: ``thread_invariant``, cached per shape for the process): where one
thread and the default give other bits, the program never switches and runs at the
library's default, as eager execution does. So every call of a program gives the bits of
the eager operations, on a quiet machine or a busy one.

The policy steps aside whenever the user decided: when ``OPENBLAS_NUM_THREADS``,
``OMP_NUM_THREADS`` or ``MKL_NUM_THREADS`` is set, when ``TAPEGRAD_BLAS_THREADS=default``
is set, or after ``tf.config.threading.set_intra_op_parallelism_threads(n)``. Without
threadpoolctl installed (the ``fast`` extra) nothing changes.

>>> is_threaded(32 * 64 * 64)              # OpenBLAS runs this on one thread anyway
False
>>> is_threaded(256 ** 3)
True
"""
import os
import threading
from time import perf_counter

THREADED_WORK = 1 << 18  # multiply-adds from which OpenBLAS starts its threads
PROBES = 3               # timed probes of each mode per round
PROBE_SECONDS = 0.004    # calls of one mode timed together: one probe
MARGIN = 0.05            # two threads must be this much faster than one
EARLY = 3.0              # every probe of a mode this many times slower: decided at once
REPROBE_SECONDS = 2.0    # a choice holds this long ...
REPROBE_RATIO = 50       # ... and at least this many times its round of probes
_USER_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

_lock = threading.Lock()
_state = {"controllers": None, "depth": 0, "saved": (), "user": None}


# The environment is read at every call (a user may set a variable at any time), but
# ``os.environ.get`` of a missing name raises and catches a KeyError inside (~0.4 us
# each): the encoded names are looked up in its underlying dict instead, where it has one.
_ENV_DATA = getattr(os.environ, "_data", None)
try:
    _ENV_KEYS = tuple(os.environ.encodekey(v) for v in ("TAPEGRAD_BLAS_THREADS",) + _USER_VARS)
except AttributeError:  # pragma: no cover - an os.environ without CPython's internals
    _ENV_DATA = None


def _env_decided():
    data = _ENV_DATA
    if data is None or data is not getattr(os.environ, "_data", None):  # pragma: no cover
        return (os.environ.get("TAPEGRAD_BLAS_THREADS", "auto") != "auto"
                or any(os.environ.get(v) for v in _USER_VARS))
    get = data.get
    own = get(_ENV_KEYS[0])
    if own is not None and os.environ.decodevalue(own) != "auto":
        return True
    for k in _ENV_KEYS[1:]:
        if get(k):  # set and not empty
            return True
    return False


def user_decided():
    """Whether the user chose BLAS threads themselves (then tapegrad never changes them):
    ``set_user_threads`` was called, or one of the variables of the module doc is set
    (read afresh at every call).

    >>> user_decided() == bool(_state["user"] is not None or _env_decided())
    True
    """
    if _state["user"] is not None:
        return True
    return _env_decided()


def set_user_threads(n):
    """``tf.config.threading.set_intra_op_parallelism_threads``: n BLAS threads (0: the
    library's default), and the automatic policy off."""
    _state["user"] = n
    for c in _controllers():
        c.set_num_threads(n if n > 0 else os.cpu_count() or 1)


def user_threads():
    return _state["user"] or 0


def is_threaded(work):
    """Whether a program whose largest BLAS call is ``work`` multiply-adds may use threads."""
    return work >= THREADED_WORK


def _controllers():
    if _state["controllers"] is None:
        try:
            import numpy as np
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - the optional extra is missing
            _state["controllers"] = []
            return []
        numpy_dir = os.path.dirname(os.path.dirname(np.__file__))
        libs = [c for c in ThreadpoolController().lib_controllers
                if c.user_api == "blas" and ("numpy" in c.filepath or
                                             c.filepath.startswith(numpy_dir))]
        _state["controllers"] = libs
    return _state["controllers"]


def _set_single(libs):
    with _lock:
        if _state["depth"] == 0:
            _state["saved"] = tuple(c.get_num_threads() for c in libs)
            for c in libs:
                c.set_num_threads(1)
        _state["depth"] += 1


def _restore(libs):
    with _lock:
        _state["depth"] -= 1
        if _state["depth"] == 0:
            for c, n in zip(libs, _state["saved"]):
                c.set_num_threads(n)


def adaptive(fn, program=None):
    """``fn`` (a compiled program) choosing, by timing itself, between NumPy's BLAS on one
    thread and the library's default (see the module doc), where ``program``'s threaded
    BLAS calls give the same bits either way (``thread_invariant``; without a ``program``
    it is not checked). Nested calls and threads are safe: the first caller in sets one
    thread, the last one out restores the setting."""
    # times: the per-call time of each finished probe, (one thread, default); probe: the
    # running one, [mode, seconds, calls]; hold: how long the choice made at ``since`` holds
    state = {"choice": None, "times": ([], []), "probe": None, "started": 0.0,
             "since": 0.0, "hold": 0.0, "invariant": None if program is not None else True}

    def run(*args):
        if user_decided():
            return fn(*args)
        libs = _controllers()
        if not libs:
            return fn(*args)
        invariant = state["invariant"]
        if not invariant:
            if invariant is None:  # once, before the first probe
                state["invariant"] = thread_invariant(program, libs)
            if not state["invariant"]:  # False, or None: undecided now (another in one thread)
                return fn(*args)
        choice = state["choice"]
        if choice is not None:
            if perf_counter() - state["since"] < state["hold"]:
                if choice == 0:
                    return fn(*args)
                _set_single(libs)
                try:
                    return fn(*args)
                finally:
                    _restore(libs)
            state["choice"], state["times"] = None, ([], [])
        probe = state["probe"]
        if probe is None:
            single, default = state["times"]
            if not single and not default:
                state["started"] = perf_counter()
            probe = state["probe"] = [1 if len(single) <= len(default) else 0, 0.0, 0]
        mode = probe[0]
        if mode:
            _set_single(libs)
        t0 = perf_counter()
        try:
            return fn(*args)
        finally:
            dt = perf_counter() - t0
            if mode:
                _restore(libs)
            probe[1] += dt
            probe[2] += 1
            if probe[1] >= PROBE_SECONDS:
                _finish_probe(state, probe)

    run.__wrapped__ = fn
    run.blas_state = state  # for tests and diagnostics
    return run


def _finish_probe(state, probe):
    if state["probe"] is not probe:  # another thread finished it
        return
    state["probe"] = None
    mode, seconds, calls = probe
    single, default = state["times"]
    (single if mode else default).append(seconds / calls)
    if not (single and default):
        return
    if min(default) > EARLY * max(single):  # threads waiting for busy cores: no more of them
        choice = 1
    elif min(single) > EARLY * max(default):
        choice = 0
    elif len(single) >= PROBES and len(default) >= PROBES:
        one, two = sum(single) / len(single), sum(default) / len(default)
        choice = 0 if two < (1 - MARGIN) * one else 1
    else:
        return
    now = perf_counter()
    state["choice"], state["since"] = choice, now
    state["hold"] = max(REPROBE_SECONDS, REPROBE_RATIO * (now - state["started"]))


def program_work(program):
    """The largest BLAS call of a program, in multiply-adds (0: it makes none)."""
    work = 0
    for e in program.equations:
        rule = getattr(e.prim, "blas_work", None)
        if rule is not None:
            work = max(work, int(rule(e.inputs, e.outs, e.kwargs)))
        for _, v in e.params:  # control-flow sub-programs
            if hasattr(v, "equations"):
                work = max(work, program_work(v))
    return work


_INVARIANT = {}  # (primitive, operand shapes and dtypes, params) -> same bits on 1 thread


def thread_invariant(program, libs=None):
    """Whether each BLAS call of ``program`` big enough to be threaded gives the same bits
    on one thread as on the library's default: True, False, or None where it cannot tell now
    (another program runs on one thread at the moment, so both would run alike).

    Each call is run once each way on random operands of its shapes, in each layout of its
    two operands that BLAS can see (C-ordered, or a transposed view: OpenBLAS's rounding
    depends on the shapes, the layout and the thread count, not the values), and the answer
    is kept for the process. A call it cannot run so (a symbolic size, an integer operand) counts as
    not invariant: the program then keeps the library's default, as eager execution does.
    """
    libs = _controllers() if libs is None else libs
    for e in _threaded_calls(program):
        try:
            key = (e.prim.name, tuple((tuple(v.shape), v.dtype.str) for v in e.inputs),
                   e.params)
            hash(key)
        except TypeError:
            return False
        ok = _INVARIANT.get(key)
        if ok is None:
            ok = _same_bits_on_one_thread(e, libs)
            if ok is None:
                return None
            _INVARIANT[key] = ok
        if not ok:
            return False
    return True


def _threaded_calls(program):
    for e in program.equations:
        rule = getattr(e.prim, "blas_work", None)
        if rule is not None and is_threaded(int(rule(e.inputs, e.outs, e.kwargs))):
            yield e
        for _, v in e.params:  # control-flow sub-programs
            if hasattr(v, "equations"):
                yield from _threaded_calls(v)


def _layouts(a):
    """``a`` as the BLAS call may see it: C-ordered, and (a matrix) with its last two axes
    stored transposed (a ``W.T`` view: OpenBLAS's split differs for some shapes there)."""
    import numpy as np
    if a.ndim < 2:
        return [a]
    return [a, np.swapaxes(np.ascontiguousarray(np.swapaxes(a, -1, -2)), -1, -2)]


def _same_bits_on_one_thread(e, libs):
    import itertools

    import numpy as np
    rng = np.random.default_rng(0)
    args = []
    for v in e.inputs:
        if not all(type(d) is int for d in v.shape) or v.dtype.kind not in "fc":
            return False
        a = rng.standard_normal(tuple(v.shape))
        if v.dtype.kind == "c":
            a = a + 1j * rng.standard_normal(tuple(v.shape))
        args.append(_layouts(a.astype(v.dtype)))
    with _lock:  # no other program switches meanwhile
        if _state["depth"]:
            return None
        saved = tuple(c.get_num_threads() for c in libs)
        for combo in itertools.product(*args[:2]):  # the layouts of the two operands
            combo = list(combo) + [a[0] for a in args[2:]]
            try:
                for c in libs:
                    c.set_num_threads(1)
                one = np.asarray(e.prim.impl(*combo, **e.kwargs))
            finally:
                for c, n in zip(libs, saved):
                    c.set_num_threads(n)
            if not np.array_equal(one, np.asarray(e.prim.impl(*combo, **e.kwargs)),
                                  equal_nan=True):
                return False
    return True
