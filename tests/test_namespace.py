"""The TF-style namespaces are tapegrad's modules (not shadowed by standard-library names)."""
import tapegrad as tf


def test_submodules_are_tapegrad_modules():
    for name in ("math", "nn", "linalg", "random", "autodiff"):
        mod = getattr(tf, name)
        assert mod.__name__ == f"tapegrad.{name}", name
    assert tf.math.log is not None and tf.math.reduce_logsumexp is not None
    assert tf.nn.gelu is not None and tf.linalg.inv is not None
