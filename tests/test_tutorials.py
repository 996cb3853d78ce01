"""TensorFlow-tutorial-style snippets that run unchanged with ``import tapegrad as tf``.

Written after TensorFlow's guides "Introduction to gradients and automatic differentiation",
"Advanced automatic differentiation", "Basic training loops", "Introduction to graphs and
tf.function", "Introduction to Variables" and "Introduction to modules"; each test asserts
the values a TensorFlow user would see.
"""
import sys

import numpy as np
import pytest

import tapegrad as tf


# ---- Introduction to gradients and automatic differentiation ------------------------------
def test_gradient_of_scalar_variable():
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x**2
    assert tape.gradient(y, x).numpy() == 6.0


def test_gradient_list_and_dict_of_variables():
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2) / 10, name='w')
    b = tf.Variable(tf.zeros(2, dtype=tf.float32), name='b')
    x = [[1., 2., 3.]]
    with tf.GradientTape(persistent=True) as tape:
        y = x @ w + b
        loss = tf.reduce_mean(y**2)
    dl_dw, dl_db = tape.gradient(loss, [w, b])
    yv = np.array(x, np.float32) @ w.numpy()
    np.testing.assert_allclose(dl_db.numpy(), yv[0], rtol=1e-6)   # d mean(y^2)/dy = y
    np.testing.assert_allclose(dl_dw.numpy(), np.array(x).T @ yv, rtol=1e-6)
    grad = tape.gradient(loss, {'w': w, 'b': b})
    assert set(grad) == {'w', 'b'}
    np.testing.assert_array_equal(grad['w'].numpy(), dl_dw.numpy())
    np.testing.assert_array_equal(grad['b'].numpy(), dl_db.numpy())


def test_gradient_nested_dict_of_parameters():
    params = {'layer1': {'w': tf.Variable(tf.ones([2, 2])), 'b': tf.Variable(tf.zeros([2]))},
              'out': [tf.Variable(2.0)]}
    x = tf.constant([[1., 2.]])
    with tf.GradientTape() as tape:
        h = x @ params['layer1']['w'] + params['layer1']['b']
        loss = tf.reduce_sum(h) * params['out'][0]
    g = tape.gradient(loss, params)
    np.testing.assert_array_equal(g['layer1']['w'].numpy(), [[2., 2.], [4., 4.]])
    np.testing.assert_array_equal(g['layer1']['b'].numpy(), [2., 2.])
    assert g['out'][0].numpy() == 6.0


def test_gradient_of_python_class_model():
    class Dense:
        def __init__(self, n_in, n_out):
            self.w = tf.Variable(tf.ones([n_in, n_out]), name='w')
            self.b = tf.Variable(tf.zeros([n_out]), name='b')

        @property
        def trainable_variables(self):
            return [self.w, self.b]

        def __call__(self, x):
            return tf.nn.relu(x @ self.w + self.b)

    layer = Dense(3, 2)
    x = tf.constant([[1., 2., 3.]])
    with tf.GradientTape() as tape:
        y = layer(x)                      # [[6, 6]]
        loss = tf.reduce_mean(y**2)
    grad = tape.gradient(loss, layer.trainable_variables)
    assert [v.name for v in layer.trainable_variables] == ['w:0', 'b:0']
    np.testing.assert_array_equal(grad[1].numpy(), [6., 6.])
    np.testing.assert_array_equal(grad[0].numpy(), [[6., 6.], [12., 12.], [18., 18.]])


def test_module_collects_variables():
    class Dense(tf.Module):
        def __init__(self, in_features, out_features, name=None):
            super().__init__(name=name)
            self.w = tf.Variable(tf.ones([in_features, out_features]), name='w')
            self.b = tf.Variable(tf.zeros([out_features]), name='b')

        def __call__(self, x):
            return tf.nn.relu(tf.matmul(x, self.w) + self.b)

    class Sequential(tf.Module):
        def __init__(self, name=None):
            super().__init__(name=name)
            self.dense_1 = Dense(in_features=3, out_features=3)
            self.dense_2 = Dense(in_features=3, out_features=2)
            self.step = tf.Variable(0, trainable=False, name='step')

        def __call__(self, x):
            return self.dense_2(self.dense_1(x))

    model = Sequential(name="the_model")
    assert model.name == "the_model" and model.dense_1.name == "dense"
    assert len(model.variables) == 5 and len(model.trainable_variables) == 4
    assert len(model.submodules) == 2
    np.testing.assert_array_equal(model(tf.constant([[2.0, 2.0, 2.0]])).numpy(), [[18., 18.]])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(tf.constant([[1.0, 0.0, 0.0]])))
    grads = tape.gradient(loss, model.trainable_variables)
    assert all(g is not None for g in grads)


def test_controlling_what_the_tape_watches():
    x0 = tf.Variable(3.0, name='x0')
    x1 = tf.Variable(3.0, name='x1', trainable=False)
    x2 = tf.Variable(2.0, name='x2') + 1.0        # a tensor, not a variable
    x3 = tf.constant(3.0, name='x3')
    with tf.GradientTape() as tape:
        y = (x0**2) + (x1**2) + (x2**2)
    grad = tape.gradient(y, [x0, x1, x2, x3])
    assert grad[0].numpy() == 6.0
    assert grad[1] is None and grad[2] is None and grad[3] is None
    assert [var.name for var in tape.watched_variables()] == ['x0:0']

    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x**2
    assert tape.gradient(y, x).numpy() == 6.0


