"""ember.utils.data (datasets, samplers, collate, DataLoader with workers) and ember.datasets."""

import collections
import gc
import gzip
import multiprocessing
import os
import random
import re
import signal
import threading
import time

import numpy as np
import pytest

import ember
from ember.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    get_worker_info,
    random_split,
)

FMNIST = "/usr/share/datasets/fashion-mnist"


def _gen(seed):
    g = ember.Generator()
    g.manual_seed(seed)
    return g


def _same(a, b):
    """Structural equality of batches (tensors compared exactly)."""
    if isinstance(a, ember.Tensor):
        return (
            isinstance(b, ember.Tensor)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and bool(ember.equal(a, b))
        )
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return {"x": ember.full((3,), float(i)), "y": i, "name": f"s{i}"}


class Failing(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise ValueError("bad sample 5")
        return ember.tensor([i])


class Counter(IterableDataset):
    """0..n-1, split between workers with get_worker_info()."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))


class RandomDraws(Dataset):
    """Samples draw from ember's, Python's and numpy's RNGs: workers must be seeded distinctly."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return ember.tensor([float(ember.rand(1).item()), random.random(), float(np.random.rand())])


# ---- datasets ----


def test_tensor_dataset_and_size_mismatch():
    x, y = ember.arange(10).view(5, 2), ember.arange(5)
    ds = TensorDataset(x, y)
    assert len(ds) == 5
    assert _same(ds[2], (x[2], y[2]))
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(x, ember.arange(4))


def test_concat_subset_add():
    a, b = Squares(3), Squares(4)
    c = a + b
    assert isinstance(c, ConcatDataset) and len(c) == 7
    assert c[3]["y"] == 0 and c[-1]["y"] == 3 and c[2]["y"] == 2
    with pytest.raises(ValueError, match="absolute value of index"):
        c[-8]
    with pytest.raises(AssertionError):
        ConcatDataset([])
    with pytest.raises(AssertionError):
        ConcatDataset([Counter(3)])
    s = Subset(b, [3, 1])
    assert len(s) == 2 and s[0]["y"] == 3 and s[1]["y"] == 1


def test_random_split_lengths_fractions_and_determinism():
    ds = Squares(10)
    parts = random_split(ds, [3, 7], generator=_gen(1))
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))
    again = random_split(ds, [3, 7], generator=_gen(1))
    assert parts[0].indices == again[0].indices
    # torch's remainder rule: floor each fraction, then hand out the rest round-robin.
    assert [len(p) for p in random_split(Squares(11), [0.3, 0.3, 0.4], generator=_gen(0))] == [
        4,
        3,
        4,
    ]
    assert [len(p) for p in random_split(Squares(10), [0.25] * 4, generator=_gen(0))] == [
        3,
        3,
        2,
        2,
    ]
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(ds, [3, 3])
    with pytest.raises(ValueError, match="not between 0 and 1"):
        random_split(ds, [1.5, -0.5])


# ---- samplers ----


def test_sequential_and_random_sampler():
    ds = Squares(10)
    assert list(SequentialSampler(ds)) == list(range(10))
    perm = list(RandomSampler(ds, generator=_gen(3)))
    assert sorted(perm) == list(range(10))
    assert perm == list(RandomSampler(ds, generator=_gen(3)))
    ember.manual_seed(5)
    a = list(RandomSampler(ds))
    ember.manual_seed(5)
    assert a == list(RandomSampler(ds))
    draws = list(RandomSampler(ds, replacement=True, num_samples=70, generator=_gen(0)))
    assert len(draws) == 70 and all(0 <= d < 10 for d in draws)
    more = list(RandomSampler(ds, num_samples=25, generator=_gen(0)))
    assert len(more) == 25 and sorted(more[:10]) == list(range(10)) and len(set(more[20:])) == 5
    with pytest.raises(TypeError, match="replacement should be a boolean"):
        RandomSampler(ds, replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        RandomSampler(ds, num_samples=0)


def test_subset_and_weighted_samplers():
    idx = [4, 8, 15, 16]
    out = list(SubsetRandomSampler(idx, generator=_gen(2)))
    assert sorted(out) == idx and len(SubsetRandomSampler(idx)) == 4
    w = list(WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 50, generator=_gen(0)))
    assert len(w) == 50 and set(w) <= {1, 3} and w.count(3) > w.count(1)
    nr = list(WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False, generator=_gen(0)))
    assert sorted(nr) == [0, 1, 2]
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        WeightedRandomSampler([1.0], 0)
    with pytest.raises(ValueError, match="replacement should be a boolean"):
        WeightedRandomSampler([1.0], 1, replacement=None)
    with pytest.raises(ValueError, match="weights should be a 1d sequence"):
        WeightedRandomSampler([[1.0, 2.0]], 1)


