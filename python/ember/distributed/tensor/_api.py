"""DTensor: placements, the DTensor class (a Tensor subclass over this rank's local piece),
differentiable redistribution, distribute_tensor and distribute_module.

How a DTensor computes is in _dispatch.py: the DTensor mode routes every ember call that gets a
DTensor to a sharding rule (_sharding_rules.py, _sharding_rules_nn.py) that computes on the
local pieces.
"""

from ... import _C
from .. import distributed_c10d as c10d

__all__ = [
    "DTensor",
    "Partial",
    "Placement",
    "Replicate",
    "Shard",
    "distribute_module",
    "distribute_tensor",
]


class Placement:
    """The layout of a tensor along one mesh dimension."""

    def is_shard(self, dim=None):
        """is_shard(dim=None) -> bool

        True for Shard (of tensor dim `dim` when given)."""
        return isinstance(self, Shard) and (dim is None or self.dim == dim)

    def is_replicate(self):
        """is_replicate() -> bool

        True for Replicate."""
        return isinstance(self, Replicate)

    def is_partial(self):
        """is_partial() -> bool

        True for Partial."""
        return isinstance(self, Partial)


class Shard(Placement):
    """Shard(dim)

    Tensor dim `dim` split over the mesh dimension's ranks in torch.chunk's pieces."""

    def __init__(self, dim):
        self.dim = dim

    def __eq__(self, other):
        return type(other) is Shard and other.dim == self.dim

    def __hash__(self):
        return hash(("shard", self.dim))

    def __repr__(self):
        return f"Shard(dim={self.dim})"

    def __str__(self):  # torch's short form
        return f"S({self.dim})"

    def _with_dim(self, dim):
        """The same kind of placement over tensor dim `dim` (rules that move dims keep a
        _StridedShard strided)."""
        return Shard(dim)


class _StridedShard(Shard):
    """_StridedShard(dim, split_factor)

    Shard(dim) applied after the Shard(dim) placements of later mesh dimensions (split_factor:
    the number of pieces they cut dim into): each rank holds its chunk of the piece those
    leave it. FSDP2 over tensor-parallel parameters makes it (the dp mesh dimension shards
    what the tp one left, so the tp piece gathers over dp alone), as torch's."""

    def __init__(self, dim, split_factor):
        super().__init__(dim)
        self.split_factor = split_factor

    def __eq__(self, other):
        return (
            isinstance(other, _StridedShard)
            and other.dim == self.dim
            and other.split_factor == self.split_factor
        )

    def __hash__(self):
        return hash(("strided", self.dim, self.split_factor))

    def __repr__(self):
        return f"_StridedShard(dim={self.dim}, sf={self.split_factor})"

    def __str__(self):
        return f"_S({self.dim}, {self.split_factor})"

    def _with_dim(self, dim):
        return _StridedShard(dim, self.split_factor)


class Replicate(Placement):
    """Replicate()

    A full copy on every rank of the mesh dimension."""

    def __eq__(self, other):
        return isinstance(other, Replicate)

    def __hash__(self):
        return hash("replicate")

    def __repr__(self):
        return "Replicate()"

    def __str__(self):
        return "R"


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

    def __str__(self):
        return f"P({self.reduce_op})"


class _NormPartial(Partial):
    """_NormPartial(norm_type=2)

    Each rank holds the p-norm of its piece; the value is the p-norm of those (their p-th
    powers summed, then the p-th root): what a p-norm over a sharded dim leaves, as torch's."""

    def __init__(self, norm_type=2):
        super().__init__("sum")
        self.norm_type = norm_type

    def __eq__(self, other):
        return isinstance(other, _NormPartial) and other.norm_type == self.norm_type

    def __hash__(self):
        return 1 + hash(self.norm_type)

    def __repr__(self):
        return f"_NormPartial({self.norm_type})"

    def __str__(self):
        return f"_NormP({self.norm_type})"


