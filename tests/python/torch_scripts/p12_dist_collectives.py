"""torch.distributed collectives in one process (world_size 1, gloo), as a distributed
tutorial's smoke test runs them before launching with torchrun: a tcp:// rendezvous on a free
localhost port, all_reduce with each ReduceOp, async work handles, all_gather_into_tensor,
reduce_scatter_tensor, gather/scatter, object collectives, a new_group, the TCPStore, and one
DDP step with find_unused_parameters compared with the plain model's step."""

import copy
import socket

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
print("pg", dist.get_rank(), dist.get_world_size(), dist.get_backend(), dist.is_gloo_available())

for op in ("SUM", "PRODUCT", "MIN", "MAX"):
    t = torch.tensor([1.0, -2.0, 3.5])
    dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
    print(f"all_reduce_{op}", t.tolist())

t = torch.arange(4, dtype=torch.float32)
work = dist.all_reduce(t, async_op=True)
work.wait()
print("async", work.is_completed(), t.tolist())

out = torch.empty(3)
dist.all_gather_into_tensor(out, torch.tensor([4.0, 5.0, 6.0]))
print("all_gather_into_tensor", out.tolist())
rs = torch.empty(2)
dist.reduce_scatter_tensor(rs, torch.tensor([1.0, 2.0]))
print("reduce_scatter_tensor", rs.tolist())
gl = [torch.empty(2, dtype=torch.int64)]
dist.gather(torch.tensor([7, 8]), gather_list=gl, dst=0)
print("gather", [g.tolist() for g in gl])
sc = torch.empty(2)
dist.scatter(sc, scatter_list=[torch.tensor([0.5, 1.5])], src=0)
print("scatter", sc.tolist())
r = torch.tensor([3.0])
dist.reduce(r, dst=0, op=dist.ReduceOp.MAX)
print("reduce", r.tolist())

objs = [None]
dist.all_gather_object(objs, {"rank": dist.get_rank(), "acc": 0.75})
print("all_gather_object", objs)
lst = [{"lr": 0.1}, "cfg", 3] if dist.get_rank() == 0 else [None, None, None]
dist.broadcast_object_list(lst, src=0)
print("broadcast_object_list", lst)

g = dist.new_group(ranks=[0])
t = torch.ones(2)
dist.all_reduce(t, group=g)
print("new_group", dist.get_world_size(g), dist.get_rank(g), t.tolist())

store = dist.TCPStore("127.0.0.1", 0, 1, is_master=True, wait_for_workers=False)
store.set("epoch", "3")
print("store", store.get("epoch"), store.add("step", 5), store.add("step", 2))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 3)
        self.unused = nn.Linear(4, 3)

    def forward(self, x):
        return self.a(x)


torch.manual_seed(0)
base = Net()
with torch.no_grad():
    for k, p in enumerate(base.parameters()):
        p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape) * (k + 1))
plain = copy.deepcopy(base)
ddp = DDP(base, find_unused_parameters=True)
x = torch.linspace(-1, 1, 20).reshape(5, 4)
y = torch.linspace(0, 1, 15).reshape(5, 3)
for m in (ddp, plain):
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    loss = ((m(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    print("step_loss", round(loss.item(), 6))
print(
    "ddp_same",
    all(torch.allclose(p, q) for p, q in zip(ddp.module.parameters(), plain.parameters())),
)
print("unused_grad", ddp.module.unused.weight.grad)
print("ddp_weight", [round(v, 5) for v in ddp.module.a.weight.flatten().tolist()[:6]])
dist.destroy_process_group()
print("done", dist.is_initialized())
