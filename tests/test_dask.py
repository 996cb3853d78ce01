"""tapegrad.dask: compiled programs over Dask arrays, on threads and on real clusters.

Results must equal single-process evaluation exactly: the same generated code runs on the
same rows, only in other processes.
"""
import os
import pickle
import pickletools
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import tapegrad as tf
import tapegrad.dask  # noqa: F401  (tf.dask)
from tapegrad.saved import LoadError, transport

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

ROOT = Path(tf.__file__).resolve().parent.parent
RNG = np.random.default_rng(0)
W1 = tf.Variable(RNG.standard_normal((6, 16)).astype(np.float32) * 0.4)
W2 = tf.Variable(RNG.standard_normal((16, 3)).astype(np.float32) * 0.4)


def mlp(x):
    return tf.tanh(tf.tanh(x @ W1) @ W2)


@tf.function(input_signature=[tf.TensorSpec([None, 6], tf.float32)])
def jac_program(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = mlp(x)
    return tape.batch_jacobian(y, x)


def direct(xs):
    """Single-process evaluation of the same compiled program."""
    return np.concatenate([jac_program(xs[i:i + 100]).numpy() for i in range(0, len(xs), 100)])


XS = RNG.standard_normal((1000, 6)).astype(np.float32)


# -- graph construction and values (threads) ------------------------------------------------
def test_map_function_gives_lazy_array_with_right_chunks_dtype_meta():
    xs = da.from_array(XS, chunks=(100, 6))
    J = tf.dask.map(jac_program, xs)
    assert isinstance(J, da.Array)
    assert J.shape == (1000, 3, 6) and J.dtype == np.float32
    assert J.chunks == ((100,) * 10, (3,), (6,))
    assert type(J._meta) is np.ndarray and J._meta.dtype == np.float32
    np.testing.assert_array_equal(J.compute(scheduler="threads"), direct(XS))


def test_uneven_last_chunk_traces_its_own_length():
    xs = da.from_array(XS[:250], chunks=(100, 6))
    J = tf.dask.map(jac_program, xs)
    assert J.chunks[0] == (100, 100, 50)
    want = np.concatenate([jac_program(XS[:100]).numpy(), jac_program(XS[100:200]).numpy(),
                           jac_program(XS[200:250]).numpy()])
    np.testing.assert_array_equal(J.compute(scheduler="sync"), want)


def test_concrete_and_loaded_programs_run_chunks_of_their_traced_length(tmp_path):
    cf = jac_program.get_concrete_function(tf.TensorSpec([200, 6], tf.float32))
    path = tmp_path / "jac.tgz"
    tf.saved.save(cf, path)
    loaded = tf.saved.load(path)
    for program in (cf, loaded):
        J = tf.dask.map(program, da.from_array(XS, chunks=(500, 6)))  # rechunked to 200
        assert J.chunks[0] == (200,) * 5
        np.testing.assert_array_equal(J.compute(scheduler="sync"), direct(XS))
    with pytest.raises(ValueError, match="do not split into batches of 200"):
        tf.dask.map(cf, da.from_array(XS[:300], chunks=(100, 6)))


def test_several_outputs_give_a_tuple_of_arrays():
    @tf.function(input_signature=[tf.TensorSpec([None, 6], tf.float32)])
    def two(x):
        return mlp(x), tf.reduce_sum(x * x, axis=1)

    y, s = tf.dask.map(two, da.from_array(XS, chunks=(250, 6)))
    assert y.shape == (1000, 3) and s.shape == (1000,)
    np.testing.assert_array_equal(y.compute(), two(XS)[0].numpy())
    np.testing.assert_array_equal(s.compute(), two(XS)[1].numpy())


def test_jacobian_and_batch_jacobian_conveniences():
    xs = da.from_array(XS[:40], chunks=(16, 6))
    J = tf.dask.batch_jacobian(mlp, xs).compute()
    with tf.GradientTape() as tape:
        x = tf.constant(XS[:40])
        tape.watch(x)
        y = mlp(x)
    np.testing.assert_allclose(J, tape.batch_jacobian(y, x).numpy(), rtol=1e-5, atol=1e-6)
    Jf = tf.dask.jacobian(lambda x: mlp(x[None])[0], xs).compute()
    np.testing.assert_allclose(Jf, J, rtol=1e-5, atol=1e-6)


def test_results_never_alias_inputs_constants_or_variables():
    # results are handed over without a copy, except where they would be memory the
    # program or the next task still holds: then they are copies
    v = tf.Variable(np.ones((4, 6), np.float32))

    @tf.function(input_signature=[tf.TensorSpec([4, 6], tf.float32)])
    def passes(x):
        return tf.identity(x), tf.identity(v), tf.ones([4, 6]) + 0.0, 2.0 * x

    block = tf.dask.blockwise(passes, rows=(4,))
    x = XS[:4].copy()
    outs = block(x)
    kept = [x, v.numpy()] + [np.asarray(c.value) for c in
                             passes.get_concrete_function().program.constants]
    for o in outs:
        assert not any(np.shares_memory(o, k) for k in kept)
    loaded = transport.load_cached(block.programs[4], block.digests[4])
    for o in outs:
        assert not any(np.may_share_memory(o, k._value) for k in loaded.variables)
    outs[0][:] = -1.0  # the caller owns what it got: the next chunk is unaffected
    np.testing.assert_array_equal(block(x)[0], x)
    np.testing.assert_array_equal(block(x)[1], np.ones((4, 6), np.float32))


def test_batch_coupled_programs_are_refused_over_several_chunks():
    w = tf.constant(RNG.standard_normal((6, 4)).astype(np.float32))

    def batch_norm(x):  # statistics over the batch: a chunk's rows see only its chunk
        h = x @ w
        return (h - tf.reduce_mean(h, axis=0)) / tf.sqrt(tf.math.reduce_variance(h, 0) + 1.0)

    xs = da.from_array(XS[:40], chunks=(10, 6))
    with pytest.raises(ValueError, match="couples the examples"):
        tf.dask.batch_jacobian(batch_norm, xs)
    centred = tf.function(lambda x: tf.cast(x > tf.reduce_mean(x, axis=0), tf.float32),
                          input_signature=[tf.TensorSpec([None, 6], tf.float32)])
    with pytest.raises(ValueError, match="one chunk along axis 0"):
        tf.dask.map(centred, xs)
    # one chunk is the whole batch: exactly the single-process numbers
    np.testing.assert_array_equal(tf.dask.map(centred, xs.rechunk(-1)).compute(),
                                  centred(XS[:40]).numpy())
    # per-example programs pass the check (the other tests), and it can be skipped
    y = tf.dask.map(centred, xs, check_coupling=False)
    assert y.chunks[0] == (10,) * 4


def test_numpy_arrays_are_accepted():
    J = tf.dask.map(jac_program, XS[:100], chunk_size=50)
    assert J.chunks[0] == (50, 50)
    np.testing.assert_array_equal(J.compute(), direct(XS[:100]))


def test_xarray_apply_ufunc_parallelized_runs_through_the_block():
    xr = pytest.importorskip("xarray")
    block = tf.dask.blockwise(jac_program, rows=(100,))
    arr = xr.DataArray(da.from_array(XS, chunks=(100, 6)), dims=("sample", "feature"))
    out = xr.apply_ufunc(block, arr, input_core_dims=[["feature"]],
                         output_core_dims=[["out", "in"]], dask="parallelized",
                         output_dtypes=[np.float32],
                         dask_gufunc_kwargs={"output_sizes": {"out": 3, "in": 6}})
    assert out.dims == ("sample", "out", "in")
    np.testing.assert_array_equal(out.compute().values, direct(XS))


# -- programs travel as data ----------------------------------------------------------------
def test_pickle_holds_only_saved_bytes():
    cf = jac_program.get_concrete_function(tf.TensorSpec([4, 6], tf.float32))
    data = pickle.dumps(cf)
    globals_ = [arg for op, arg, _ in pickletools.genops(data)
                if op.name in ("GLOBAL", "STACK_GLOBAL", "SHORT_BINUNICODE", "BINUNICODE")
                and isinstance(arg, str)]
    assert "tapegrad.saved.transport" in globals_ and "loads" in globals_
    assert not [g for g in globals_ if g.startswith("tapegrad.") and
                g != "tapegrad.saved.transport"], globals_
    g = pickle.loads(data)
    x = XS[:4]
    np.testing.assert_array_equal(g(x).numpy(), cf(x).numpy())
    # the block pickles as bytes plus declared shapes
    block = tf.dask.blockwise(jac_program, rows=(4,))
    again = pickle.loads(pickle.dumps(block))
    np.testing.assert_array_equal(again(x), block(x))


def test_token_is_the_hash_of_the_bytes():
    cf = jac_program.get_concrete_function(tf.TensorSpec([4, 6], tf.float32))
    data = transport.dumps(cf)
    assert dask.base.tokenize(cf) == dask.base.tokenize(cf)
    assert cf.__dask_tokenize__() == ("tapegrad-program", transport.token(data))
    loaded = transport.loads(data)
    assert dask.base.tokenize(loaded) == dask.base.tokenize(cf)
    other = jac_program.get_concrete_function(tf.TensorSpec([5, 6], tf.float32))
    assert dask.base.tokenize(other) != dask.base.tokenize(cf)


def test_unsavable_program_fails_before_anything_is_sent():
    v = tf.Variable(np.ones((6,), np.float32))

    @tf.function
    def takes_variable(x, var):
        return x * var

    cf = takes_variable.get_concrete_function(tf.TensorSpec([10, 6]), v)
    with pytest.raises(ValueError, match="cannot be saved"):
        tf.dask.map(cf, da.from_array(XS[:10], chunks=(10, 6)))
    with pytest.raises(TypeError, match="no input_signature"):
        tf.dask.map(tf.function(mlp), da.from_array(XS[:10], chunks=(10, 6)))
    with pytest.raises(TypeError, match="expected a ConcreteFunction"):
        tf.dask.map(mlp, da.from_array(XS[:10], chunks=(10, 6)))


def test_wrong_feature_shape_names_the_expected_shape():
    with pytest.raises(ValueError, match=r"expects \(batch,\) \+ \(6,\)"):
        tf.dask.map(jac_program, da.ones((10, 5), chunks=(5, 5), dtype=np.float32))
    with pytest.raises(TypeError, match="expects float32"):
        tf.dask.map(jac_program, da.ones((10, 6), chunks=(5, 6), dtype=np.float64))
    block = tf.dask.blockwise(jac_program, rows=(5,))
    bad = da.ones((10, 5), chunks=(5, 5), dtype=np.float32)
    with pytest.raises(ValueError, match=r"expected \(batch,\) \+ \(6,\)"):
        bad.map_blocks(block, dtype=np.float32, new_axis=2).compute(scheduler="sync")


def test_corrupted_bytes_give_load_error():
    block = tf.dask.blockwise(jac_program, rows=(5,))
    data = bytearray(block.programs[5])
    data[len(data) // 2] ^= 0xFF
    broken = tf.dask.ProgramBlock({5: bytes(data)}, block.features, block.outputs)
    with pytest.raises(LoadError):
        broken(XS[:5])
    junk = tf.dask.ProgramBlock({5: b"not a zip at all"}, block.features, block.outputs)
    with pytest.raises(LoadError):
        junk(XS[:5])


# -- real clusters ---------------------------------------------------------------------------
distributed = pytest.importorskip("distributed")


@pytest.mark.timeout(240)
def test_scheduler_and_workers_started_with_dasks_command_line_tools(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]),
        OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    sched_file = tmp_path / "scheduler.json"
    procs = [subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
         "--port", "0", "--no-dashboard", "--scheduler-file", str(sched_file)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        deadline = time.monotonic() + 60
        while not sched_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert sched_file.exists(), "the scheduler did not start"
        for _ in range(2):
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file",
                 str(sched_file), "--nthreads", "1", "--no-dashboard", "--no-nanny",
                 "--host", "127.0.0.1"],
                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        with distributed.Client(scheduler_file=str(sched_file), timeout=60) as client:
            client.wait_for_workers(2, timeout=90)
            assert client.scheduler_info()["address"].startswith("tcp://127.0.0.1:")
            J = tf.dask.map(jac_program, da.from_array(XS, chunks=(100, 6)))
            got = client.compute(J).result(timeout=120)
            np.testing.assert_array_equal(got, direct(XS))
            assert len(client.run(transport.cache_info)) == 2
    finally:
        for p in procs[::-1]:
            p.terminate()
        for p in procs[::-1]:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=10)


