"""The read-only list and dict a Node keeps its arguments in (as torch.fx's), so that a change to
a node's inputs always goes through the setters that keep `users` right."""

__all__ = ["immutable_list", "immutable_dict"]


def _no_mutation(self, *args, **kwargs):
    raise NotImplementedError(
        f"'{type(self).__name__}' object does not support mutation. Create a new object and "
        "assign it to the node's args or kwargs instead."
    )


class immutable_list(list):  # noqa: N801 (torch's name)
    """immutable_list(iterable=())

    A list whose contents cannot change; hashable, so nodes' args can be used as keys.
    """

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _no_mutation
    append = extend = insert = pop = remove = reverse = sort = clear = _no_mutation

    def __hash__(self):
        return hash(tuple(self))

    def __reduce__(self):
        return (immutable_list, (tuple(self),))


class immutable_dict(dict):  # noqa: N801 (torch's name)
    """immutable_dict(mapping=())

    A dict whose contents cannot change; hashable.
    """

    __setitem__ = __delitem__ = __ior__ = _no_mutation
    clear = pop = popitem = setdefault = update = _no_mutation

    def __hash__(self):
        return hash(tuple(self.items()))

    def __reduce__(self):
        return (immutable_dict, (tuple(self.items()),))