class _MaskPartial(Partial):
    """_MaskPartial(reduce_op='sum', offset_shape=None, offset_dim=0)

    What a lookup into a table sharded on offset_dim (embedding over a Shard(0) weight) leaves:
    each rank holds the rows its piece has and zeros for the others; the value is their sum."""

    def __init__(self, reduce_op="sum", offset_shape=None, offset_dim=0):
        super().__init__(reduce_op)
        self.offset_shape = offset_shape
        self.offset_dim = offset_dim

    def __eq__(self, other):
        return (
            isinstance(other, _MaskPartial)
            and other.reduce_op == self.reduce_op
            and other.offset_shape == self.offset_shape
            and other.offset_dim == self.offset_dim
        )

    def __hash__(self):
        return 1 + hash((self.reduce_op, self.offset_shape, self.offset_dim))

    def __repr__(self):
        return (
            f"_MaskPartial(reduce_op={self.reduce_op}, offset_shape={self.offset_shape}, "
            f"offset_dim={self.offset_dim})"
        )

    def __str__(self):
        return "MaskP(" + f"{self.reduce_op}, {self.offset_shape}, {self.offset_dim})"


def _is_sum(p):
    """A Partial whose value is the plain sum of the pieces (linear operators keep it)."""
    return isinstance(p, Partial) and p.reduce_op == "sum" and not isinstance(p, _NormPartial)


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
        if isinstance(p, Shard) and not 0 <= p.dim < max(tensor_ndim, 1):
            raise IndexError(
                f"Shard: expected a dim in [{-tensor_ndim}, {tensor_ndim}); got {p.dim}"
            )
        out.append(p)
    return tuple(out)


def _shard_order(placements):
    """The mesh dims that shard, in the order they cut: mesh order, _StridedShard ones last."""
    plain = [md for md, p in enumerate(placements) if type(p) is Shard]
    return plain + [md for md, p in enumerate(placements) if isinstance(p, _StridedShard)]


def _local_box(shape, mesh, placements):
    """(offsets, sizes) of this rank's piece in a tensor of global `shape`."""
    offsets, sizes = [0] * len(shape), list(shape)
    for md in _shard_order(placements):
        d = placements[md].dim
        pieces = _chunk_sizes(sizes[d], mesh.size(md))
        me = mesh.get_local_rank(md)
        offsets[d] += sum(pieces[:me])
        sizes[d] = pieces[me]
    return offsets, sizes


def _local_shape(shape, mesh, placements):
    """This rank's piece's shape of a tensor of global `shape`."""
    return tuple(_local_box(shape, mesh, placements)[1])


# --- moving data between layouts (plain local tensors, no autograd) -------------------------


def _dim_length(shape, mesh, dim, md, current):
    """The length of tensor dim `dim` held before mesh dim md splits it."""
    length = shape[dim]
    order = _shard_order(current)
    for other in order[: order.index(md)] if md in order else range(md):
        p = current[other]
        if isinstance(p, Shard) and p.dim == dim:
            length = _chunk_sizes(length, mesh.size(other))[mesh.get_local_rank(other)]
    return length


def _gather(local, shape, mesh, dim, md, current):
    n = mesh.size(md)
    group = mesh.get_group(md)
    sizes = _chunk_sizes(_dim_length(shape, mesh, dim, md, current), n)
    width = max(sizes) if sizes else 0
    lib = _lib()
    local = local.contiguous()
    if all(s == width for s in sizes) and dim == 0:
        out = lib.empty((width * n, *local.shape[1:]), dtype=local.dtype)
        c10d.all_gather_single(out, local, group=group)
        return out
    pad = list(local.shape)
    pad[dim] = width
    if local.shape[dim] == width:
        padded = local
    else:
        padded = lib.zeros(*pad, dtype=local.dtype)
        padded.narrow(dim, 0, local.shape[dim]).copy_(local)
    pieces = [lib.empty(*pad, dtype=local.dtype) for _ in range(n)]
    c10d.all_gather(pieces, padded, group=group)
    return lib.cat([p.narrow(dim, 0, s) for p, s in zip(pieces, sizes)], dim)


