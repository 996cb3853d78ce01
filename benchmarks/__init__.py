"""Benchmark suite comparing tapegrad with TensorFlow, JAX, PyTorch and autograd.

Run ``python -m benchmarks.run --help``; see ``benchmarks/README.md``. This package must not
import NumPy or any framework at import time: ``benchmarks.config`` pins the thread count
through environment variables, which only take effect before the libraries load.
"""
