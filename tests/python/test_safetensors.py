"""ember.safetensors against PyPI's safetensors package: files each writes, the other reads;
zero-copy memory-mapped loading; malformed headers refused."""

import json
import struct

import numpy as np
import pytest

import ember
from ember.safetensors import SafetensorError, load, load_file, safe_open, save, save_file

DTYPES = [
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
]


def _np(t):
    return t.float().numpy() if t.dtype == ember.bfloat16 else t.numpy()


def _tensors():
    g = ember.Generator().manual_seed(0) if hasattr(ember, "Generator") else None
    out = {}
    for i, name in enumerate(DTYPES):
        t = ember.randn(3, i + 1, generator=g) * 10
        out[name] = t > 0 if name == "bool" else t.to(getattr(ember, name))
    out["scalar"] = ember.tensor(1.5)
    out["empty"] = ember.zeros(0, 4)
    return out


def test_round_trip_and_metadata(tmp_path):
    tensors = _tensors()
    save_file(tensors, tmp_path / "m.safetensors", metadata={"format": "pt", "note": "é"})
    loaded = load_file(tmp_path / "m.safetensors")
    assert set(loaded) == set(tensors)
    for k, t in tensors.items():
        assert loaded[k].dtype == t.dtype and loaded[k].shape == t.shape
        assert np.array_equal(_np(loaded[k]), _np(t)), k
    with safe_open(tmp_path / "m.safetensors", framework="pt") as f:
        assert f.keys() == sorted(tensors)
        assert f.metadata() == {"format": "pt", "note": "é"}
        s = f.get_slice("float32")
        assert s.get_shape() == [3, 9] and s.get_dtype() == "F32"
        assert np.array_equal(_np(s[1:, ::2]), _np(tensors["float32"][1:, ::2]))
    again = load(save(tensors))
    assert all(np.array_equal(_np(again[k]), _np(t)) for k, t in tensors.items())


def test_loading_is_zero_copy_and_private(tmp_path):
    path = tmp_path / "z.safetensors"
    save_file({"a": ember.arange(1000.0), "b": ember.ones(10, dtype=ember.int64)}, path)
    raw = path.read_bytes()
    first = load_file(path)
    second = load_file(path)
    assert first["a"].data_ptr() != second["a"].data_ptr()
    assert first["a"].data_ptr() % 8 == 0 and first["b"].data_ptr() % 8 == 0
    first["a"].add_(1)  # copy-on-write: neither the file nor another load sees it
    assert path.read_bytes() == raw and second["a"][0].item() == 0.0
    with safe_open(path, "pt") as f:
        a, b = f.get_tensor("a"), f.get_tensor("a")
        a[0] = 5.0
        assert b[0].item() == 5.0  # two views of one mapping


def test_refuses_non_contiguous_and_shared_tensors(tmp_path):
    base = ember.arange(12.0).view(3, 4)
    with pytest.raises(ValueError, match="non contiguous"):
        save_file({"t": base.t()}, tmp_path / "x.safetensors")
    with pytest.raises(RuntimeError, match="share memory"):
        save_file({"a": base, "b": base[1]}, tmp_path / "x.safetensors")
    assert not list(tmp_path.iterdir())


def _file(header, data=b"", pad=True):
    text = json.dumps(header).encode()
    if pad:
        text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def test_malformed_files_are_refused(tmp_path):
    f32 = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}
    cases = {
        "HeaderTooSmall": b"\x01\x02",
        "HeaderTooLarge": struct.pack("<Q", 1 << 40) + b"{}",
        "InvalidHeaderLength": struct.pack("<Q", 1000) + b"{}",
        "InvalidHeaderStart": struct.pack("<Q", 2) + b"[]",
        "InvalidHeaderDeserialization": struct.pack("<Q", 4) + b"{x:1",
        "MetadataIncompleteBuffer": _file({"a": f32}, b"\0" * 4),
        "InvalidOffset": _file({"a": f32, "b": dict(f32, data_offsets=[4, 12])}, b"\0" * 12),
        "unknown dtype": _file({"a": dict(f32, dtype="F33")}, b"\0" * 8),
        "TensorInvalidInfo": _file({"a": dict(f32, shape=[3])}, b"\0" * 8),
        "bad shape": _file({"a": dict(f32, shape=[-2])}, b"\0" * 8),
        "metadata": _file({"__metadata__": {"k": 1}, "a": f32}, b"\0" * 8),
        "hole": _file({"a": dict(f32, data_offsets=[8, 16])}, b"\0" * 16),
    }
    for what, data in cases.items():
        if what == "hole":
            what = "InvalidOffset"
        path = tmp_path / "bad.safetensors"
        path.write_bytes(data)
        with pytest.raises(SafetensorError, match=what):
            load_file(path)
        with pytest.raises(SafetensorError, match=what):
            load(data)
    ok = _file({"a": f32}, struct.pack("<2f", 1, 2))
    assert load(ok)["a"].tolist() == [1.0, 2.0]


# ---- PyPI's safetensors ----


def test_files_written_by_the_safetensors_package():
    st_np = pytest.importorskip("safetensors.numpy")
    arrays = {
        "w": np.arange(12, dtype=np.float32).reshape(3, 4),
        "i": np.array([1, -2, 3], dtype=np.int64),
        "h": np.ones(5, dtype=np.float16),
        "m": np.array([[True, False]]),
        "e": np.zeros((0, 3), dtype=np.float64),
    }
    data = st_np.save(arrays, metadata={"who": "safetensors"})
    out = load(data)
    for k, a in arrays.items():
        assert out[k].numpy().dtype == a.dtype and np.array_equal(out[k].numpy(), a), k
    odd = st_np.save({"u16": np.arange(3, dtype=np.uint16), "f": np.ones(2, dtype=np.float32)})
    with pytest.raises(SafetensorError, match="u16"):
        load(odd)


def test_the_safetensors_package_reads_ember_files(tmp_path):
    st_np = pytest.importorskip("safetensors.numpy")
    import safetensors

    tensors = {k: v for k, v in _tensors().items() if k != "bfloat16"}
    path = tmp_path / "e.safetensors"
    save_file(tensors, path, metadata={"a": "b"})
    out = st_np.load_file(str(path))
    for k, t in tensors.items():
        assert np.array_equal(out[k], t.numpy()), k
    with safetensors.safe_open(str(path), framework="numpy") as f:
        assert f.metadata() == {"a": "b"}
    assert st_np.load(save(tensors)).keys() == tensors.keys()


def test_bfloat16_with_torch():
    torch = pytest.importorskip("torch")
    st_torch = pytest.importorskip("safetensors.torch")
    t = torch.randn(4, 3).to(torch.bfloat16)
    e = load(st_torch.save({"t": t}))["t"]
    assert e.dtype == ember.bfloat16
    assert np.array_equal(_np(e), t.float().numpy())
    back = st_torch.load(save({"t": e}))["t"]
    assert torch.equal(back, t)
