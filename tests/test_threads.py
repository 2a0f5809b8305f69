"""The BLAS threads of a pass (batchviz/execute/threads.py): the cores that other programs
left free, measured from the machine's CPU time less this process's own, and the BLAS's
own setting put back after the pass."""
from __future__ import annotations

import numpy as np
import pytest

import batchviz as bv
from batchviz.execute import threads
from batchviz.execute.threads import BlasThreads, FreeCores


def write_stat(path, busy_ticks: int, idle_ticks: int) -> None:
    """A ``/proc/stat`` whose first line says the machine spent ``busy_ticks`` working."""
    path.write_text(f"cpu  {busy_ticks} 0 0 {idle_ticks} 0 0 0 0 0 0\ncpu0 0 0 0 0\n")


@pytest.mark.parametrize("others, expected", [(0.0, 4.0), (0.2, 4.0), (0.5, 3.0), (1.0, 3.0),
                                              (3.5, 0.0), (9.0, 0.0)])
def test_the_free_cores_are_the_cores_less_what_others_used(tmp_path, monkeypatch, others,
                                                            expected):
    stat = tmp_path / "stat"
    write_stat(stat, 0, 0)
    clock = {"wall": 100.0, "ours": 5.0}
    monkeypatch.setattr(threads.time, "monotonic", lambda: clock["wall"])
    monkeypatch.setattr(threads.time, "process_time", lambda: clock["ours"])
    monkeypatch.setattr(threads, "_TICKS_PER_SECOND", 100)
    monkeypatch.setattr(threads, "_load_average", lambda: 1.5)
    load = FreeCores(str(stat), cores=4)
    assert load.now() == 2.0  # no period has passed yet: the load average's guess
    # one second later: this process used 1 CPU second, the others ``others`` seconds
    clock.update(wall=101.0, ours=6.0)
    write_stat(stat, int((1.0 + others) * 100), 50)
    assert load.now() == pytest.approx(expected)


def test_without_proc_stat_nothing_is_measured(tmp_path):
    load = FreeCores(str(tmp_path / "missing"))
    assert load.now() == load.cores


class FakeBlas:
    def __init__(self, n):
        self.n, self.calls = n, []

    def get_num_threads(self):
        return self.n

    def set_num_threads(self, n):
        self.calls.append(n)
        self.n = n


def test_a_pass_uses_the_free_cores_and_puts_the_setting_back(monkeypatch):
    blas = BlasThreads()
    library = FakeBlas(4)
    blas._libraries, blas._load = [library], FreeCores()
    blas._load._last = (0.0, 0.0, 0.0)
    monkeypatch.setattr(blas._load, "now", lambda: 1.2)   # one core free (and a bit)
    with blas.for_pass():
        assert library.n == 1
    assert library.n == 4 and library.calls == [1, 4]
    monkeypatch.setattr(blas._load, "now", lambda: 6.0)   # more free than the BLAS uses
    with blas.for_pass():
        assert library.n == 4
    assert library.calls == [1, 4]  # nothing set
    monkeypatch.setattr(blas._load, "now", lambda: 0.0)   # nothing free: one thread still
    with pytest.raises(RuntimeError), blas.for_pass():
        assert library.n == 1
        raise RuntimeError("a failing pass")
    assert library.n == 4  # put back all the same


def test_the_runtimes_passes_leave_numpys_blas_as_it_was():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    before = threadpoolctl.threadpool_info()
    with bv.Graph():
        W = bv.Model(seed=0).add_parameters((64, 64))
        loss = bv.sum_elems(W @ bv.input(np.ones(64)))
        loss.backward()
    after = threadpoolctl.threadpool_info()
    assert [lib["num_threads"] for lib in before] == [lib["num_threads"] for lib in after]
