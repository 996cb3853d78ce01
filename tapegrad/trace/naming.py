"""Where each traced value comes from, and the user's name for it (tracing time only).

The tracer asks ``Namer.note`` about every equation it records; nothing here runs on the
eager path. Two sources of names:

- the user's variables. When the user's frame leaves a line (for another line, another
  execution of the same line in a loop, another frame, or the end of the trace), the values
  recorded on that line that a local variable of the frame now holds take the variable's
  name: ``h = tf.tanh(x @ w)`` names the tanh's output ``h``.
- the derivative passes. An equation emitted while the reverse pass (``tape/backward.py``)
  differentiates the record whose output is ``h`` is derivative code ``of`` ``h``, and the
  cotangent it starts from is ``h_ct``, and a source's cotangent when the pass is over is
  ``x_ct``; forward mode's (``tape/forward_accumulator.py``) tangent of ``h`` is ``h_dot``.
  These are read from the pass's own frame (its locals ``out``, ``g``, ``cts``,
  ``source_ids``, ``entries``; ``args``, ``ts``, ``self``), so the passes pay nothing for
  being named; tests/test_names.py fails if those locals change.

A user's own name wins over a derived one (``dy_dx = tape.gradient(y, x)``). Names are hints
(``Origin.name``); ``ir/names.py`` makes them unique identifiers.
"""
import linecache
import os

from tapegrad.ir.core import Origin
from tapegrad.ir.names import usable
from tapegrad.util.frames import PACKAGE_DIR, user_frame

# Modules whose frames on the stack mean "a derivative pass is emitting this equation".
_DERIVATIVE_FILES = tuple(os.path.join(PACKAGE_DIR, *p) for p in (
    ("tape", "backward.py"), ("tape", "forward_accumulator.py"), ("tape", "jacobians.py"),
    ("tape", "batch_jacobian.py"),
    ("compile", "derivative_cache.py")))
# The passes' frames read for names: (file, function) -> suffix of the (co)tangents
_PASSES = {(os.path.join(PACKAGE_DIR, "tape", "backward.py"), "backward"): "_ct",
           (os.path.join(PACKAGE_DIR, "tape", "forward_accumulator.py"), "record"): "_dot"}
_MAX_LOCALS = 2000  # a module's frame may hold a notebook's globals: not worth a scan


def origin():
    """The ``Origin`` of an equation being emitted: the innermost frame outside tapegrad,
    and whether a derivative pass is between it and here."""
    return _origin(user_frame(1, through=_DERIVATIVE_FILES))


def _origin(found):
    f, _, crossed = found
    if f is None:
        return Origin("<unknown>", "", crossed is not None)
    name = f.f_code.co_filename
    return Origin(f"{os.path.basename(name)}:{f.f_lineno}",
                  linecache.getline(name, f.f_lineno).strip(), crossed is not None)


def _var(t, builder):
    """The ``Var`` of ``t`` in ``builder``'s trace, or None (batched values unwrapped)."""
    while hasattr(t, "_val"):  # a BatchedTensor (vectorized Jacobians) holds its stack
        t = t._val
    if getattr(t, "_builder", None) is builder:
        return t._var
    return None