def test_watch_accessed_variables_false():
    x0 = tf.Variable(0.0)
    x1 = tf.Variable(10.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x1)
        y0 = tf.math.sin(x0)
        y1 = tf.nn.softplus(x1)
        y = y0 + y1
        ys = tf.reduce_sum(y)
    grad = tape.gradient(ys, {'x0': x0, 'x1': x1})
    assert grad['x0'] is None
    np.testing.assert_allclose(grad['x1'].numpy(), 1 / (1 + np.exp(-10.0)), rtol=1e-6)


def test_watch_list_of_tensors():
    a, b = tf.constant(1.0), tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch([a, b])
        y = a * b
    ga, gb = t.gradient(y, [a, b])
    assert ga.numpy() == 2.0 and gb.numpy() == 1.0


def test_gradient_of_intermediate_results():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert tape.gradient(z, y).numpy() == 18.0

    x = tf.constant([1, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    np.testing.assert_array_equal(tape.gradient(z, x).numpy(), [4.0, 108.0])
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [2.0, 6.0])
    del tape


def test_gradients_of_non_scalar_targets():
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        y0 = x**2
        y1 = 1 / x
    assert tape.gradient(y0, x).numpy() == 4.0
    assert tape.gradient(y1, x).numpy() == -0.25
    with tf.GradientTape() as tape:
        y0 = x**2
        y1 = 1 / x
    assert tape.gradient({'y0': y0, 'y1': y1}, x).numpy() == 3.75
    with tf.GradientTape() as tape:
        y = x * [3., 4.]
    assert tape.gradient(y, x).numpy() == 7.0

    x = tf.linspace(-10.0, 10.0, 200 + 1)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.sigmoid(x)
    dy_dx = tape.gradient(y, x)
    assert dy_dx.shape == (201,)
    np.testing.assert_allclose(dy_dx.numpy(), (y * (1 - y)).numpy(), rtol=1e-5, atol=1e-7)


def test_python_control_flow_picks_the_recorded_branch():
    x = tf.constant(1.0)
    v0 = tf.Variable(2.0)
    v1 = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        if x > 0.0:
            result = v0
        else:
            result = v1**2
    dv0, dv1 = tape.gradient(result, [v0, v1])
    assert dv0.numpy() == 1.0 and dv1 is None
    assert tape.gradient(result, x) is None


def test_cases_where_gradient_returns_none():
    x = tf.Variable(2.)
    seen = []
    for _ in range(2):
        with tf.GradientTape() as tape:
            y = x + 1
        seen.append((type(x).__name__, tape.gradient(y, x)))
        x = x + 1                       # replaces the variable with a tensor
    assert seen[0][0] == 'Variable' and seen[0][1].numpy() == 1.0
    assert seen[1][0] == 'Tensor' and seen[1][1] is None

    x = tf.Variable([[1.0, 2.0], [3.0, 4.0]], dtype=tf.float32)
    with tf.GradientTape() as tape:
        x2 = x**2
        y = np.mean(x2, axis=0)        # leaves tapegrad: no gradient
        y = tf.reduce_mean(y, axis=0)
    assert tape.gradient(y, x) is None

    x = tf.constant(10)
    with pytest.warns(UserWarning):
        with tf.GradientTape() as g:
            g.watch(x)
            y = x * x
    with pytest.warns(UserWarning):
        assert g.gradient(y, x) is None

    x0 = tf.Variable(3.0)
    x1 = tf.Variable(0.0)
    with tf.GradientTape() as tape:
        x1.assign_add(x0)               # state blocks gradients
        y = x1**2
    assert tape.gradient(y, x0) is None


def test_unconnected_gradients_zero():
    x = tf.Variable([2., 2.])
    y = tf.Variable(3.)
    with tf.GradientTape() as tape:
        z = y**2
    g = tape.gradient(z, x, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    np.testing.assert_array_equal(g.numpy(), [0., 0.])


def test_output_gradients():
    x = tf.Variable(3.0)
    with tf.GradientTape() as t:
        y = x * x
    assert t.gradient(y, x, output_gradients=tf.constant(2.0)).numpy() == 12.0


# ---- Advanced automatic differentiation ---------------------------------------------------
def test_stop_recording():
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    with tf.GradientTape() as t:
        x_sq = x * x
        with t.stop_recording():
            y_sq = y * y
        z = x_sq + y_sq
    grad = t.gradient(z, {'x': x, 'y': y})
    assert grad['x'].numpy() == 4.0 and grad['y'] is None


def test_reset():
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    with tf.GradientTape() as t:
        y_sq = y * y
        t.reset()
        z = x * x + y_sq
    grad = t.gradient(z, {'x': x, 'y': y})
    assert grad['x'].numpy() == 4.0 and grad['y'] is None


def test_stop_gradient():
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    with tf.GradientTape() as t:
        y_sq = y**2
        z = x**2 + tf.stop_gradient(y_sq)
    grad = t.gradient(z, {'x': x, 'y': y})
    assert grad['x'].numpy() == 4.0 and grad['y'] is None
    assert z.numpy() == 13.0


def test_custom_gradient_clip():
    @tf.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return tf.clip_by_norm(dy, 0.5)
        return y, backward

    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        output = clip_gradients(v * v)
    assert t.gradient(output, v).numpy() == 2.0     # 0.5 * 2v


def test_custom_gradient_log1pexp():
    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)

        def grad(upstream):
            return upstream * (1 - 1 / (1 + e))
        return tf.math.log(1 + e), grad

    x = tf.constant(100.)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with np.errstate(over="ignore"):
            y = log1pexp(x)
    assert tape.gradient(y, x).numpy() == 1.0


def test_multiple_tapes():
    x0 = tf.constant(0.0)
    x1 = tf.constant(0.0)
    with tf.GradientTape() as tape0, tf.GradientTape() as tape1:
        tape0.watch(x0)
        tape1.watch(x1)
        y0 = tf.math.sin(x0)
        y1 = tf.nn.sigmoid(x1)
        y = y0 + y1
        ys = tf.reduce_sum(y)
    assert tape0.gradient(ys, x0).numpy() == 1.0
    assert tape1.gradient(ys, x1).numpy() == 0.25


def test_higher_order_gradients():
    x = tf.Variable(1.0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = x * x * x
        dy_dx = t1.gradient(y, x)
    d2y_dx2 = t2.gradient(dy_dx, x)
    assert dy_dx.numpy() == 3.0 and d2y_dx2.numpy() == 6.0


def test_input_gradient_regularization():
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(7, 5)).astype(np.float32))
    w = tf.Variable(rng.normal(size=(5, 10)).astype(np.float32))
    b = tf.Variable(tf.zeros([10]))
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = tf.nn.relu(x @ w + b)
        g1 = t1.gradient(y, x)
        g1_mag = tf.norm(g1)
    dg1_mag = t2.gradient(g1_mag, [w, b])
    assert dg1_mag[0].shape == (5, 10)
    # reference: g1 = mask @ w.T, so d|g1|/dw = (g1 / |g1|).T @ mask
    mask = ((x.numpy() @ w.numpy()) > 0).astype(np.float32)
    g1v = mask @ w.numpy().T
    np.testing.assert_allclose(g1.numpy(), g1v, rtol=1e-5)
    np.testing.assert_allclose(dg1_mag[0].numpy(), (g1v / np.linalg.norm(g1v)).T @ mask,
                               rtol=1e-4, atol=1e-6)


