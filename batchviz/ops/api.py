"""Every op constructor, in one namespace (``bv.tanh``, ``bv.matmul``, ...)."""
from .elementwise import *  # noqa: F401,F403
from .leaves import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .losses import *  # noqa: F401,F403
from .random import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403
from .scalar import *  # noqa: F401,F403
from .structure import *  # noqa: F401,F403
from .lstm import *  # noqa: F401,F403
from .lstm_steps import *  # noqa: F401,F403
from .lstm_sequences import *  # noqa: F401,F403
from .lstm_units import *  # noqa: F401,F403
from .columns import *  # noqa: F401,F403
from .activations import *  # noqa: F401,F403
from .axes import *  # noqa: F401,F403
from .layout import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .matrix_functions import *  # noqa: F401,F403
from .circular import *  # noqa: F401,F403
from . import elementwise, leaves, linalg, losses, random, reductions, scalar, structure
from . import columns, lstm, lstm_sequences, lstm_steps, lstm_units
from . import activations, axes, circular, conv, layout, matrix_functions

__all__ = sorted(set(
    elementwise.__all__ + leaves.__all__ + linalg.__all__ + losses.__all__ + random.__all__
    + reductions.__all__ + scalar.__all__ + structure.__all__ + lstm.__all__ + lstm_steps.__all__
    + lstm_sequences.__all__ + lstm_units.__all__
    + columns.__all__ + activations.__all__ + axes.__all__ + layout.__all__ + conv.__all__
    + matrix_functions.__all__ + circular.__all__
))
