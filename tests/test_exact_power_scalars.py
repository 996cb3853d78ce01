"""``exact_power`` on two NumPy float scalars of one dtype (an optimizer's ``beta ** t`` each
step) takes a short path: the same values, bits and types as the general path, which is
NumPy's power with the exponents -1, 0, 0.5, 1 and 2 computed exactly."""
import numpy as np
import pytest

from tapegrad.primitives import power

SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.0, 0.5, -0.5, 3.0, 0.9, 0.999, 1e-30, 1e30, -2.5,
           np.inf, -np.inf, np.nan]


def general(x, y):
    """The general path, as it was before the short one: y as a 0-d array."""
    return power.exact_power(x, np.asarray(y))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scalar_powers_give_the_general_paths_bits(dtype):
    rng = np.random.default_rng(3)
    bases = SPECIAL + list(rng.standard_normal(40) * 3)
    exps = SPECIAL + list(range(1, 30)) + list(rng.standard_normal(20) * 4)
    with np.errstate(all="ignore"):
        for b in bases:
            for e in exps:
                x, y = dtype(b), dtype(e)
                got, want = power.exact_power(x, y), general(x, y)
                assert type(got) is type(want) is dtype
                assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (b, e)


def test_the_short_path_is_taken_only_for_two_scalars_of_one_float_dtype():
    calls = []
    real = power._np_power

    def spy(x, y):
        calls.append((type(x), type(y)))
        return real(x, y)

    power._np_power = spy
    try:
        assert power.exact_power(np.float32(0.9), np.float32(3.0)) == np.power(
            np.float32(0.9), np.float32(3.0))
        assert calls == []  # the short path: NumPy's power itself
        mixed = power.exact_power(np.float32(0.9), np.float64(3.0))
        assert type(mixed) is np.float64 and calls  # NumPy's promotion, the general path
        ints = power.exact_power(np.int64(3), np.int64(2))
        assert ints == 9 and type(ints) is np.int64
    finally:
        power._np_power = real