@pytest.fixture(scope="module")
def cluster():
    cl = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None, host="127.0.0.1")
    client = distributed.Client(cl)
    try:
        yield client
    finally:
        client.close()
        cl.close()


@pytest.mark.timeout(180)
def test_local_cluster_results_equal_single_process_and_compile_once(cluster):
    J = tf.dask.map(jac_program, da.from_array(XS, chunks=(100, 6)))
    got = cluster.compute(J).result(timeout=120)
    np.testing.assert_array_equal(got, direct(XS))
    # Ten chunks on two workers, one program: each worker process loaded it once.
    caches = cluster.run(transport.cache_info)
    assert len(caches) == 2
    digest = transport.token(tf.dask.blockwise(jac_program, rows=(100,)).programs[100])
    for cache in caches.values():
        assert list(cache) == [digest]


@pytest.mark.timeout(180)
def test_load_error_reaches_the_client_without_hanging(cluster):
    block = tf.dask.blockwise(jac_program, rows=(100,))
    broken = tf.dask.ProgramBlock({100: b"PK\x03\x04garbage"}, block.features, block.outputs)
    xs = da.from_array(XS, chunks=(100, 6))
    J = da.apply_gufunc(broken, broken.signature, xs, output_sizes=broken.output_sizes,
                        output_dtypes=np.float32)
    t0 = time.monotonic()
    with pytest.raises(LoadError):
        cluster.compute(J).result(timeout=60)
    assert time.monotonic() - t0 < 60


@pytest.mark.timeout(240)
def test_killed_worker_is_rescheduled_and_result_complete(cluster):
    pids = cluster.run(os.getpid)
    xs = RNG.standard_normal((40000, 6)).astype(np.float32)
    J = tf.dask.map(jac_program, da.from_array(xs, chunks=(1000, 6)))
    fut = cluster.compute(J)
    deadline = time.monotonic() + 60
    victim = None
    while victim is None and time.monotonic() < deadline:
        busy = {w: ks for w, ks in cluster.processing().items() if ks}
        victim = next(iter(busy), None)
        time.sleep(0.01)
    assert victim is not None, "no worker ever held a task"
    os.kill(pids[victim], signal.SIGKILL)  # the nanny starts a new worker
    got = fut.result(timeout=180)
    want = np.concatenate([jac_program(xs[i:i + 1000]).numpy()
                           for i in range(0, len(xs), 1000)])
    np.testing.assert_array_equal(got, want)
    cluster.wait_for_workers(2, timeout=60)
    assert pids[victim] not in cluster.run(os.getpid).values()  # it really died