def _reduce_scatter_rows(buf, n, group, average=False):
    """This rank's row of the sum (or mean) over ranks of buf ([n, ...] on every rank)."""
    out = _lib().empty(buf.shape[1:], dtype=buf.dtype)
    op = c10d.ReduceOp.AVG if average else c10d.ReduceOp.SUM
    c10d.reduce_scatter_single(out, buf.contiguous(), op=op, group=group)
    return out


def _reduce_scatter(local, dim, n, me, op, group):
    sizes = _chunk_sizes(local.shape[dim], n)
    sums = (c10d.ReduceOp.SUM, c10d.ReduceOp.AVG)
    if len(set(sizes)) == 1 and sizes[0] and op in sums:
        if dim == 0:
            rows = local.reshape(n, sizes[0], *local.shape[1:])
        else:
            rows = _lib().stack(list(local.chunk(n, dim)))
        return _reduce_scatter_rows(rows, n, group, average=op == c10d.ReduceOp.AVG)
    full = local.clone()
    c10d.all_reduce(full, op=op, group=group)
    return _shard(full, dim, n, me)


def _redistribute_local(local, shape, mesh, src, dst):
    """This rank's piece of a tensor of global `shape` laid out as `dst`, from its piece laid out
    as `src` (both tuples of placements). A _StridedShard cuts the piece the other mesh dims
    left: it is gathered first and cut last."""
    if tuple(src) == tuple(dst):
        return local
    current = list(src)
    for md, s in enumerate(src):
        if isinstance(s, _StridedShard):
            local = _gather(local, shape, mesh, s.dim, md, current)
            current[md] = Replicate()
    strided = [md for md, d in enumerate(dst) if isinstance(d, _StridedShard)]
    target = [Replicate() if md in strided else d for md, d in enumerate(dst)]
    local = _redistribute_plain(local, shape, mesh, current, target)
    for md in strided:
        local = _shard(local, dst[md].dim, mesh.size(md), mesh.get_local_rank(md))
    return local


def _redistribute_plain(local, shape, mesh, current, dst):
    for md in range(mesh.ndim):
        s, d = current[md], dst[md]
        if s == d:
            continue
        group = mesh.get_group(md)
        n, me = mesh.size(md), mesh.get_local_rank(md)
        if isinstance(s, Partial):
            op = getattr(c10d.ReduceOp, _OPS[s.reduce_op])
            if isinstance(d, Partial):
                raise NotImplementedError(f"redistribute: {s} -> {d}")
            norm = s.norm_type if isinstance(s, _NormPartial) else None
            if norm is not None:  # the p-norm of the pieces: p-th powers summed, then the root
                local = local.pow(norm)
            if isinstance(d, Shard):
                local = _reduce_scatter(local, d.dim, n, me, op, group)
            else:
                local = local.clone()
                c10d.all_reduce(local, op=op, group=group)
            if norm is not None:
                local = local.pow(1.0 / norm)
            current[md] = d
            continue
        if isinstance(s, Shard) and isinstance(d, Shard):
            full = _gather(local, shape, mesh, s.dim, md, current)
            local = _shard(full, d.dim, n, me)
            current[md] = d
            continue
        if isinstance(s, Shard):
            local = _gather(local, shape, mesh, s.dim, md, current)
        if isinstance(d, Shard):
            local = _shard(local, d.dim, n, me)
        elif isinstance(d, Partial):
            # the value stays: one rank keeps it, the others hold the reduction's identity
            # (max, min and avg of equal values are that value: every rank keeps it)
            if d.reduce_op not in _OPS:
                raise NotImplementedError(f"redistribute: Replicate() -> {d}")
            if isinstance(d, _NormPartial):  # n equal pieces whose p-norm is the value
                local = local / float(n) ** (1.0 / d.norm_type)
            elif d.reduce_op in ("avg", "max", "min") or me == 0:
                local = local.clone()
            elif d.reduce_op == "sum":
                local = _lib().zeros_like(local)
            else:
                local = _lib().ones_like(local)
        current[md] = d
    return local


