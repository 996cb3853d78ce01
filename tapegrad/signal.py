"""``tf.signal``: frames, windows, real DFTs, the STFT, DCTs and mel filterbanks."""
from tapegrad.ops.signal_ops import (dct, frame, hamming_window, hann_window, idct,  # noqa: F401
                                     irfft, linear_to_mel_weight_matrix,
                                     mfccs_from_log_mel_spectrograms, rfft, stft)
