"""The executor: runs schedules forward and backward over contiguous memory."""
from .allocator import keep_freed_memory
from .executor import BatchRecord, run_backward, run_forward  # noqa: F401
from .stats import PassStats, RunStats, last_run_stats  # noqa: F401

keep_freed_memory()  # once, when batchviz is imported (see allocator.py)
