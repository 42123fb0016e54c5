"""Datasets on disk, as torchvision.datasets (Fashion-MNIST so far).

Deviation from torchvision: without a ``transform`` an image is a float32 tensor of shape
(1, 28, 28) scaled to [0, 1] (what ``transforms.ToTensor()`` would give), not a PIL image, since
ember does not depend on PIL. A ``transform`` receives that tensor.
"""

import os

from . import _C

__all__ = ["FashionMNIST"]


def _idx(root, name):
    return _C._serialize.read_idx(_C._serialize.find_idx_file(root, name))


class FashionMNIST:
    """Fashion-MNIST: 28x28 grayscale images of 10 kinds of clothing (60,000 train, 10,000 test).

    ``root`` holds the IDX files, gzipped or not (``train-images-idx3-ubyte(.gz)`` ...); the
    Debian package ``dataset-fashion-mnist`` installs them in the default root. ``download`` is
    not supported: ember never reaches the network.
    """

    classes = [
        "T-shirt/top",
        "Trouser",
        "Pullover",
        "Dress",
        "Coat",
        "Sandal",
        "Shirt",
        "Sneaker",
        "Bag",
        "Ankle boot",
    ]
    default_root = "/usr/share/datasets/fashion-mnist"

    def __init__(
        self, root=default_root, train=True, transform=None, target_transform=None, download=False
    ):
        self.root = os.fspath(root)
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        split = "train" if train else "t10k"
        self.data = _idx(self.root, f"{split}-images-idx3-ubyte")
        self.targets = _idx(self.root, f"{split}-labels-idx1-ubyte").long()
        if (
            self.data.dim() != 3
            or tuple(self.data.shape[1:]) != (28, 28)
            or self.targets.dim() != 1
            or self.targets.shape[0] != self.data.shape[0]
        ):
            raise RuntimeError(
                f"FashionMNIST: expected images (N, 28, 28) and N labels; got "
                f"{tuple(self.data.shape)} and {tuple(self.targets.shape)}"
            )

    @property
    def class_to_idx(self):
        return {c: i for i, c in enumerate(self.classes)}

    def __len__(self):
        return self.data.shape[0]

    def __getitem__(self, index):
        img = self.data[index].unsqueeze(0).float().div_(255.0)
        target = int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def tensors(self, normalize=True):
        """All of the split at once: images (N, 1, 28, 28) float32 in [0, 1] (raw uint8 when
        ``normalize=False``) and labels (N,) int64, for loops that index batches directly."""
        images = self.data.unsqueeze(1)
        return (images.float().div_(255.0) if normalize else images), self.targets

    def __repr__(self):
        split = "Train" if self.train else "Test"
        return (
            f"Dataset FashionMNIST\n    Number of datapoints: {len(self)}\n"
            f"    Root location: {self.root}\n    Split: {split}"
        )