def test_batch_sampler():
    s = SequentialSampler(range(10))
    assert list(BatchSampler(s, 4, False)) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert list(BatchSampler(s, 4, True)) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert len(BatchSampler(s, 4, False)) == 3 and len(BatchSampler(s, 4, True)) == 2
    for bad in (0, -1, True, 2.0):
        with pytest.raises(ValueError, match="batch_size should be a positive integer"):
            BatchSampler(s, bad, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean"):
        BatchSampler(s, 2, 0)


# ---- collate ----


def test_default_collate_types():
    t = default_collate([ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0])])
    assert t.shape == (2, 2) and t.dtype == ember.float32
    ints = default_collate([1, 2, 3])
    assert ints.dtype == ember.int64 and ints.tolist() == [1, 2, 3]
    floats = default_collate([1.5, 2.5])
    assert floats.dtype == ember.float64
    assert default_collate([True, False]).dtype == ember.bool
    assert default_collate(["a", "b"]) == ["a", "b"]
    arr = default_collate([np.zeros((2,), np.float32), np.ones((2,), np.float32)])
    assert (
        isinstance(arr, ember.Tensor)
        and arr.dtype == ember.float32
        and arr.tolist() == [[0, 0], [1, 1]]
    )
    sc = default_collate([np.float64(1.0), np.float64(2.0)])
    assert isinstance(sc, ember.Tensor) and sc.dtype == ember.float64
    Point = collections.namedtuple("Point", "x y")
    p = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert isinstance(p, Point) and p.x.tolist() == [1, 3] and p.y.dtype == ember.float64
    d = default_collate([{"a": 1, "b": [1, 2]}, {"a": 2, "b": [3, 4]}])
    assert d["a"].tolist() == [1, 2] and [x.tolist() for x in d["b"]] == [[1, 3], [2, 4]]
    tup = default_collate([(1, "x"), (2, "y")])
    assert isinstance(tup, list) and tup[0].tolist() == [1, 2] and tup[1] == ("x", "y")


def test_default_collate_errors():
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(RuntimeError):
        default_collate([ember.zeros(2), ember.zeros(3)])
    with pytest.raises(TypeError, match="default_collate: batch must contain"):
        default_collate([object(), object()])


def test_default_convert():
    out = default_convert({"a": np.arange(3), "b": (np.float32(1.0), "s")})
    assert isinstance(out["a"], ember.Tensor) and out["a"].tolist() == [0, 1, 2]
    assert (
        isinstance(out["b"], list) and isinstance(out["b"][0], ember.Tensor) and out["b"][1] == "s"
    )
    t = ember.ones(2)
    assert default_convert(t) is t


# ---- DataLoader: argument checks ----


