"""ember.utils.swap_tensors, as torch.utils': two Tensor objects exchange their contents
(data, dtype, shape, requires_grad, grad, class and attributes) while each keeps its identity."""

import weakref

__all__ = ["swap_tensors"]


def swap_tensors(t1, t2):
    """swap_tensors(t1, t2) -> None

    Makes t1 hold t2's content and t2 hold t1's: data, requires_grad, .grad, Python class and
    attributes; every reference to t1 then sees the old t2. Both must be leaves (a tensor
    computed by autograd belongs to its graph) with no weak references."""
    if weakref.getweakrefs(t1):
        raise RuntimeError("Cannot swap t1 because it has weakref associated with it")
    if weakref.getweakrefs(t2):
        raise RuntimeError("Cannot swap t2 because it has weakref associated with it")
    for name, t in (("t1", t1), ("t2", t2)):
        if t.grad_fn is not None:
            raise RuntimeError(
                f"swap_tensors: expected {name} to be a leaf tensor; got one computed by "
                f"{type(t.grad_fn).__name__}"
            )
    data1, data2 = t1.data, t2.data
    req1, req2 = t1.requires_grad, t2.requires_grad
    grad1, grad2 = t1.grad, t2.grad
    t1.grad = t2.grad = None
    t1.requires_grad_(False)
    t2.requires_grad_(False)
    t1.data, t2.data = data2, data1
    t1.requires_grad_(req2)
    t2.requires_grad_(req1)
    t1.grad, t2.grad = grad2, grad1
    t1.__class__, t2.__class__ = type(t2), type(t1)
    d1, d2 = dict(t1.__dict__), dict(t2.__dict__)
    t1.__dict__.clear()
    t1.__dict__.update(d2)
    t2.__dict__.clear()
    t2.__dict__.update(d1)
