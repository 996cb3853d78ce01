"""``Dataset.window``: a dataset of windows, each window a structure of datasets (one per
component) over ``size`` elements taken every ``stride`` input elements, windows starting
every ``shift`` elements; as in TensorFlow the last windows may be shorter unless
``drop_remainder``. Streams: only the elements of the current window are held."""
from tapegrad.data import structure as data_structure
from tapegrad.data.sources import INFINITE, UNKNOWN
from tapegrad.data.transforms import Stage


class Rows:
    """A finite list of elements (one component of a window) as a dataset node."""
    kind = "_WindowRows"

    def __init__(self, rows, spec):
        self.rows, self._spec = rows, spec

    def __iter__(self):
        return iter(self.rows)

    def spec(self):
        return self._spec

    def cardinality(self):
        return len(self.rows)


class Window(Stage):
    kind = "_WindowDataset"

    def __init__(self, input, size, shift, stride, drop_remainder, dataset_type):
        super().__init__(input)
        self.size, self.shift, self.stride = size, shift, stride
        self.drop, self.dataset_type = bool(drop_remainder), dataset_type

    def _window(self, rows):
        specs = data_structure.flatten(self.input.spec())
        leaves = [data_structure.flatten(r) for r in rows]
        return data_structure.pack(self.input.spec(), [
            self.dataset_type(Rows([f[c] for f in leaves], s)) for c, s in enumerate(specs)])

    def __iter__(self):
        span = (self.size - 1) * self.stride + 1
        it = iter(self.input)
        buf, base, start, done = [], 0, 0, False  # buf[i] is input element base + i
        while True:
            while not done and base + len(buf) < start + span:
                try:
                    e = next(it)
                except StopIteration:
                    done = True
                    break
                if base < start and not buf:
                    base += 1  # between windows (shift > span): skipped
                else:
                    buf.append(e)
            end = base + len(buf)
            if start >= end:
                return
            rows = [buf[i - base] for i in range(start, min(start + span, end), self.stride)]
            if len(rows) < self.size and self.drop:
                return  # every later window is shorter still
            yield self._window(rows)
            start += self.shift
            k = min(start - base, len(buf))
            del buf[:k]
            base += k

    def spec(self):
        """The windows' element specs (each component of a window is a dataset of them)."""
        return self.input.spec()

    def cardinality(self):
        c = self.input.cardinality()
        if c < 0:
            return c if c in (INFINITE, UNKNOWN) else UNKNOWN
        if not self.drop:
            return -(-c // self.shift)
        span = (self.size - 1) * self.stride + 1
        return 0 if c < span else (c - span) // self.shift + 1
