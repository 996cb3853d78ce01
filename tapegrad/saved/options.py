"""``tf.saved_model.SaveOptions``: accepted by ``tf.saved_model.save`` for compatibility.

Every TensorFlow option is accepted and kept as an attribute; none changes what tapegrad
writes, because each concerns something a tapegrad file does not have:

- ``namespace_whitelist``: custom op namespaces; tapegrad programs hold registry primitives.
- ``save_debug_info``, ``experimental_debug_stripper``: graph debug info; there is none.
- ``function_aliases``: names for extra functions; a file holds one function.
- ``experimental_io_device``: the device that writes; the calling process writes.
- ``experimental_variable_policy``: device placement of variables; values are saved as
  they are.
- ``experimental_custom_gradients``: the saved program is the forward trace; loading
  differentiates it with the primitives' rules (a ``custom_gradient`` is not kept).
- ``experimental_image_format``, ``experimental_skip_saver``,
  ``experimental_sharding_callback``, ``extra_tags``: TensorFlow's proto and checkpoint
  layout; the format is ``docs/saved_format.md``.

>>> import tapegrad as tf
>>> tf.saved_model.SaveOptions(save_debug_info=True).save_debug_info
True
"""

_FIELDS = ("namespace_whitelist", "save_debug_info", "function_aliases",
           "experimental_debug_stripper", "experimental_io_device",
           "experimental_variable_policy", "experimental_custom_gradients",
           "experimental_image_format", "experimental_skip_saver",
           "experimental_sharding_callback", "extra_tags")


class SaveOptions:
    """Options for ``tf.saved_model.save`` (all accepted, none changes the file)."""

    __slots__ = _FIELDS

    def __init__(self, namespace_whitelist=None, save_debug_info=False, function_aliases=None,
                 experimental_debug_stripper=False, experimental_io_device=None,
                 experimental_variable_policy=None, experimental_custom_gradients=True,
                 experimental_image_format=False, experimental_skip_saver=False,
                 experimental_sharding_callback=None, extra_tags=None):
        if namespace_whitelist is not None and (isinstance(namespace_whitelist, str) or not all(
                isinstance(n, str) for n in namespace_whitelist)):
            raise TypeError("SaveOptions: `namespace_whitelist` must be a list of strings.")
        if function_aliases is not None and not isinstance(function_aliases, dict):
            raise TypeError("SaveOptions: `function_aliases` must be a dict.")
        self.namespace_whitelist = list(namespace_whitelist or [])
        self.save_debug_info = bool(save_debug_info)
        self.function_aliases = dict(function_aliases or {})
        self.experimental_debug_stripper = bool(experimental_debug_stripper)
        self.experimental_io_device = experimental_io_device
        self.experimental_variable_policy = experimental_variable_policy
        self.experimental_custom_gradients = bool(experimental_custom_gradients)
        self.experimental_image_format = bool(experimental_image_format)
        self.experimental_skip_saver = bool(experimental_skip_saver)
        self.experimental_sharding_callback = experimental_sharding_callback
        self.extra_tags = extra_tags

    def __repr__(self):
        return "SaveOptions(" + ", ".join(f"{f}={getattr(self, f)!r}" for f in _FIELDS) + ")"