def test_loader_argument_errors():
    ds = Squares(4)
    cases = [
        (dict(num_workers=-1), "num_workers option should be non-negative"),
        (dict(timeout=-1), "timeout option should be non-negative"),
        (
            dict(prefetch_factor=2),
            "prefetch_factor option could only be specified in multiprocessing",
        ),
        (dict(persistent_workers=True), "persistent_workers option needs num_workers > 0"),
        (
            dict(sampler=SequentialSampler(ds), shuffle=True),
            "sampler option is mutually exclusive with shuffle",
        ),
        (
            dict(batch_sampler=BatchSampler(SequentialSampler(ds), 2, False), batch_size=2),
            "batch_sampler option is mutually exclusive",
        ),
        (
            dict(batch_sampler=BatchSampler(SequentialSampler(ds), 2, False), shuffle=True),
            "batch_sampler option is mutually exclusive",
        ),
        (
            dict(batch_sampler=BatchSampler(SequentialSampler(ds), 2, False), drop_last=True),
            "batch_sampler option is mutually exclusive",
        ),
        (dict(batch_size=None, drop_last=True), "batch_size=None option disables auto-batching"),
        (dict(multiprocessing_context="fork"), "multiprocessing_context can only be used"),
    ]
    for kwargs, msg in cases:
        with pytest.raises(ValueError, match=msg):
            DataLoader(ds, **kwargs)
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(Counter(4), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option"):
        DataLoader(Counter(4), sampler=SequentialSampler(range(4)))
    loader = DataLoader(ds)
    with pytest.raises(ValueError, match="batch_size attribute should not be set"):
        loader.batch_size = 3


# ---- DataLoader: single process ----


def test_loader_len_drop_last_and_batches():
    ds = TensorDataset(ember.arange(10.0).view(10, 1), ember.arange(10))
    loader = DataLoader(ds, batch_size=4)
    batches = list(loader)
    assert len(loader) == 3 and [b[1].tolist() for b in batches] == [
        [0, 1, 2, 3],
        [4, 5, 6, 7],
        [8, 9],
    ]
    dl = DataLoader(ds, batch_size=4, drop_last=True)
    assert len(dl) == 2 and len(list(dl)) == 2
    single = list(DataLoader(ds, batch_size=None))
    assert len(single) == 10 and single[3][1].dim() == 0
    bs = DataLoader(ds, batch_sampler=[[0, 9], [5]])
    assert [b[1].tolist() for b in bs] == [[0, 9], [5]]


def test_loader_shuffle_determinism():
    ds = Squares(13)
    ember.manual_seed(0)
    a = [b["y"].tolist() for b in DataLoader(ds, batch_size=4, shuffle=True)]
    ember.manual_seed(0)
    b = [b["y"].tolist() for b in DataLoader(ds, batch_size=4, shuffle=True)]
    assert a == b and sorted(sum(a, [])) == list(range(13))
    c = [b["y"].tolist() for b in DataLoader(ds, batch_size=4, shuffle=True, generator=_gen(7))]
    d = [b["y"].tolist() for b in DataLoader(ds, batch_size=4, shuffle=True, generator=_gen(7))]
    assert c == d


def test_iterable_dataset_single_process():
    loader = DataLoader(Counter(7), batch_size=3)
    assert [b.tolist() for b in loader] == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(loader) == 3
    assert [b.tolist() for b in DataLoader(Counter(7), batch_size=3, drop_last=True)] == [
        [0, 1, 2],
        [3, 4, 5],
    ]


# ---- DataLoader: workers ----


def test_workers_match_single_process():
    ds = Squares(23)
    for kwargs in (dict(shuffle=False), dict(shuffle=True), dict(shuffle=True, drop_last=True)):
        ember.manual_seed(1)
        single = list(DataLoader(ds, batch_size=4, **kwargs))
        ember.manual_seed(1)
        multi = list(DataLoader(ds, batch_size=4, num_workers=2, **kwargs))
        assert len(single) == len(multi) and all(_same(a, b) for a, b in zip(single, multi))
    assert multiprocessing.active_children() == []


def test_worker_dtypes_and_zero_copy_lifetime():
    x = ember.arange(24).view(6, 4)
    ds = TensorDataset(
        x.to(ember.float16), x.to(ember.uint8), x > 5, x.to(ember.float64), ember.zeros(6, 0)
    )
    batches = list(DataLoader(ds, batch_size=3, num_workers=2))
    for b, start in zip(batches, (0, 3)):
        assert (
            b[0].dtype == ember.float16 and b[1].dtype == ember.uint8 and b[2].dtype == ember.bool
        )
        assert b[3].tolist() == x[start : start + 3].to(ember.float64).tolist() and b[4].shape == (
            3,
            0,
        )
    # The batch files are unlinked once mapped: nothing of ours stays in /dev/shm.
    assert not [f for f in os.listdir("/dev/shm") if f.startswith(f"ember_dl_{os.getpid()}_")]
    b = batches[0][3]
    del batches
    assert b.sum().item() == float(sum(range(12)))  # the mapping lives as long as a tensor uses it


def test_spawn_context():
    ds = TensorDataset(ember.arange(20.0).view(10, 2), ember.arange(10))
    loader = DataLoader(ds, batch_size=4, num_workers=2, multiprocessing_context="spawn")
    assert [b[1].tolist() for b in loader] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    with pytest.raises(ValueError, match="valid start method"):
        DataLoader(ds, num_workers=1, multiprocessing_context="nope")


def test_iterable_dataset_with_workers():
    loader = DataLoader(Counter(10), batch_size=2, num_workers=2)
    got = sorted(sum((b.tolist() for b in loader), []))
    assert got == list(range(10))

    # Without sharding each worker yields the whole dataset.
    class Whole(IterableDataset):
        def __iter__(self):
            return iter(range(3))

    assert sorted(DataLoader(Whole(), batch_size=None, num_workers=2)) == [0, 0, 1, 1, 2, 2]


def test_worker_key_error_keeps_readable_message():
    with pytest.raises(KeyError) as info:
        list(DataLoader({0: 1}, batch_size=None, sampler=[5], num_workers=1))
    assert "\nOriginal Traceback" in str(info.value)
    del info
    gc.collect()


def test_worker_exception_reraised_with_traceback():
    with pytest.raises(ValueError) as info:
        list(DataLoader(Failing(), batch_size=2, num_workers=2))
    msg = str(info.value)
    assert "Caught ValueError in DataLoader worker process" in msg
    assert "Original Traceback (most recent call last)" in msg and "bad sample 5" in msg
    del info  # its traceback holds the iterator, which owns the workers
    gc.collect()
    assert multiprocessing.active_children() == []


def test_unpicklable_batches_and_local_exceptions_do_not_hang():
    if ember.__name__ == "torch":
        pytest.skip("torch's workers drop unpicklable batches silently (the loader then waits)")

    class LocalError(Exception):
        pass

    class Odd(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            if i == 2:
                raise LocalError("local")
            return {"f": lambda: i} if i == 1 else i

    it = iter(DataLoader(Odd(), batch_size=None, num_workers=1))
    assert next(it) == 0
    with pytest.raises(Exception, match="Can't pickle|pickle") as info:
        next(it)
    assert "in DataLoader worker process 0" in str(info.value)
    with pytest.raises(RuntimeError, match="Caught LocalError in DataLoader worker process 0"):
        next(it)
    assert next(it) == 3
    del it, info
    gc.collect()


def test_worker_init_fn_ids_and_seeds(tmp_path):
    def init(worker_id):
        info = get_worker_info()
        assert info.id == worker_id
        (tmp_path / f"w{worker_id}").write_text(f"{info.num_workers} {info.seed}")

    draws = list(DataLoader(RandomDraws(), batch_size=2, num_workers=2, worker_init_fn=init))
    seen = {p.name: p.read_text().split() for p in tmp_path.iterdir()}
    assert sorted(seen) == ["w0", "w1"]
    assert all(v[0] == "2" for v in seen.values()) and seen["w0"][1] != seen["w1"][1]
    # Batches 0 and 1 come from different workers: each RNG differs between them.
    assert all(draws[0][0, k].item() != draws[1][0, k].item() for k in range(3))
    assert get_worker_info() is None


def test_early_break_and_deleted_iterator_leave_no_children():
    loader = DataLoader(Squares(100), batch_size=2, num_workers=2)
    for _ in loader:
        break
    assert multiprocessing.active_children() == []
    it = iter(loader)
    next(it)
    del it
    assert multiprocessing.active_children() == []
    assert not [f for f in os.listdir("/dev/shm") if f.startswith(f"ember_dl_{os.getpid()}_")]


def test_dead_worker_is_reported():
    class Killer(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            os._exit(3)

    with pytest.raises(
        RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly"
    ):
        list(DataLoader(Killer(), num_workers=1))
    assert multiprocessing.active_children() == []


def test_persistent_workers_two_epochs():
    loader = DataLoader(Squares(9), batch_size=2, num_workers=2, persistent_workers=True)
    first = [b["y"].tolist() for b in loader]
    second = [b["y"].tolist() for b in loader]
    assert first == second == [[0, 1], [2, 3], [4, 5], [6, 7], [8]]
    for _ in loader:  # an epoch cut short: its prefetched batches must not leak into the next
        break
    assert [b["y"].tolist() for b in loader] == first
    children = multiprocessing.active_children()
    assert len(children) == 2
    del loader
    gc.collect()
    assert multiprocessing.active_children() == []


# ---- Fashion-MNIST ----


def _raw_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * k : 8 + 4 * k], "big") for k in range(ndim)]
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(dims)


