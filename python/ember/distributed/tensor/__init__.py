"""ember.distributed.tensor: DTensor, a tensor laid out over a DeviceMesh (the basics of
torch.distributed.tensor).

Each mesh dimension has a placement: Shard(d) splits tensor dim d over the ranks of that mesh
dimension as torch.chunk does (the last chunks may be smaller or empty), Replicate() keeps a full
copy on each, Partial() holds addends whose sum is the value. A DTensor keeps this rank's local
piece with its mesh and placements; redistribute() moves between layouts with collectives
(Shard->Replicate all_gather, Partial->Replicate all_reduce, Partial->Shard reduce_scatter,
Shard(i)->Shard(j) all_to_all, Replicate->Shard a local slice). Operators on DTensors and their
autograd are not there yet: use to_local()/from_local() around local computation.
"""

from .. import distributed_c10d as c10d

__all__ = [
    "DTensor",
    "Partial",
    "Placement",
    "Replicate",
    "Shard",
    "distribute_tensor",
]


class Placement:
    """The layout of a tensor along one mesh dimension."""

    def is_shard(self, dim=None):
        return isinstance(self, Shard) and (dim is None or self.dim == dim)

    def is_replicate(self):
        return isinstance(self, Replicate)

    def is_partial(self):
        return isinstance(self, Partial)


class Shard(Placement):
    """Shard(dim)

    Tensor dim `dim` split over the mesh dimension's ranks in torch.chunk's pieces."""

    def __init__(self, dim):
        self.dim = dim

    def __eq__(self, other):
        return isinstance(other, Shard) and other.dim == self.dim

    def __hash__(self):
        return hash(("shard", self.dim))

    def __repr__(self):
        return f"Shard(dim={self.dim})"


class Replicate(Placement):
    """Replicate()

    A full copy on every rank of the mesh dimension."""

    def __eq__(self, other):
        return isinstance(other, Replicate)

    def __hash__(self):
        return hash("replicate")

    def __repr__(self):
        return "Replicate()"


class Partial(Placement):
    """Partial(reduce_op='sum')

    Each rank holds an addend (or a factor of another reduction); the value is their reduction."""

    def __init__(self, reduce_op="sum"):
        self.reduce_op = reduce_op

    def __eq__(self, other):
        return isinstance(other, Partial) and other.reduce_op == self.reduce_op

    def __hash__(self):
        return hash(("partial", self.reduce_op))

    def __repr__(self):
        return f"Partial({self.reduce_op})"


_OPS = {"sum": "SUM", "avg": "AVG", "max": "MAX", "min": "MIN", "product": "PRODUCT"}


def _lib():
    import ember

    return ember


