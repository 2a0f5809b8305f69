"""The executor: carries plans out, forward (one kernel per batch) and backward."""
from .allocator import keep_freed_memory
from .backward import execute_backward  # noqa: F401
from .forward import BatchRun, execute_forward  # noqa: F401
from .memory import Arenas  # noqa: F401
from .stats import PassStats, RunStats, last_run_stats  # noqa: F401

keep_freed_memory()  # once, when batchviz is imported (see allocator.py)
