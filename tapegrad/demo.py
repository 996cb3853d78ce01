"""The README's demo: the lessons, then the repeated-Jacobian workflow.

Run with ``python -m tapegrad.demo`` (or ``make demo``).
"""
import time

import numpy as np

import tapegrad as tf


def _say(title):
    print(f"\n== {title} " + "=" * max(0, 66 - len(title)))


def lesson_persistent_tape():
    _say("Persistent tapes (lesson: 'Persistent Tapes and Higher-Order Gradients')")
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = x ** 3
    dy_dx = tape.gradient(y, x)
    print(f"Default tape: dy_dx = {float(dy_dx)}   # 3x² = 12")
    try:
        tape.gradient(y, x)
    except RuntimeError as e:
        print(f"Second call on a default tape: RuntimeError: {e}")
    with tf.GradientTape(persistent=True) as tape:
        y = x ** 3
    dy_dx = tape.gradient(y, x)
    d2y_dx2 = tape.gradient(dy_dx, x)
    print(f"Persistent tape: dy_dx = {float(dy_dx)}, d2y_dx2 = {float(d2y_dx2)}"
          "   # 12 and 6x = 12 (TensorFlow returns None here)")
    del tape


def lesson_nested_tapes():
    _say("Nested tapes: second derivative")
    x = tf.Variable(2.0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = x * x * x
        dy_dx = t1.gradient(y, x)
    d2y_dx2 = t2.gradient(dy_dx, x)
    print(f"f'(2) = {dy_dx.numpy()}")
    print(f"f''(2) = {d2y_dx2.numpy()}")


def lesson_jacobian():
    _say("tape.jacobian (lesson: 'Repeated use of GradientTape')")
    with tf.GradientTape() as g:
        x = tf.constant([1.0, 2.0])
        g.watch(x)
        y = x * x
    jacobian = g.jacobian(y, x)
    print(f"jacobian of x*x at [1, 2], shape {jacobian.shape}:\n{jacobian.numpy()}")


def make_mlp(sizes=(32, 256, 256, 16), seed=0):
    rng = np.random.default_rng(seed)
    params = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        params.append((tf.constant(rng.normal(0, 1 / np.sqrt(a), (a, b)).astype(np.float32)),
                       tf.constant(np.zeros(b, np.float32))))

    def mlp(x):
        one = x.ndim == 1  # one input: a batch of one, since tf.matmul takes matrices
        if one:
            x = x[None]
        for i, (w, b) in enumerate(params):
            x = tf.matmul(x, w) + b
            if i < len(params) - 1:
                x = tf.tanh(x)
        return x[0] if one else x
    return mlp


def _median_time(fn, repeat=7, number=5):
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t) / number)
    return float(np.median(times))


