"""Constants and limits of the saved format (see ``tapegrad/saved/__init__.py``), and the error.

Everything a loader accepts is listed here: the dtypes, the shape of names, the characters a
string param may hold, the size limits.
"""
import keyword
import re

import numpy as np

from tapegrad.primitives.params import DTYPE_NAMES

FORMAT = "tapegrad.saved"
VERSION = 1            # written by ``save``
VERSIONS = (1,)        # read by ``load``: every released version (tests/data has a file of each)
PROGRAM_MEMBER, CONSTANTS_MEMBER = "program.json", "constants.npz"

MAX_ELEMENTS = 2 ** 40           # per variable: more is an absurd shape
MAX_JSON_BYTES = 64 * 2 ** 20    # program.json
MAX_BYTES = 2 ** 32              # load's default max_bytes: all bytes read or decompressed
MAX_ARRAYS = 2 ** 20             # members of constants.npz
MAX_INT = 2 ** 62                # any integer in a param
MAX_DEPTH = 32                   # nested sub-programs
MAX_STR = 1024

DTYPES = {n: np.dtype(n) for n in DTYPE_NAMES}  # the one list of dtype names (primitives/params)

# Names become identifiers in generated code; the code generator reserves these.
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,99}\Z")
_RESERVED = {"np", "None", "True", "False", "slice", "Ellipsis"}
# String params (einsum subscripts, dtype names) are data: no quotes, brackets or spaces,
# so they cannot close a literal in generated code.
SAFE_STR = re.compile(r"[A-Za-z0-9_.,\->]*\Z")
ARRAY_KEY = re.compile(r"[a-z]{1,8}[0-9]{1,9}\Z")


class LoadError(ValueError):
    """A saved program is invalid: unreadable, inconsistent, or not made by ``save``.

    Loading never executes anything taken from the file, so every problem ends here.
    """


def valid_name(name):
    return (isinstance(name, str) and _NAME.match(name) is not None
            and not keyword.iskeyword(name) and not keyword.issoftkeyword(name)
            and name not in _RESERVED)
