"""ember.distributed.tensor.experimental: local_map (run a function on the local pieces of
DTensors) and implicit_replication (plain tensors beside DTensors taken as Replicate), as
torch.distributed.tensor.experimental."""

import contextlib
import functools

from . import _dispatch
from ._api import DTensor

__all__ = ["implicit_replication", "local_map"]


@contextlib.contextmanager
def implicit_replication():
    """implicit_replication() -> ContextManager

    Inside, a plain tensor passed to an operator beside DTensors is taken as replicated on the
    DTensors' mesh instead of raising."""
    with _dispatch.mode_flag("implicit"):
        yield


def local_map(
    func=None,
    out_placements=None,
    in_placements=None,
    in_grad_placements=None,
    device_mesh=None,
    *,
    redistribute_inputs=False,
):
    """local_map(func=None, out_placements=None, in_placements=None, in_grad_placements=None,
        device_mesh=None, *, redistribute_inputs=False) -> Callable

    Wraps func, written for plain tensors, to take DTensors: each DTensor argument (checked
    against, or with redistribute_inputs moved to, in_placements) is passed as its local piece,
    and each tensor result is wrapped as a DTensor with out_placements (None: returned as it
    is). Differentiable; in_grad_placements sets the layout of each input's gradient."""
    if func is None:
        return functools.partial(
            local_map,
            out_placements=out_placements,
            in_placements=in_placements,
            in_grad_placements=in_grad_placements,
            device_mesh=device_mesh,
            redistribute_inputs=redistribute_inputs,
        )

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        mesh = device_mesh
        local_args = []
        seen_dtensor = False
        for i, a in enumerate(args):
            want = in_placements[i] if in_placements is not None else None
            if isinstance(a, DTensor):
                seen_dtensor = True
                mesh = mesh or a.device_mesh
                if want is not None and tuple(a.placements) != tuple(want):
                    if not redistribute_inputs:
                        raise ValueError(
                            f"local_map: argument {i} has placements {tuple(a.placements)} but "
                            f"in_placements asks for {tuple(want)}; pass redistribute_inputs=True "
                            "to redistribute it"
                        )
                    a = a.redistribute(mesh, want)
                grad = in_grad_placements[i] if in_grad_placements is not None else None
                local_args.append(a.to_local(grad_placements=grad))
            else:  # a plain tensor (or any other value) is its own local piece
                local_args.append(a)
        out = func(*local_args, **kwargs)
        if not seen_dtensor or out_placements is None:
            return out
        return _wrap_outputs(out, out_placements, mesh)

    return wrapped


def _wrap_outputs(out, placements, mesh):
    single = isinstance(out, DTensor) or hasattr(out, "dim")
    outs = (out,) if single else tuple(out)
    if not single:
        specs = tuple(placements)
    elif placements and isinstance(placements[0], (list, tuple)):  # one spec per output, of one
        specs = (placements[0],)
    else:
        specs = (placements,)
    wrapped = []
    for o, spec in zip(outs, specs):
        if spec is None or not hasattr(o, "dim"):
            wrapped.append(o)
        else:
            wrapped.append(DTensor.from_local(o, mesh, spec, run_check=False))
    return wrapped[0] if single else type(out)(wrapped)
