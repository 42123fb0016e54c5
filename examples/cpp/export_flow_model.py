"""Exports a model with control flow and buffer updates for examples/cpp/export_run.cpp.

    python examples/cpp/export_flow_model.py OUT_DIR

The model branches with ember.cond (one branch reads a Linear layer's parameters), slices by a
number read with .item(), masks with comparisons and where, and updates buffers (a train-mode
BatchNorm's running statistics and a counter). Writes OUT_DIR/model.ember and OUT_DIR/io.ckpt
(inputs, the outputs Python computes, and the buffers' values after that run), which
`export_run OUT_DIR/model.ember OUT_DIR/io.ckpt` checks. Exits 77 (CTest's "skipped") when
ember is not importable."""

import os
import sys

try:
    import ember
except ImportError:
    print("ember is not installed; skipping", file=sys.stderr)
    sys.exit(77)

nn = ember.nn


class Flow(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 6)
        self.bn = nn.BatchNorm1d(6)
        self.register_buffer("seen", ember.zeros(6))

    def forward(self, x, k):
        def big(t):
            return self.lin(t).relu()

        def small(t):
            return t * 2 - 1

        y = ember.cond(x.sum() > 0, big, small, (x,))
        n = k.item()
        ember._check_is_size(n)
        head = y[:n] * 3
        mask = (x > 0.2) & (x < 1.5)
        z = ember.where(mask, x, 0.0) + self.bn(x)
        self.seen.add_(mask.float().sum(0))
        return y, head, z, mask


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out_dir, exist_ok=True)
    ember.manual_seed(0)
    model = Flow().train()
    batch = ember.export.Dim("batch", min=2, max=1024)
    program = ember.export.export(
        model,
        (ember.randn(4, 6), ember.tensor(2)),
        dynamic_shapes={"x": {0: batch}, "k": None},
    )
    ember.export.save(program, os.path.join(out_dir, "model.ember"))
    # the run in C++ must take the other branch than the trace's example did, at another batch
    x = ember.rand(7, 6) * 2 - 1.5  # mixed signs, a negative sum
    k = ember.tensor(5)
    with ember.no_grad():
        expected = list(model(x, k))
    state = {name: b.clone() for name, b in model.named_buffers()}
    ember.serialization._save_ember_format(
        {"inputs": [x, k], "expected": expected, "expected_state": state},
        os.path.join(out_dir, "io.ckpt"),
    )
    print(f"exported {len(list(program.graph.nodes))} nodes to {out_dir}/model.ember")


if __name__ == "__main__":
    main()
