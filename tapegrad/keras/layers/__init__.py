"""``tf.keras.layers``."""
from tapegrad.keras.layers.activation import ELU, LeakyReLU, ReLU, Softmax  # noqa: F401
from tapegrad.keras.layers.attention import EinsumDense, MultiHeadAttention  # noqa: F401
from tapegrad.keras.layers.base import Layer  # noqa: F401
from tapegrad.keras.layers.convolutional import (  # noqa: F401
    Conv1D, Conv2D, Conv2DTranspose, Convolution1D, Convolution2D, Convolution2DTranspose)
from tapegrad.keras.layers.core import (  # noqa: F401
    Activation, Dense, Dropout, Embedding, Flatten, Input, InputLayer, Lambda, Masking,
    Reshape)
from tapegrad.keras.layers.input_spec import InputSpec  # noqa: F401
from tapegrad.keras.layers.merging import (  # noqa: F401
    Add, Average, Concatenate, Maximum, Minimum, Multiply, Subtract, add, average,
    concatenate, maximum, minimum, multiply, subtract)
from tapegrad.keras.layers.normalization import (  # noqa: F401
    BatchNormalization, LayerNormalization)
from tapegrad.keras.layers.pooling import (  # noqa: F401
    AveragePooling1D, AveragePooling2D, AvgPool1D, AvgPool2D, MaxPool1D, MaxPool2D,
    MaxPooling1D, MaxPooling2D, GlobalAveragePooling1D, GlobalAveragePooling2D, GlobalMaxPooling1D, GlobalMaxPooling2D)
from tapegrad.keras.layers.preprocessing import (  # noqa: F401
    Normalization, RandomFlip, Rescaling)
from tapegrad.keras.layers.recurrent import GRU, LSTM, Bidirectional, SimpleRNN  # noqa: F401
from tapegrad.keras.layers.reshaping import (  # noqa: F401
    Permute, RepeatVector, UpSampling2D, ZeroPadding2D)
from tapegrad.keras.layers.more_reshaping import (  # noqa: F401
    Cropping1D, Cropping2D, UpSampling1D, ZeroPadding1D)

GlobalAvgPool2D = GlobalAveragePooling2D
GlobalMaxPool2D = GlobalMaxPooling2D
