"""A DistributedDataParallel training script run as a single process (world_size 1, the gloo
backend on the CPU), as DDP tutorials are first tried: init_process_group with a file:// rendezvous,
DistributedSampler with set_epoch, DDP-wrapped model with no_sync gradient accumulation,
all_reduce / all_gather / broadcast of metrics, rank-0-only checkpointing of model.module's
state_dict, barrier and destroy_process_group; plus a DistributedSampler given num_replicas and
rank explicitly (no process group) to show each rank's shard."""

import io
import os
import tempfile

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

for rank in range(3):
    s = DistributedSampler(list(range(10)), num_replicas=3, rank=rank, shuffle=False)
    print(f"shard{rank}", list(s), len(s))
s = DistributedSampler(list(range(10)), num_replicas=3, rank=0, shuffle=False, drop_last=True)
print("shard_drop_last", list(s), len(s))

store = os.path.join(tempfile.mkdtemp(), "ddp_store")  # no fixed port: tests run side by side
dist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)
print("pg", dist.is_initialized(), dist.get_rank(), dist.get_world_size(), dist.get_backend())

n = 48
x = torch.linspace(-1, 1, n * 4).view(n, 4)
y = (x.sum(1) > 0).long()
ds = TensorDataset(x, y)
sampler = DistributedSampler(ds, shuffle=True, seed=3)
loader = DataLoader(ds, batch_size=8, sampler=sampler)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
with torch.no_grad():
    for k, p in enumerate(model.parameters()):
        p.copy_(torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 0.43 + k).view_as(p) * 0.4)
ddp = DDP(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.2, momentum=0.9)
accum = 2
hist = []
for epoch in range(3):
    sampler.set_epoch(epoch)
    total, count = torch.zeros(1), torch.zeros(1)
    for i, (xb, yb) in enumerate(loader):
        sync = (i + 1) % accum == 0
        ctx = ddp.no_sync() if not sync else torch.enable_grad()
        with ctx:
            loss = F.cross_entropy(ddp(xb), yb) / accum
            loss.backward()
        if sync:
            opt.step()
            opt.zero_grad()
        total += loss.detach() * accum * len(xb)
        count += len(xb)
    dist.all_reduce(total)
    dist.all_reduce(count)
    hist.append((total / count).item())
print("epochs", len(hist), hist[-1] < hist[0], int(count.item()))
print("ddp", type(ddp.module).__name__, ddp.module is model, sorted(ddp.state_dict())[0])
gathered = [torch.zeros(2) for _ in range(dist.get_world_size())]
dist.all_gather(gathered, torch.tensor([1.5, 2.5]))
b = torch.tensor([7.0])
dist.broadcast(b, src=0)
print("collectives", [g.tolist() for g in gathered], b.item())
if dist.get_rank() == 0:
    buf = io.BytesIO()
    torch.save(ddp.module.state_dict(), buf)
    buf.seek(0)
    fresh = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
    print(
        "ckpt",
        str(fresh.load_state_dict(torch.load(buf))),
        torch.equal(fresh[0].weight, model[0].weight),
    )
dist.barrier()
with torch.no_grad():
    acc = (model(x).argmax(1) == y).float().mean().item()
print("acc", round(acc, 4) > 0.5)
dist.destroy_process_group()
print("destroyed", dist.is_initialized())
