"""Forked DataLoader workers share an in-memory dataset instead of copying it (Note [Workers share
the dataset] in utils/data/dataloader.py, Note [Data pages hold only data] in core/allocator.cpp):
a worker's private memory grows by a small fraction of the dataset over one epoch. Memory is read
from /proc/<pid>/smaps_rollup, so these tests need Linux's /proc."""

import gc
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import ember
from ember.utils.data import DataLoader, Dataset

pytestmark = pytest.mark.skipif(
    not os.path.exists("/proc/self/smaps_rollup"), reason="needs /proc/<pid>/smaps_rollup"
)


class _Items(Dataset):
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


class _FreezeCount(Dataset):
    """Each sample is the worker's count of frozen objects."""

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return gc.get_freeze_count()


def test_workers_inherit_frozen_objects_and_the_parent_unfreezes():
    keep = [[i] for i in range(1000)]  # container objects the collector tracks
    assert gc.get_freeze_count() == 0
    counts = [int(b) for b in DataLoader(_FreezeCount(), batch_size=None, num_workers=2)]
    assert len(counts) == 4 and all(c >= len(keep) for c in counts)
    assert gc.get_freeze_count() == 0


def test_a_program_that_froze_objects_keeps_its_freezing():
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        keep = [[i] for i in range(1000)]  # tracked after the program's freeze: not frozen
        counts = [int(b) for b in DataLoader(_FreezeCount(), batch_size=None, num_workers=1)]
        assert len(counts) == 4 and max(counts) <= frozen < max(counts) + len(keep)
        assert gc.get_freeze_count() <= frozen
    finally:
        gc.unfreeze()


def test_spawned_workers_do_not_freeze():
    counts = [
        int(b)
        for b in DataLoader(
            _FreezeCount(), batch_size=None, num_workers=1, multiprocessing_context="spawn"
        )
    ]
    assert len(counts) == 4
    assert gc.get_freeze_count() == 0


def test_loader_output_unchanged():
    items = [(ember.full((3, 4), float(i)), i) for i in range(37)]
    ember.manual_seed(0)
    one = [b for b in DataLoader(_Items(items), batch_size=5, shuffle=True, num_workers=0)]
    ember.manual_seed(0)
    two = [b for b in DataLoader(_Items(items), batch_size=5, shuffle=True, num_workers=2)]
    assert len(one) == len(two) == 8
    for (x1, y1), (x2, y2) in zip(one, two):
        assert ember.equal(x1, x2) and ember.equal(y1, y2)


class _Mixed(Dataset):
    """Samples a worker's collate must hand to stack: mixed shapes, dtypes, a view, a
    non-contiguous tensor, a Parameter (a subclass)."""

    def __init__(self, kind):
        self.kind = kind

    def __len__(self):
        return 4

    def __getitem__(self, i):
        if self.kind == "shapes":
            return ember.ones(2, 3) if i < 3 else ember.ones(3, 2)
        if self.kind == "dtypes":
            return ember.ones(2, dtype=ember.float32 if i else ember.float64)
        if self.kind == "strided":
            return ember.arange(12.0).view(3, 4).t() + i
        return ember.nn.Parameter(ember.full((2,), float(i)))


def test_worker_collate_matches_stack():
    # Samples are copied into their rows in a worker (Note [Collate leaves samples untouched]);
    # anything stack would treat differently goes through stack.
    for kind in ("dtypes", "strided", "parameter"):
        got = list(DataLoader(_Mixed(kind), batch_size=4, num_workers=1))[0]
        want = ember.stack([_Mixed(kind)[i] for i in range(4)], 0)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert ember.equal(got, want)
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        list(DataLoader(_Mixed("shapes"), batch_size=4, num_workers=1))


_CHILD = r"""
import json, os, sys, tempfile
import numpy as np
import ember
from ember.utils.data import DataLoader, Dataset

def private_dirty(pid):
    for line in open(f"/proc/{pid}/smaps_rollup"):
        if line.startswith("Private_Dirty:"):
            return int(line.split()[1]) * 1024

class Items(Dataset):
    def __init__(self, items):
        self.items = items
    def __len__(self):
        return len(self.items)
    def __getitem__(self, i):
        return self.items[i]

n, shape, source = int(sys.argv[1]), tuple(map(int, sys.argv[2].split(","))), sys.argv[3]
rng = np.random.default_rng(0)
items = []
for i in range(n):
    t = ember.from_numpy(rng.standard_normal(shape, dtype=np.float32))
    items.append((t.clone() if source == "native" else t, i % 10))
stamps = tempfile.mkdtemp()
def init(worker_id):
    with open(os.path.join(stamps, str(os.getpid())), "w") as f:
        f.write(str(private_dirty("self")))
loader = DataLoader(Items(items), batch_size=64, shuffle=True, num_workers=2,
                    persistent_workers=True, worker_init_fn=init)
batches = sum(1 for _ in loader)
growth = [private_dirty(pid) - int(open(os.path.join(stamps, pid)).read())
          for pid in os.listdir(stamps)]
print(json.dumps({"data_bytes": n * int(np.prod(shape)) * 4, "batches": batches,
                  "growth": growth}))
"""


def _worker_growth(shape, source, mb=96):
    """Each worker's Private_Dirty growth over one epoch of `mb` MiB of float32 samples."""
    n = mb * 2**20 // (4 * int(np.prod(shape)))
    # Under AddressSanitizer (scripts/sanitize.sh) the quarantine would keep every batch a worker
    # freed (115 MB of growth): the child runs without it, the rest of ASan's checks still on.
    env = dict(os.environ)
    if "ASAN_OPTIONS" in env:
        env["ASAN_OPTIONS"] += ":quarantine_size_mb=0"
    shape_arg = ",".join(map(str, shape))
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(n), shape_arg, source],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout.split("\n")[-2])
    assert r["batches"] == (n + 63) // 64
    assert len(r["growth"]) == 2
    return r["growth"], r["data_bytes"]


def test_worker_private_memory_grows_by_a_small_fraction_of_the_dataset():
    # 96 MiB of per-sample tensors: a worker that copied one page per sample (the layout before
    # the allocator kept data pages to themselves) would grow by a third of it.
    growth, data_bytes = _worker_growth((3, 32, 32), "native")
    for g in growth:
        assert g < 0.15 * data_bytes, (g, data_bytes)


@pytest.mark.skipif(
    "ASAN_OPTIONS" in os.environ,
    reason="AddressSanitizer builds allocate tensor metadata with the global operator new",
)
@pytest.mark.parametrize(
    "shape, source",
    [((1, 28, 28), "native"), ((3, 32, 32), "numpy")],
    ids=["3KiB-samples", "numpy-shared"],
)
def test_small_and_numpy_samples_keep_their_data_pages_shared(shape, source):
    # Samples under a page (dense data blocks) and tensors sharing numpy's buffers: their
    # metadata lives on pages of its own (Note [Metadata pages]), so reading the dataset copies
    # those pages only, not the data around them (26.8 % and 18.4 % of the data before; torch's
    # workers copy 26.6 % and 18.4 %).
    growth, data_bytes = _worker_growth(shape, source)
    for g in growth:
        assert g < 0.10 * data_bytes, (g, data_bytes)