def _grad_placements(placements):
    """The layout of a gradient flowing back to a tensor with these placements: Partial's is
    Replicate (every addend gets the whole gradient)."""
    return tuple(Replicate() if isinstance(p, Partial) else p for p in placements)


def _function():
    from ...autograd import Function

    return Function


_FUNCTIONS = {}


def _redistribute_fn():
    fn = _FUNCTIONS.get("redistribute")
    if fn is None:
        Function = _function()

        class _Redistribute(Function):
            @staticmethod
            def forward(ctx, local, shape, mesh, src, dst, grad_dtype):
                ctx.spec = (shape, mesh, src, dst, grad_dtype)
                out = _redistribute_local(local, shape, mesh, src, dst)
                return out.view_as(out) if out is local else out

            @staticmethod
            def backward(ctx, grad):
                shape, mesh, src, dst, grad_dtype = ctx.spec
                g_src, g_dst = _grad_placements(dst), _grad_placements(src)
                if g_src != g_dst:
                    dtype = grad.dtype
                    if grad_dtype is not None:
                        grad = grad.to(grad_dtype)
                    grad = _redistribute_local(grad, shape, mesh, g_src, g_dst).to(dtype)
                return grad, None, None, None, None, None

        class _SyncGrad(Function):
            """Identity forward; all-reduces the gradient over the given mesh dims (a Replicate
            operand of a computation that differs between those ranks)."""

            @staticmethod
            def forward(ctx, local, mesh, dims):
                ctx.spec = (mesh, dims)
                return local.view_as(local)

            @staticmethod
            def backward(ctx, grad):
                mesh, dims = ctx.spec
                grad = grad.contiguous().clone()
                for md in dims:
                    c10d.all_reduce(grad, group=mesh.get_group(md))
                return grad, None, None

        _FUNCTIONS["redistribute"] = fn = _Redistribute
        _FUNCTIONS["sync"] = _SyncGrad
    return fn


def _redistribute_autograd(local, shape, mesh, src, dst, grad_dtype=None):
    """local moved from src to dst placements, differentiably (the gradient moves back in
    grad_dtype when one is given)."""
    if tuple(src) == tuple(dst):
        return local
    if not local.requires_grad:
        return _redistribute_local(local, shape, mesh, tuple(src), tuple(dst))
    return _redistribute_fn().apply(local, tuple(shape), mesh, tuple(src), tuple(dst), grad_dtype)


def _sync_grad(local, mesh, dims):
    if not dims or not local.requires_grad:
        return local
    _redistribute_fn()
    return _FUNCTIONS["sync"].apply(local, mesh, tuple(dims))


# --- the DTensor class ----------------------------------------------------------------------


_ORIG = {}


def _orig(name):
    """Tensor's own attribute `name`, also while a function mode has patched Tensor."""
    value = _ORIG.get(name)
    if value is None:
        from ... import overrides

        value = vars(_C.Tensor)[name]
        for owner, n, v in overrides._patches:
            if owner is _C.Tensor and n == name:
                value = v
        _ORIG[name] = value
    return value


