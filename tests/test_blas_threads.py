"""The BLAS-thread policy (tapegrad/util/blas.py): measured per program, exact either way."""
import threading

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.util import blas

threadpoolctl = pytest.importorskip("threadpoolctl")


def _numpy_threads():
    return [c.get_num_threads() for c in blas._controllers()]


def _mlp_grad(width):
    rng = np.random.default_rng(0)
    w1 = tf.constant(rng.standard_normal((32, width)).astype(np.float32) / 6)
    w2 = tf.constant(rng.standard_normal((width, width)).astype(np.float32) / width ** 0.5)

    @tf.function
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(tf.tanh(tf.tanh(x @ w1) @ w2))
        return t.gradient(y, x)
    return g


def test_work_model_reads_each_blas_primitive():
    @tf.function
    def f(a, b, x, k):
        return (tf.reduce_sum(a @ b) + tf.reduce_sum(tf.einsum("ij,jk->ik", a, b))
                + tf.reduce_sum(tf.nn.conv2d(x, k, 1, "VALID")))

    cf = f.get_concrete_function(tf.zeros([8, 16]), tf.zeros([16, 4]), tf.zeros([2, 10, 10, 3]),
                                 tf.zeros([3, 3, 3, 5]))
    # matmul and einsum: 8*4*16 = 512; conv: 2*8*8*5 outputs, 3*3*3 taps each = 4320
    assert blas.program_work(cf.raw_program) == 2 * 8 * 8 * 5 * 27
    assert not blas.is_threaded(4320) and blas.is_threaded(1 << 20)


@pytest.fixture
def one_call_probes(monkeypatch):
    """Probes of one call each, so a known number of calls finishes a round."""
    monkeypatch.setattr(blas, "PROBE_SECONDS", 0.0)


@pytest.mark.parametrize("width", [16, 256])  # both sides of THREADED_WORK
def test_same_numbers_in_both_modes_and_setting_restored(width, one_call_probes):
    g = _mlp_grad(width)
    x = tf.constant(np.random.default_rng(1).standard_normal((64, 32)).astype(np.float32))
    before = _numpy_threads()
    ref = g(x).numpy()
    with threadpoolctl.threadpool_limits(1, "blas"):
        single = g(x).numpy()
    runs = [g(x).numpy() for _ in range(2 * blas.PROBES + 3)]
    np.testing.assert_array_equal(ref, single)
    for r in runs:
        np.testing.assert_array_equal(r, ref)
    assert _numpy_threads() == before
    run = g.get_concrete_function(x)._fn
    threaded = blas.is_threaded(64 * width * width)
    assert hasattr(run, "blas_state") == threaded
    if threaded and not blas.user_decided():
        assert run.blas_state["choice"] in (0, 1), run.blas_state  # it measured both, chose


def test_user_setting_wins(monkeypatch):
    g = _mlp_grad(256)
    x = tf.ones([64, 32])
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    assert blas.user_decided()
    for _ in range(2 * blas.PROBES + 1):
        g(x)
    run = g.get_concrete_function(x)._fn
    assert run.blas_state["choice"] is None and run.blas_state["times"] == ([], [])


_ALL_VARS = ("TAPEGRAD_BLAS_THREADS",) + blas._USER_VARS


@pytest.mark.parametrize("name", _ALL_VARS)
@pytest.mark.parametrize("value", [None, "", "auto", "1", "default", "4"])
def test_user_decided_reads_the_environment_at_every_call(monkeypatch, name, value):
    # the fast lookup must say what os.environ.get says, for a variable set, changed or
    # removed at any time after import
    for v in _ALL_VARS:
        monkeypatch.delenv(v, raising=False)
    assert not blas.user_decided()
    if value is None:
        monkeypatch.delenv(name, raising=False)
    else:
        monkeypatch.setenv(name, value)
    import os
    expected = (os.environ.get("TAPEGRAD_BLAS_THREADS", "auto") != "auto"
                or any(os.environ.get(v) for v in blas._USER_VARS))
    assert blas.user_decided() is expected
    monkeypatch.delenv(name, raising=False)
    assert not blas.user_decided()


def test_config_threading_api():
    assert tf.config.threading.get_inter_op_parallelism_threads() == 0
    with pytest.raises(ValueError, match="non-negative"):
        tf.config.threading.set_intra_op_parallelism_threads(-1)
    before = _numpy_threads()
    try:
        tf.config.threading.set_intra_op_parallelism_threads(1)
        assert tf.config.threading.get_intra_op_parallelism_threads() == 1
        assert blas.user_decided() and set(_numpy_threads()) <= {1}
    finally:
        blas._state["user"] = None
        for c, n in zip(blas._controllers(), before):
            c.set_num_threads(n)