@pytest.mark.skipif(not os.path.isdir(FMNIST), reason="dataset-fashion-mnist is not installed")
def test_fashion_mnist_against_raw_files():
    test = ember.datasets.FashionMNIST(train=False)
    images = _raw_idx(f"{FMNIST}/t10k-images-idx3-ubyte.gz")
    labels = _raw_idx(f"{FMNIST}/t10k-labels-idx1-ubyte.gz")
    assert (
        len(test) == 10000 and test.data.shape == (10000, 28, 28) and test.data.dtype == ember.uint8
    )
    assert (
        test.targets.dtype == ember.int64
        and test.targets.tolist() == labels.astype(np.int64).tolist()
    )
    assert int(test.data.to(ember.int64).sum().item()) == int(images.astype(np.int64).sum())
    img, label = test[0]
    assert img.shape == (1, 28, 28) and img.dtype == ember.float32 and label == int(labels[0])
    np.testing.assert_allclose(img.numpy()[0], images[0] / np.float32(255), rtol=1e-6)
    x, y = test.tensors()
    assert (
        x.shape == (10000, 1, 28, 28)
        and x.dtype == ember.float32
        and 0 <= x.min().item() <= x.max().item() <= 1
    )
    assert (
        bool(ember.equal(y, test.targets)) and test.tensors(normalize=False)[0].dtype == ember.uint8
    )
    assert len(ember.datasets.FashionMNIST.classes) == 10
    tr = ember.datasets.FashionMNIST(transform=lambda t: t * 2, target_transform=lambda c: c + 100)
    assert len(tr) == 60000 and tr[1][1] == int(tr.targets[1]) + 100 and tr[1][0].max().item() <= 2