def repeated_jacobian(n_inputs=512):
    _say("Repeated Jacobians of an MLP 32 -> 256 -> 256 -> 16 (tanh)")
    mlp = make_mlp()
    xs = np.random.default_rng(1).normal(size=(n_inputs, 32)).astype(np.float32)

    # (a) eagerly, one input at a time: record a tape, take its Jacobian
    def jac_eager(x):
        x = tf.constant(x)
        with tf.GradientTape() as g:
            g.watch(x)
            y = mlp(x)
        return g.jacobian(y, x)

    results = {"a": np.stack([jac_eager(x).numpy() for x in xs[:8]])}
    t_a = _median_time(lambda: jac_eager(xs[0]), number=20)
    print(f"(a) eager, per input:            {t_a * 1e6:9.1f} µs per Jacobian")

    if not hasattr(tf, "function"):
        print("(b), (c): tapegrad.function is not available in this build.")
        return
    # (b) traced and compiled once, then re-run on new inputs without retracing
    jac_compiled = tf.function(jac_eager)
    results["b"] = np.stack([jac_compiled(x).numpy() for x in xs[:8]])
    t_b = _median_time(lambda: jac_compiled(xs[1]), number=50)
    print(f"(b) compiled once, per input:    {t_b * 1e6:9.1f} µs per Jacobian "
          f"(traced {jac_compiled.trace_count} time)")

    # (c) a whole batch at once: batch_jacobian, compiled
    @tf.function
    def jac_batch(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = mlp(x)
        return g.batch_jacobian(y, x)

    results["c"] = jac_batch(xs).numpy()[:8]
    t_c = _median_time(lambda: jac_batch(xs))
    print(f"(c) batch of {n_inputs}, compiled:     {t_c / n_inputs * 1e6:9.1f} µs per Jacobian")
    agree = all(np.allclose(results["a"], results[k], rtol=1e-4, atol=1e-5) for k in "bc")
    print(f"The three agree: {agree}   (Jacobian shape {results['a'].shape[1:]})")
    concrete = jac_batch.get_concrete_function(xs)
    src = concrete.source()
    print(f"\nThe compiled derivative program is plain NumPy ({src.count(chr(10))} lines); "
          "its first lines:")
    print("\n".join("    " + line for line in src.splitlines()[:12]))


def make_cnn(seed=0):
    """The question's CNN: 28x28x1 -> conv 3x3, 8, tanh -> conv 3x3, 16, stride 2, tanh -> 10."""
    rng = np.random.default_rng(seed)

    def w(shape, fan_in):
        return tf.constant((rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32))
    w1, w2, w3 = w((3, 3, 1, 8), 9), w((3, 3, 8, 16), 72), w((2304, 10), 2304)
    b1, b2, b3 = (tf.constant(np.full(n, 0.1, np.float32)) for n in (8, 16, 10))

    def cnn(x):
        h = tf.tanh(tf.nn.bias_add(tf.nn.conv2d(x, w1, 1, "VALID"), b1))
        h = tf.tanh(tf.nn.bias_add(tf.nn.conv2d(h, w2, 2, "VALID"), b2))
        return tf.matmul(tf.reshape(h, (-1, 2304)), w3) + b3
    return cnn


CNN_BATCH = 128


def cnn_jacobian_workflow(n_inputs=10_000):
    """Build the CNN, compile its batch Jacobian once, save it; a fresh process loads it and
    evaluates it on ``n_inputs`` images."""
    import os
    import subprocess
    import sys
    import tempfile
    _say("The question's CNN: batch Jacobian compiled once, saved, loaded in a new process")
    cnn = make_cnn()

    @tf.function
    def jac(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = cnn(x)
        return g.batch_jacobian(y, x)    # [batch, 10, 28, 28, 1]

    x = tf.constant(np.random.default_rng(2).normal(size=(CNN_BATCH, 28, 28, 1))
                    .astype(np.float32))
    t = time.perf_counter()
    concrete = jac.get_concrete_function(x)
    print(f"traced for batches of {CNN_BATCH} in {time.perf_counter() - t:.2f} s "
          f"({len(concrete.program.equations)} equations)")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "cnn_jacobian.tgz")
        tf.saved.save(concrete, path)
        print(f"saved ({os.path.getsize(path) / 1e6:.1f} MB: JSON + .npz, no code)")
        # a check the child repeats on its loaded copy: the Jacobian of the first image
        np.save(path + ".x0.npy", x.numpy()[:1])
        np.save(path + ".j0.npy", jac(x).numpy()[:1])
        out = subprocess.run([sys.executable, "-m", "tapegrad.demo", "--evaluate-saved", path,
                              str(n_inputs), repr(time.time())], capture_output=True,
                             text=True, timeout=600)
    print(out.stdout.rstrip() or out.stderr.rstrip())


def evaluate_saved(path, n_inputs, spawned):
    """The child process: load the saved Jacobian program and run it over ``n_inputs``."""
    t_import = time.time() - spawned  # the interpreter's start and ``import tapegrad``
    t0 = time.perf_counter()
    loaded = tf.saved.load(path)
    x0 = np.load(path + ".x0.npy")
    batch = np.zeros((CNN_BATCH, 28, 28, 1), np.float32)
    batch[:1] = x0
    first = np.asarray(loaded(batch))
    t_first = time.perf_counter() - t0
    ok = np.allclose(first[:1], np.load(path + ".j0.npy"), rtol=1e-5, atol=1e-6)
    print(f"  fresh process: load to first result {t_first * 1e3:.0f} ms, after "
          f"{t_import * 1e3:.0f} ms to start Python and import tapegrad "
          f"(matches the parent's Jacobian: {ok})")
    rng = np.random.default_rng(3)
    done, checksum = 0, 0.0
    t = time.perf_counter()
    while done < n_inputs:
        k = min(CNN_BATCH, n_inputs - done)
        batch[:k] = rng.normal(size=(k, 28, 28, 1))
        j = np.asarray(loaded(batch))[:k]      # the last batch is padded and trimmed
        checksum += float(np.abs(j).sum())
        done += k
    dt = time.perf_counter() - t
    print(f"  {n_inputs} Jacobians (10 x 784 each) in {dt:.2f} s: "
          f"{dt / n_inputs * 1e6:.0f} µs per Jacobian (checksum {checksum:.4g})")


def pictures(out_dir="demo_pictures"):
    """The lesson's second-derivative tape and a compiled MLP batch Jacobian, drawn."""
    import os
    _say("Pictures: the tape and the derivative program (tf.draw)")
    os.makedirs(out_dir, exist_ok=True)
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as t2:
        with tf.GradientTape() as t1:
            y = x * x * x
        dy_dx = t1.gradient(y, x)
    t2.gradient(dy_dx, x)
    mlp = make_mlp((4, 8, 3))

    @tf.function
    def jac(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = mlp(x)
        return g.batch_jacobian(y, x)

    cf = jac.get_concrete_function(tf.TensorSpec([16, 4], tf.float32))
    for name, obj in (("lesson_second_derivative_tape", t2), ("mlp_batch_jacobian", cf)):
        path = os.path.join(out_dir, name + ".svg")
        dot = tf.draw(obj, path)
        print(f"{path}: {dot.count(' -> ')} edges "
              f"({'Graphviz' if tf.drawing.has_dot() else 'built-in layout'})")


def main():
    import sys
    if len(sys.argv) == 5 and sys.argv[1] == "--evaluate-saved":
        evaluate_saved(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
        return
    lesson_persistent_tape()
    lesson_nested_tapes()
    lesson_jacobian()
    repeated_jacobian()
    cnn_jacobian_workflow()
    pictures()


if __name__ == "__main__":
    main()
