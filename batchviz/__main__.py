"""``python -m batchviz ...``: the command line (see :mod:`batchviz.cli`)."""
from .cli import main

raise SystemExit(main())
