"""Dispatch key sets for Python kernels registered ``with_keyset=True`` (ember.library): the keys
of ember's dispatcher under torch's names (``AutogradCPU`` is ember's Autograd key reached by CPU
tensors), so a kernel can test them and hand them to ``OpOverload.redispatch``."""

import enum


class DispatchKey(enum.Enum):
    """The dispatch keys a call can reach in ember, lowest priority first (torch's names)."""

    CPU = 0
    CUDA = 1
    Meta = 2
    PrivateUse1 = 3
    AutogradCPU = 4
    AutogradCUDA = 5
    AutogradMeta = 6
    AutogradPrivateUse1 = 7


_BACKENDS = ("CPU", "CUDA", "Meta", "PrivateUse1")


class DispatchKeySet:
    """DispatchKeySet(*keys)

    An immutable set of DispatchKey, as torch._C.DispatchKeySet: ``has``, ``add``, ``remove``,
    ``highestPriorityTypeId`` and the set operators ``&``, ``|``, ``-``."""

    __slots__ = ("_keys",)

    def __init__(self, *keys):
        self._keys = frozenset(keys)

    def has(self, key):
        return key in self._keys

    def add(self, key):
        return DispatchKeySet(*self._keys, key)

    def remove(self, key):
        return DispatchKeySet(*(k for k in self._keys if k != key))

    def highestPriorityTypeId(self):
        """The key a call with this set reaches first (DispatchKey)."""
        if not self._keys:
            raise RuntimeError("DispatchKeySet.highestPriorityTypeId: the set is empty")
        return max(self._keys, key=lambda k: k.value)

    def __and__(self, other):
        return DispatchKeySet(*(self._keys & other._keys))

    def __or__(self, other):
        return DispatchKeySet(*(self._keys | other._keys))

    def __sub__(self, other):
        return DispatchKeySet(*(self._keys - other._keys))

    def __eq__(self, other):
        return isinstance(other, DispatchKeySet) and self._keys == other._keys

    def __hash__(self):
        return hash(self._keys)

    def __repr__(self):
        names = ", ".join(k.name for k in sorted(self._keys, key=lambda k: k.value))
        return f"DispatchKeySet({names})"


# the backends: what remains of a set once the Autograd layer has run
after_autograd_keyset = DispatchKeySet(*(DispatchKey[b] for b in _BACKENDS))


def keyset_for(key, backend):
    """The keys a call on `backend` ("CPU", ...) carries when it reaches ember's `key`: the
    backend, plus its Autograd key at the Autograd layer (torch's set below and at the key)."""
    keys = [DispatchKey[backend]]
    if key == "Autograd":
        keys.append(DispatchKey["Autograd" + backend])
    return DispatchKeySet(*keys)


def ember_key(keyset):
    """ember's dispatch key name for the highest key of `keyset` ("CPU", "Autograd", ...)."""
    name = keyset.highestPriorityTypeId().name
    return "Autograd" if name.startswith("Autograd") else name
