"""Exports a model of elementwise math, *_like factories, clamp and max/min over a dim for
examples/cpp/export_run.cpp.

    python examples/cpp/export_math_model.py OUT_DIR

The ops torch's documentation models use beyond layers: ``x.sin() + x.cos()``,
``torch.zeros_like``/``ones_like``/``full_like``, ``clamp``, ``x.max(1)`` (values and
indices), argmax, std, cumsum, tril. Writes OUT_DIR/model.ember (batch size dynamic) and
OUT_DIR/io.ckpt (inputs at another batch size and the outputs Python computes), which
`export_run OUT_DIR/model.ember OUT_DIR/io.ckpt` checks. Exits 77 (CTest's "skipped") when ember
is not importable."""

import os
import sys

try:
    import ember
except ImportError:
    print("ember is not installed; skipping", file=sys.stderr)
    sys.exit(77)

nn = ember.nn


class MathNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 6)

    def forward(self, x):
        h = self.lin(x)
        wave = h.sin() + ember.cos(h) * ember.ones_like(h) + ember.zeros_like(h)
        bounded = h.clamp(-0.5, 0.5) + ember.full_like(h, 0.25).exp2()
        values, indices = wave.max(1)
        lo = ember.min(bounded, dim=1, keepdim=True)[0]
        spread = h.std(1, keepdim=True) + h.abs().log1p().tanh()
        return (
            wave,
            bounded.floor() + bounded.ceil() * h.sigmoid().square(),
            values,
            indices,
            lo,
            h.argmax(1),
            spread.cumsum(1).tril(),
            ember.maximum(h, lo).reciprocal().clamp(max=4.0),
        )


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out_dir, exist_ok=True)
    ember.manual_seed(0)
    model = MathNet().eval()
    batch = ember.export.Dim("batch", min=2, max=1024)
    program = ember.export.export(model, (ember.randn(4, 6),), dynamic_shapes={"x": {0: batch}})
    ember.export.save(program, os.path.join(out_dir, "model.ember"))
    x = ember.randn(9, 6)
    with ember.no_grad():
        expected = list(model(x))
    ember.serialization._save_ember_format(
        {"inputs": [x], "expected": expected}, os.path.join(out_dir, "io.ckpt")
    )
    print(f"exported {len(list(program.graph.nodes))} nodes to {out_dir}/model.ember")


if __name__ == "__main__":
    main()
