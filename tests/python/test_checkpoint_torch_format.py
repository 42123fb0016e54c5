"""PyTorch's checkpoint formats: files torch.save wrote load into ember, files ember.save writes
load into torch (weights_only=True), weights_only refuses what is not data, and hostile files give
clear errors without running anything."""

import argparse
import collections
import io
import os
import pickle
import random
import struct
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import ember
from ember.serialization import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals

Pair = collections.namedtuple("Pair", "a b")  # module level: picklable by name


class Marker:
    """Unpickling this creates a file: a stand-in for any code a pickle can run."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def _np(t):
    return t.detach().float().numpy() if t.dtype == ember.bfloat16 else t.detach().numpy()


# ---- ember.save <-> ember.load ----


def test_views_and_tied_weights_share_one_storage(tmp_path):
    base = ember.arange(24.0).view(4, 6)
    w = ember.nn.Parameter(ember.randn(3, 5))
    obj = {"base": base, "t": base.t(), "row": base[2], "cols": base[:, 1::2], "w": w, "tied": w}
    ember.save(obj, tmp_path / "c.pt")
    out = ember.load(tmp_path / "c.pt")
    ptr = out["base"]._storage_ptr()
    for k in ("t", "row", "cols"):
        assert out[k]._storage_ptr() == ptr
        assert out[k].stride() == obj[k].stride()
        assert out[k].storage_offset() == obj[k].storage_offset()
        assert np.array_equal(_np(out[k]), _np(obj[k]))
    out["base"][2, 0] = -1.0  # one storage: the row view sees the write
    assert out["row"][0].item() == -1.0
    assert out["w"] is out["tied"]
    assert type(out["w"]) is ember.nn.Parameter and out["w"].requires_grad
    assert out["w"].is_leaf


def test_parameter_requires_grad_false_and_plain_grad_tensors(tmp_path):
    p = ember.nn.Parameter(ember.ones(2), requires_grad=False)
    g = ember.ones(3, requires_grad=True)
    ember.save([p, g, g.detach()], tmp_path / "c.pt")
    q, h, d = ember.load(tmp_path / "c.pt")
    assert type(q) is ember.nn.Parameter and not q.requires_grad
    assert type(h) is ember.Tensor and h.requires_grad and h.is_leaf and not d.requires_grad


def test_data_values_round_trip(tmp_path):
    obj = collections.OrderedDict(
        size=ember.Size([2, 3]),
        dtype=ember.float16,
        device=ember.device("cpu"),
        bytes=b"\x00\xffab",
        set={1, 2},
        complex=1 + 2j,
        tuple_key={(1, 2): "pair"},
        array=np.arange(6, dtype=np.int16).reshape(2, 3),
        fortran=np.asfortranarray(np.ones((2, 3))),
        scalar=np.float32(1.5),
        npdtype=np.dtype(">f8"),
        objects=np.array([1, "a", None], dtype=object),
        counter=collections.Counter("aab"),
    )
    ember.save(obj, tmp_path / "c.pt")
    out = ember.load(tmp_path / "c.pt")
    assert type(out) is collections.OrderedDict and list(out) == list(obj)
    assert type(out["size"]) is ember.Size and out["size"] == (2, 3)
    assert out["dtype"] is ember.float16 and out["device"] == ember.device("cpu")
    for k in ("bytes", "set", "complex", "tuple_key", "counter", "npdtype"):
        assert out[k] == obj[k] and type(out[k]) is type(obj[k]), k
    for k in ("array", "fortran", "objects"):
        assert type(out[k]) is np.ndarray and out[k].dtype == obj[k].dtype
        assert np.array_equal(out[k], obj[k]), k
    assert out["fortran"].flags.f_contiguous
    assert type(out["scalar"]) is np.float32 and out["scalar"] == 1.5


def test_non_data_objects_need_weights_only_false_or_an_allow_list(tmp_path):
    path = tmp_path / "c.pt"
    ember.save({"args": argparse.Namespace(lr=0.1), "w": ember.ones(2)}, path)
    with pytest.raises(pickle.UnpicklingError) as info:
        ember.load(path)
    msg = str(info.value)
    assert "Weights only load failed" in msg
    assert "Unsupported global: GLOBAL argparse.Namespace" in msg
    assert "add_safe_globals" in msg and "safe_globals" in msg and "weights_only" in msg
    assert isinstance(info.value, RuntimeError)
    assert ember.load(path, weights_only=False)["args"].lr == 0.1
    with safe_globals([argparse.Namespace]):
        assert get_safe_globals() == [argparse.Namespace]
        assert ember.load(path)["args"] == argparse.Namespace(lr=0.1)
    assert get_safe_globals() == []
    with pytest.raises(pickle.UnpicklingError):
        ember.load(path)
    add_safe_globals([(argparse.Namespace, "argparse.Namespace")])
    try:
        assert ember.load(path)["args"].lr == 0.1
    finally:
        clear_safe_globals()
    assert get_safe_globals() == []

    ember.save(Pair(1, ember.zeros(1)), path)  # namedtuples are classes, as in torch
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL test_checkpoint_torch_format.Pair"):
        ember.load(path)
    with safe_globals([Pair]):
        assert ember.load(path).a == 1

    model = ember.nn.Linear(2, 3)
    ember.save(model, path)  # a whole module
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL ember.nn.modules.linear.Linear"):
        ember.load(path)
    again = ember.load(path, weights_only=False)
    x = ember.randn(4, 2)
    assert np.allclose(_np(again(x)), _np(model(x)))


def test_unsaveable_and_unloadable_dtypes(tmp_path):
    with pytest.raises(TypeError, match="cannot save an object of type function"):
        ember.save({"f": lambda: 0}, tmp_path / "x.pt")
    assert not os.listdir(tmp_path)


def test_legacy_format_round_trip(tmp_path):
    base = ember.arange(10.0)
    obj = {"a": base, "v": base[2:5], "p": ember.nn.Parameter(ember.ones(2))}
    ember.save(obj, tmp_path / "c.pt", _use_new_zipfile_serialization=False)
    assert not zipfile.is_zipfile(tmp_path / "c.pt")
    out = ember.load(tmp_path / "c.pt")
    assert out["v"]._storage_ptr() == out["a"]._storage_ptr() and out["v"].tolist() == [2, 3, 4]
    assert type(out["p"]) is ember.nn.Parameter
    with pytest.raises(RuntimeError, match="mmap"):
        ember.load(tmp_path / "c.pt", mmap=True)


def test_file_objects_offsets_and_streams(tmp_path):
    buf = io.BytesIO(b"junk")
    buf.seek(4)
    ember.save({"x": ember.arange(3)}, buf)
    buf.seek(4)
    assert ember.load(buf)["x"].tolist() == [0, 1, 2]

    class ReadOnly:  # not seekable: read whole, as torch does
        def __init__(self, data):
            self.f = io.BytesIO(data)

        def read(self, n=-1):
            return self.f.read(n)

    out = io.BytesIO()
    ember.save([ember.ones(2)], out, pickle_protocol=4)
    assert ember.load(ReadOnly(out.getvalue()))[0].tolist() == [1.0, 1.0]


def test_mmap_views_are_aligned_private_and_zero_copy(tmp_path):
    path = tmp_path / "c.pt"
    ember.save({"x": ember.arange(1000.0), "y": ember.ones(7, dtype=ember.bfloat16)}, path)
    m = ember.load(path, mmap=True)
    assert m["x"].data_ptr() % 64 == 0 and m["x"][999].item() == 999.0
    assert m["y"].dtype == ember.bfloat16 and m["y"].tolist() == [1.0] * 7
    m["x"].add_(1)
    assert ember.load(path)["x"][0].item() == 0.0
    import mmap as _mmap

    with open(path, "rb") as f, _mmap.mmap(f.fileno(), 0, access=_mmap.ACCESS_READ) as mm:
        data = bytes(mm)
    raw = np.arange(1000.0, dtype=np.float32).tobytes()
    assert data.find(raw) % 64 == 0  # the record is laid out aligned in the file


def test_map_location_forms(tmp_path):
    path = tmp_path / "c.pt"
    ember.save({"x": ember.ones(2)}, path)
    seen = []

    def keep(storage, location):
        seen.append(location)
        return storage

    for ml in ("cpu", ember.device("cpu"), {"cpu": "cpu"}, keep, lambda s, loc: None):
        assert ember.load(path, map_location=ml)["x"].tolist() == [1.0, 1.0]
    assert seen == ["cpu"]
    with pytest.raises(RuntimeError, match="map_location"):
        ember.load(path, map_location="cuda:0")


# ---- hostile files ----


def _zip_with_pickle(payload, records=()):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("archive/data.pkl", payload)
        for name, data in records:
            z.writestr("archive/" + name, data)
        z.writestr("archive/version", "3\n")
    return out.getvalue()


def test_code_in_a_checkpoint_never_runs(tmp_path):
    marker = tmp_path / "pwned"
    payloads = {
        "(io|builtins).open": pickle.dumps({"w": Marker(str(marker))}, protocol=2),
        "os.system": b"cos\nsystem\n(Vtouch " + str(marker).encode() + b"\ntR.",
        "builtins.eval": b"\x80\x02cbuiltins\neval\n(Vopen('"
        + str(marker).encode()
        + b"', 'w')\ntR.",
        "subprocess.Popen": b"\x80\x04csubprocess\nPopen\n(Vtrue\ntR.",
    }
    for name, payload in payloads.items():
        data = _zip_with_pickle(payload)
        for src in (io.BytesIO(data), None):
            if src is None:
                (tmp_path / "h.pt").write_bytes(data)
            with pytest.raises(pickle.UnpicklingError, match="(?s)ember.load.*GLOBAL " + name):
                ember.load(src if src is not None else tmp_path / "h.pt")
        assert not marker.exists(), name
    # A pickle smuggling a callable through an allowed name still calls nothing else.
    sneaky = b"\x80\x02ccollections\nOrderedDict\n(cos\nsystem\ntR."
    with pytest.raises(pickle.UnpicklingError, match="os.system"):
        ember.load(io.BytesIO(_zip_with_pickle(sneaky)))


def _pid_pickle(storage_type, key, numel, size, stride, offset=0, location="cpu"):
    """data.pkl text for one tensor, written by hand (protocol 2 opcodes)."""

    def tup(xs):
        return b"(" + b"".join(b"J" + struct.pack("<i", x) for x in xs) + b"t"

    return (
        b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n("
        + b"(X\x07\x00\x00\x00storage"
        + b"ctorch\n"
        + storage_type.encode()
        + b"\n"
        + b"X"
        + struct.pack("<I", len(key))
        + key.encode()
        + b"X"
        + struct.pack("<I", len(location))
        + location.encode()
        + b"\x8a\x08"
        + struct.pack("<q", numel)
        + b"tQ"
        + b"J"
        + struct.pack("<i", offset)
        + tup(size)
        + tup(stride)
        + b"\x89ccollections\nOrderedDict\n)RtR."
    )


def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_hostile_tensor_records():
    sixteen = np.arange(4, dtype=np.float32).tobytes()
    cases = {
        "holds 16 bytes": _pid_pickle("FloatStorage", "0", 1 << 40, [4], [1]),
        "reach outside": _pid_pickle("FloatStorage", "0", 4, [5], [1]),
        "reach outside storage": _pid_pickle("FloatStorage", "0", 4, [2, 2], [1, 3]),
        "negative": _pid_pickle("FloatStorage", "0", 4, [2], [-1]),
        "offset": _pid_pickle("FloatStorage", "0", 4, [1], [1], offset=-1),
        "missing": _pid_pickle("FloatStorage", "7", 4, [4], [1]),
        "quint2x4": _pid_pickle("QUInt2x4Storage", "0", 2, [2], [1]),
        "GLOBAL torch.NotAStorage": _pid_pickle("NotAStorage", "0", 4, [4], [1]),
        "map_location": _pid_pickle("FloatStorage", "0", 4, [4], [1], location="cuda:0"),
    }
    ok = _zip_with_pickle(
        _pid_pickle("FloatStorage", "0", 4, [2, 2], [1, 2]), [("data/0", sixteen)]
    )
    assert ember.load(io.BytesIO(ok)).tolist() == [[0.0, 2.0], [1.0, 3.0]]
    before = _rss()
    for what, payload in cases.items():
        data = _zip_with_pickle(payload, [("data/0", sixteen)])
        with pytest.raises(RuntimeError, match="(?s)ember.load.*" + what):
            ember.load(io.BytesIO(data))
    assert _rss() - before < 64 * 2**20


def test_overlapping_and_compressed_records():
    payload = (
        b"\x80\x02("
        + b"".join(
            _pid_pickle("ByteStorage", str(i), 1 << 20, [1 << 20], [1])[2:-1] for i in range(2)
        )
        + b"l."
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("archive/data.pkl", payload)
        z.writestr("archive/data/0", b"\0" * (1 << 20))
    data = bytearray(out.getvalue())
    # Append a second central-directory entry pointing at record 0's bytes (a claim of its data
    # twice over): rebuild the archive's directory by hand.
    zf = zipfile.ZipFile(io.BytesIO(bytes(data)))
    info0 = zf.getinfo("archive/data/0")
    start = zf.start_dir
    cd = bytes(data[start:])
    entries = cd[: cd.index(b"PK\x05\x06")]
    first = entries.index(b"archive/data/0") - 46
    one = entries[first : first + 46 + len("archive/data/0")]
    dup = one.replace(b"archive/data/0", b"archive/data/1")
    eocd = bytearray(cd[cd.index(b"PK\x05\x06") :])
    n = struct.unpack_from("<H", eocd, 10)[0] + 1
    struct.pack_into("<HHI", eocd, 8, n, n, len(entries) + len(dup))
    forged = bytes(data[:start]) + entries + dup + bytes(eocd)
    assert (
        zipfile.ZipFile(io.BytesIO(forged)).getinfo("archive/data/1").header_offset
        == info0.header_offset
    )
    with pytest.raises(RuntimeError, match="ember.load.*(overlaps|corrupt)"):
        ember.load(io.BytesIO(forged))
    comp = io.BytesIO()
    with zipfile.ZipFile(comp, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("archive/data.pkl", _pid_pickle("FloatStorage", "0", 4, [4], [1]))
        z.writestr("archive/data/0", b"\0" * 16)
    comp.seek(0)
    with pytest.raises(RuntimeError, match="ember.load.*compressed"):
        ember.load(comp)


def _torch_like_file():
    buf = io.BytesIO()
    base = ember.arange(64.0)
    ember.save({"w": base.view(8, 8), "b": base[:8], "meta": {"lr": 0.5, 1: [True, None]}}, buf)
    return buf.getvalue()


def test_truncations_and_bit_flips_never_crash_or_run_code(tmp_path):
    data = _torch_like_file()
    for cut in sorted(set(range(0, len(data), 13)) | {len(data) - 1}):
        with pytest.raises(RuntimeError, match="ember.load"):
            ember.load(io.BytesIO(data[:cut]))
    rng = random.Random(0)
    outcomes = collections.Counter()
    for _ in range(1500):
        bad = bytearray(data)
        pos = rng.randrange(len(bad))
        bad[pos] ^= 1 << rng.randrange(8)
        try:
            ember.load(io.BytesIO(bytes(bad)))
            outcomes["loaded"] += 1
        except RuntimeError as e:
            assert "ember.load" in str(e)
            outcomes["error"] += 1
    assert outcomes["error"] > 0 and outcomes["loaded"] > 0


def test_legacy_hostile_files():
    good = io.BytesIO()
    ember.save({"x": ember.arange(100.0)}, good, _use_new_zipfile_serialization=False)
    data = good.getvalue()
    for cut in range(0, len(data), 11):
        with pytest.raises(RuntimeError, match="ember.load"):
            ember.load(io.BytesIO(data[:cut]))
    # The element count before a storage's bytes claims a terabyte.
    i = data.rindex(struct.pack("<q", 100))
    huge = data[:i] + struct.pack("<q", 1 << 40) + data[i + 8 :]
    with pytest.raises(RuntimeError, match="ember.load.*(truncated|corrupt)"):
        ember.load(io.BytesIO(huge))
    raw = pickle.dumps(Marker("/nonexistent/pwned"), protocol=2)
    with pytest.raises(RuntimeError, match="not an ember checkpoint nor a PyTorch one"):
        ember.load(io.BytesIO(raw), weights_only=False)


# ---- PyTorch in the loop ----


def _torch():
    return pytest.importorskip("torch")


TORCH_DTYPES = [
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "bool",
]


@pytest.mark.parametrize("zip_format", [True, False], ids=["zip", "legacy"])
def test_torch_written_files_load(tmp_path, zip_format):
    torch = _torch()
    torch.manual_seed(0)
    obj = collections.OrderedDict()
    for name in TORCH_DTYPES:
        t = (torch.randn(3, 4) * 10).to(getattr(torch, name))
        obj[name] = t
        obj[name + "_t"] = t.t()
    base = torch.arange(20.0)
    obj["base"] = base
    obj["view"] = base[3:15].view(3, 4)[:, ::2]
    obj["param"] = torch.nn.Parameter(torch.randn(2, 2))
    obj["frozen"] = torch.nn.Parameter(torch.randn(2), requires_grad=False)
    obj["empty"] = torch.empty(0, 3)
    obj["scalar"] = torch.tensor(2.5)
    obj["nested"] = {"list": [1, 2.0, "s", None, (True,)], "size": torch.Size([1, 2])}
    obj["dtype"] = torch.float64
    path = tmp_path / "t.pt"
    torch.save(obj, path, _use_new_zipfile_serialization=zip_format)
    out = ember.load(path)
    assert list(out) == list(obj) and type(out) is collections.OrderedDict
    for k, v in obj.items():
        if not isinstance(v, torch.Tensor):
            continue
        e = out[k]
        assert repr(e.dtype) == repr(v.dtype) and tuple(e.shape) == tuple(v.shape), k
        assert e.stride() == v.stride() and e.storage_offset() == v.storage_offset(), k
        assert e.requires_grad == v.requires_grad, k
        ref = v.detach().float() if v.dtype == torch.bfloat16 else v.detach()
        assert np.array_equal(_np(e), ref.numpy()), k
    assert type(out["param"]) is ember.nn.Parameter and type(out["frozen"]) is ember.nn.Parameter
    assert out["view"]._storage_ptr() == out["base"]._storage_ptr()
    assert out["float32_t"]._storage_ptr() == out["float32"]._storage_ptr()
    assert out["nested"]["size"] == ember.Size([1, 2]) and out["dtype"] is ember.float64


def test_ember_files_load_in_torch_weights_only(tmp_path):
    torch = _torch()
    base = ember.arange(12.0)
    w = ember.nn.Parameter(ember.randn(3, 4))
    obj = collections.OrderedDict(
        base=base,
        view=base[2:10].view(2, 4).t(),
        w=w,
        tied=w,
        g=ember.ones(2, requires_grad=True),
        bf=ember.ones(3, dtype=ember.bfloat16),
        flags=ember.tensor([True, False]),
        meta={
            "lr": 0.1,
            "betas": (0.9, 0.99),
            3: None,
            "size": ember.Size([2]),
            "dtype": ember.int32,
            "device": ember.device("cpu"),
        },
    )
    for zip_format in (True, False):
        path = tmp_path / f"e{zip_format}.pt"
        ember.save(obj, path, _use_new_zipfile_serialization=zip_format)
        out = torch.load(path, weights_only=True)
        assert type(out["w"]) is torch.nn.Parameter and out["w"] is out["tied"]
        assert out["view"].untyped_storage().data_ptr() == out["base"].untyped_storage().data_ptr()
        assert out["view"].stride() == obj["view"].stride()
        assert out["view"].storage_offset() == obj["view"].storage_offset()
        assert np.array_equal(out["view"].numpy(), _np(obj["view"]))
        assert out["g"].requires_grad and out["bf"].dtype == torch.bfloat16
        assert out["flags"].tolist() == [True, False]
        assert out["meta"]["size"] == torch.Size([2]) and out["meta"]["dtype"] is torch.int32
        assert out["meta"]["device"] == torch.device("cpu") and out["meta"][3] is None


def test_torch_state_dict_loads_into_an_ember_model(tmp_path):
    torch = _torch()

    def build(nn):
        return nn.Sequential(
            nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 5)
        )

    torch.manual_seed(0)
    tm = build(torch.nn)
    tm(torch.randn(2, 3, 8, 8))  # updates BatchNorm's running stats
    tm.eval()
    torch.save(tm.state_dict(), tmp_path / "sd.pt")
    em = build(ember.nn)
    em.load_state_dict(ember.load(tmp_path / "sd.pt"))
    em.eval()
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
    with torch.no_grad():
        ref = tm(torch.from_numpy(x)).numpy()
    assert np.allclose(_np(em(ember.from_numpy(x))), ref, atol=1e-5)


def test_torch_objects_that_are_not_data(tmp_path):
    torch = _torch()
    path = tmp_path / "t.pt"
    torch.save({"args": argparse.Namespace(epochs=3), "sd": {"w": torch.ones(1)}}, path)
    with pytest.raises(
        pickle.UnpicklingError, match="GLOBAL argparse.Namespace was not an allowed"
    ):
        ember.load(path)
    assert ember.load(path, weights_only=False)["args"].epochs == 3
    torch.save(torch.nn.Linear(2, 2), path)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL torch.nn.modules.linear.Linear"):
        ember.load(path)
    torch.save({"a": np.arange(3), "s": np.int64(4)}, path)  # numpy is data for ember
    out = ember.load(path)
    assert out["a"].tolist() == [0, 1, 2] and out["s"] == 4 and type(out["s"]) is np.int64


def test_torch_reads_what_ember_mmap_loaded(tmp_path):
    torch = _torch()
    torch.save({"w": torch.arange(6.0).view(2, 3)}, tmp_path / "t.pt")
    m = ember.load(tmp_path / "t.pt", mmap=True)
    ember.save(m, tmp_path / "e.pt")
    assert torch.load(tmp_path / "e.pt")["w"].tolist() == [[0, 1, 2], [3, 4, 5]]


def test_loading_runs_nothing_in_a_fresh_process(tmp_path):
    # The weights_only path imports neither torch nor anything a file names.
    torch = _torch()
    torch.save({"w": torch.ones(2), "n": np.ones(2)}, tmp_path / "t.pt")
    probe = (
        "import sys, ember\n"
        "ember.load(sys.argv[1])\n"
        "print(sorted(m for m in ('torch', 'argparse', 'subprocess') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path / "t.pt")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "torch" not in out.stdout
