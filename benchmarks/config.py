"""Thread pinning, applied before NumPy, TensorFlow, JAX or PyTorch is imported.

Every system gets the same number of compute threads (default 2, the machine's core count):

* the process is pinned to ``threads`` CPUs with ``os.sched_setaffinity`` (so no library can
  use more cores than the others, whatever size it picks for its pools);
* ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS``,
  ``VECLIB_MAXIMUM_THREADS``, ``NUMEXPR_NUM_THREADS`` = threads (NumPy's BLAS, which tapegrad
  and autograd use; PyTorch's OpenMP pool);
* ``torch.set_num_threads(threads)``, ``torch.set_num_interop_threads(1)``;
* TensorFlow: intra-op threads = threads, inter-op threads = 1;
* JAX/XLA: ``JAX_PLATFORMS=cpu``; with one thread also
  ``XLA_FLAGS=--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1``
  (with more, XLA's pool is bounded by the affinity mask).
"""
import os

THREADS = 2
_ENV_VARS = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)


def configure(threads):
    """Pin the process and set the thread variables; returns a description of what was set."""
    global THREADS
    THREADS = int(threads)
    settings = {}
    try:
        cpus = sorted(os.sched_getaffinity(0))[:THREADS]
        os.sched_setaffinity(0, cpus)
        settings["affinity"] = cpus
    except (AttributeError, OSError) as e:  # not Linux
        settings["affinity"] = f"not set ({e})"
    for var in _ENV_VARS:
        os.environ[var] = str(THREADS)
        settings[var] = str(THREADS)
    os.environ["JAX_PLATFORMS"] = "cpu"
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if THREADS == 1:
        flags = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + flags).strip()
    settings["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "")
    settings["torch"] = f"set_num_threads({THREADS}), set_num_interop_threads(1)"
    settings["tensorflow"] = f"intra_op={THREADS}, inter_op=1"
    return settings