def test_fashion_mnist_uncompressed_and_missing(tmp_path):
    with pytest.raises(RuntimeError, match="dataset-fashion-mnist"):
        ember.datasets.FashionMNIST(root=tmp_path)
    imgs = np.arange(2 * 28 * 28, dtype=np.uint32).astype(np.uint8).reshape(2, 28, 28)
    (tmp_path / "t10k-images-idx3-ubyte").write_bytes(
        bytes([0, 0, 8, 3]) + b"".join(d.to_bytes(4, "big") for d in (2, 28, 28)) + imgs.tobytes()
    )
    with gzip.open(tmp_path / "t10k-labels-idx1-ubyte.gz", "wb") as f:
        f.write(bytes([0, 0, 8, 1]) + (2).to_bytes(4, "big") + bytes([7, 3]))
    ds = ember.datasets.FashionMNIST(root=tmp_path, train=False)
    assert ds.targets.tolist() == [7, 3] and ds.data.numpy().tolist() == imgs.tolist()
    (tmp_path / "t10k-labels-idx1-ubyte.gz").unlink()
    (tmp_path / "t10k-labels-idx1-ubyte").write_bytes(
        bytes([0, 0, 8, 1]) + (3).to_bytes(4, "big") + bytes([7, 3])
    )
    with pytest.raises(RuntimeError, match="truncated or corrupt"):
        ember.datasets.FashionMNIST(root=tmp_path, train=False)
    (tmp_path / "t10k-labels-idx1-ubyte").write_bytes(b"\x01\x02\x08\x01")
    with pytest.raises(RuntimeError, match="bad magic"):
        ember.datasets.FashionMNIST(root=tmp_path, train=False)


