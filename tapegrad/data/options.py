"""``tf.data.Options``: accepted and kept, as TensorFlow's; none changes a tapegrad pipeline,
which runs in order on the calling thread (so it is always deterministic)."""


class _Group:
    """A group of options (``options.threading``, ...): its known fields only."""

    _fields = ()

    def __init__(self):
        for f in self._fields:
            object.__setattr__(self, f, None)

    def __setattr__(self, name, value):
        if name not in self._fields:
            raise AttributeError(f"Cannot set the property {name} on {type(self).__name__}.")
        object.__setattr__(self, name, value)

    def _merge(self, other):
        for f in self._fields:
            v = getattr(other, f)
            if isinstance(v, _Group):
                getattr(self, f)._merge(v)
            elif v is not None:
                object.__setattr__(self, f, v)


class DistributeOptions(_Group):
    _fields = ("auto_shard_policy", "num_devices")


class OptimizationOptions(_Group):
    _fields = ("apply_default_optimizations", "filter_fusion", "map_and_batch_fusion",
               "map_fusion", "map_parallelization", "noop_elimination",
               "parallel_batch", "shuffle_and_repeat_fusion", "inject_prefetch")


class ThreadingOptions(_Group):
    _fields = ("max_intra_op_parallelism", "private_threadpool_size")


class AutotuneOptions(_Group):
    _fields = ("enabled", "cpu_budget", "ram_budget", "autotune_algorithm")


class Options(_Group):
    """``dataset.with_options(options)``; ``dataset.options()`` gives the merged ones.

    >>> import tapegrad as tf
    >>> o = tf.data.Options()
    >>> o.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    >>> tf.data.Dataset.range(2).with_options(o).options().experimental_distribute.auto_shard_policy
    <AutoShardPolicy.DATA: 2>
    """

    _fields = ("deterministic", "experimental_deterministic", "experimental_slack",
               "experimental_external_state_policy", "experimental_warm_start",
               "experimental_symbolic_checkpoint", "experimental_distribute",
               "experimental_optimization", "threading", "autotune")

    def __init__(self):
        super().__init__()
        object.__setattr__(self, "experimental_distribute", DistributeOptions())
        object.__setattr__(self, "experimental_optimization", OptimizationOptions())
        object.__setattr__(self, "threading", ThreadingOptions())
        object.__setattr__(self, "autotune", AutotuneOptions())

    def merge(self, options):
        """A new Options: these, overridden by the fields ``options`` sets."""
        out = Options()
        out._merge(self)
        out._merge(options)
        return out