def test_threads_share_a_program_and_the_setting_comes_back():
    g = _mlp_grad(256)
    x = tf.constant(np.random.default_rng(2).standard_normal((64, 32)).astype(np.float32))
    ref = g(x).numpy()
    before = _numpy_threads()
    errors = []

    def work():
        try:
            for _ in range(30):
                np.testing.assert_array_equal(g(x).numpy(), ref)
        except AssertionError as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    assert blas._state["depth"] == 0 and _numpy_threads() == before


def _wide_float64_product():
    """A float64 GEMM big enough to be threaded, with a wide output (OpenBLAS splits it
    among threads: on several threads its bits often differ from one thread's)."""
    rng = np.random.default_rng(3)
    a, b = (tf.constant(rng.standard_normal((300, 300))) for _ in range(2))
    return tf.function(lambda a, b: a @ b), a, b


def _differs_on_one_thread(a, b):
    with threadpoolctl.threadpool_limits(1, "blas"):
        one = a @ b
    return not np.array_equal(one, a @ b)


def test_every_call_gives_the_eager_bits_whatever_the_threads(one_call_probes):
    f, a, b = _wide_float64_product()
    eager = (a @ b).numpy()
    for _ in range(3 * blas.PROBES + 3):
        np.testing.assert_array_equal(f(a, b).numpy(), eager)
    run = f.get_concrete_function(a, b)._fn
    program = f.get_concrete_function(a, b).program
    if blas.user_decided():
        return
    invariant = blas.thread_invariant(program)
    assert invariant is (not _differs_on_one_thread(a.numpy(), b.numpy()))
    if not invariant:  # it never switched: no probe round, the library's default throughout
        assert run.blas_state["choice"] is None and run.blas_state["times"] == ([], [])
        assert run.blas_state["invariant"] is False


def test_thread_invariance_is_checked_once_per_shape(monkeypatch):
    f, a, b = _wide_float64_product()
    program = f.get_concrete_function(a, b).program
    blas.thread_invariant(program)
    calls = []
    monkeypatch.setattr(blas, "_same_bits_on_one_thread", lambda e, libs: calls.append(e))
    assert blas.thread_invariant(program) in (True, False) and not calls
    # a float32 program of another shape is checked anew, once
    g = tf.function(lambda a, b: a @ b)
    x = tf.ones([128, 64 + 1]), tf.ones([64 + 1, 64])
    cf = g.get_concrete_function(*x)
    monkeypatch.setattr(blas, "_INVARIANT", {})
    monkeypatch.setattr(blas, "_same_bits_on_one_thread", lambda e, libs: calls.append(e) or True)
    assert blas.thread_invariant(cf.program) is True and len(calls) == 1
    assert blas.thread_invariant(cf.program) is True and len(calls) == 1


def test_a_transposed_operand_is_checked_in_its_layout(one_call_probes):
    # a @ w.T: BLAS sees w stored transposed, where OpenBLAS splits some shapes otherwise
    # than C-ordered ones (88 x 22 x 292 float64 on two threads, C-ordered the same bits)
    rng = np.random.default_rng(4)
    a, w = tf.constant(rng.standard_normal((88, 22))), tf.constant(rng.standard_normal((292, 22)))
    f = tf.function(lambda a, w: tf.matmul(a, w, transpose_b=True))
    eager = tf.matmul(a, w, transpose_b=True).numpy()
    for _ in range(3 * blas.PROBES + 3):
        np.testing.assert_array_equal(f(a, w).numpy(), eager)


# ---- the choice, on a simulated clock: probes time runs of calls as a whole --------------
class _Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def _policy(monkeypatch, single_times, default_times):
    """An ``adaptive`` program on a simulated clock whose calls take the given times in
    turn (seconds), per mode; the policy's own decision, free of this machine's load."""
    for v in _ALL_VARS:
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setattr(blas, "_state", dict(blas._state, user=None))
    if not blas._controllers():
        pytest.skip("no BLAS controllable by threadpoolctl")
    clock = _Clock()
    monkeypatch.setattr(blas, "perf_counter", clock)
    calls = {0: 0, 1: 0}

    def fn():
        mode = 1 if blas._state["depth"] else 0
        times = single_times if mode else default_times
        clock.t += times[calls[mode] % len(times)]
        calls[mode] += 1
        return mode
    return blas.adaptive(fn), clock


def _decide(run, limit=10_000):
    for _ in range(limit):
        run()
        if run.blas_state["choice"] is not None:
            return run.blas_state["choice"]
    raise AssertionError("no choice")


