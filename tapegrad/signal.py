"""``tf.signal``: Fourier transforms, frames, windows, the STFT and its inverse, DCTs and
mel filterbanks."""
from tapegrad.ops.fft_ops import (fft, fft2d, fft3d, fftshift, ifft, ifft2d,  # noqa: F401
                                  ifft3d, ifftshift, irfft, irfft2d, irfft3d, rfft, rfft2d,
                                  rfft3d)
from tapegrad.ops.signal_ops import (dct, frame, hamming_window, hann_window, idct,  # noqa: F401
                                     inverse_stft, inverse_stft_window_fn,
                                     linear_to_mel_weight_matrix,
                                     mfccs_from_log_mel_spectrograms, overlap_and_add, stft)