class _DTensorBase:
    """What DTensor and a DTensor parameter share (nanobind allows one Tensor base)."""

    @classmethod
    def _make(cls, local, mesh, placements, shape):
        from . import _dispatch

        obj = cls.__new__(cls)
        _C.Tensor.__init__(obj, local)
        obj._local_tensor = local
        obj._mesh = mesh
        obj._placements = tuple(placements)
        obj._shape = tuple(int(s) for s in shape)
        _dispatch.activate()
        return obj

    # -- metadata: the global view
    @property
    def device_mesh(self):
        return self._mesh

    @property
    def placements(self):
        return self._placements

    @property
    def shape(self):
        return _lib().Size(self._shape)

    def size(self, dim=None):
        """size(dim=None) -> Size or int

        The global shape (or one dimension of it)."""
        return self.shape if dim is None else self._shape[dim]

    @property
    def ndim(self):
        return len(self._shape)

    def dim(self):
        """dim() -> int

        The number of dimensions of the global tensor."""
        return len(self._shape)

    def ndimension(self):
        """ndimension() -> int

        Alias of dim()."""
        return len(self._shape)

    def numel(self):
        """numel() -> int

        The number of elements of the global tensor."""
        n = 1
        for s in self._shape:
            n *= s
        return n

    def nelement(self):
        """nelement() -> int

        Alias of numel()."""
        return self.numel()

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def stride(self, dim=None):
        """stride(dim=None) -> tuple or int

        The strides of the global tensor laid out contiguously."""
        out, acc = [], 1
        for s in reversed(self._shape):
            out.append(acc)
            acc *= max(s, 1)
        out = tuple(reversed(out))
        return out if dim is None else out[dim]

    @property
    def grad(self):
        g = _orig("grad").__get__(self)
        if g is None or isinstance(g, DTensor):
            return g
        return DTensor._make(g, self._mesh, _grad_placements(self._placements), self._shape)

    @grad.setter
    def grad(self, value):
        if isinstance(value, DTensor):
            value = value._local_tensor
        _orig("grad").__set__(self, value)

    # -- the torch.distributed.tensor API
    def to_local(self, *, grad_placements=None):
        """to_local(*, grad_placements=None) -> Tensor

        This rank's piece, differentiably: its gradient flows back into this DTensor
        (grad_placements: the layout the piece's gradient has, when it differs from this
        DTensor's placements)."""
        local = self._local_tensor
        if grad_placements is None or not local.requires_grad:
            return local
        grad_placements = _normalize(grad_placements, self._mesh.ndim, self.ndim)
        want = _grad_placements(self._placements)
        if tuple(grad_placements) == want:
            return local
        # forward: unchanged; backward: the piece's gradient moved to this DTensor's layout
        return _redistribute_fn().apply(local, self._shape, self._mesh, want, grad_placements, None)

    @staticmethod
    def from_local(
        local_tensor, device_mesh=None, placements=None, *, run_check=False, shape=None, stride=None
    ):
        """from_local(local_tensor, device_mesh=None, placements=None, *, run_check=False,
            shape=None, stride=None) -> DTensor

        A DTensor whose piece on this rank is local_tensor (every rank passes its own),
        differentiably; the global shape is inferred from the pieces unless given."""
        from ..device_mesh import _default_mesh

        mesh = device_mesh or _default_mesh()
        placements = _normalize(
            placements or [Replicate()] * mesh.ndim, mesh.ndim, local_tensor.dim()
        )
        if isinstance(local_tensor, DTensor):
            raise RuntimeError("from_local: expected a local Tensor; got a DTensor")
        if shape is None:
            glob = list(local_tensor.shape)
            for md, p in enumerate(placements):
                if isinstance(p, Shard):
                    lib = _lib()
                    mine = lib.tensor([local_tensor.shape[p.dim]], dtype=lib.int64)
                    got = lib.zeros(mesh.size(md), dtype=lib.int64)
                    c10d.all_gather_single(got, mine, group=mesh.get_group(md))
                    glob[p.dim] = sum(got.tolist())
            shape = glob
        if run_check:
            for md, p in enumerate(placements):
                if isinstance(p, Replicate):
                    ref = local_tensor.detach().clone()
                    root = c10d.get_global_rank(mesh.get_group(md), 0)
                    c10d.broadcast(ref, src=root, group=mesh.get_group(md))
                    if not bool((ref == local_tensor.detach()).all()):
                        raise ValueError("from_local: Replicate() pieces differ between ranks")
        # the DTensor shares the piece's autograd node: gradients flow back into local_tensor
        return DTensor._make(local_tensor, mesh, placements, shape)

    def full_tensor(self, *, grad_placements=None):
        """full_tensor(*, grad_placements=None) -> Tensor

        The whole tensor on every rank (gathered, or reduced from partial addends),
        differentiably."""
        mesh = self._mesh
        return self.redistribute(mesh, [Replicate()] * mesh.ndim).to_local(
            grad_placements=grad_placements
        )

    def redistribute(
        self,
        device_mesh=None,
        placements=None,
        *,
        async_op=False,
        forward_dtype=None,
        backward_dtype=None,
    ):
        """redistribute(device_mesh=None, placements=None, *, async_op=False,
        forward_dtype=None, backward_dtype=None) -> DTensor

        The same tensor with other placements, moved with collectives (differentiably: the
        gradient moves back the other way). forward_dtype casts the piece before the move (the
        result has that dtype); backward_dtype is the dtype the gradient moves in, cast back
        to this tensor's dtype after."""
        mesh = device_mesh or self._mesh
        if mesh != self._mesh:
            raise NotImplementedError("redistribute: moving to another mesh")
        if placements is None:
            raise RuntimeError("placements is needed for redistribute!")
        target = _normalize(placements, mesh.ndim, self.ndim)
        for src, p in zip(self._placements, target):
            if isinstance(p, Partial) and src != p:
                raise RuntimeError(
                    f"Can not redistribute from {src} to {p}, "
                    "redistributing to Partial is for internal use only!"
                )
        local = self._local_tensor
        if forward_dtype is not None and forward_dtype != local.dtype:
            local = local.to(forward_dtype)
        local = _redistribute_autograd(
            local, self._shape, mesh, self._placements, target, backward_dtype
        )
        return DTensor._make(local, mesh, target, self._shape)

    def __repr__(self):
        return (
            f"DTensor(local_tensor={_C.Tensor.__repr__(self._local_tensor)}, "
            f"device_mesh={self._mesh}, placements={self._placements})"
        )

    __str__ = __repr__

    def _zeros_like(self):
        local = _lib().zeros_like(self._local_tensor.detach())
        return DTensor._make(local, self._mesh, self._placements, self._shape)

    def _as_parameter(self, requires_grad=True):
        return _as_parameter(self, requires_grad)

    def __reduce_ex__(self, proto):
        return (_rebuild, (self.full_tensor().detach(),))

    def __deepcopy__(self, memo):
        out = DTensor._make(
            self._local_tensor.detach().clone(), self._mesh, self._placements, self._shape
        )
        if self._local_tensor.requires_grad:
            out._local_tensor.requires_grad_(True)
        memo[id(self)] = out
        return out


