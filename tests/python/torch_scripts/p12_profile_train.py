"""Profiling a training step as the profiler recipe does, printing only what does not depend on
timing or on how an op is implemented inside: record_function labels around forward, backward
and the optimizer step, per-op call counts of the user-visible ops over several steps, the
optimizer and autograd-engine rows, events() with their names, a schedule (wait/warmup/active)
with on_trace_ready, and the Chrome trace exported to a file and read back as JSON."""

import json
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function, schedule

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 12).reshape(3, 4)
y = torch.zeros(3, 2)


def step():
    with record_function("forward"):
        loss = F.mse_loss(model(x), y)
    with record_function("backward"):
        opt.zero_grad()
        loss.backward()
    with record_function("opt_step"):
        opt.step()
    return loss


with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
    for _ in range(3):
        step()
rows = {e.key: e for e in prof.key_averages()}
for key in (
    "forward",
    "backward",
    "opt_step",
    "aten::linear",
    "aten::addmm",
    "aten::relu",
    "aten::mse_loss",
):
    print("count", key, rows[key].count)
print("optimizer_rows", sorted(k for k in rows if k.startswith("Optimizer.")))
print("engine_addmm", "autograd::engine::evaluate_function: AddmmBackward0" in rows)
print("accumulate_grad", rows["torch::autograd::AccumulateGrad"].count)
print(
    "addmm_shapes",
    sorted(
        {
            str(e.input_shapes)
            for e in prof.key_averages(group_by_input_shape=True)
            if e.key == "aten::addmm"
        }
    ),
)
names = [e.name for e in prof.events()]
print("events_order", [n for n in names if n in ("forward", "backward", "opt_step")][:6])

done = []
sched = schedule(wait=1, warmup=1, active=2, repeat=1)
with profile(
    activities=[ProfilerActivity.CPU],
    schedule=sched,
    on_trace_ready=lambda p: done.append(p.step_num),
) as p2:
    for _ in range(6):
        step()
        p2.step()
print("schedule_ready", done)

path = os.path.join(tempfile.mkdtemp(), "trace.json")
with profile(activities=[ProfilerActivity.CPU]) as p3:
    with record_function("traced_step"):
        step()
p3.export_chrome_trace(path)
with open(path) as f:
    trace = json.load(f)
evs = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
print("trace_has_label", any(e["name"] == "traced_step" for e in evs))
print("trace_fields", all({"name", "ts", "dur"} <= set(e) for e in evs))
