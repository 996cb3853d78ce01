"""``tf.keras.layers``."""
from tapegrad.keras.layers.activation import ELU, LeakyReLU, PReLU, ReLU, Softmax  # noqa: F401
from tapegrad.keras.layers.attention import EinsumDense, MultiHeadAttention  # noqa: F401
from tapegrad.keras.layers.base import Layer  # noqa: F401
from tapegrad.keras.layers.categorical import CategoryEncoding, Discretization  # noqa: F401
from tapegrad.keras.layers.lookup import IntegerLookup  # noqa: F401
from tapegrad.keras.layers.string_lookup import StringLookup  # noqa: F401
from tapegrad.keras.layers.text_vectorization import TextVectorization  # noqa: F401
from tapegrad.keras.layers.dot_attention import AdditiveAttention, Attention  # noqa: F401
from tapegrad.keras.layers.convolutional import (  # noqa: F401
    Conv1D, Conv1DTranspose, Conv2D, Conv2DTranspose, Conv3D, Conv3DTranspose, Convolution1D,
    Convolution1DTranspose, Convolution2D, Convolution2DTranspose, Convolution3D,
    Convolution3DTranspose)
from tapegrad.keras.layers.core import (  # noqa: F401
    Activation, Dense, Dropout, Embedding, Flatten, Identity, Input, InputLayer, Lambda,
    Masking, Reshape)
from tapegrad.keras.layers.image_augmentation import (  # noqa: F401
    RandomBrightness, RandomContrast, RandomRotation, RandomTranslation, RandomZoom)
from tapegrad.keras.layers.image_resizing import CenterCrop, RandomCrop, Resizing  # noqa: F401
from tapegrad.keras.layers.input_spec import InputSpec  # noqa: F401
from tapegrad.keras.layers.merging import (  # noqa: F401
    Add, Average, Concatenate, Dot, Maximum, Minimum, Multiply, Subtract, add, average,
    concatenate, dot, maximum, minimum, multiply, subtract)
from tapegrad.keras.layers.normalization import (  # noqa: F401
    BatchNormalization, GroupNormalization, LayerNormalization, UnitNormalization)
from tapegrad.keras.layers.pooling import (  # noqa: F401
    AveragePooling1D, AveragePooling2D, AveragePooling3D, AvgPool1D, AvgPool2D, AvgPool3D,
    MaxPool1D, MaxPool2D, MaxPool3D, MaxPooling1D, MaxPooling2D, MaxPooling3D,
    GlobalAveragePooling1D, GlobalAveragePooling2D, GlobalAveragePooling3D, GlobalMaxPooling1D,
    GlobalMaxPooling2D, GlobalMaxPooling3D)
from tapegrad.keras.layers.preprocessing import (  # noqa: F401
    Normalization, RandomFlip, Rescaling)
from tapegrad.keras.layers.separable import (  # noqa: F401
    DepthwiseConv1D, DepthwiseConv2D, SeparableConv1D, SeparableConv2D, SeparableConvolution1D,
    SeparableConvolution2D)
from tapegrad.keras.layers.regularization import (  # noqa: F401
    ActivityRegularization, AlphaDropout, GaussianDropout, GaussianNoise, SpatialDropout1D,
    SpatialDropout2D, SpatialDropout3D)
from tapegrad.keras.layers.recurrent import GRU, LSTM, RNN, Bidirectional, SimpleRNN  # noqa: F401
from tapegrad.keras.layers.conv_lstm import ConvLSTM2D, ConvLSTM2DCell  # noqa: F401
from tapegrad.keras.layers.rnn_cells import (GRUCell, LSTMCell, SimpleRNNCell,  # noqa: F401
                                             StackedRNNCells)
from tapegrad.keras.layers.reshaping import (  # noqa: F401
    Permute, RepeatVector, UpSampling2D, ZeroPadding2D)
from tapegrad.keras.layers.wrappers import TimeDistributed  # noqa: F401
from tapegrad.keras.layers.more_reshaping import (  # noqa: F401
    Cropping1D, Cropping2D, UpSampling1D, ZeroPadding1D)
from tapegrad.keras.layers.volumetric import Cropping3D, UpSampling3D, ZeroPadding3D  # noqa: F401

GlobalAvgPool1D, GlobalAvgPool2D, GlobalAvgPool3D = (
    GlobalAveragePooling1D, GlobalAveragePooling2D, GlobalAveragePooling3D)
GlobalMaxPool1D, GlobalMaxPool2D, GlobalMaxPool3D = (
    GlobalMaxPooling1D, GlobalMaxPooling2D, GlobalMaxPooling3D)
