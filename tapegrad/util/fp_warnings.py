"""NumPy's floating-point warnings, silenced where tapegrad's own code computes.

``log(0)``, ``1 / 0``, ``sqrt(-1)`` and ``inf - inf`` give -inf, inf and NaN in TensorFlow
without a word; NumPy computes the same values and also issues a ``RuntimeWarning`` ("divide
by zero encountered in log") from the frame that called it: a tapegrad primitive, derivative
rule or generated program. A PINN's ``log`` of a probability of 0, or the gradient of
``sqrt`` at 0, then printed NumPy's notes at every step. ``install()`` adds one filter that
ignores RuntimeWarnings whose frame is a tapegrad module (generated programs run in a
namespace named ``tapegrad.generated``). The user's own NumPy code warns as before, and a
filter the user adds later (``warnings.simplefilter("error")``) comes first and still
applies to everything, as Python's warning filters do; and an import inside a
``warnings.catch_warnings()`` block loses the filter when the block ends (pytest collects
test modules inside one).

>>> import warnings
>>> install()  # importing tapegrad did (a catch_warnings block around the import drops it)
>>> any(f[0] == "ignore" and f[2] is RuntimeWarning and f[3] is not None
...     and f[3].match("tapegrad.primitives.families") for f in warnings.filters)
True
"""
import re
import warnings

MODULES = r"tapegrad(\..*)?$"  # tapegrad itself, its modules, and generated programs
GENERATED = "tapegrad.generated"  # the __name__ of generated programs' namespaces


def install():
    """Ignore RuntimeWarnings raised in tapegrad's frames (idempotent)."""
    pattern = re.compile(MODULES)
    for f in warnings.filters:
        if f[0] == "ignore" and f[2] is RuntimeWarning and f[3] is not None \
                and f[3].pattern == pattern.pattern:
            return
    warnings.filterwarnings("ignore", category=RuntimeWarning, module=MODULES)
