"""The compiled loss and metrics of ``model.compile``, with Keras 3's handling of models
with several outputs: a list (one entry per output) or a dict (by output name) of losses
and of metrics; each output's loss is logged as ``{output}_loss`` and its metrics as
``{output}_{metric}``.
"""
import numpy as np

from tapegrad.keras import _tf as tf
from tapegrad.keras import losses as losses_module
from tapegrad.keras import metrics as metrics_module


def _outputs(y, names):
    """The outputs of a structure ``y`` in the model's output order (a dict by name)."""
    if isinstance(y, dict):
        return [y[n] for n in names] if names and set(names) <= set(y) else list(y.values())
    if isinstance(y, (list, tuple)):
        return list(y)
    return [y]


def _names(names, count):
    return list(names) if names and len(names) == count else [f"output_{i}" for i in
                                                               range(count)]


class _CompiledLoss:
    """The compiled loss (``model.compiled_loss`` in TF-Keras code)."""

    def __init__(self, loss, loss_weights=None, output_names=None):
        self.loss = loss
        self.loss_weights = loss_weights
        self.output_names = output_names
        self.trackers = None  # one Mean per output, for several outputs

    def _fns(self, y_true):
        losses = self.loss if isinstance(self.loss, (list, tuple)) else [self.loss]
        return [losses_module.get(x) if isinstance(x, str) else x for x in losses]

    def __call__(self, y_true, y_pred, sample_weight=None, regularization_losses=None,
                 eager=False):
        names = self.output_names
        if isinstance(self.loss, dict):
            preds = _outputs(y_pred, names)
            trues = _outputs(y_true, names)
            order = names if names and len(names) == len(preds) else list(self.loss)
            pairs = [(self.loss[k], trues[i], preds[i]) for i, k in enumerate(order)
                     if k in self.loss]
            keys = [k for k in order if k in self.loss]
        elif isinstance(self.loss, (list, tuple)):
            pairs = list(zip(self.loss, _outputs(y_true, names), _outputs(y_pred, names)))
            keys = _names(names, len(pairs))
        else:
            pairs = [(self.loss, y_true, y_pred)]
            keys = None
        weights = self.loss_weights
        if isinstance(weights, dict):
            weights = [weights.get(k, 1.0) for k in (keys or list(self.loss))]
        if keys is not None and len(pairs) > 1 and self.trackers is None:
            self.trackers = [metrics_module.Mean(name=f"{k}_loss") for k in keys]
        total = None
        for i, (fn, yt, yp) in enumerate(pairs):
            fn = losses_module.get(fn) if isinstance(fn, str) else fn
            if not isinstance(fn, losses_module.Loss):
                fn = losses_module.LossFunctionWrapper(fn)
            value = fn(yt, yp, sample_weight)
            if self.trackers is not None:  # Keras logs each output's unweighted loss
                # weighted by the batch's static size: inside the tf.function that Keras on
                # TensorFlow steps in (unless run_eagerly) that size is None, so each batch
                # counts once, a short last batch as much as a full one (the total loss
                # counts each batch by its rows: tf.shape)
                self.trackers[i].update_state(value, sample_weight=yp.shape[0] if eager
                                              else None)
            if weights is not None:
                value = value * weights[i]
            total = value if total is None else total + value
        for extra in regularization_losses or ():
            total = total + tf.cast(extra, total.dtype)
        return total


