"""Keeping freed memory (batchviz/execute/allocator.py): on by default where glibc's malloc
can be told, off with BATCHVIZ_KEEP_FREED_MEMORY=0."""
import os
import subprocess
import sys

import pytest

CHECK = "import batchviz.execute.allocator as a; print(a.applied)"


def applied(env_value):
    env = dict(os.environ)
    env.pop("BATCHVIZ_KEEP_FREED_MEMORY", None)
    if env_value is not None:
        env["BATCHVIZ_KEEP_FREED_MEMORY"] = env_value
    out = subprocess.run([sys.executable, "-c", CHECK], env=env, capture_output=True, text=True,
                         check=True)
    return out.stdout.strip()


def glibc() -> bool:
    import ctypes

    try:
        ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    return sys.platform.startswith("linux")


@pytest.mark.skipif(not glibc(), reason="malloc is glibc's only on Linux with glibc")
def test_on_by_default_with_glibc():
    assert applied(None) == "True"


def test_off_when_asked():
    assert applied("0") == "False"
