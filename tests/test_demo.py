"""`make demo` runs tapegrad.demo: each of its sections runs here too (smaller sizes), so a
change that breaks the demo fails the suite, not only `make demo`."""
import numpy as np

from tapegrad import demo


def test_lesson_sections_print_the_lessons_numbers(capsys):
    demo.lesson_persistent_tape()
    demo.lesson_nested_tapes()
    demo.lesson_jacobian()
    out = capsys.readouterr().out
    assert "dy_dx = 12.0, d2y_dx2 = 12.0" in out and "f''(2) = 12.0" in out


def test_repeated_jacobian_section_agrees(capsys):
    demo.repeated_jacobian(n_inputs=16)
    assert "The three agree: True" in capsys.readouterr().out


def test_the_mlp_takes_one_input_or_a_batch():
    mlp = demo.make_mlp()
    xs = np.random.default_rng(0).normal(size=(3, 32)).astype(np.float32)
    one = np.stack([mlp(demo.tf.constant(x)).numpy() for x in xs])
    np.testing.assert_allclose(one, mlp(demo.tf.constant(xs)).numpy(), rtol=1e-5, atol=1e-6)
    assert one.shape == (3, 16)


def test_cnn_workflow_and_pictures_sections_run(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the workflow saves its program in the working folder
    demo.cnn_jacobian_workflow(n_inputs=64)
    demo.pictures(out_dir=str(tmp_path / "pictures"))
    out = capsys.readouterr().out
    assert "edges" in out and "Traceback" not in out
    assert len(list((tmp_path / "pictures").glob("*.svg"))) == 2
