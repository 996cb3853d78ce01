"""``tf.random``: the global generator's draws, the stateless functions and
``tf.random.Generator``."""
import types

from tapegrad.ops.random_ops import (  # noqa: F401
    categorical, normal, set_seed, shuffle, truncated_normal, uniform)
from tapegrad.ops.random_generator import (  # noqa: F401
    Algorithm, Generator, create_rng_state, get_global_generator, set_global_generator)
from tapegrad.ops.stateless_random_ops import (  # noqa: F401
    stateless_categorical, stateless_fold_in, stateless_normal, stateless_split,
    stateless_truncated_normal, stateless_uniform)

split, fold_in = stateless_split, stateless_fold_in

# ``tf.random.experimental``: TensorFlow keeps the seed functions and the Generator there too
experimental = types.SimpleNamespace(
    stateless_split=stateless_split, stateless_fold_in=stateless_fold_in, Algorithm=Algorithm,
    Generator=Generator, create_rng_state=create_rng_state,
    get_global_generator=get_global_generator, set_global_generator=set_global_generator)
del stateless_split, stateless_fold_in, types
