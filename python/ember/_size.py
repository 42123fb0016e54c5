"""torch.Size: the type of a tensor's shape."""


class Size(tuple):
    """Size(iterable=(), /)

    A tensor's shape: a tuple of ints that prints like PyTorch's."""

    __module__ = "ember"  # its public home (and where pickles find it)

    def __repr__(self):
        return "torch.Size([" + ", ".join(str(s) for s in self) + "])"

    __str__ = __repr__

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, key):
        r = tuple.__getitem__(self, key)
        return Size(r) if isinstance(key, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))

    def __reduce__(self):
        return (Size, (tuple(self),))