def _chunk_sizes(n, parts):
    """torch.chunk's piece lengths of n over parts (the last may be short, some empty)."""
    size = -(-n // parts) if n else 0
    out = []
    for i in range(parts):
        start = min(i * size, n)
        out.append(max(0, min(size, n - start)))
    return out


def _shard(t, dim, parts, index):
    sizes = _chunk_sizes(t.shape[dim], parts)
    start = sum(sizes[:index])
    return t.narrow(dim, start, sizes[index]).contiguous()


def _normalize(placements, ndim_mesh, tensor_ndim):
    placements = list(placements)
    if len(placements) != ndim_mesh:
        raise ValueError(
            f"expected one placement per mesh dimension ({ndim_mesh}); got {len(placements)}"
        )
    out = []
    for p in placements:
        if isinstance(p, Shard) and p.dim < 0:
            p = Shard(p.dim + tensor_ndim)
        out.append(p)
    return tuple(out)


class DTensor:
    """A tensor laid out over a DeviceMesh: this rank's local piece, the mesh and a placement per
    mesh dimension (see the module's docstring)."""

    def __init__(self, local_tensor, device_mesh, placements, shape):
        self._local_tensor = local_tensor
        self.device_mesh = device_mesh
        self.placements = tuple(placements)
        self._shape = tuple(shape)

    @property
    def shape(self):
        return _lib().Size(self._shape)

    def size(self, dim=None):
        """size(dim=None) -> Size or int

        The global shape (or one dimension of it)."""
        return self.shape if dim is None else self._shape[dim]

    @property
    def dtype(self):
        return self._local_tensor.dtype

    @property
    def ndim(self):
        return len(self._shape)

    def dim(self):
        return len(self._shape)

    def to_local(self, *, grad_placements=None):
        """to_local(*, grad_placements=None) -> Tensor

        This rank's piece."""
        return self._local_tensor

    @staticmethod
    def from_local(
        local_tensor, device_mesh=None, placements=None, *, run_check=False, shape=None, stride=None
    ):
        """from_local(local_tensor, device_mesh=None, placements=None, *, run_check=False,
            shape=None, stride=None) -> DTensor

        A DTensor whose local piece on this rank is local_tensor (every rank passes its own);
        the global shape is inferred from the pieces unless given."""
        mesh = device_mesh
        placements = _normalize(
            placements or [Replicate()] * mesh.ndim, mesh.ndim, local_tensor.dim()
        )
        if shape is None:
            glob = list(local_tensor.shape)
            for md, p in enumerate(placements):
                if isinstance(p, Shard):
                    mine = _lib().tensor([local_tensor.shape[p.dim]], dtype=_lib().int64)
                    got = _lib().zeros(mesh.size(md), dtype=_lib().int64)
                    c10d.all_gather_into_tensor(got, mine, group=mesh.get_group(md))
                    glob[p.dim] = sum(got.tolist())
            shape = glob
        if run_check:
            for md, p in enumerate(placements):
                if isinstance(p, Replicate):
                    ref = local_tensor.clone()
                    root = c10d.get_global_rank(mesh.get_group(md), 0)
                    c10d.broadcast(ref, src=root, group=mesh.get_group(md))
                    if not bool((ref == local_tensor).all()):
                        raise ValueError("from_local: Replicate() pieces differ between ranks")
        return DTensor(local_tensor, mesh, placements, shape)

    def full_tensor(self, *, grad_placements=None):
        """full_tensor(*, grad_placements=None) -> Tensor

        The whole tensor on every rank (gathered, or reduced from partial addends)."""
        mesh = self.device_mesh
        return self.redistribute(mesh, [Replicate()] * mesh.ndim).to_local()

    def redistribute(self, device_mesh=None, placements=None, *, async_op=False):
        """redistribute(device_mesh=None, placements=None, *, async_op=False) -> DTensor

        The same tensor with other placements, moved with collectives."""
        mesh = device_mesh or self.device_mesh
        if mesh != self.device_mesh:
            raise NotImplementedError("redistribute: moving to another mesh")
        target = _normalize(placements, mesh.ndim, self.ndim)
        local = self._local_tensor
        current = list(self.placements)
        # Gather / reduce the dimensions that change to Replicate first, then cut new shards.
        for md in range(mesh.ndim):
            src, dst = current[md], target[md]
            if src == dst:
                continue
            group = mesh.get_group(md)
            n, me = mesh.size(md), mesh.get_local_rank(md)
            if isinstance(src, Partial):
                op = getattr(c10d.ReduceOp, _OPS[src.reduce_op])
                if isinstance(dst, Shard):
                    local = self._reduce_scatter(local, dst.dim, n, me, op, group, md, current)
                else:
                    local = local.clone()
                    c10d.all_reduce(local, op=op, group=group)
                    if isinstance(dst, Partial):
                        raise NotImplementedError("Partial -> another Partial")
                current[md] = dst
                continue
            if isinstance(src, Shard) and isinstance(dst, Shard):
                local = self._all_to_all(local, src.dim, dst.dim, n, me, group, md, current)
                current[md] = dst
                continue
            if isinstance(src, Shard):
                local = self._gather(local, src.dim, n, group, md, current)
                src = Replicate()
            if isinstance(dst, Shard):
                local = _shard(local, dst.dim, n, me)
            elif isinstance(dst, Partial):
                # the value stays: one rank keeps it, the others hold the reduction's identity
                if dst.reduce_op != "sum":
                    raise NotImplementedError(f"Replicate -> Partial({dst.reduce_op})")
                local = local.clone() if me == 0 else _lib().zeros_like(local)
            current[md] = dst
        return DTensor(local, mesh, target, self._shape)

    def _dim_length(self, dim, md, current):
        """The length of tensor dim `dim` held before mesh dim md splits it: the global length,
        less what other mesh dimensions sharding the same dim took."""
        length = self._shape[dim]
        mesh = self.device_mesh
        for other in range(md):
            p = current[other]
            if isinstance(p, Shard) and p.dim == dim:
                length = _chunk_sizes(length, mesh.size(other))[mesh.get_local_rank(other)]
        return length

    def _gather(self, local, dim, n, group, md, current):
        sizes = _chunk_sizes(self._dim_length(dim, md, current), n)
        width = max(sizes)
        lib = _lib()
        pad = list(local.shape)
        pad[dim] = width
        padded = lib.zeros(*pad, dtype=local.dtype)
        padded.narrow(dim, 0, local.shape[dim]).copy_(local)
        pieces = [lib.zeros(*pad, dtype=local.dtype) for _ in range(n)]
        c10d.all_gather(pieces, padded, group=group)
        return lib.cat([p.narrow(dim, 0, s) for p, s in zip(pieces, sizes)], dim)

    def _reduce_scatter(self, local, dim, n, me, op, group, md, current):
        full = local.clone()
        c10d.all_reduce(full, op=op, group=group)
        return _shard(full, dim, n, me)

    def _all_to_all(self, local, src_dim, dst_dim, n, me, group, md, current):
        full = self._gather(local, src_dim, n, group, md, current)
        return _shard(full, dst_dim, n, me)

    def __repr__(self):
        return (
            f"DTensor(local_tensor={self._local_tensor}, device_mesh={self.device_mesh}, "
            f"placements={self.placements})"
        )


def distribute_tensor(tensor, device_mesh=None, placements=None, *, src_data_rank=0):
    """distribute_tensor(tensor, device_mesh=None, placements=None, *, src_data_rank=0) -> DTensor

    Lays tensor out over device_mesh: every rank passes a tensor of the same shape and gets its
    piece of src_data_rank's."""
    from ..device_mesh import init_device_mesh

    mesh = device_mesh or init_device_mesh("cpu", (c10d.get_world_size(),))
    placements = _normalize(placements or [Replicate()] * mesh.ndim, mesh.ndim, tensor.dim())
    full = tensor.detach().clone().contiguous()
    if src_data_rank is not None:
        c10d.broadcast(full, src=src_data_rank)
    local = full
    for md, p in enumerate(placements):
        n, me = mesh.size(md), mesh.get_local_rank(md)
        if isinstance(p, Shard):
            local = _shard(local, p.dim, n, me)
        elif isinstance(p, Partial):
            raise ValueError("distribute_tensor: a tensor cannot be distributed as Partial")
    return DTensor(local, mesh, placements, tuple(tensor.shape))