class DTensor(_DTensorBase, _C.Tensor):
    """A tensor laid out over a DeviceMesh: this rank's local piece, the mesh and a placement per
    mesh dimension. It is a Tensor whose data is the local piece (optimizers and other kernels
    that take tensors work on the piece); shape, size() and dim() are the global ones, and
    ember's operators on DTensors follow sharding rules (see docs/ARCHITECTURE.md)."""

    def __new__(cls, *args, **kwargs):
        return _C.Tensor.__new__(cls)

    def __init__(self, *args, **kwargs):
        pass


def _rebuild(full):
    return full


def _dtensor_parameter_class():
    cls = _FUNCTIONS.get("param")
    if cls is None:
        from ...nn.parameter import Parameter

        class DTensorParameter(_DTensorBase, Parameter):
            """A module parameter that is a DTensor (isinstance of both: its __class__ says
            DTensor)."""

            @property
            def __class__(self):
                return DTensor

            def __new__(cls, *args, **kwargs):
                return _C.Tensor.__new__(cls)

            def __init__(self, *args, **kwargs):
                pass

            def __repr__(self):
                return DTensor.__repr__(self)

            def __deepcopy__(self, memo):
                return _as_parameter(DTensor.__deepcopy__(self, memo), self.requires_grad)

        DTensorParameter.__name__ = "DTensor"
        _FUNCTIONS["param"] = cls = DTensorParameter
    return cls