def test_fashion_mnist_through_loader_with_workers():
    if not os.path.isdir(FMNIST):
        pytest.skip("dataset-fashion-mnist is not installed")
    ds = Subset(ember.datasets.FashionMNIST(train=False), list(range(64)))
    ember.manual_seed(3)
    a = list(DataLoader(ds, batch_size=16, shuffle=True))
    ember.manual_seed(3)
    b = list(DataLoader(ds, batch_size=16, shuffle=True, num_workers=2))
    assert all(_same(x, y) for x, y in zip(a, b)) and a[0][0].shape == (16, 1, 28, 28)


# ---- crashed, killed and hung workers ----


def _children():
    """Pids of this process's live (not zombie) children, read from /proc."""
    me, out = os.getpid(), set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == me and fields[0] != "Z":
            out.add(int(entry))
    return out


def _assert_nothing_left(children_before, threads_before):
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (
        _children() - children_before or set(threading.enumerate()) - threads_before
    ):
        time.sleep(0.05)  # queue feeder threads finish just after the loader lets them go
    assert _children() - children_before == set()
    assert set(threading.enumerate()) - threads_before == set()
    assert not [f for f in os.listdir("/dev/shm") if f.startswith(f"ember_dl_{os.getpid()}_")]


def _check_death(msg, pid, reason):
    assert re.search(rf"DataLoader worker \(pid(\(s\))? {pid}\)", msg), msg
    if ember.__name__ == "ember":  # PyTorch names neither the worker nor how it ended
        assert re.search(rf"worker 1 \(pid {pid}\) {reason}", msg), msg


class _Crasher(Dataset):
    """Worker 1 dies as told on its first sample; worker 0 serves normally."""

    def __init__(self, how):
        self.how = how

    def __len__(self):
        return 64

    def __getitem__(self, i):
        if get_worker_info().id == 1:
            if self.how == "exit":
                os._exit(7)
            if self.how == "segfault":
                import ctypes
                import faulthandler

                faulthandler.disable()  # die by the signal itself, without a traceback dump
                ctypes.string_at(0)
            if self.how == "hang":
                time.sleep(60)
        return i


# AddressSanitizer (scripts/sanitize.sh) turns a segfault into its report and an abort.
_SEGV = "SIG(SEGV|ABRT)" if "libasan" in os.environ.get("LD_PRELOAD", "") else "SIGSEGV"


@pytest.mark.parametrize(
    "how, reason",
    [("exit", "exited with code 7"), ("segfault", f"killed by signal {_SEGV}")],
)
def test_crashed_worker_is_named_and_cleaned_up(how, reason):
    children, threads = _children(), set(threading.enumerate())
    start = time.monotonic()
    with pytest.raises(RuntimeError) as e:
        list(DataLoader(_Crasher(how), batch_size=2, num_workers=2))
    assert time.monotonic() - start < 10
    _check_death(str(e.value), r"\d+", reason)
    del e  # its traceback holds the iterator (PyTorch stops the other workers only then)
    gc.collect()
    _assert_nothing_left(children, threads)


def test_killed_worker_is_named_and_cleaned_up():
    children, threads = _children(), set(threading.enumerate())
    it = iter(DataLoader(_Crasher("hang"), batch_size=2, num_workers=2))
    assert next(it).tolist() == [0, 1]  # worker 0's batch; worker 1 hangs on its first sample
    victim = sorted(_children() - children)[1]
    start = time.monotonic()
    with pytest.raises(RuntimeError) as e:
        os.kill(victim, signal.SIGKILL)
        for _ in it:
            pass
    assert time.monotonic() - start < 10
    _check_death(str(e.value), str(victim), "killed by signal SIGKILL")
    del it, e
    gc.collect()
    _assert_nothing_left(children, threads)


def test_timeout_raises_when_a_worker_hangs():
    children, threads = _children(), set(threading.enumerate())
    it = iter(DataLoader(_Crasher("hang"), batch_size=2, num_workers=2, timeout=0.5))
    next(it)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.5 seconds"):
        next(it)
    assert time.monotonic() - start < 5
    del it
    gc.collect()
    _assert_nothing_left(children, threads)