class _CompiledMetrics:
    """The compiled metrics, resolved on the first batch (``'accuracy'`` picks binary,
    categorical or sparse categorical accuracy from the shapes, as Keras does). As in
    Keras 3, ``metrics`` ignore sample weights (and so ``class_weight``); the
    ``weighted_metrics`` use them, a name already taken getting the prefix ``weighted_``.
    For several outputs, the metrics are a list of lists or a dict by output name."""

    name = "compile_metrics"

    def __init__(self, metrics, weighted_metrics=None, output_names=None):
        # Keras lists this container in ``model.metrics`` only where compile got metrics
        self.given = metrics is not None or weighted_metrics is not None
        for arg, value in (("metrics", metrics), ("weighted_metrics", weighted_metrics)):
            if value and not isinstance(value, (list, tuple, dict)):
                raise ValueError(f"Expected `{arg}` argument to be a list, tuple, or dict. "
                                 f"Received instead: {arg}={value} of type {type(value)}")
        self.spec = metrics or []
        self.weighted_spec = weighted_metrics or []
        self.output_names = output_names
        self.metrics = None
        self._plan = []  # (output index or None, weighted) per metric

    def build(self, y_true, y_pred):
        preds = _outputs(y_pred, self.output_names)
        multi = isinstance(y_pred, (list, tuple, dict)) and len(preds) > 1
        names = _names(self.output_names, len(preds))
        trues = _outputs(y_true, self.output_names) if multi else None
        metrics, plan, taken, counters = [], [], set(), {}

        def add(m, i, weighted):
            prefix = "" if i is None else f"{names[i]}_"
            name = prefix + m.name
            if weighted and name in taken:  # Keras: {output}_weighted_{name}
                name = f"{prefix}weighted_{m.name}"
            if name in taken:  # Keras: a repeated name gets _1, _2, ...
                counters[name] = counters.get(name, 0) + 1
                name = f"{name}_{counters[name]}"
            m.name = name
            taken.add(m.name)
            metrics.append(m)
            plan.append((i, weighted))
        for spec, weighted in ((self.spec, False), (self.weighted_spec, True)):
            if not multi:
                for m in self._build(spec, y_true, y_pred):
                    add(m, None, weighted)
                continue
            for i, per_output in enumerate(self._per_output(spec, names)):
                for m in self._build(per_output, trues[i], preds[i]):
                    add(m, i, weighted)
        self.metrics, self._plan = metrics, plan

    @staticmethod
    def _per_output(spec, names):
        if not spec:
            return [[] for _ in names]
        if isinstance(spec, dict):
            return [spec.get(n) or [] for n in names]
        if len(spec) == len(names) and all(isinstance(s, (list, tuple)) or s is None
                                           for s in spec):
            return [s or [] for s in spec]
        raise ValueError("Invalid `metrics`. `metrics` should contain metrics objects and "
                         "either be a dict or a list matching the output names of the "
                         f"functional model {names}. Received: metrics={spec}")

    @staticmethod
    def _build(spec, y_true, y_pred):
        spec = spec if isinstance(spec, (list, tuple)) else [spec]
        out = []
        for m in spec:
            if isinstance(m, str) and m.lower() in ("accuracy", "acc"):
                yt, yp = np.shape(y_true), tuple(y_pred.shape)
                if yp[-1:] == (1,):
                    cls = metrics_module.BinaryAccuracy
                elif len(yt) < len(yp) or (yt[-1:] == (1,) and yp[-1] > 1):
                    cls = metrics_module.SparseCategoricalAccuracy
                else:
                    cls = metrics_module.CategoricalAccuracy
                out.append(cls(name=m))
            else:
                metric = metrics_module.get(m)
                if isinstance(m, str):
                    metric.name = m
                out.append(metric)
        return out

    def result(self):
        """Each metric's result by name (a custom ``train_step`` returns it as one log)."""
        if self.metrics is None:
            raise ValueError("Cannot get result() since the metric has not yet been built.")
        return {m.name: m.result() for m in self.metrics}

    def reset_state(self):
        for m in self.metrics or ():
            m.reset_state()

    def update_state(self, y_true, y_pred, sample_weight=None):
        if self.metrics is None:
            self.build(y_true, y_pred)
        preds = trues = None
        for m, (i, weighted) in zip(self.metrics, self._plan):
            sw = sample_weight if weighted else None
            if i is None:
                m.update_state(y_true, y_pred, sw)
                continue
            if preds is None:
                preds = _outputs(y_pred, self.output_names)
                trues = _outputs(y_true, self.output_names)
            m.update_state(trues[i], preds[i], sw)
