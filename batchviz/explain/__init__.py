"""``bv.explain(loss)``: how the graph of a loss batches under none / depth / agenda, why,
and how far each strategy is from the lower bound - concise even on 100k-node graphs.

Import the classes from here (``from batchviz.explain import Explanation``): ``bv.explain``
itself is the function."""
from .analysis import DEFAULT_STRATEGIES, explain
from .costmodel import CostModel, cost_model
from .optimum import GraphTooLarge, SolverMissing, optimal_schedule
from .optimum_report import Optimum
from .report import (BatchNote, Explanation, SignatureRow, SmallBatchNote, SplitNote,
                     StrategyResult)

__all__ = ["explain", "Explanation", "StrategyResult", "SignatureRow", "BatchNote",
           "SmallBatchNote", "SplitNote", "CostModel", "cost_model", "DEFAULT_STRATEGIES",
           "optimal_schedule", "Optimum", "SolverMissing", "GraphTooLarge"]
