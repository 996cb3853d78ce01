"""``InputSpec`` and the checks of a layer's input, with Keras's messages."""
from tapegrad.keras import _tf as tf


class InputSpec:
    """What a layer accepts: ``ndim``, ``min_ndim``, ``max_ndim``, ``axes`` ({axis: size}),
    ``shape`` and ``dtype``."""

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None,
                 axes=None, allow_last_axis_squeeze=False, name=None, optional=False):
        self._accepted = None  # (shape, dtype, axes) of the last tensor that passed
        self.dtype = dtype
        self.shape = None if shape is None else tuple(shape)
        self.ndim = len(self.shape) if self.shape is not None else ndim
        self.max_ndim, self.min_ndim = max_ndim, min_ndim
        self.axes = dict(axes or {})
        self.allow_last_axis_squeeze = allow_last_axis_squeeze
        self.name, self.optional = name, optional

    def __setattr__(self, name, value):
        # any change of the spec forgets the last accepted input (see accepts_again)
        object.__setattr__(self, "_accepted", None)
        object.__setattr__(self, name, value)

    def accepts_again(self, x):
        """Whether ``x`` has the shape and dtype of the last input this spec accepted, the
        spec unchanged since (its ``axes`` compared by value: a dict can change in place)."""
        acc = self._accepted
        # x is a tf.Tensor (see below): its raw shape, a tuple, compares fastest
        return acc is not None and acc[0] == x._value.shape and acc[1] == x.dtype \
            and acc[2] == self.axes

    def __repr__(self):
        facts = [f"{k}={v}" for k, v in (("dtype", self.dtype), ("shape", self.shape),
                 ("ndim", self.ndim), ("max_ndim", self.max_ndim),
                 ("min_ndim", self.min_ndim), ("axes", self.axes or None)) if v is not None]
        return f"InputSpec({', '.join(facts)})"


def _head(i, spec, layer_name):
    """The start of an incompatibility message (formatted only when raising)."""
    return (f"Input {i} with name '{spec.name}' of layer '{layer_name}' is "
            "incompatible with the layer: ")


def assert_input_compatibility(input_spec, inputs, layer_name):
    """Raise Keras's ValueError when ``inputs`` do not fit ``input_spec``."""
    if type(input_spec) is InputSpec and (type(inputs) is tf.Tensor or hasattr(inputs, "shape")):
        # one spec, one tensor: no flattening; the shape and dtype of the previous call
        # (a training loop's): nothing to check again
        if type(inputs) is tf.Tensor and input_spec.accepts_again(inputs):
            return
        specs, xs = (input_spec,), (inputs,)
    else:
        specs, xs = tf.nest.flatten(input_spec), tf.nest.flatten(inputs)
    if len(xs) != len(specs):
        raise ValueError(f'Layer "{layer_name}" expects {len(specs)} input(s), but it '
                         f"received {len(xs)} input tensors. Inputs received: {xs}")
    for i, (x, spec) in enumerate(zip(xs, specs)):
        if spec is None or (x is None and spec.optional):
            continue
        if not hasattr(x, "shape"):
            raise ValueError(f"Inputs to a layer should be tensors. Got '{x}' (of type "
                             f"{type(x)}) as input for layer '{layer_name}'.")
        shape = tuple(x.shape)
        ndim = len(shape)
        if spec.ndim is not None and not spec.allow_last_axis_squeeze and ndim != spec.ndim:
            raise ValueError(_head(i, spec, layer_name)
                             + f"expected ndim={spec.ndim}, found ndim={ndim}. "
                             f"Full shape received: {shape}")
        if spec.max_ndim is not None and ndim > spec.max_ndim:
            raise ValueError(_head(i, spec, layer_name)
                             + f"expected max_ndim={spec.max_ndim}, found ndim={ndim}")
        if spec.min_ndim is not None and ndim < spec.min_ndim:
            raise ValueError(_head(i, spec, layer_name)
                             + f"expected min_ndim={spec.min_ndim}, found ndim={ndim}. "
                             f"Full shape received: {shape}")
        if spec.dtype is not None and x.dtype.name != spec.dtype:
            raise ValueError(_head(i, spec, layer_name)
                             + f"expected dtype={spec.dtype}, found dtype={x.dtype.name}")
        for axis, value in spec.axes.items():
            if value is not None and shape[axis] not in (value, None):
                raise ValueError(_head(i, spec, layer_name)
                                 + f"expected axis {axis} of input shape to have value "
                                 f"{value}, but received input with shape {shape}")
        if spec.shape is not None:
            for sd, d in zip(spec.shape, shape):
                if sd is not None and d is not None and sd != d:
                    raise ValueError(_head(i, spec, layer_name)
                                     + f"expected shape={spec.shape}, found shape={shape}")
    if type(input_spec) is InputSpec and type(inputs) is tf.Tensor:
        input_spec._accepted = (inputs._value.shape, inputs.dtype, dict(input_spec.axes))