def test_a_probe_counts_the_slow_calls_a_median_call_hides(monkeypatch):
    # two threads on a loaded machine: 9 calls of 0.2 ms, then one that waits 3 ms for a
    # core; one thread: 0.3 ms each. The median call says two threads, the time says one.
    run, _ = _policy(monkeypatch, [3e-4], [2e-4] * 9 + [3e-3])
    assert _decide(run) == 1
    single, default = run.blas_state["times"]
    assert len(single) == len(default) == blas.PROBES  # within EARLY: the whole round
    assert all(3e-4 < t < blas.EARLY * 3e-4 for t in default)
    assert all(t == pytest.approx(3e-4) for t in single)


@pytest.mark.parametrize("default_times, choice", [
    ([6e-3, 6e-3, 9e-2], 1),    # the median probe says two threads; their mean says one
    ([6e-3, 6e-3, 1.5e-2], 0),  # mean 9 ms: two threads still faster by the margin
])
def test_probes_of_a_mode_are_averaged_not_their_median(monkeypatch, default_times, choice):
    # calls longer than a probe (PROBE_SECONDS 4 ms): each probe is one call, 10 ms on one
    # thread; on two, one call in three waits for a core. The slow probe counts in full.
    assert blas.PROBES == 3 and blas.PROBE_SECONDS < 6e-3 and blas.EARLY * 1e-2 < 9e-2
    run, _ = _policy(monkeypatch, [1e-2], default_times)
    assert _decide(run) == choice
    single, default = run.blas_state["times"]
    assert len(single) == len(default) == blas.PROBES
    assert sorted(default) == pytest.approx(sorted(default_times))


@pytest.mark.parametrize("slower", [0, 1])  # the slower mode: two threads, or one
@pytest.mark.parametrize("factor, probes", [(2.9, blas.PROBES), (3.1, 1)])  # EARLY's sides
def test_a_mode_far_slower_ends_the_round_early(monkeypatch, slower, factor, probes):
    fast, slow = [1e-3], [factor * 1e-3]
    run, _ = _policy(monkeypatch, slow if slower else fast, fast if slower else slow)
    assert _decide(run) == 1 - slower
    single, default = run.blas_state["times"]
    assert len(single) == len(default) == probes


def test_a_probe_lasts_probe_seconds_and_at_least_one_call(monkeypatch):
    run, _ = _policy(monkeypatch, [1e-4], [2 * blas.PROBE_SECONDS])  # default: 1 call a probe
    n = 0
    while not run.blas_state["times"][0]:
        assert run() == 1  # the first probe is on one thread, all its calls
        n += 1
    assert n - 2 <= blas.PROBE_SECONDS / 1e-4 <= n and n > 10  # (sums of 1e-4 round)
    assert run.blas_state["times"] == ([pytest.approx(1e-4)], [])
    assert run() == 0 and run.blas_state["times"][1] == [2 * blas.PROBE_SECONDS]


@pytest.mark.parametrize("ratio, choice", [(0.90, 0), (0.94, 0), (0.96, 1), (1.0, 1),
                                           (1.5, 1)])
def test_two_threads_only_when_faster_by_the_margin(monkeypatch, ratio, choice):
    # both sides of MARGIN (0.05): two threads at 0.94x of one win, at 0.96x they do not
    assert blas.MARGIN == 0.05
    run, _ = _policy(monkeypatch, [1e-3], [ratio * 1e-3])
    assert _decide(run) == choice


def test_a_choice_holds_then_is_probed_again(monkeypatch):
    run, clock = _policy(monkeypatch, [1e-3], [5e-4])
    assert _decide(run) == 0
    state = run.blas_state
    assert state["hold"] >= blas.REPROBE_SECONDS
    assert state["hold"] >= blas.REPROBE_RATIO * (state["since"] - state["started"])
    until = state["since"] + state["hold"]
    while clock.t < until:
        assert run() == 0 and state["choice"] == 0
    run()  # past the hold: a new round starts with a probe on one thread
    assert state["choice"] is None and state["times"] == ([], [])
    assert state["probe"][0] == 1


def test_the_hold_grows_with_a_slow_round(monkeypatch):
    # 0.1 s calls: a round takes 2 * PROBES calls; its choice holds REPROBE_RATIO rounds
    run, _ = _policy(monkeypatch, [0.1], [0.2])
    assert _decide(run) == 1
    state = run.blas_state
    assert state["hold"] == pytest.approx(blas.REPROBE_RATIO * 2 * blas.PROBES * 0.15)
