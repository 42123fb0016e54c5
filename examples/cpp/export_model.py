"""Exports a small CNN with ember.export for examples/cpp/export_run.cpp.

    python examples/cpp/export_model.py OUT_DIR

writes OUT_DIR/model.ember (the program, batch size dynamic) and OUT_DIR/io.ckpt (inputs at
another batch size and the outputs Python computes for them), which `export_run OUT_DIR/model.ember
OUT_DIR/io.ckpt` checks. Exits 77 (CTest's "skipped") when ember is not importable."""

import os
import sys

try:
    import ember
except ImportError:
    print("ember is not installed; skipping", file=sys.stderr)
    sys.exit(77)

nn = ember.nn
F = nn.functional


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(4 * 7 * 7, 32)
        self.norm = nn.LayerNorm(32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.bn(self.conv(x))))
        x = x.view(x.size(0), -1)
        x = self.norm(F.gelu(self.fc1(x)))
        return F.log_softmax(self.fc2(x), dim=1), x.mean(dim=1, keepdim=True)


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out_dir, exist_ok=True)
    ember.manual_seed(0)
    model = Net().eval()
    batch = ember.export.Dim("batch", min=1, max=1024)
    program = ember.export.export(
        model, (ember.randn(2, 1, 14, 14),), dynamic_shapes={"x": {0: batch}}
    )
    ember.export.save(program, os.path.join(out_dir, "model.ember"))
    x = ember.randn(5, 1, 14, 14)
    with ember.no_grad():
        expected = list(model(x))
    # ember::load in C++ reads ember's own checkpoint format (ember.save writes PyTorch's zip)
    ember.serialization._save_ember_format(
        {"inputs": [x], "expected": expected}, os.path.join(out_dir, "io.ckpt")
    )
    print(f"exported {len(list(program.graph.nodes))} nodes to {out_dir}/model.ember")


if __name__ == "__main__":
    main()
