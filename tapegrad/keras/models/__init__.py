"""``tf.keras.models``."""
from tapegrad.keras.models.functional import Functional  # noqa: F401
from tapegrad.keras.models.model import Model  # noqa: F401
from tapegrad.keras.models.sequential import Sequential  # noqa: F401
from tapegrad.keras.model_file import load_model, save_model  # noqa: F401
from tapegrad.keras.models.cloning import clone_model, model_from_json  # noqa: F401
