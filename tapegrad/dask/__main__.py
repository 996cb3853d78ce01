"""``python -m tapegrad.dask [--n N] [--workers W] [--address tcp://host:8786]``: the README's
Jacobian at many inputs, on a Dask cluster.

Starts a local cluster of W worker processes (or connects to ``--address``), maps the
compiled batch Jacobian of an MLP over N inputs with a progress bar, and checks the result
against single-process evaluation.
"""
import argparse
import time

import numpy as np


def main(argv=None):
    ap = argparse.ArgumentParser(description="tapegrad's batch Jacobian on a Dask cluster")
    ap.add_argument("--n", type=int, default=100_000, help="number of inputs")
    ap.add_argument("--chunk", type=int, default=5_000, help="rows per task")
    ap.add_argument("--workers", type=int, default=2, help="local worker processes")
    ap.add_argument("--address", default=None, help="scheduler address of a running cluster")
    args = ap.parse_args(argv)

    import dask.array as da
    import distributed

    import tapegrad.dask as tgd
    from tapegrad.core.tensor import constant
    from tapegrad.ops.math_ops import tanh

    rng = np.random.default_rng(0)
    sizes = (32, 256, 256, 16)
    ws = [constant((rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32))
          for a, b in zip(sizes[:-1], sizes[1:])]

    def mlp(x):
        return tanh(tanh(x @ ws[0]) @ ws[1]) @ ws[2]

    xs = rng.standard_normal((args.n, sizes[0])).astype(np.float32)
    if args.address:
        client = distributed.Client(args.address)
        cluster = None
    else:
        import dask
        # glibc's adaptive mmap threshold, not Dask's MALLOC_TRIM_THRESHOLD_: with the latter
        # every large temporary of a Jacobian chunk is page-faulted in afresh
        dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None})
        cluster = distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                           processes=True, dashboard_address=None)
        client = distributed.Client(cluster)
    try:
        print(f"cluster: {len(client.scheduler_info()['workers'])} workers at "
              f"{client.scheduler.address}")
        J = tgd.batch_jacobian(mlp, da.from_array(xs, chunks=(args.chunk, sizes[0])))
        print(f"lazy result: {J}")
        t0 = time.perf_counter()
        fut = client.compute(J)
        distributed.progress(fut)
        out = fut.result()
        dt = time.perf_counter() - t0
        print(f"\n{args.n:,} Jacobians {out.shape[1:]} in {dt:.2f} s "
              f"({args.n / dt:,.0f} per second)")
        check = tgd.batch_jacobian(mlp, da.from_array(xs[:args.chunk], chunks=-1))
        same = np.array_equal(out[:args.chunk], check.compute(scheduler="sync"))
        print(f"equal to single-process evaluation: {same}")
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


if __name__ == "__main__":
    main()