def test_jacobian_scalar_source_and_tensor_source():
    x = tf.linspace(-10.0, 10.0, 200 + 1)
    delta = tf.Variable(0.0)
    with tf.GradientTape() as tape:
        y = tf.nn.sigmoid(x + delta)
    dy_dx = tape.jacobian(y, delta)
    assert dy_dx.shape == (201,)
    s = 1 / (1 + np.exp(-x.numpy().astype(np.float64)))
    np.testing.assert_allclose(dy_dx.numpy(), s * (1 - s), rtol=1e-4, atol=1e-7)

    rng = np.random.default_rng(1)
    x = tf.constant(rng.normal(size=(7, 5)).astype(np.float32))
    layer_w = tf.Variable(rng.normal(size=(5, 10)).astype(np.float32))
    with tf.GradientTape(persistent=True) as tape:
        y = tf.nn.relu(x @ layer_w)
    j = tape.jacobian(y, layer_w)
    assert j.shape == (7, 10, 5, 10)
    g = tape.gradient(y, layer_w)
    j_sum = tf.reduce_sum(j, axis=[0, 1])
    assert tf.reduce_max(abs(g - j_sum)).numpy() < 1e-5


def test_hessian_newton_step():
    rng = np.random.default_rng(2)
    x = tf.constant(rng.normal(size=(7, 5)).astype(np.float32))
    w1 = tf.Variable(rng.normal(size=(5, 8)).astype(np.float32))
    w2 = tf.Variable(rng.normal(size=(8, 3)).astype(np.float32))
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = tf.tanh(x @ w1) @ w2
            loss = tf.reduce_mean(y**2)
        g = t1.gradient(loss, w1)
    h = t2.jacobian(g, w1)
    assert h.shape == (5, 8, 5, 8)
    n_params = tf.reduce_prod(w1.shape)
    h_mat = tf.reshape(h, [n_params, n_params])
    np.testing.assert_allclose(h_mat.numpy(), h_mat.numpy().T, rtol=1e-4, atol=1e-5)
    g_vec = tf.reshape(g, [n_params, 1])
    eye_eps = tf.eye(h_mat.shape[0]) * 1e-3
    update = tf.linalg.solve(h_mat + eye_eps, g_vec)
    np.testing.assert_allclose((h_mat + eye_eps).numpy() @ update.numpy(), g_vec.numpy(),
                               rtol=1e-2, atol=1e-3)
    before = w1.numpy()
    w1.assign_sub(tf.reshape(update, w1.shape))
    np.testing.assert_allclose(w1.numpy(), before - update.numpy().reshape(5, 8), rtol=1e-6)


