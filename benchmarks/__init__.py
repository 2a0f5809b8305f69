"""The paper's experiments as one benchmark suite: ``python -m benchmarks TASK``."""
