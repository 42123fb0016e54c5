"""ember.multiprocessing: shared-memory tensors seen by forked processes (Hogwild), spawn and
its error reporting."""

import multiprocessing
import os

import pytest

import ember
import ember.multiprocessing as mp

pytestmark = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="needs the fork start method"
)


def _train(rank, model):
    opt = ember.optim.SGD(model.parameters(), lr=0.01)
    x = ember.arange(12.0).reshape(4, 3)
    for _ in range(3):
        opt.zero_grad()
        model(x).pow(2).sum().backward()
        opt.step()


def test_forked_processes_update_shared_parameters_in_place():
    model = ember.nn.Sequential(ember.nn.Linear(3, 2), ember.nn.BatchNorm1d(2))
    weight = model[0].weight
    model.share_memory()
    assert model[0].weight is weight  # parameters keep their identity
    assert all(p.is_shared() for p in model.parameters()) and model[1].running_mean.is_shared()
    before = weight.detach().clone()
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_train, args=(r, model)) for r in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    assert all(p.exitcode == 0 for p in procs)
    assert not ember.equal(before, model[0].weight.detach())  # the children's steps landed here
    # buffers too (Hogwild-style updates may race, so only "some" is certain)
    assert int(model[1].num_batches_tracked) >= 1


def test_share_memory_keeps_values_and_layout_independent_data():
    for t in (
        ember.arange(6.0).reshape(2, 3).t(),
        ember.ones(3, dtype=ember.bfloat16),
        ember.tensor([True, False]),
        ember.arange(4),
    ):
        want = t.clone()
        assert t.share_memory_() is t and t.is_shared()
        assert ember.equal(t, want) and t.dtype == want.dtype
    assert not ember.ones(2).is_shared()


def _child(rank, path):
    with open(os.path.join(path, str(rank)), "w") as f:
        f.write(str(rank * 10))


def _fails(rank):
    if rank == 1:
        raise ValueError("rank one failed")


def test_spawn_runs_every_rank_and_reports_failures(tmp_path):
    mp.spawn(_child, args=(str(tmp_path),), nprocs=3, start_method="fork")
    assert sorted(os.listdir(tmp_path)) == ["0", "1", "2"]
    assert (tmp_path / "2").read_text() == "20"
    with pytest.raises(mp.ProcessRaisedException, match="rank one failed") as err:
        mp.spawn(_fails, nprocs=2, start_method="fork")
    assert err.value.error_index == 1
    ctx = mp.spawn(_child, args=(str(tmp_path),), nprocs=1, join=False, start_method="fork")
    while not ctx.join():
        pass
    assert mp.get_sharing_strategy() in mp.get_all_sharing_strategies()
    assert mp.Queue is multiprocessing.Queue
