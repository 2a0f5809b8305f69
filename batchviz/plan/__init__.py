"""The plan: where every batch's outputs live and how each argument is read (§3.3),
decided once per run, as plain data that the executor carries out and the window shows."""
from .batch import BatchPlan  # noqa: F401
from .layout import Layout, place_batches  # noqa: F401
from .planner import Plan, plan  # noqa: F401
from .reads import (COPIES, Concat, Copy, CopyFromArenas, Shared, Stack,  # noqa: F401
                    Strided, View, elements_copied, is_copy, read_of)
