"""``tf.math``."""
from tapegrad.ops.math_ops import *  # noqa: F401,F403
from tapegrad.ops.nn_ops import softplus  # noqa: F401
from tapegrad.ops.array_ops import cast  # noqa: F401
from tapegrad.ops.array_ops import argsort, top_k  # noqa: F401,E402
from tapegrad.ops.special_ops import *  # noqa: F401,F403,E402
from tapegrad.ops.segment_ops import *  # noqa: F401,F403,E402
from tapegrad.ops.unique_ops import bincount  # noqa: F401
from tapegrad.ops.composed_math_ops import *  # noqa: F401,F403,E402
from tapegrad.ops.binning_ops import confusion_matrix, polyval  # noqa: F401,E402
from tapegrad.ops.cumulative_ops import cumulative_logsumexp  # noqa: F401,E402
from tapegrad.ops.special_more_ops import *  # noqa: F401,F403,E402

import types as _types  # noqa: E402

from tapegrad.ops import special_more_ops as _special_more  # noqa: E402

# tf.math.special: the Bessel functions TensorFlow files there too
special = _types.ModuleType("tapegrad.math.special", "``tf.math.special``.")
for _name in ("bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e"):
    setattr(special, _name, getattr(_special_more, _name))
del _name
