"""The nn.Module API that training scripts and libraries lean on: load_state_dict(strict=False)
and its result, missing/unexpected keys errors, size mismatch errors, assign=True, buffers
(persistent or not), register_module/add_module, Sequential indexing/slicing/append/insert/pop,
ModuleList/ModuleDict/ParameterList/ParameterDict operations, get_submodule/get_parameter,
requires_grad_, train/eval flags, dtype conversions, hooks with kwargs and always_call,
__setattr__ rules, parameters sharing, deepcopy, and state_dict prefix handling."""

import copy

import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.bn = nn.BatchNorm1d(3)
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))
        self.register_buffer("cache", torch.ones(2), persistent=False)

    def forward(self, x, scale=1.0):
        self.steps += 1
        return self.bn(self.fc(x)) * scale


def det_(model):
    with torch.no_grad():
        for k, p in enumerate(model.parameters()):
            p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float32) + k).view_as(p))
    return model


def err(fn):
    try:
        fn()
        return "ok"
    except Exception as e:  # noqa: BLE001
        msg = str(e).splitlines()
        return f"{type(e).__name__}: {msg[0][:90]}" + (
            f" | {msg[1].strip()[:120]}" if len(msg) > 1 else ""
        )


def main():
    enc = det_(Encoder())
    sd = enc.state_dict()
    print("keys", list(sd.keys()))
    print("sd_type", type(sd).__name__, sd["steps"].dtype, sd["fc.weight"].requires_grad)
    print(
        "metadata",
        hasattr(sd, "_metadata"),
        sorted(sd._metadata.keys()) if hasattr(sd, "_metadata") else None,
    )

    other = Encoder()
    res = other.load_state_dict(
        {k: v for k, v in sd.items() if k != "fc.bias"} | {"extra": torch.ones(1)}, strict=False
    )
    print("incompatible", res)
    print("missing", res.missing_keys, "unexpected", res.unexpected_keys)
    print("strict_missing", err(lambda: other.load_state_dict({"fc.weight": sd["fc.weight"]})))
    bad = dict(sd)
    bad["fc.weight"] = torch.zeros(5, 4)
    print("size_mismatch", err(lambda: other.load_state_dict(bad)))
    print("ok_result", other.load_state_dict(sd))
    fresh = Encoder()
    w = torch.full((3, 4), 2.0)
    fresh.load_state_dict({**sd, "fc.weight": w}, assign=True)
    print(
        "assign",
        fresh.fc.weight.data_ptr() == w.data_ptr(),
        type(fresh.fc.weight).__name__,
        fresh.fc.weight.requires_grad,
    )
    copy_load = Encoder()
    copy_load.load_state_dict({**sd, "fc.weight": w})
    print("copy_load", copy_load.fc.weight.data_ptr() == w.data_ptr())

    # attribute rules
    m = nn.Module()
    m.lin = nn.Linear(2, 2)
    m.w = nn.Parameter(torch.ones(1))
    m.register_module("act", nn.ReLU())
    m.add_module("drop", nn.Dropout(0.5))
    print("children", [n for n, _ in m.named_children()], [n for n, _ in m.named_parameters()])
    print("param_to_tensor", err(lambda: setattr(m, "w", torch.zeros(1))))
    m.w = None
    print("param_none", [n for n, _ in m.named_parameters()], m.w)
    print("bad_name", err(lambda: m.register_buffer("a.b", torch.ones(1))))
    print("dup_attr", err(lambda: m.register_parameter("lin", nn.Parameter(torch.ones(1)))))
    print("getattr_missing", err(lambda: m.nothing))
    del m.drop
    print("after_del", [n for n, _ in m.named_children()])

    # Sequential / containers
    seq = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    print("seq_slice", type(seq[1:]).__name__, len(seq[1:]), type(seq[-1]).__name__)
    seq.append(nn.Softmax(dim=-1))
    seq.insert(1, nn.Tanh())
    print("seq_after", [type(x).__name__ for x in seq], list(seq._modules.keys()))
    popped = seq.pop(1)
    print("seq_pop", type(popped).__name__, list(seq._modules.keys()))
    seq2 = seq + nn.Sequential(nn.Identity())
    print("seq_add", len(seq2))
    del seq[0]
    print("seq_del", list(seq._modules.keys()))
    ml = nn.ModuleList([nn.Linear(2, 2)])
    ml.extend([nn.ReLU(), nn.Tanh()])
    ml += [nn.Identity()]
    ml.insert(0, nn.Sigmoid())
    print("modulelist", [type(x).__name__ for x in ml], type(ml[1:3]).__name__)
    md = nn.ModuleDict({"b": nn.ReLU(), "a": nn.Tanh()})
    md.update({"c": nn.Identity()})
    print("moduledict", list(md.keys()), "a" in md, type(md.pop("b")).__name__, list(md))
    pl = nn.ParameterList([torch.ones(2), nn.Parameter(torch.zeros(1))])
    pl.append(torch.full((3,), 2.0))
    print(
        "paramlist",
        [type(p).__name__ for p in pl],
        [p.requires_grad for p in pl],
        len(list(pl.parameters())),
    )
    pd = nn.ParameterDict({"x": torch.ones(2)})
    pd["y"] = nn.Parameter(torch.zeros(3), requires_grad=False)
    print(
        "paramdict", list(pd.keys()), [type(v).__name__ for v in pd.values()], pd["y"].requires_grad
    )

    # navigation, flags and conversions
    net = nn.Sequential(det_(Encoder()), nn.ReLU(), nn.Linear(3, 1))
    print(
        "get_submodule",
        type(net.get_submodule("0.bn")).__name__,
        tuple(net.get_parameter("2.weight").shape),
    )
    print("get_buffer", net.get_buffer("0.steps").item())
    print("bad_submodule", err(lambda: net.get_submodule("0.nope")))
    net.eval()
    print("training", net.training, net[0].bn.training)
    net.train()
    net[0].requires_grad_(False)
    print("trainable", [n for n, p in net.named_parameters() if p.requires_grad])
    net.double()
    print("double", net[2].weight.dtype, net[0].steps.dtype, net[0].bn.running_mean.dtype)
    net.to(torch.float16)
    print("half", net[2].weight.dtype, net[0].steps.dtype)
    net.float()
    print("modules_count", len(list(net.modules())), len(list(net.named_modules(prefix="root"))))
    print("named_modules", [n for n, _ in net.named_modules(prefix="root")])

    # shared parameters and deepcopy
    a = nn.Linear(3, 3)
    tied = nn.Sequential(a, nn.ReLU(), a)
    print("shared_params", len(list(tied.parameters())), len(tied.state_dict()))
    print("shared_named", [n for n, _ in tied.named_parameters(remove_duplicate=False)])
    dup = copy.deepcopy(tied)
    print("deepcopy_tied", dup[0] is dup[2], dup[0].weight is not a.weight)

    # hooks with kwargs
    enc = det_(Encoder())
    calls = []

    def pre(mod, args, kwargs):
        calls.append(("pre", sorted(kwargs)))
        return args, {**kwargs, "scale": 2.0}

    def post(mod, args, kwargs, out):
        calls.append(("post", kwargs["scale"]))
        return out + 1

    h1 = enc.register_forward_pre_hook(pre, with_kwargs=True)
    h2 = enc.register_forward_hook(post, with_kwargs=True, always_call=True)
    x = torch.arange(8.0).view(2, 4) / 8
    out = enc(x, scale=1.0)
    print("hooks", calls, [round(v, 4) for v in out[0].tolist()])
    h1.remove()
    h2.remove()
    out2 = enc(x)
    print("hooks_removed", len(calls), [round(v, 4) for v in out2[0].tolist()], enc.steps.item())
    print(
        "bn_stats",
        [round(v, 4) for v in enc.bn.running_mean.tolist()],
        enc.bn.num_batches_tracked.item(),
    )

    # state_dict round trip of a wrapped model (the DataParallel "module." prefix)
    wrapped = nn.Sequential()
    wrapped.add_module("module", det_(Encoder()))
    keys = list(wrapped.state_dict())
    stripped = {k.removeprefix("module."): v for k, v in wrapped.state_dict().items()}
    plain = Encoder()
    print("prefix", keys[0], plain.load_state_dict(stripped))
    nn.modules.utils.consume_prefix_in_state_dict_if_present(sd2 := wrapped.state_dict(), "module.")
    print("consume_prefix", list(sd2)[:2])
    print("zero_grad", err(lambda: enc.zero_grad()))
    print("extra_state", err(lambda: nn.Linear(1, 1).get_extra_state()).split(":")[0])


if __name__ == "__main__":
    main()
