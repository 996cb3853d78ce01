"""``tf.image``."""
from tapegrad.ops.image_ops import (  # noqa: F401
    ResizeMethod, adjust_contrast, per_image_standardization, resize)
