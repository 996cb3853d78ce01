"""``model.summary()``: Keras's table of layers, output shapes and parameter counts."""
import numpy as np


def _count(weights):
    """The number of parameters, written as Keras does (``1,010,080``)."""
    return f"{int(sum(int(np.prod(w.shape)) for w in weights)):,}"


def _bytes(weights):
    n = sum(int(np.prod(w.shape)) * w.dtype.itemsize for w in weights)
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.2f} {unit}"
        n /= 1024


def print_summary(model, print_fn=None, show_trainable=False):
    print_fn = print_fn or print
    shapes = model._layer_output_shapes()
    rows = []
    for layer in model.layers:
        shape = shapes.get(id(layer))
        rows.append((f"{layer.name} ({type(layer).__name__})",
                     "?" if shape is None else str(shape),
                     _count(layer.weights) if layer.built else "0 (unbuilt)"))
    widths = [max(31, *(len(r[0]) for r in rows)) if rows else 31,
              max(22, *(len(r[1]) for r in rows)) if rows else 22, 13]
    kind = type(model).__name__.lower()
    title = f'Model: "{model.name}"' if kind != "model" else f'Model: "{model.name}"'

    def line(left, mid, right, fill):
        return left + mid.join(fill * (w + 2) for w in widths) + right
    out = [title, line("\u250f", "\u2533", "\u2513", "\u2501"),
           "\u2503 " + " \u2503 ".join([
               "Layer (type)".ljust(widths[0]), "Output Shape".ljust(widths[1]),
               "Param #".rjust(widths[2])]) + " \u2503",
           line("\u2521", "\u2547", "\u2529", "\u2501")]
    for i, r in enumerate(rows):
        out.append("\u2502 " + " \u2502 ".join([r[0].ljust(widths[0]), r[1].ljust(widths[1]),
                                                r[2].rjust(widths[2])]) + " \u2502")
        if i < len(rows) - 1:
            out.append(line("\u251c", "\u253c", "\u2524", "\u2500"))
    out.append(line("\u2514", "\u2534", "\u2518", "\u2500"))
    weights = model.weights
    trainable = model.trainable_weights
    ids = {id(w) for w in trainable}
    frozen = [w for w in weights if id(w) not in ids]
    out.append(f" Total params: {_count(weights)} ({_bytes(weights)})")
    out.append(f" Trainable params: {_count(trainable)} ({_bytes(trainable)})")
    out.append(f" Non-trainable params: {_count(frozen)} ({_bytes(frozen)})")
    print_fn("\n".join(out))
