"""The TF-style namespaces are tapegrad's modules (not shadowed by standard-library names)."""
import tapegrad as tf


def test_submodules_are_tapegrad_modules():
    for name in ("math", "nn", "linalg", "random", "autodiff"):
        mod = getattr(tf, name)
        assert mod.__name__ == f"tapegrad.{name}", name
    assert tf.math.log is not None and tf.math.reduce_logsumexp is not None
    assert tf.nn.gelu is not None and tf.linalg.inv is not None


def test_no_helper_names_leak_into_the_namespaces():
    import types
    for mod in (tf, tf.math, tf.nn, tf.linalg, tf.random):
        leaked = [n for n in dir(mod) if not n.startswith("_")
                  and isinstance(getattr(mod, n), types.ModuleType)
                  and not getattr(mod, n).__name__.startswith("tapegrad")]
        assert not leaked, (mod.__name__, leaked)
    for name in ("np", "bind", "E", "R", "S", "binary", "axes", "static_shape"):
        assert not hasattr(tf, name), name
