"""The one frame helper: the innermost stack frame outside tapegrad.

Error messages, warnings and the origin comments of generated code all point at the user's
line, so each needs the first frame on the stack whose file is not part of this package.

    >>> def where():
    ...     frame, _, _ = user_frame()
    ...     return frame.f_code.co_name
    >>> where()  # doctest runs outside tapegrad/, so the caller is the doctest itself
    '<module>'
"""
import os
import sys

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# co_filename -> its absolute path: the tracer asks for every equation, and abspath was most
# of a trace's time spent here
_ABSOLUTE = {}


def user_frame(depth=1, through=()):
    """``(frame, stacklevel, crossed)`` of the innermost frame outside tapegrad.

    ``depth`` counts frames from the caller of ``user_frame`` (1: its caller's caller, the
    usual start); ``stacklevel`` is what ``warnings.warn`` needs, from the caller's point of
    view, to name that frame; ``crossed`` is the innermost frame from one of the ``through``
    files (absolute paths or path prefixes) passed on the way, or None. ``frame`` is None
    when the whole stack is tapegrad's."""
    f, level, crossed = sys._getframe(depth + 1), depth + 1, None
    absolute = _ABSOLUTE
    while f is not None:
        short = f.f_code.co_filename
        name = absolute.get(short)
        if name is None:
            if len(absolute) > 4096:  # each compiled function has a file name of its own
                absolute.clear()
            name = absolute[short] = os.path.abspath(short)
        if not name.startswith(PACKAGE_DIR):
            return f, level, crossed
        if crossed is None and through and name.startswith(through):
            crossed = f
        f, level = f.f_back, level + 1
    return None, level, crossed
