"""DTensor factories (torch.distributed.tensor.zeros, ones, empty, full, rand, randn): the
tensor is made piece by piece, each rank allocating only its own piece; the random ones draw the
whole tensor from the generator (the same on every rank, as torch requires a common seed) and
keep their piece, so full_tensor() equals the single-process draw."""

from ._api import DTensor, Replicate, Shard, _chunk_sizes, _lib, _normalize

__all__ = ["empty", "full", "ones", "rand", "randn", "zeros"]


def _size(size):
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = size[0]
    return tuple(int(s) for s in size)


def _layout(size, device_mesh, placements):
    from ..device_mesh import _default_mesh

    mesh = device_mesh or _default_mesh()
    placements = _normalize(placements or [Replicate()] * mesh.ndim, mesh.ndim, len(size))
    local = list(size)
    for md, p in enumerate(placements):
        if isinstance(p, Shard):
            local[p.dim] = _chunk_sizes(local[p.dim], mesh.size(md))[mesh.get_local_rank(md)]
        elif not isinstance(p, Replicate):
            raise ValueError(f"DTensor factories: expected Shard or Replicate placements; got {p}")
    return mesh, placements, tuple(local)


def _make(fill, size, dtype, requires_grad, device_mesh, placements):
    mesh, placements, local = _layout(size, device_mesh, placements)
    piece = fill(local, dtype)
    piece.requires_grad_(requires_grad)
    return DTensor._make(piece, mesh, placements, size)


def zeros(*size, requires_grad=False, dtype=None, layout=None, device_mesh=None, placements=None):
    """zeros(*size, requires_grad=False, dtype=None, layout=torch.strided, device_mesh=None,
        placements=None) -> DTensor

    A DTensor of zeros laid out over device_mesh with placements (default: Replicate)."""
    lib = _lib()
    fill = lambda shape, dt: lib.zeros(shape, dtype=dt)  # noqa: E731
    return _make(fill, _size(size), dtype, requires_grad, device_mesh, placements)


def ones(*size, dtype=None, layout=None, requires_grad=False, device_mesh=None, placements=None):
    """ones(*size, dtype=None, layout=torch.strided, requires_grad=False, device_mesh=None,
        placements=None) -> DTensor

    A DTensor of ones laid out over device_mesh with placements (default: Replicate)."""
    lib = _lib()
    fill = lambda shape, dt: lib.ones(shape, dtype=dt)  # noqa: E731
    return _make(fill, _size(size), dtype, requires_grad, device_mesh, placements)


def empty(*size, dtype=None, layout=None, requires_grad=False, device_mesh=None, placements=None):
    """empty(*size, dtype=None, layout=torch.strided, requires_grad=False, device_mesh=None,
        placements=None) -> DTensor

    An uninitialized DTensor laid out over device_mesh with placements (default: Replicate)."""
    lib = _lib()
    fill = lambda shape, dt: lib.empty(shape, dtype=dt)  # noqa: E731
    return _make(fill, _size(size), dtype, requires_grad, device_mesh, placements)


def full(
    size,
    fill_value,
    *,
    dtype=None,
    layout=None,
    requires_grad=False,
    device_mesh=None,
    placements=None,
):
    """full(size, fill_value, *, dtype=None, layout=torch.strided, requires_grad=False,
        device_mesh=None, placements=None) -> DTensor

    A DTensor filled with fill_value laid out over device_mesh with placements."""
    lib = _lib()
    fill = lambda shape, dt: lib.full(shape, fill_value, dtype=dt)  # noqa: E731
    return _make(fill, _size((size,)), dtype, requires_grad, device_mesh, placements)


def _random(draw, size, dtype, requires_grad, device_mesh, placements):
    from ._api import distribute_tensor

    size = _size(size)
    mesh, placements, _ = _layout(size, device_mesh, placements)
    whole = draw(size, dtype=dtype)
    out = distribute_tensor(whole, mesh, placements, src_data_rank=None)
    out.requires_grad_(requires_grad)
    return out


def rand(*size, requires_grad=False, dtype=None, layout=None, device_mesh=None, placements=None):
    """rand(*size, requires_grad=False, dtype=None, layout=torch.strided, device_mesh=None,
        placements=None) -> DTensor

    A DTensor of uniform [0, 1) samples (every rank must share the generator's seed)."""
    return _random(_lib().rand, size, dtype, requires_grad, device_mesh, placements)


def randn(*size, requires_grad=False, dtype=None, layout=None, device_mesh=None, placements=None):
    """randn(*size, requires_grad=False, dtype=None, layout=torch.strided, device_mesh=None,
        placements=None) -> DTensor

    A DTensor of standard normal samples (every rank must share the generator's seed)."""
    return _random(_lib().randn, size, dtype, requires_grad, device_mesh, placements)
