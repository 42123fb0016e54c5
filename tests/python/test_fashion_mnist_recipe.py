"""The main job's recipe: batch augmentation, the validation split, TTA and a stretched resume."""

import importlib.util
import os

import numpy as np
import pytest

import ember

DATA = "/usr/share/datasets/fashion-mnist"


def load_example():
    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "fashion_mnist.py")
    spec = importlib.util.spec_from_file_location("fashion_mnist_recipe", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shifted_views(image, pad, fill):
    """Every crop of `image` (H, W) padded by `pad` pixels of `fill`, and of its mirror image."""
    h, w = image.shape
    views = []
    for source in (image, image[:, ::-1]):
        padded = np.pad(source, pad, constant_values=fill)
        for dy in range(2 * pad + 1):
            for dx in range(2 * pad + 1):
                views.append(padded[dy : dy + h, dx : dx + w])
    return views


@pytest.mark.parametrize("backend", ["ember", "torch"])
def test_augment_crops_and_flips_each_image(backend):
    torch = ember if backend == "ember" else pytest.importorskip("torch")
    fm = load_example()
    x = torch.randn(64, 1, 6, 5)
    g = torch.Generator()
    g.manual_seed(3)
    out = fm.augment(torch, x, 2, True, g).numpy()
    assert out.shape == (64, 1, 6, 5)
    xs = x.numpy()
    kinds = set()
    for i in range(64):
        views = shifted_views(xs[i, 0], 2, np.float32(fm.BACKGROUND))
        hits = [k for k, v in enumerate(views) if np.array_equal(v, out[i, 0])]
        assert hits, f"image {i} is no crop of its padded self or mirror image"
        kinds.add(hits[0])
    assert len(kinds) > 10  # the offsets and flips vary between images
    # The same seed gives the same batch (a resumed run sees the same augmentation).
    g.manual_seed(3)
    assert np.array_equal(fm.augment(torch, x, 2, True, g).numpy(), out)


def test_augment_without_pad_only_flips():
    fm = load_example()
    x = ember.randn(32, 2, 4, 4)
    g = ember.Generator()
    g.manual_seed(0)
    out = fm.augment(ember, x, 0, True, g).numpy()
    xs = x.numpy()
    flipped = [np.array_equal(out[i], xs[i, :, :, ::-1]) for i in range(32)]
    kept = [np.array_equal(out[i], xs[i]) for i in range(32)]
    assert all(f or k for f, k in zip(flipped, kept))
    assert 0 < sum(flipped) < 32
    assert np.array_equal(fm.augment(ember, x, 0, False, g).numpy(), xs)


def test_evaluate_with_tta_averages_the_mirror_image():
    fm = load_example()

    class Left(ember.nn.Module):
        def forward(self, x):  # class 0 when the left half is brighter
            left, right = x[..., :2].sum((1, 2, 3)), x[..., 2:].sum((1, 2, 3))
            return ember.stack([left - right, 0.5 * (right - left) + 0.1], 1)

    x = ember.zeros(2, 1, 2, 4)
    x[0, ..., :2] = 1.0
    x[1, ..., 2:] = 1.0
    y = ember.tensor([0, 1])
    assert fm.evaluate(ember, Left(), x, y) == 1.0
    # An image's and its mirror image's scores sum to (0, 0.2): class 1 for both.
    assert fm.evaluate(ember, Left(), x, y, tta=True) == 0.5


@pytest.mark.skipif(not os.path.isdir(DATA), reason="dataset-fashion-mnist is not installed")
def test_val_split_holds_out_the_end_of_the_training_set():
    fm = load_example()
    full = fm.load_data(ember, fm.parse_args([]))
    split = fm.load_data(ember, fm.parse_args(["--val", "5000"]))
    assert len(split[0]) == 55000 and len(split[2]) == 5000
    assert ember.equal(split[2], full[0][-5000:]) and ember.equal(split[3], full[1][-5000:])
    assert ember.equal(split[0], full[0][:55000])
    limited = fm.load_data(ember, fm.parse_args(["--val", "5000", "--train-limit", "100"]))
    assert len(limited[0]) == 100 and len(limited[2]) == 5000


@pytest.mark.skipif(not os.path.isdir(DATA), reason="dataset-fashion-mnist is not installed")
@pytest.mark.parametrize("schedule", ["onecycle", "cosine"])
def test_resume_with_more_epochs_stretches_the_schedule(tmp_path, schedule):
    fm = load_example()
    common = ["--max-steps", "2", "--train-limit", "512", "--val", "256", "--batch-size", "64"]
    common += ["--out-dir", str(tmp_path), "--no-plot", "--schedule", schedule]
    first = fm.main(["--epochs", "2", *common])
    resumed = fm.main(["--epochs", "4", "--resume", *common])  # past the first schedule's end
    assert [h["epoch"] for h in resumed] == [1, 2, 3, 4]
    assert resumed[:2] == first
