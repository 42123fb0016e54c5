"""Performance tooling a tutorial walks through, printing only what does not depend on timing:
torch.profiler.profile with record_function labels, record_shapes and profile_memory,
key_averages() grouped by input shape, the table's header, a schedule with on_trace_ready
counting the active steps of prof.step(), torch.autograd.profiler.profile / emit_nvtx-free
record_function as a decorator-style context, and torch.utils.benchmark.Timer with timeit,
blocked_autorange and Compare over labelled measurements."""

import torch
import torch.nn as nn
import torch.utils.benchmark as benchmark
from torch.profiler import ProfilerActivity, profile, record_function, schedule

model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 8))
x = torch.ones(16, 32)

with profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True) as prof:
    with record_function("model_inference"):
        out = model(x)
    with record_function("backward_pass"):
        out.sum().backward()
events = prof.key_averages()
names = {e.key for e in events}
print("labels", "model_inference" in names, "backward_pass" in names)
print("has_mm", any(k in names for k in ("aten::addmm", "aten::mm", "aten::linear")))
mi = next(e for e in events if e.key == "model_inference")
print("event_fields", mi.count, mi.cpu_time_total >= 0, hasattr(mi, "self_cpu_time_total"))
table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=5)
print("table", isinstance(table, str), "Name" in table, "CPU total" in table)
by_shape = prof.key_averages(group_by_input_shape=True)
print(
    "by_shape", len(by_shape) >= len(events) - 1, all(hasattr(e, "input_shapes") for e in by_shape)
)

ready = []
sched = schedule(wait=1, warmup=1, active=2, repeat=1)
with profile(
    activities=[ProfilerActivity.CPU],
    schedule=sched,
    on_trace_ready=lambda p: ready.append(p.step_num),
) as p2:
    for step in range(6):
        with record_function(f"step_{step}"):
            model(x)
        p2.step()
print("schedule", len(ready), ready)
print("schedule_actions", [str(sched(i)).split(".")[-1] for i in range(5)])

with torch.autograd.profiler.profile() as ap:
    with torch.autograd.profiler.record_function("legacy_block"):
        torch.mm(x, x.T)
print("autograd_profiler", "legacy_block" in {e.key for e in ap.key_averages()})

t = benchmark.Timer(
    stmt="m(x)", globals={"m": model, "x": x}, label="mlp", sub_label="bs16", description="fwd"
)
m = t.timeit(20)
print("timeit", type(m).__name__, m.number_per_run, m.mean > 0, len(m.times))
ba = t.blocked_autorange(min_run_time=0.05)
print("autorange", ba.median > 0, ba.iqr >= 0, ba.label, ba.sub_label, ba.description)
results = []
for bs in (4, 16):
    xb = torch.ones(bs, 32)
    for threads in (1,):
        results.append(
            benchmark.Timer(
                stmt="m(xb)",
                globals={"m": model, "xb": xb},
                label="mlp",
                sub_label=f"bs{bs}",
                description="fwd",
                num_threads=threads,
            ).timeit(5)
        )
cmp = benchmark.Compare(results)
text = str(cmp)
print("compare", "mlp" in text, "bs4" in text and "bs16" in text)