def test_batch_jacobian():
    rng = np.random.default_rng(3)
    x = tf.constant(rng.normal(size=(7, 5)).astype(np.float32))
    w = tf.Variable(rng.normal(size=(5, 5)).astype(np.float32))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.nn.elu(x @ w)
        y = tf.nn.elu(y)
    j = tape.jacobian(y, x)
    assert j.shape == (7, 5, 7, 5)
    j_sum = tf.reduce_sum(j, axis=2)
    j_select = tf.einsum('bxby->bxy', j)
    jb = tape.batch_jacobian(y, x)
    assert jb.shape == (7, 5, 5)
    assert tf.reduce_max(abs(jb - j_sum)).numpy() < 1e-5
    assert tf.reduce_max(abs(jb - j_select)).numpy() < 1e-5


def test_forward_accumulator():
    x = tf.constant([1.0, 2.0])
    v = tf.constant([1.0, 0.0])
    with tf.autodiff.ForwardAccumulator(x, v) as acc:
        y = tf.reduce_sum(x ** 3)
    assert acc.jvp(y).numpy() == 3.0
    layer_w = tf.Variable(tf.ones([2, 2]))
    with tf.autodiff.ForwardAccumulator(primals=layer_w,
                                        tangents=tf.ones_like(layer_w)) as acc:
        out = tf.reduce_sum(x[None, :] @ layer_w)
    assert acc.jvp(out).numpy() == 6.0
    primal = tf.constant(1.1)
    with tf.autodiff.ForwardAccumulator(primal, tf.constant(1.)) as outer:
        with tf.autodiff.ForwardAccumulator(primal, tf.constant(1.)) as inner:
            primal_out = primal ** tf.constant(3.5)
    inner_jvp = inner.jvp(primal_out)
    np.testing.assert_allclose(inner_jvp.numpy(), 4.4417057, rtol=1e-6)
    np.testing.assert_allclose(outer.jvp(inner_jvp).numpy(), 10.094786, rtol=1e-6)


# ---- Basic training loops -----------------------------------------------------------------
def _linear_data():
    TRUE_W, TRUE_B, NUM_EXAMPLES = 3.0, 2.0, 201
    x = tf.cast(tf.linspace(-2, 2, NUM_EXAMPLES), tf.float32)
    noise = tf.constant(np.random.default_rng(4).normal(size=NUM_EXAMPLES).astype(np.float32))
    return x, x * TRUE_W + TRUE_B + noise


def test_basic_training_loop_with_module():
    x, y = _linear_data()

    class MyModel(tf.Module):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.w = tf.Variable(5.0)
            self.b = tf.Variable(0.0)

        def __call__(self, x):
            return self.w * x + self.b

    model = MyModel()
    assert model(3.0).numpy() == 15.0
    assert len(model.variables) == 2

    def loss(target_y, predicted_y):
        return tf.reduce_mean(tf.square(target_y - predicted_y))

    def train(model, x, y, learning_rate):
        with tf.GradientTape() as t:
            current_loss = loss(y, model(x))
        dw, db = t.gradient(current_loss, [model.w, model.b])
        model.w.assign_sub(learning_rate * dw)
        model.b.assign_sub(learning_rate * db)

    losses = [float(loss(y, model(x)))]
    for _ in range(50):
        train(model, x, y, learning_rate=0.1)
        losses.append(float(loss(y, model(x))))
    assert all(b <= a + 1e-6 for a, b in zip(losses, losses[1:]))
    # the least-squares fit the loop converges to
    A = np.stack([x.numpy(), np.ones(201, np.float32)], 1)
    w_ref, b_ref = np.linalg.lstsq(A, y.numpy(), rcond=None)[0]
    np.testing.assert_allclose([model.w.numpy(), model.b.numpy()], [w_ref, b_ref], atol=2e-3)


def test_training_step_in_tf_function():
    w = tf.Variable(tf.ones([3, 1]))
    b = tf.Variable(0.0)
    x = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
    y = tf.constant([[1.], [2.], [3.], [4.]])

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            pred = x @ w + b
            loss = tf.reduce_mean(tf.math.squared_difference(pred, y))
        gw, gb = tape.gradient(loss, [w, b])
        w.assign_sub(0.1 * gw)
        b.assign_sub(0.1 * gb)
        return loss

    l0 = float(train_step(x, y))
    np.testing.assert_allclose(l0, np.mean((x.numpy() @ np.ones((3, 1)) - y.numpy())**2),
                               rtol=1e-6)
    for _ in range(300):
        last = float(train_step(x, y))
    assert last < 1e-4 < l0


# ---- Introduction to graphs and tf.function -----------------------------------------------
def test_function_matches_eager():
    def a_regular_function(x, y, b):
        x = tf.matmul(x, y)
        return x + b

    a_function_that_uses_a_graph = tf.function(a_regular_function)
    x1 = tf.constant([[1.0, 2.0]])
    y1 = tf.constant([[2.0], [3.0]])
    b1 = tf.constant(4.0)
    assert a_regular_function(x1, y1, b1).numpy() == 12.0
    assert a_function_that_uses_a_graph(x1, y1, b1).numpy() == 12.0

    @tf.function
    def outer_function(x):
        y = tf.constant([[2.0], [3.0]])
        b = tf.constant(4.0)
        return a_regular_function(x, y, b)
    np.testing.assert_array_equal(outer_function(tf.constant([[1.0, 2.0]])).numpy(), [[12.0]])


