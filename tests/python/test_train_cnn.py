"""The main job's CNN trains on real Fashion-MNIST data, and its script checkpoints and resumes."""

import importlib.util
import os

import pytest

import ember

DATA = "/usr/share/datasets/fashion-mnist"
pytestmark = pytest.mark.skipif(
    not os.path.isdir(DATA), reason="Debian package dataset-fashion-mnist is not installed"
)


def load_example():
    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "fashion_mnist.py")
    spec = importlib.util.spec_from_file_location("fashion_mnist_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cnn_loss_falls_and_it_learns():
    fm = load_example()
    ember.manual_seed(0)
    args = fm.parse_args(["--train-limit", "12800"])
    train_x, train_y, test_x, test_y = fm.load_data(ember, args)
    model = fm.build_model(ember.nn)
    optimizer = ember.optim.Adam(model.parameters(), lr=2e-3)
    F = ember.nn.functional
    losses = []
    for step in range(200):
        i = (step * 64) % len(train_x)
        xb, yb = train_x[i : i + 64], train_y[i : i + 64]
        optimizer.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
        losses.append(float(loss))
    first, last = sum(losses[:20]) / 20, sum(losses[-20:]) / 20
    assert last < 0.6 * first, (first, last)
    accuracy = fm.evaluate(ember, model, test_x[:2000], test_y[:2000])
    assert accuracy > 0.75


def test_script_checkpoints_and_resumes(tmp_path):
    fm = load_example()
    common = [
        "--max-steps",
        "3",
        "--train-limit",
        "1024",
        "--batch-size",
        "64",
        "--out-dir",
        str(tmp_path),
    ]
    first = fm.main(["--epochs", "1", "--no-plot", *common])
    assert [h["epoch"] for h in first] == [1]
    assert (tmp_path / "checkpoint_ember.pt").exists()
    resumed = fm.main(["--epochs", "2", "--resume", *common])
    assert [h["epoch"] for h in resumed] == [1, 2]
    assert resumed[0] == first[0]
    assert (tmp_path / "curves_ember.png").stat().st_size > 1000
