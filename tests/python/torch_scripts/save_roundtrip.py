# ruff: noqa: E501
"""Checkpoints as programs round-trip them: torch.save / torch.load through files and BytesIO,
views and tied weights that come back sharing one storage, Parameters and requires_grad kept,
every common dtype, numpy data inside a checkpoint, weights_only loading with its allow-list
(add_safe_globals, safe_globals), map_location, mmap loading, and a model rebuilt from it."""

import argparse
import collections
import io
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn


class TiedLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(6, 4)
        self.out = nn.Linear(4, 6, bias=False)
        self.out.weight = self.emb.weight

    def forward(self, ids):
        return self.out(self.emb(ids))


def det_(module):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float32) + i).view_as(p))


def roundtrip(obj, **kw):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, **kw)


def main():
    base = torch.arange(12, dtype=torch.float32)
    views = {
        "base": base,
        "row": base.view(3, 4)[1],
        "col": base.view(3, 4)[:, 2],
        "t": base.view(3, 4).t(),
    }
    back = roundtrip(views)
    print(
        f"views_shared {back['row'].untyped_storage().data_ptr() == back['base'].untyped_storage().data_ptr()}"
    )
    print(
        f"views_geometry {back['col'].stride()} {back['col'].storage_offset()} {back['t'].stride()} {back['t'].is_contiguous()}"
    )
    back["base"][6] = -1.0
    print(f"views_write_through {back['row'].tolist()} {back['col'].tolist()}")

    model = TiedLM()
    det_(model)
    sd = roundtrip(model.state_dict())
    print(
        f"tied_keys {list(sd)} shared {sd['emb.weight'].data_ptr() == sd['out.weight'].data_ptr()}"
    )
    whole = roundtrip(
        {
            "p": model.emb.weight,
            "plain": torch.ones(2, requires_grad=True),
            "nograd": torch.ones(2),
        },
        weights_only=True,
    )
    print(
        f"param_kept {type(whole['p']).__name__} {whole['p'].requires_grad} {whole['plain'].requires_grad} {whole['nograd'].requires_grad} {type(whole['plain']).__name__}"
    )

    dtypes = [
        torch.float16,
        torch.bfloat16,
        torch.float64,
        torch.int8,
        torch.uint8,
        torch.int16,
        torch.int32,
        torch.int64,
        torch.bool,
        torch.complex64,
    ]
    tensors = {str(d).split(".")[1]: (torch.arange(5) % 3).to(d) for d in dtypes}
    back = roundtrip(tensors, weights_only=True)
    print(
        f"dtypes {[(k, str(v.dtype).split('.')[1], v.tolist() == tensors[k].tolist()) for k, v in back.items()][:5]}"
    )
    print(
        f"dtypes_rest {all(torch.equal(v, tensors[k]) and v.dtype == tensors[k].dtype for k, v in back.items())}"
    )
    od = roundtrip(
        collections.OrderedDict(a=1, b=(2.5, "x", None), c=[torch.zeros(1)]), weights_only=True
    )
    print(f"containers {type(od).__name__} {list(od)} {od['b']} {type(od['c'][0]).__name__}")

    data = {
        "arr": np.arange(6, dtype=np.float32).reshape(2, 3),
        "scalar": np.float64(0.25),
        "dt": np.dtype("int16"),
    }
    back = roundtrip(data, weights_only=False)
    print(
        f"numpy_data {type(back['arr']).__name__} {back['arr'].dtype} {back['arr'].tolist()} {type(back['scalar']).__name__} {back['dt']}"
    )

    ns = argparse.Namespace(lr=0.1, epochs=3)
    buf = io.BytesIO()
    torch.save({"args": ns, "w": torch.ones(1)}, buf)
    buf.seek(0)
    try:
        torch.load(buf, weights_only=True)
    except Exception as e:
        msg = str(e)
        print(
            f"weights_only_error {type(e).__name__} {'argparse.Namespace' in msg} {'add_safe_globals' in msg}"
        )
    buf.seek(0)
    print(f"unsafe_load {torch.load(buf, weights_only=False)['args'].lr}")
    buf.seek(0)
    with torch.serialization.safe_globals([argparse.Namespace]):
        print(f"safe_globals {torch.load(buf, weights_only=True)['args'].epochs}")
    torch.serialization.add_safe_globals([argparse.Namespace])
    buf.seek(0)
    print(
        f"add_safe_globals {torch.load(buf)['args'].lr} listed {argparse.Namespace in torch.serialization.get_safe_globals()}"
    )
    torch.serialization.clear_safe_globals()

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "model.pt")
        torch.save({"model": model.state_dict(), "step": 7}, path)
        ck = torch.load(path, map_location="cpu", weights_only=True)
        ck2 = torch.load(path, map_location=lambda storage, loc: storage, weights_only=True)
        mm = torch.load(path, mmap=True, weights_only=True)
        fresh = TiedLM()
        res = fresh.load_state_dict(ck["model"])
        ids = torch.tensor([[0, 3, 5]])
        print(f"file_load {ck['step']} {res} {torch.equal(fresh(ids), model(ids))}")
        print(
            f"map_fn {torch.equal(ck2['model']['emb.weight'], ck['model']['emb.weight'])} mmap {torch.equal(mm['model']['out.weight'], model.out.weight)}"
        )
        print(f"fresh_tied {fresh.out.weight is fresh.emb.weight}")
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        model(ids).sum().backward()
        opt.step()
        torch.save(opt.state_dict(), path)
        osd = torch.load(path, weights_only=True)
        print(
            f"opt_state {list(osd['state'])} {sorted(osd['state'][0])} step {osd['state'][0]['step'].item()}"
        )
    big = torch.arange(1000.0)
    small = big[:3]
    buf = io.BytesIO()
    torch.save(small, buf)
    size_view = buf.tell()
    buf = io.BytesIO()
    torch.save(small.clone(), buf)
    print(f"view_saves_whole_storage {size_view > buf.tell() + 3000}")


if __name__ == "__main__":
    main()