def test_function_polymorphism():
    @tf.function
    def my_relu(x):
        return tf.maximum(0., x)
    assert my_relu(tf.constant(5.5)).numpy() == 5.5
    out = my_relu([1, -1])
    np.testing.assert_array_equal(out.numpy(), [1., 0.])
    assert out.dtype == tf.float32
    np.testing.assert_array_equal(my_relu(tf.constant([3., -3.])).numpy(), [3., 0.])


def test_function_side_effects_run_at_trace_time(capsys):
    @tf.function
    def get_MSE(y_true, y_pred):
        print("Calculating MSE!")
        sq_diff = tf.pow(y_true - y_pred, 2)
        return tf.reduce_mean(sq_diff)

    y_true = tf.constant([1, 4, 7, 2, 9])
    y_pred = tf.constant([3, 4, 1, 2, 8])
    for _ in range(3):
        error = get_MSE(y_true, y_pred)
    assert capsys.readouterr().out.count("Calculating MSE!") == 1
    assert error.numpy() == (4 + 0 + 36 + 0 + 1) // 5   # integer mean, as TensorFlow
    assert error.dtype == tf.int32


def test_function_retracing_rules():
    traced = []

    @tf.function
    def f(x):
        traced.append(x)
        return x + 1

    f(1)
    f(1)
    assert len(traced) == 1                      # same Python value: no retrace
    f(2)
    assert len(traced) == 2                      # new Python value: retrace
    assert f(tf.constant(1)).numpy() == 2
    assert f(tf.constant(2)).numpy() == 3
    assert len(traced) == 3                      # same tensor signature: one trace
    f(tf.constant([1, 2]))
    assert len(traced) == 4                      # new shape
    f(tf.constant(1.0))
    assert len(traced) == 5                      # new dtype
    assert f.experimental_get_tracing_count() == 5


