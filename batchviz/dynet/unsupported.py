"""The rest of DyNet's API: each name exists and raises ``NotImplementedError`` when called,
naming the DyNet call and what to use instead, so that a program stops at its own line
rather than computing something else."""
from __future__ import annotations

#: DyNet's name -> what to use instead
INSTEAD = {
}


def _unsupported(name: str, instead: str):
    def call(*args, **kwargs):
        raise NotImplementedError(f"dy.{name} is not supported by batchviz.dynet; use "
                                  f"{instead} instead")

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"Not supported: raises NotImplementedError (use {instead})."
    return call


STUBS = {name: _unsupported(name, instead) for name, instead in INSTEAD.items()}
