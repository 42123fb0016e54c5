"""TorchVersion: the type of ember.__version__, a str that compares with version strings and
tuples by release number (torch.torch_version.TorchVersion), so `torch.__version__ >= "2.0"`
and `torch.__version__ >= (2, 0)` work in programs run under `import ember as torch`."""

__all__ = ["TorchVersion"]


def _release(v):
    """The numeric release of a version (a str, a tuple of ints, or a TorchVersion)."""
    if isinstance(v, (tuple, list)):
        return tuple(int(x) for x in v)
    if not isinstance(v, str):
        raise TypeError(f"TorchVersion: cannot compare with {type(v).__name__}")
    numbers = []
    for part in v.split("+")[0].split("."):
        digits = ""
        for ch in part:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        numbers.append(int(digits))
        if len(digits) != len(part):  # a pre-release tag such as 0a0 ends the release
            break
    return tuple(numbers)


def _cmp(a, b):
    x, y = _release(a), _release(b)
    width = max(len(x), len(y))
    x, y = x + (0,) * (width - len(x)), y + (0,) * (width - len(y))
    return (x > y) - (x < y)


class TorchVersion(str):
    """TorchVersion(version)

    A version string that orders by release number against strings and tuples (== stays a
    string's, as torch's does)."""

    def __lt__(self, other):
        return _cmp(self, other) < 0

    def __le__(self, other):
        return _cmp(self, other) <= 0

    def __gt__(self, other):
        return _cmp(self, other) > 0

    def __ge__(self, other):
        return _cmp(self, other) >= 0