def test_function_input_signature():
    @tf.function(input_signature=(tf.TensorSpec(shape=[None], dtype=tf.int32),))
    def next_collatz(x):
        return tf.where(x % 2 == 0, x // 2, 3 * x + 1)
    np.testing.assert_array_equal(next_collatz(tf.constant([1, 2])).numpy(), [4, 1])
    np.testing.assert_array_equal(next_collatz(tf.constant([1, 2, 3])).numpy(), [4, 1, 10])


def test_function_captures_variables_by_reference():
    v = tf.Variable(1.0)

    @tf.function
    def f(x):
        return v * x
    assert f(2.0).numpy() == 2.0
    v.assign(3.0)
    assert f(2.0).numpy() == 6.0

    @tf.function
    def g(x):
        v.assign_add(x)
        return v.read_value()
    assert g(1.0).numpy() == 4.0
    assert g(1.0).numpy() == 5.0
    assert v.numpy() == 5.0


def test_function_method_of_module():
    class Module(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(np.arange(9, dtype=np.float32).reshape(3, 3) - 4, name='w')
            self.b = tf.Variable(tf.zeros([3]), name='b')

        @tf.function
        def __call__(self, x):
            return tf.nn.relu(tf.matmul(x, self.w) + self.b)

    m = Module()
    x = tf.constant([[2.0, 2.0, 2.0]])
    pre = x.numpy() @ m.w.numpy()           # [[-6, 0, 6]]
    np.testing.assert_array_equal(m(x).numpy(), np.maximum(pre, 0))
    m.b.assign([1., 1., 1.])
    np.testing.assert_array_equal(m(x).numpy(), np.maximum(pre + 1, 0))


def test_function_gradient_inside():
    x = tf.Variable(2.0)

    @tf.function
    def f():
        with tf.GradientTape() as t:
            y = x ** 3
        return t.gradient(y, x)
    assert f().numpy() == 12.0
    x.assign(1.0)
    assert f().numpy() == 3.0


def test_function_python_loops_unroll_and_tf_range_with_python_ints():
    @tf.function
    def f(x):
        for i in range(3):
            x = x * 2.0 + i
        return x
    assert f(tf.constant(1.0)).numpy() == 12.0

    @tf.function
    def g(x):
        s = tf.constant(0)
        for i in tf.range(5):          # a concrete range: unrolled at tracing time
            s += i * x
        return s
    assert g(tf.constant(2)).numpy() == 20


def test_function_cond_and_while_loop():
    @tf.function
    def f(x):
        return tf.cond(x > 0, lambda: x * 2, lambda: -x)
    assert f(tf.constant(3.0)).numpy() == 6.0
    assert f(tf.constant(-3.0)).numpy() == 3.0

    @tf.function
    def g(x):
        i = tf.constant(0)
        return tf.while_loop(lambda i, x: i < 10, lambda i, x: (i + 1, x * 1.1), [i, x])[1]
    np.testing.assert_allclose(g(tf.constant(1.0)).numpy(), 1.1**10, rtol=1e-5)


def test_function_concrete_function():
    @tf.function
    def double(a):
        return a + a
    c = double.get_concrete_function(tf.constant(1))
    assert c(tf.constant(2)).numpy() == 4


def test_print_eager(capsys):
    tf.print(tf.constant([1, 2, 3]))
    tf.print("x:", tf.constant([[1, 2], [3, 4]]), "sum:", tf.reduce_sum([1.5, 2.0]),
             output_stream=sys.stdout)
    tf.print(tf.range(10), output_stream=sys.stdout)
    tf.print(tf.range(10), summarize=-1, output_stream=sys.stdout)
    out = capsys.readouterr()
    assert out.err == "[1 2 3]\n"          # stderr by default, as TensorFlow
    assert out.out == ("x: [[1 2]\n [3 4]] sum: 3.5\n"
                       "[0 1 2 ... 7 8 9]\n"
                       "[0 1 2 3 4 5 6 7 8 9]\n")


def test_print_inside_function_prints_on_every_call(capsys):
    @tf.function
    def f(x):
        tf.print("Executing", x)   # staged: it runs with the program, as in TensorFlow
        return x + 1
    f(tf.constant(1.0))
    f(tf.constant(2.0))
    assert capsys.readouterr().err == "Executing 1.0\nExecuting 2.0\n"  # eager tf.print's text


# ---- Introduction to Variables ------------------------------------------------------------
def test_variable_creation_and_properties():
    my_tensor = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    my_variable = tf.Variable(my_tensor)
    bool_variable = tf.Variable([False, False, False, True])
    complex_variable = tf.Variable([5 + 4j, 6 + 1j])
    assert my_variable.shape == (2, 2)
    assert my_variable.dtype == tf.float32
    assert bool_variable.dtype == tf.bool
    assert complex_variable.dtype == tf.complex128  # as in TF 2.21: Python complex numbers are complex128
    np.testing.assert_array_equal(my_variable.numpy(), [[1., 2.], [3., 4.]])
    t = tf.convert_to_tensor(my_variable)
    assert isinstance(t, tf.Tensor) and not isinstance(t, tf.Variable)
    np.testing.assert_array_equal(tf.math.argmax(my_variable).numpy(), [1, 1])
    np.testing.assert_array_equal(tf.reshape(my_variable, [1, 4]).numpy(), [[1., 2., 3., 4.]])
    assert "numpy=" in repr(my_variable)

    v = tf.Variable(tf.zeros((2, 3)))
    assert v.shape == (2, 3) and v.dtype == tf.float32 and v.trainable
    assert tf.Variable(1.0, dtype=tf.float64).dtype == tf.float64
    np.testing.assert_array_equal(tf.Variable(lambda: tf.ones([2])).numpy(), [1., 1.])


def test_variable_assign():
    a = tf.Variable([2.0, 3.0])
    a.assign([1, 2])                      # ints are converted to the variable's dtype
    np.testing.assert_array_equal(a.numpy(), [1., 2.])
    with pytest.raises(ValueError):
        a.assign([1.0, 2.0, 3.0])          # a variable's shape is fixed
    a = tf.Variable([2.0, 3.0])
    b = tf.Variable(a)                    # a copy, not an alias
    a.assign([5, 6])
    np.testing.assert_array_equal(a.numpy(), [5., 6.])
    np.testing.assert_array_equal(b.numpy(), [2., 3.])
    np.testing.assert_array_equal(a.assign_add([2, 3]).numpy(), [7., 9.])
    np.testing.assert_array_equal(a.assign_sub([7, 9]).numpy(), [0., 0.])


def test_variable_values_are_snapshots():
    v = tf.Variable([1., 2.])
    t = tf.convert_to_tensor(v)
    i = tf.identity(v)
    r = v.read_value()
    n = v.numpy()
    p = v * 1
    v.assign([5., 6.])
    for old in (t, i, r, p):
        np.testing.assert_array_equal(old.numpy(), [1., 2.])
    np.testing.assert_array_equal(n, [1., 2.])
    np.testing.assert_array_equal(v.value().numpy(), [5., 6.])


def test_variable_names_and_trainable():
    my_tensor = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    a = tf.Variable(my_tensor, name="Mark")
    b = tf.Variable(my_tensor + 1, name="Mark")
    assert a.name == b.name == "Mark:0"
    np.testing.assert_array_equal((a == b).numpy(), [[False, False], [False, False]])
    step_counter = tf.Variable(1, trainable=False)
    assert step_counter.trainable is False and step_counter.dtype == tf.int32
    for _ in range(3):
        step_counter.assign_add(1)
    assert step_counter.numpy() == 4


def test_variable_arithmetic_comparison_indexing():
    v = tf.Variable([1., 2., 3.])
    assert (v + v).numpy().tolist() == [2., 4., 6.]
    assert (2 * v).numpy().tolist() == [2., 4., 6.]
    assert (v / 2).numpy().tolist() == [.5, 1., 1.5]
    assert (v ** 2).numpy().tolist() == [1., 4., 9.]
    assert (1 - v).numpy().tolist() == [0., -1., -2.]
    assert abs(-v).numpy().tolist() == [1., 2., 3.]
    assert (v >= 2).numpy().tolist() == [False, True, True]
    assert (v != 2).numpy().tolist() == [True, False, True]
    assert v[-1].numpy() == 3.0 and v[1:].numpy().tolist() == [2., 3.]
    assert [float(e) for e in v] == [1., 2., 3.] and len(v) == 3
    assert np.asarray(v).tolist() == [1., 2., 3.]
    s = tf.Variable(5.0)
    assert float(s) == 5.0 and bool(s + 1 == 6.0)
    m = tf.Variable(tf.eye(2) * 2)
    np.testing.assert_array_equal((m @ m).numpy(), 4 * np.eye(2))
    assert tf.shape(v).numpy().tolist() == [3] and tf.rank(m).numpy() == 2
    assert tf.size(m).numpy() == 4


# ---- Tensor operations --------------------------------------------------------------------
def test_reductions_with_axis_lists():
    x = tf.reshape(tf.range(24, dtype=tf.float32), [2, 3, 4])
    n = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(tf.reduce_sum(x, axis=[0, 2]).numpy(), n.sum((0, 2)))
    np.testing.assert_array_equal(tf.reduce_mean(x, axis=(1,), keepdims=True).numpy(),
                                  n.mean(1, keepdims=True))
    np.testing.assert_array_equal(tf.reduce_max(x, axis=-1).numpy(), n.max(-1))
    np.testing.assert_array_equal(tf.math.reduce_sum(x, axis=tf.constant([0, 1])).numpy(),
                                  n.sum((0, 1)))
    assert tf.reduce_sum(x).numpy() == 276.0
    assert tf.reduce_prod(tf.constant([1, 2, 3, 4])).numpy() == 24
    np.testing.assert_allclose(tf.math.reduce_euclidean_norm(x, axis=[1, 2]).numpy(),
                               np.sqrt((n**2).sum((1, 2))), rtol=1e-6)


def test_broadcasting():
    x = tf.constant([1, 2, 3])
    y = tf.constant(2)
    z = tf.constant([2, 2, 2])
    np.testing.assert_array_equal(tf.multiply(x, 2).numpy(), [2, 4, 6])
    np.testing.assert_array_equal((x * y).numpy(), (x * z).numpy())
    x = tf.reshape(x, [3, 1])
    y = tf.range(1, 5)
    np.testing.assert_array_equal(tf.multiply(x, y).numpy(),
                                  np.arange(1, 4)[:, None] * np.arange(1, 5))
    np.testing.assert_array_equal(tf.broadcast_to(tf.constant([1, 2, 3]), [3, 3]).numpy(),
                                  [[1, 2, 3]] * 3)
    assert tf.add(1., [1, 2]).dtype == tf.float32       # the first operand fixes the dtype


def test_shape_operations():
    a = tf.constant([[1, 2], [3, 4]])
    b = tf.constant([[5, 6]])
    np.testing.assert_array_equal(tf.concat([a, b], axis=0).numpy(), [[1, 2], [3, 4], [5, 6]])
    np.testing.assert_array_equal(tf.concat([a, tf.transpose(b)], 1).numpy(),
                                  [[1, 2, 5], [3, 4, 6]])
    np.testing.assert_array_equal(
        tf.stack([tf.constant([1, 2]), tf.constant([3, 4])], axis=1).numpy(), [[1, 3], [2, 4]])
    assert tf.reshape(tf.range(6), [-1, 2]).shape == (3, 2)
    assert tf.transpose(tf.reshape(tf.range(24), [2, 3, 4]), perm=[2, 0, 1]).shape == (4, 2, 3)
    np.testing.assert_array_equal(tf.gather(tf.constant([10, 20, 30, 40]), [3, 0]).numpy(),
                                  [40, 10])
    np.testing.assert_array_equal(tf.gather(a, [1], axis=1).numpy(), [[2], [4]])
    np.testing.assert_array_equal(tf.gather_nd(a, [[0, 1], [1, 0]]).numpy(), [2, 3])
    assert tf.squeeze(tf.zeros([1, 3, 1])).shape == (3,)
    assert tf.expand_dims(a, 0).shape == (1, 2, 2)
    assert len(tf.split(tf.range(6), 3)) == 3
    np.testing.assert_array_equal(tf.tile(b, [2, 1]).numpy(), [[5, 6], [5, 6]])
    np.testing.assert_array_equal(tf.unstack(a)[1].numpy(), [3, 4])
    c = tf.constant([[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(c[:, 1:].numpy(), [[2, 3], [5, 6]])
    assert c[..., tf.newaxis].shape == (2, 3, 1)
    np.testing.assert_array_equal(c[::-1, 0].numpy(), [4, 1])
    np.testing.assert_array_equal(tf.add_n([a, a, a]).numpy(), [[3, 6], [9, 12]])


def test_shape_operations_gradient():
    x = tf.Variable([[1., 2.], [3., 4.]])
    with tf.GradientTape() as tape:
        y = tf.concat([x, x * 2], axis=0)
        z = tf.gather(tf.reshape(y, [-1]), [0, 5, 7])
        loss = tf.reduce_sum(z * tf.constant([1., 2., 3.]))
    # flat y = [x00, x01, x10, x11, 2x00, 2x01, 2x10, 2x11]
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), [[1., 4.], [0., 6.]])


def test_gradients_through_where_max_relu():
    x = tf.Variable([-1., 2., 3.])
    with tf.GradientTape() as t:
        y = tf.reduce_sum(tf.where(x > 0, x ** 2, tf.zeros_like(x)))
    np.testing.assert_array_equal(t.gradient(y, x).numpy(), [0., 4., 6.])
    with tf.GradientTape() as t:
        y = tf.reduce_max(x)
    np.testing.assert_array_equal(t.gradient(y, x).numpy(), [0., 0., 1.])
    z = tf.Variable([0.0])
    with tf.GradientTape() as t:
        y = tf.nn.relu(z)
    assert t.gradient(y, z).numpy()[0] == 0.0


def _np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_softmax_cross_entropy():
    logits = tf.constant([[2.0, 1.0, 0.1], [0.5, 2.5, 0.3]])
    labels = tf.constant([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    sm = _np_softmax(logits.numpy().astype(np.float64))
    ce = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    np.testing.assert_allclose(ce.numpy(), -np.log(sm[[0, 1], [0, 1]]), rtol=1e-6)
    np.testing.assert_allclose(tf.nn.softmax(logits).numpy(), sm, rtol=1e-6)
    lv = tf.Variable(logits)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=lv))
    np.testing.assert_allclose(tape.gradient(loss, lv).numpy(), (sm - labels.numpy()) / 2,
                               rtol=1e-5, atol=1e-7)


def test_sparse_softmax_cross_entropy():
    logits = tf.Variable([[2.0, 1.0, 0.1], [0.5, 2.5, 0.3]])
    sm = _np_softmax(logits.numpy().astype(np.float64))
    with tf.GradientTape() as tape:
        ce = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([0, 2]),
                                                            logits=logits)
        loss = tf.reduce_sum(ce)
    np.testing.assert_allclose(ce.numpy(), -np.log(sm[[0, 1], [0, 2]]), rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(loss, logits).numpy(), sm - np.eye(3)[[0, 2]],
                               rtol=1e-5, atol=1e-7)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[3, 0], logits=logits)

    @tf.function
    def f(labels, logits):
        return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    np.testing.assert_allclose(f(tf.constant([0, 2]), logits).numpy(), ce.numpy(), rtol=1e-6)


def test_sigmoid_cross_entropy():
    logits = tf.constant([1.0, -1.0, 0.0])
    labels = tf.constant([1.0, 0.0, 1.0])
    ce = tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
    np.testing.assert_allclose(ce.numpy(), [np.log1p(np.exp(-1)), np.log1p(np.exp(-1)),
                                            np.log(2)], rtol=1e-6)


def test_squared_difference():
    x = tf.constant([1., 2., 3.])
    y = tf.constant([3., 2., 0.])
    np.testing.assert_array_equal(tf.math.squared_difference(x, y).numpy(), [4., 0., 9.])
    v = tf.Variable([1., 2.])
    with tf.GradientTape() as t:
        loss = tf.reduce_sum(tf.math.squared_difference(v, [0., 5.]))
    np.testing.assert_array_equal(t.gradient(loss, v).numpy(), [2., -6.])


def test_small_math_helpers():
    np.testing.assert_array_equal(tf.math.divide_no_nan([1., 2.], [0., 4.]).numpy(), [0., .5])
    x = tf.Variable([1., 2.])
    y = tf.Variable([0., 4.])
    with tf.GradientTape() as t:
        z = tf.reduce_sum(tf.math.divide_no_nan(x, y))
    gx, gy = t.gradient(z, [x, y])
    np.testing.assert_array_equal(gx.numpy(), [0., .25])
    np.testing.assert_array_equal(gy.numpy(), [0., -.125])
    np.testing.assert_allclose(tf.math.log_sigmoid([0., -100.]).numpy(), [-np.log(2), -100.],
                               rtol=1e-6)
    np.testing.assert_allclose(tf.nn.l2_normalize([3., 4.]).numpy(), [.6, .8], rtol=1e-6)
    np.testing.assert_allclose(tf.math.l2_normalize([[3., 4.], [0., 0.]], axis=1).numpy(),
                               [[.6, .8], [0., 0.]], rtol=1e-6)
    assert tf.nn.tanh(0.).numpy() == 0.0


def test_random_seed_reproducible():
    tf.random.set_seed(42)
    a = tf.random.normal([2, 3], mean=1.0, stddev=2.0)
    i = tf.random.uniform([4], minval=0, maxval=10, dtype=tf.int32)
    tf.random.set_seed(42)
    b = tf.random.normal([2, 3], mean=1.0, stddev=2.0)
    assert a.dtype == tf.float32 and i.dtype == tf.int32
    assert ((i.numpy() >= 0) & (i.numpy() < 10)).all()
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_linalg_basics():
    a = tf.constant([[2., 0.], [0., 4.]])
    np.testing.assert_allclose(tf.linalg.inv(a).numpy(), [[.5, 0], [0, .25]])
    assert tf.linalg.det(a).numpy() == 8.0
    np.testing.assert_allclose(tf.linalg.matvec(a, tf.constant([1., 1.])).numpy(), [2., 4.])
    assert tf.linalg.trace(a).numpy() == 6.0
    np.testing.assert_array_equal(tf.matmul(a, a, transpose_b=True).numpy(),
                                  [[4., 0.], [0., 16.]])
    assert tf.norm(tf.constant([3., 4.])).numpy() == 5.0
