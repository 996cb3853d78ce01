"""Safe save and load of compiled programs: JSON plus ``.npz``, never pickle.

>>> import os, tempfile, tapegrad as tf
>>> w = tf.Variable([[1.0], [2.0]], name="w")
>>> @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
... def model(x):
...     return tf.tanh(tf.matmul(x, w))
>>> path = os.path.join(tempfile.mkdtemp(), "model.tgz")
>>> tf.saved.save(model.get_concrete_function(tf.TensorSpec([3, 2])), path)
>>> m = tf.saved.load(path)                      # no Python code of `model` is needed
>>> x = tf.constant([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
>>> with tf.GradientTape() as tape:
...     y = tf.reduce_sum(m(x))
>>> tape.gradient(y, m.variables[0]).shape      # differentiable, variables restored
TensorShape([2, 1])

Format, version 1 (also in ``docs/saved_format.md``)
----------------------------------------------------
A ZIP archive with exactly two members:

``program.json`` (UTF-8, at most 64 MiB) — one object::

    {"format": "tapegrad.saved", "version": 1,
     "function": PROGRAM,
     "variables": [{"name": "w:0", "trainable": true, "data": "var3"}, ...],
     "output_structure": TREE}

- ``PROGRAM``: ``{"name", "inputs": [VAR], "captures": [VAR], "constants": [{"var": VAR,
  "data": KEY, "broadcast": BOOL}], "equations": [EQN], "outputs": [NAME],
  "updates": [[CAPTURE_INDEX, NAME]]}``. Names are defined once (inputs, captures,
  constants, equation outputs) before use. ``broadcast``: the array holds one value that
  fills the shape.
- ``VAR``: ``{"name": NAME, "shape": [int, ...], "dtype": "float32"}``; ``NAME`` matches
  ``[A-Za-z][A-Za-z0-9_]*`` (not a keyword); dtypes: bool, (u)int8..64, float16/32/64,
  complex64/128; at most 32 axes and 2**40 elements.
- ``EQN``: ``{"primitive": "mul", "inputs": [NAME], "params": {"name": VALUE},
  "outputs": [VAR]}``; the param names are exactly the fields of the primitive's code form.
- ``VALUE``, always typed: ``{"int": 3}``, ``{"float": "0.5"}`` (Python ``repr``, so
  ``"nan"``, ``"-inf"``), ``{"bool": true}``, ``{"none": null}``, ``{"str": "ij,jk->ik"}``
  (letters, digits and ``_.,->`` only), ``{"dtype": "float32"}``, ``{"tuple": [VALUE]}``,
  ``{"list": [VALUE]}``, ``{"index": [ITEM]}`` (a getitem index; ``ITEM``: ``{"int"}``,
  ``{"slice": [start, stop, step]}``, ``{"none": null}``, ``{"ellipsis": null}``,
  ``{"array": KEY}``) and ``{"program": PROGRAM}`` (a control-flow sub-program: no captures,
  no updates). Integers are sizes or axes, bounded by their equation's dimensions, except
  ``pad.constant_values`` and ``while_loop.maximum_iterations``.
- ``TREE``: ``{"tensor": i}``, ``{"list": [TREE]}``, ``{"tuple": [TREE]}``,
  ``{"dict": [[key, TREE]]}``; the leaves number the outputs 0, 1, ... in order.

``constants.npz`` — an npz of every array (constants, index arrays, variable values),
member ``KEY.npy`` per array, each used exactly once; read by tapegrad's own bounded reader
(never ``np.load``) after its header was checked against the declaration.

Every param is checked by its primitive's ``validate`` rule and every declared shape and
dtype against its abstract rule (pure arithmetic: loading allocates nothing of the declared
sizes). ``load(path, max_bytes=2**32)`` bounds every byte read or decompressed, checked
before reading; only ``LoadError`` ever leaves ``load``. Saving is reproducible (the same
program gives the same bytes). ``load`` reads every version in ``VERSIONS``.

Variables: a captured ``tf.Variable`` is saved with its current value (as TensorFlow does)
and loaded as a new ``tf.Variable``, which the function reads on every call (and assigns, if
the saved function did). The program saved is the trace with constant folding and DCE;
loading regenerates the NumPy code from the IR. Nothing from the file is ever evaluated:
primitive names are registry keys, code strings come from the registry, and every
inconsistency raises ``LoadError`` (a ``ValueError``).
"""
from tapegrad.saved.format import FORMAT, MAX_BYTES, VERSION, VERSIONS, LoadError  # noqa: F401
from tapegrad.saved.archive import load, save  # noqa: F401
from tapegrad.saved.options import SaveOptions  # noqa: F401
from tapegrad.saved.loaded import LoadedFunction  # noqa: F401
from tapegrad.saved.transport import dumps, loads  # noqa: F401
