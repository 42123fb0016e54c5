"""Tensors shared across processes started by ember.multiprocessing with spawn and forkserver
(issue 16): share_memory_()/is_shared(), the file_descriptor and file_system sharing strategies,
passing through Process args, a Queue and spawn(fn, args, nprocs); writes in a child are seen by
the parent; segments are freed when the last holder lets go."""

import gc
import multiprocessing
import os

import pytest

import ember
import ember.multiprocessing as mp

pytestmark = pytest.mark.skipif(
    not hasattr(os, "memfd_create") or not os.path.isdir("/dev/shm"),
    reason="needs Linux shared memory (memfd_create, /dev/shm)",
)


@pytest.fixture(params=["file_descriptor", "file_system"])
def strategy(request):
    before = mp.get_sharing_strategy()
    mp.set_sharing_strategy(request.param)
    yield request.param
    mp.set_sharing_strategy(before)


def _shm_files():
    return {f for f in os.listdir("/dev/shm") if f.startswith(f"ember_{os.getpid()}_")}


def _open_fds():
    return len(os.listdir("/proc/self/fd"))


# --- children (module level: spawn imports them by name) ---


def _add_one(t, done):
    t.add_(1)
    done.put((t.is_shared(), tuple(t.shape), t.stride(), t.storage_offset()))


def _write_rank(rank, t):
    t[rank] = float(rank + 1)


def _echo(inbox, outbox):
    t = inbox.get()
    t.mul_(10)
    fresh = ember.arange(3.0)  # not shared yet: sending it moves it into shared memory
    outbox.put((t.is_shared(), fresh))
    inbox.get()  # keep the sender alive until the parent has the tensor


def test_strategies_api():
    assert mp.get_all_sharing_strategies() == {"file_descriptor", "file_system"}
    assert mp.get_sharing_strategy() == "file_descriptor"
    with pytest.raises(AssertionError):
        mp.set_sharing_strategy("nope")


def test_share_memory_in_place(strategy):
    base = ember.arange(12.0).reshape(3, 4)
    view = base.t()[1:]
    want = view.clone()
    assert not view.is_shared()
    assert view.share_memory_() is view and view.is_shared()
    assert ember.equal(view, want)
    assert view.stride() == (1, 4) and view.storage_offset() == 1  # geometry kept
    assert view[1:].is_shared()  # views of shared storage are shared
    for dtype in (ember.bfloat16, ember.bool, ember.complex64, ember.int8):
        t = ember.ones(3, dtype=dtype)
        assert t.share_memory_().is_shared() and ember.equal(t, ember.ones(3, dtype=dtype))
    e = ember.ones(0).share_memory_()
    assert e.shape == (0,)


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_child_writes_are_seen_through_process_args(strategy, method):
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method} start method")
    ctx = mp.get_context(method)
    x = ember.zeros(2, 3).share_memory_()
    view = x.t()[1:]  # a view travels with its strides and offset
    done = ctx.SimpleQueue()
    p = ctx.Process(target=_add_one, args=(view, done))
    p.start()
    shared, shape, stride, offset = done.get()
    p.join(60)
    assert p.exitcode == 0
    assert shared and shape == (2, 2) and stride == (1, 3) and offset == 1
    assert x.tolist() == [[0.0, 1.0, 1.0], [0.0, 1.0, 1.0]]


def test_queue_both_ways(strategy):
    ctx = mp.get_context("spawn")
    inbox, outbox = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=_echo, args=(inbox, outbox))
    p.start()
    x = ember.ones(4)
    inbox.put(x)  # not shared yet: moved into shared memory in place, as torch does
    child_saw_shared, fresh = outbox.get(timeout=60)
    inbox.put(None)
    p.join(60)
    assert p.exitcode == 0 and child_saw_shared
    assert x.is_shared() and x.tolist() == [10.0] * 4  # the child's write, seen here
    assert fresh.is_shared() and fresh.tolist() == [0.0, 1.0, 2.0]  # outlives its sender
    fresh.add_(1)
    assert fresh.tolist() == [1.0, 2.0, 3.0]


def test_spawn_ranks_write_into_one_tensor():
    y = ember.zeros(3)
    y[2] = 7.0
    mp.spawn(_write_rank, args=(y,), nprocs=2)
    assert y.tolist() == [1.0, 2.0, 7.0]


def test_segments_are_freed_with_their_last_holder(strategy):
    gc.collect()
    files, fds = _shm_files(), _open_fds()
    x = ember.ones(1000).share_memory_()
    views = [x[1:], x.view(10, 100)]
    assert _open_fds() > fds  # the segment's descriptor (and the mapping's)
    assert len(_shm_files() - files) == (strategy == "file_system")
    del x
    gc.collect()
    assert views[0].is_shared() and views[0].sum().item() == 999
    del views
    gc.collect()
    assert _open_fds() == fds and _shm_files() == files
    if strategy != "file_system":
        return
    # a named segment another process also held goes when both have let go (here: the child
    # exits first; then the parent, the last holder, unlinks the name)
    y = ember.zeros(8).share_memory_()
    ctx = mp.get_context("spawn")
    done = ctx.SimpleQueue()
    p = ctx.Process(target=_add_one, args=(y, done))
    p.start()
    done.get()
    p.join(60)
    del p, y, done
    gc.collect()
    assert _open_fds() == fds and _shm_files() == files


def test_plain_pickle_still_copies():
    import pickle

    x = ember.arange(3.0).share_memory_()
    y = pickle.loads(pickle.dumps(x))
    assert not y.is_shared() and y.tolist() == [0.0, 1.0, 2.0]


def test_non_leaf_requiring_grad_is_refused():
    q = mp.get_context("spawn").SimpleQueue()
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        q.put(ember.ones(2, requires_grad=True) * 2)
