"""DeviceMesh: the world's ranks laid out as an n-d array, one process group per mesh dimension
(torch.distributed.device_mesh).

    mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
    mesh["tp"].get_group()      # this rank's row: the ranks that share its "dp" coordinate

Every process builds the same mesh (new_group is collective): the groups of every dimension are
made on every rank, in the same order, and each rank keeps the ones it belongs to.
"""

import os
import warnings

import numpy as np

from .. import overrides
from . import distributed_c10d as c10d

__all__ = ["DeviceMesh", "init_device_mesh"]


class DeviceMesh:
    """DeviceMesh(device_type, mesh, *, mesh_dim_names=None)

    The ranks of mesh (an n-d array of global ranks) with a process group along each
    dimension; needs the default process group."""

    def __init__(self, device_type, mesh, *, mesh_dim_names=None, _init_backend=True, _groups=None):
        if device_type != "cpu":
            raise RuntimeError(f"DeviceMesh: ember runs on 'cpu'; got device_type '{device_type}'")
        # a mesh is what DTensors are built on: from now on a function looked up before its
        # DTensor arguments exist routes to the DTensor mode as one looked up after
        overrides._pin_routing()
        self.device_type = device_type
        arr = np.asarray(mesh.tolist() if hasattr(mesh, "tolist") else mesh, dtype=np.int64)
        self._mesh = arr
        if mesh_dim_names is not None and len(mesh_dim_names) != arr.ndim:
            raise RuntimeError(  # torch's words
                "mesh_shape and mesh_dim_names should have same length! Found "
                f"len(mesh_dim_names): {len(mesh_dim_names)} and len(mesh_shape):{arr.ndim}."
            )
        self.mesh_dim_names = tuple(mesh_dim_names) if mesh_dim_names is not None else None
        self._root = None  # a slice's mesh it was cut from, and its dims there
        self._root_dims = None
        self._flatten_mapping = {}  # a root mesh's flattened meshes by name (_flatten)
        world = c10d.get_world_size()
        if arr.size > world:  # torch's words
            raise RuntimeError(
                f"Mesh should not be bigger than default world size {world}, but found "
                f"{arr.size} ranks!"
            )
        if sorted(arr.reshape(-1).tolist()) != list(range(world)) and _groups is None:
            raise RuntimeError(
                f"DeviceMesh: the mesh must hold every rank of the world (0..{world - 1}) once; "
                f"got {arr.tolist()}"
            )
        me = c10d.get_rank()
        where = np.argwhere(arr == me)
        self._coordinate = tuple(int(i) for i in where[0]) if len(where) else None
        if _groups is not None:
            self._groups = _groups
            return
        self._groups = []
        for dim in range(arr.ndim):
            # every line of ranks along `dim`, in a fixed order on every process
            lines = np.moveaxis(arr, dim, -1).reshape(-1, arr.shape[dim])
            mine = None
            for line in lines:
                ranks = line.tolist()
                g = (
                    c10d.GroupMember.WORLD
                    if len(ranks) == world and ranks == sorted(ranks)
                    else None
                )
                if g is None:
                    g = c10d.new_group(ranks)
                if me in ranks:
                    mine = g
            self._groups.append(mine)

    @staticmethod
    def from_group(group, device_type, mesh=None, *, mesh_dim_names=None):
        """from_group(group, device_type, mesh=None, *, mesh_dim_names=None) -> DeviceMesh

        A mesh over process groups that exist: one group gives the 1-d mesh of its ranks; a
        list of groups (this rank's group along each dimension) needs mesh, the global ranks
        laid out. No group is created."""
        groups = list(group) if isinstance(group, (list, tuple)) else [group]
        if mesh is None:
            if len(groups) != 1:
                raise ValueError(
                    "Expects mesh to be specified if passing a list of groups; got "
                    f"{len(groups)} groups"
                )
            mesh = c10d.get_process_group_ranks(groups[0])
        arr = np.asarray(mesh.tolist() if hasattr(mesh, "tolist") else mesh, dtype=np.int64)
        if arr.ndim != len(groups):
            raise ValueError(
                f"Expects the mesh to have one dimension per group; got a {arr.ndim}-d mesh and "
                f"{len(groups)} groups"
            )
        return DeviceMesh(device_type, arr, mesh_dim_names=mesh_dim_names, _groups=groups)

    @property
    def mesh(self):
        """mesh -> Tensor

        The global ranks (int32), shaped like the mesh."""
        from .. import _C

        return _C.from_numpy(self._mesh.astype(np.int32))

    @property
    def ndim(self):
        return self._mesh.ndim

    @property
    def shape(self):
        return tuple(self._mesh.shape)

    def size(self, mesh_dim=None):
        """size(mesh_dim=None) -> int

        How many ranks the mesh has, or how many along mesh_dim."""
        if mesh_dim is None:
            return int(self._mesh.size)
        return int(self._mesh.shape[self._dim(mesh_dim)])

    def _dim(self, mesh_dim):
        if isinstance(mesh_dim, str):
            if not self.mesh_dim_names or mesh_dim not in self.mesh_dim_names:
                raise KeyError(  # torch's words
                    f"Invalid mesh_dim_names {(mesh_dim,)} specified. Valid mesh_dim_names are "
                    f"{list(self.mesh_dim_names or ())}."
                )
            return self.mesh_dim_names.index(mesh_dim)
        return mesh_dim

    def get_group(self, mesh_dim=None):
        """get_group(mesh_dim=None) -> ProcessGroup

        The process group of this rank along mesh_dim (a 1-d mesh needs none)."""
        if mesh_dim is None:
            if self.ndim != 1:
                raise RuntimeError(
                    f"Found the DeviceMesh have {self.ndim} dimensions; pass mesh_dim to get_group"
                )
            mesh_dim = 0
        return self._groups[self._dim(mesh_dim)]

    def get_all_groups(self):
        """get_all_groups() -> List[ProcessGroup]

        This rank's process group along each dimension."""
        return list(self._groups)

    def get_rank(self):
        """get_rank() -> int

        This process's global rank."""
        return c10d.get_rank()

    def get_local_rank(self, mesh_dim=None):
        """get_local_rank(mesh_dim=None) -> int

        This rank's coordinate along mesh_dim."""
        if mesh_dim is None:
            if self.ndim != 1:
                raise RuntimeError(
                    "get_local_rank: pass mesh_dim for a mesh of more than 1 dimension"
                )
            mesh_dim = 0
        return self._coordinate[self._dim(mesh_dim)]

    def get_coordinate(self):
        """get_coordinate() -> Optional[Tuple[int, ...]]

        This rank's coordinates in the mesh (None when it is not in the mesh)."""
        return self._coordinate

    def __getitem__(self, names):
        """The sub-mesh of this rank along the named dimension(s) (in the mesh's order), or a
        flattened dimension of this root mesh by its name."""
        names = (names,) if isinstance(names, str) else tuple(names)
        flat = self._flatten_mapping
        if len(names) == 1 and names[0] in flat and names[0] not in (self.mesh_dim_names or ()):
            warnings.warn(  # torch's words
                "Slicing a flattened dim from root mesh will be deprecated in PT 2.11. "
                "Users need to bookkeep the flattened mesh directly. ",
                stacklevel=2,
            )
            return flat[names[0]]
        valid = [*(self.mesh_dim_names or ()), *flat]
        if not self.mesh_dim_names or any(n not in self.mesh_dim_names for n in names):
            raise KeyError(  # torch's words
                f"Invalid mesh_dim_names {names} specified. Valid mesh_dim_names are {valid}."
            )
        dims = [self.mesh_dim_names.index(n) for n in names]
        if dims == list(range(self.ndim)):
            return self
        # in the mesh's order; a dim of size 1 may go anywhere (torch compares the layouts
        # with those dropped)
        wide = [d for d in dims if self._mesh.shape[d] > 1]
        if len(set(dims)) != len(dims) or wide != sorted(wide):
            raise KeyError(
                f"Invalid mesh_dim_names {names} specified. "
                "Mesh dim indices should be in ascending order."
            )
        index = list(self._coordinate)
        for d in dims:
            index[d] = slice(None)
        asc = sorted(dims)
        sub = DeviceMesh(
            self.device_type,
            np.transpose(self._mesh[tuple(index)], [asc.index(d) for d in dims]),
            mesh_dim_names=names,
            _groups=[self._groups[d] for d in dims],
        )
        sub._root = self._root or self
        sub._root_dims = [self._root_dims[d] for d in dims] if self._root_dims else dims
        return sub

    def _flatten(self, mesh_dim_name=None, backend_override=None):
        """_flatten(mesh_dim_name=None, backend_override=None) -> DeviceMesh

        The 1-d mesh of this (sliced) mesh's ranks, with a process group over them, named
        mesh_dim_name (default: the dim names joined by "_"); the root mesh then slices it by
        that name. Every rank of the root mesh calls it (it creates the groups)."""
        if not self.mesh_dim_names:
            raise RuntimeError("Cannot flatten a DeviceMesh without mesh_dim_names!")
        name = mesh_dim_name or "_".join(self.mesh_dim_names)
        if self.ndim == 1 and name in self.mesh_dim_names:
            return self
        root = self._root or self
        known = root._flatten_mapping.get(name)
        if known is not None:
            return known
        dims = self._root_dims or list(range(self.ndim))
        others = [d for d in range(root.ndim) if d not in dims]
        arr = np.transpose(root._mesh, others + dims)
        size = int(np.prod([root._mesh.shape[d] for d in dims]))
        me, mine = c10d.get_rank(), None
        for line in arr.reshape(-1, size):  # every rank creates every group, in one order
            ranks = line.tolist()
            g = c10d.new_group(ranks)
            if me in ranks:
                mine, mine_ranks = g, ranks
        flat = DeviceMesh(self.device_type, mine_ranks, mesh_dim_names=(name,), _groups=[mine])
        root._flatten_mapping[name] = flat
        return flat

    def __eq__(self, other):
        return (
            isinstance(other, DeviceMesh)
            and np.array_equal(self._mesh, other._mesh)
            and (self.mesh_dim_names == other.mesh_dim_names)
        )

    def __hash__(self):
        return hash((self._mesh.tobytes(), self._mesh.shape, self.mesh_dim_names))

    def __repr__(self):
        """torch's form: the sizes (named), the device and each dimension's stride in ranks
        (`()` for a dimension of size 1), and the ranks themselves with
        TORCH_DISTRIBUTED_DEBUG=DETAIL."""
        sizes = self._mesh.shape
        if self.mesh_dim_names:
            shape = "(" + ", ".join(f"{k}={v}" for k, v in zip(self.mesh_dim_names, sizes)) + ")"
        else:
            shape = str(tuple(sizes))
        strides = []
        for d, n in enumerate(sizes):
            if n > 1:
                nxt = tuple(1 if k == d else 0 for k in range(len(sizes)))
                strides.append(int(self._mesh[nxt] - self._mesh[(0,) * len(sizes)]))
            else:
                strides.append(())  # torch's layout prints a size-1 dim's stride so
        text = f"DeviceMesh({shape}, '{self.device_type}', stride={tuple(strides)}"
        if os.environ.get("TORCH_DISTRIBUTED_DEBUG", "") == "DETAIL":
            text += f", Mesh: {self._mesh.tolist()}"
        return text + ")"


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None, backend_override=None):
    """init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None) -> DeviceMesh

    A mesh of the given shape over the world's ranks in order (row-major), with a process group
    along each dimension; initializes the default group from the environment if needed."""
    if not c10d.is_initialized():
        c10d.init_process_group("gloo")
    shape = tuple(mesh_shape)
    n = int(np.prod(shape))
    world = c10d.get_world_size()
    if n > world:  # torch's words
        raise RuntimeError(
            f"Mesh should not be bigger than default world size {world}, but found {n} ranks!"
        )
    if n != world:
        raise RuntimeError(
            f"init_device_mesh: mesh_shape {shape} holds {n} ranks; the world has {world}"
        )
    if mesh_dim_names is not None and len(set(mesh_dim_names)) != len(mesh_dim_names):
        raise RuntimeError(f"mesh_dim_names {tuple(mesh_dim_names)} must be unique")
    return DeviceMesh(device_type, np.arange(n).reshape(shape), mesh_dim_names=mesh_dim_names)


def _default_mesh():
    """A 1-d mesh over the whole world (what DTensor APIs use when given no mesh)."""
    if not c10d.is_initialized():
        c10d.init_process_group("gloo")
    return DeviceMesh("cpu", np.arange(c10d.get_world_size()))
