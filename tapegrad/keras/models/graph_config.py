"""A functional model's graph as a config (Keras 3's layout) and back.

Each layer's entry is its ``serialize_keras_object`` config plus ``name`` and
``inbound_nodes``: one ``{"args": [...], "kwargs": {...}}`` per call in the model, where
each symbolic tensor is ``{"class_name": "__keras_tensor__", "config": {"shape", "dtype",
"keras_history": [layer name, node index, output index]}}``. ``input_layers`` and
``output_layers`` reference tensors the same way (``[name, node, index]``, nested as the
model's inputs and outputs are).
"""
from tapegrad.keras import _tf as tf
from tapegrad.keras.layers.symbolic import KerasTensor


def _is_ref(x):
    return (isinstance(x, list) and len(x) == 3 and isinstance(x[0], str)
            and isinstance(x[1], int) and isinstance(x[2], int))


def functional_config(model):
    from tapegrad.keras.serialization import serialize_keras_object, serialize_value
    node_index = {}
    per_layer = {}
    for node in model._nodes:
        nodes = per_layer.setdefault(id(node.layer), [])
        node_index[id(node)] = len(nodes)
        nodes.append(node)

    def ref(kt):
        if kt._history is None:
            return [kt._input_layer.name, 0, 0]
        node, i = kt._history
        return [node.layer.name, node_index[id(node)], i]

    def arg(x):
        if isinstance(x, KerasTensor):
            return {"class_name": "__keras_tensor__",
                    "config": {"shape": list(x.shape), "dtype": x.dtype.name,
                               "keras_history": ref(x)}}
        if isinstance(x, (list, tuple)):
            return [arg(v) for v in x]
        if isinstance(x, dict):
            return {k: arg(v) for k, v in x.items()}
        return serialize_value(x)

    layers = []
    for layer in model.layers:
        entry = serialize_keras_object(layer)
        entry["name"] = layer.name
        entry["inbound_nodes"] = [{"args": arg(list(n.args)), "kwargs": arg(dict(n.kwargs))}
                                  for n in per_layer.get(id(layer), [])]
        layers.append(entry)

    def refs(structure):
        return tf.nest.map_structure(ref, structure) if not isinstance(
            structure, KerasTensor) else ref(structure)
    return {"name": model.name, "trainable": model.trainable, "layers": layers,
            "input_layers": _listed(refs(model._inputs_struct)),
            "output_layers": _listed(refs(model._outputs_struct))}


def _listed(x):
    if isinstance(x, tuple):
        return [_listed(v) for v in x]
    if isinstance(x, list) and not _is_ref(x):
        return [_listed(v) for v in x]
    if isinstance(x, dict):
        return {k: _listed(v) for k, v in x.items()}
    return x


def functional_from_config(cls, config, custom_objects=None):
    """Rebuild the layers, then replay their calls once every tensor a call needs
    exists (the saved order need not be the calls' order)."""
    from tapegrad.keras.serialization import deserialize_keras_object
    from tapegrad.keras.layers.core import InputLayer
    layers, tensors, todo = {}, {}, []
    for entry in config["layers"]:
        entry = dict(entry)
        name = entry.pop("name", None) or entry["config"].get("name")
        nodes = entry.pop("inbound_nodes", [])
        entry.pop("build_config", None)  # the replayed calls build the layer
        layer = deserialize_keras_object(entry, custom_objects)
        if name in layers:
            raise ValueError(f"The name \"{name}\" is used 2 times in the model. All "
                             "operation names should be unique.")
        layers[name] = layer
        if isinstance(layer, InputLayer):
            tensors[(name, 0, 0)] = layer.output
        todo.extend((name, k, node) for k, node in enumerate(nodes))

    def resolve(x):
        if isinstance(x, dict) and x.get("class_name") == "__keras_tensor__":
            key = tuple(x["config"]["keras_history"])
            if key not in tensors:
                raise KeyError(key)
            return tensors[key]
        if isinstance(x, list):
            return [resolve(v) for v in x]
        if isinstance(x, dict):
            return {k: resolve(v) for k, v in x.items()}
        return x
    while todo:
        left = []
        for name, k, node in todo:
            try:
                args, kwargs = resolve(node.get("args", [])), resolve(node.get("kwargs", {}))
            except KeyError:
                left.append((name, k, node))
                continue
            out = layers[name](*args, **kwargs)
            for i, kt in enumerate(tf.nest.flatten(out)):
                tensors[(name, k, i)] = kt
        if len(left) == len(todo):
            raise ValueError("The functional model's config is inconsistent: calls wait for "
                             f"tensors no call makes ({[n for n, _, _ in left][:5]}).")
        todo = left

    def tensor(r):
        if _is_ref(r):
            if tuple(r) not in tensors:
                raise ValueError(f"The model's config names a tensor no layer makes: {r}")
            return tensors[tuple(r)]
        if isinstance(r, list):
            return [tensor(v) for v in r]
        if isinstance(r, dict):
            return {k: tensor(v) for k, v in r.items()}
        raise ValueError(f"Could not parse tensor reference {r!r}")
    inputs, outputs = tensor(config["input_layers"]), tensor(config["output_layers"])
    return cls(inputs, outputs, name=config.get("name"),
               trainable=config.get("trainable", True))