class Namer:
    """Notes each recorded value's ``Origin`` in ``builder.origins``, and learns names."""

    def __init__(self, builder):
        self.builder = builder
        self.user = {}      # IR name -> the user's variable name
        self.derived = {}   # IR name of a (co)tangent -> (IR name of its primal, suffix)
        self._frame, self._line, self._lasti, self._pending = None, None, -1, []
        self._passes = {}   # id(cts) -> (cts, source ids, entries) of each reverse pass seen
        self._forward = None  # (tangents, primal, frame) of the forward record in progress
        # False where the user's frames can hold none of this trace's values (the
        # derivative cache traces stand-ins of a tape's tensors): their locals are not read,
        # since before Python 3.13 reading them leaves a snapshot that keeps them alive
        self.read_user_locals = True

    def note(self, outs):
        """Record the origin of the equation that made ``outs`` (a tuple of Vars)."""
        f, level, crossed = user_frame(1, through=_DERIVATIVE_FILES)
        o = _origin((f, level, crossed))
        if self._forward is not None and self._forward[2] is not crossed:
            self._forward_done()
        if crossed is not None:
            o = o._replace(of=self._derivative(crossed) or "")
        if f is not None:
            # an earlier instruction of the same line: the line runs again (a loop); the
            # same one: forward mode's tangents, inside the call that records
            if f is not self._frame or f.f_lineno != self._line or f.f_lasti < self._lasti:
                self.flush()
                self._frame, self._line = f, f.f_lineno
            self._lasti = f.f_lasti
            self._pending.extend(v.name for v in outs)
        for v in outs:
            self.builder.origins[v.name] = o

    def _derivative(self, frame):
        """The IR name of the primal the pass in ``frame`` differentiates (and the
        (co)tangents it reads there, remembered as derived names)."""
        code = frame.f_code
        suffix = _PASSES.get((os.path.abspath(code.co_filename), code.co_name))
        if suffix is None:  # a Jacobian's assembly, or a pass inside the pass's helpers
            return None
        loc = frame.f_locals
        b = self.builder
        out = _var(loc.get("out"), b)
        if suffix == "_ct":
            g = _var(loc.get("g"), b)
            if g is not None and out is not None:
                self.derived.setdefault(g.name, (out.name, suffix))
            cts = loc.get("cts")  # the sources' cotangents are final once the trace ends
            if type(cts) is dict and id(cts) not in self._passes:
                self._passes[id(cts)] = (cts, loc.get("source_ids"), loc.get("entries"))
        else:
            for a, t in zip(loc.get("args") or (), loc.get("ts") or ()):
                a, t = _var(a, b), _var(t, b)
                if a is not None and t is not None:
                    self.derived.setdefault(t.name, (a.name, suffix))
            tangents = getattr(loc.get("self"), "_tangents", None)
            if out is not None and tangents is not None:  # its tangent: once the record ends
                self._forward = (tangents, loc.get("out"), frame)
        return out.name if out is not None else None

    def _forward_done(self):
        """Name the output tangent of the forward record that has ended."""
        tangents, primal, _ = self._forward
        self._forward = None
        e = tangents.get(id(primal))
        if e is not None and e[0]() is primal:
            t = _var(e[1], self.builder)
            if t is not None:
                self.derived.setdefault(t.name, (primal._var.name, "_dot"))

    def _passes_done(self):
        """Name the sources' cotangents of every reverse pass (``x_ct``)."""
        b = self.builder
        for cts, ids, entries in self._passes.values():
            want = {i for i in ids or () if i in cts}
            found = {}
            for e in entries or ():
                for a in e[1]:
                    if id(a) in want:
                        found.setdefault(id(a), a)
            for i, s in found.items():
                c, primal = _var(cts[i], b), _var(s, b)
                if primal is None:  # a captured tf.Variable: its program input
                    k = b._capture_index.get(getattr(s, "_uid", None))
                    primal = b.captures[k] if k is not None else None
                if c is not None and primal is not None:
                    self.derived.setdefault(c.name, (primal.name, "_ct"))
        self._passes = {}

    def flush(self):
        """Name the values recorded on the line just left after the frame's locals."""
        f, pending = self._frame, self._pending
        self._frame, self._pending = None, []
        if f is None or not pending or not self.read_user_locals:
            return
        loc = f.f_locals
        if len(loc) > _MAX_LOCALS:
            return
        pending = set(pending)
        b = self.builder
        for k, t in loc.items():
            if getattr(t, "_builder", None) is b and t._var.name in pending \
                    and t._var.name not in self.user and usable(k) and not k.startswith("_"):
                self.user[t._var.name] = k

    def origins(self):
        """``builder.origins`` with the names learned so far, as ``Program.origins`` wants."""
        self.flush()
        if self._forward is not None:
            self._forward_done()
        self._passes_done()
        names = {}

        def name(n):
            if n not in names:
                names[n] = ""  # a cycle cannot happen (primals come first); stop one anyway
                if n in self.user:
                    names[n] = self.user[n]
                elif n in self.derived:
                    p, suffix = self.derived[n]
                    names[n] = (name(p) or p) + suffix
            return names[n]

        return tuple((n, o._replace(name=name(n)) if name(n) else o)
                     for n, o in self.builder.origins.items())
