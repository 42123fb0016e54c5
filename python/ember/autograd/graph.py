"""Python views of backward nodes: one class per node name, so type(t.grad_fn).__name__ reads
like PyTorch's ("MulBackward0")."""

import weakref

_classes = {}
_live = weakref.WeakValueDictionary()


class Node:
    """A node of the backward graph (`tensor.grad_fn`)."""

    __slots__ = ("_node", "__weakref__", "metadata")

    def __init__(self, node):
        self._node = node
        self.metadata = {}

    def name(self):
        return self._node.name()

    @property
    def next_functions(self):
        return tuple((wrap_node(n), nr) for n, nr in self._node.next_functions)

    @property
    def variable(self):
        return self._node.variable

    def register_hook(self, fn):
        return self._node._register_hook(fn)

    def register_prehook(self, fn):
        return self._node._register_prehook(fn)

    def __call__(self, *grads):
        return self._node(*grads)

    def __eq__(self, other):
        return isinstance(other, Node) and self._node._id == other._node._id

    def __hash__(self):
        return self._node._id

    def __repr__(self):
        return f"<{self.name()} object at {hex(id(self))}>"


def _class_for(name):
    cls = _classes.get(name)
    if cls is None:
        cls = type(name, (Node,), {"__slots__": ()})
        _classes[name] = cls
    return cls


def wrap_node(node):
    """The Python object for a C++ node (the same object while it is alive)."""
    if node is None:
        return None
    key = node._id
    obj = _live.get(key)
    if obj is None or obj._node._id != key:
        obj = _class_for(node.name())(node)
        _live[key] = obj
    return obj
