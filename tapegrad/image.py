"""``tf.image``."""
from tapegrad.ops.image_ops import (  # noqa: F401
    ResizeMethod, adjust_contrast, central_crop, convert_image_dtype, flip_left_right,
    flip_up_down, grayscale_to_rgb, per_image_standardization, random_flip_left_right,
    random_flip_up_down, resize, rgb_to_grayscale)
from tapegrad.ops.image_filters import image_gradients, sobel_edges, total_variation  # noqa: F401,E402
from tapegrad.ops.rearrange_ops import extract_patches  # noqa: F401,E402
from tapegrad.ops.image_geometry import (  # noqa: F401,E402
    adjust_brightness, adjust_gamma, crop_to_bounding_box, pad_to_bounding_box, psnr,
    resize_with_crop_or_pad, rot90, transpose)