def _as_parameter(dt, requires_grad=True):
    """nn.Parameter(dt) for a DTensor dt: a leaf DTensor parameter over dt's piece."""
    local = dt._local_tensor.detach()
    local.requires_grad_(requires_grad)
    return _dtensor_parameter_class()._make(local, dt._mesh, dt._placements, dt._shape)


def distribute_tensor(tensor, device_mesh=None, placements=None, *, src_data_rank=0):
    """distribute_tensor(tensor, device_mesh=None, placements=None, *, src_data_rank=0) -> DTensor

    Lays tensor out over device_mesh: every rank passes a tensor of the same shape and gets its
    piece of src_data_rank's (each rank's own when src_data_rank is None)."""
    from ..device_mesh import _default_mesh

    mesh = device_mesh or _default_mesh()
    placements = _normalize(placements or [Replicate()] * mesh.ndim, mesh.ndim, tensor.dim())
    if isinstance(tensor, DTensor):
        if tensor.device_mesh != mesh:
            raise ValueError("distribute_tensor: the DTensor lives on another mesh")
        return tensor.redistribute(mesh, placements)
    full = tensor.detach().contiguous()
    if src_data_rank is not None:
        full = full.clone()
        for md in range(mesh.ndim):
            group = mesh.get_group(md)
            root = c10d.get_global_rank(group, src_data_rank % mesh.size(md))
            c10d.broadcast(full, src=root, group=group)
    if any(isinstance(p, Partial) for p in placements):
        raise ValueError("distribute_tensor: a tensor cannot be distributed as Partial")
    local = full
    for md in _shard_order(placements):
        local = _shard(local, placements[md].dim, mesh.size(md), mesh.get_local_rank(md))
    if local is full and src_data_rank is None:
        local = full.clone()
    local.requires_grad_(tensor.requires_grad)
    return DTensor._make(local, mesh, placements, tuple(tensor.shape))


def distribute_module(module, device_mesh=None, partition_fn=None, input_fn=None, output_fn=None):
    """distribute_module(module, device_mesh=None, partition_fn=None, input_fn=None,
        output_fn=None) -> Module

    Turns module's parameters and buffers into DTensors: partition_fn(name, submodule, mesh)
    sets those of each submodule (by default every one left a plain tensor is replicated);
    input_fn(module, inputs, mesh) and output_fn(module, outputs, mesh) become forward pre- and
    post-hooks that lay out the inputs and outputs."""
    from ..device_mesh import _default_mesh

    mesh = device_mesh or _default_mesh()
    if getattr(module, "_distribute_module_applied", False):
        raise RuntimeError("distribute_module should only be called once on a module")
    for name, sub in module.named_modules():
        if partition_fn is not None:
            partition_fn(name, sub, mesh)
        _replicate_rest(sub, mesh)
    if input_fn is not None:
        module.register_forward_pre_hook(lambda mod, inputs: input_fn(mod, inputs, mesh))
    if output_fn is not None:
        module.register_forward_hook(lambda mod, inputs, outputs: output_fn(mod, outputs, mesh))
    module._distribute_module_applied = True
    return module


def _replicate_rest(sub, mesh):
    from ...nn.parameter import Parameter

    for key, p in list(sub._parameters.items()):
        if p is not None and not isinstance(p, DTensor):
            rep = distribute_tensor(p.detach(), mesh, [Replicate()] * mesh.ndim)
            sub._parameters[key] = Parameter(rep, p.requires_grad)
    for key, b in list(sub._buffers.items()):
        if b is not None and not isinstance(b, DTensor):
            sub._buffers[key] = distribute_tensor(b, mesh, [Replicate()] * mesh.ndim)
