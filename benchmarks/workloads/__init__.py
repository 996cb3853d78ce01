"""One module per workload; each exposes ``rows(opts) -> list[Row]``.

Inside a module there is one small function per system and mode, so every peer's code can be
read (and compared with tapegrad's) in one place.
"""
from benchmarks.workloads import (
    w1_lesson,
    w2_jacobian,
    w3_batch_jacobian,
    w4_hessian,
    w5_training,
    w6_overhead,
    w7_scale,
    w8_cnn,
    w9_keras,
    w9p_pinn,
    w10_sweep,
)

WORKLOADS = {
    "W1": w1_lesson,
    "W2": w2_jacobian,
    "W3": w3_batch_jacobian,
    "W4": w4_hessian,
    "W5": w5_training,
    "W6": w6_overhead,
    "W7": w7_scale,
    "W8": w8_cnn,
    "W8B": w8_cnn.TRAINING,
    "W9": w9_keras,
    "W9P": w9p_pinn,
    "W10": w10_sweep,
}
