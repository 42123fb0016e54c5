"""Process groups and collectives (torch.distributed.distributed_c10d), over Gloo.

The default group comes from init_process_group; new_group makes sub-groups of it. Ranks passed
to the collectives (src, dst) are global ranks, as in torch; each group maps them to its own.
The C++ side (ember._C._distributed, csrc/ember/distributed) runs the collectives: Note
[Process groups] in process_group.h.
"""

import datetime
import io
import os
import pickle
import socket
import urllib.parse
import warnings

from .. import _C as _C_root
from .._C import _distributed as _C

ReduceOp = _C.ReduceOp
Store = _C.Store
TCPStore = _C.TCPStore
FileStore = _C.FileStore
HashStore = _C.HashStore
PrefixStore = _C.PrefixStore
Work = _C.Work


# torch's extended Store API, on every store (the binding's set/get/add/compare_set/wait below
# it): this module is where Store gets its Python face, so the methods are added here.
def _store_append(self, key, value):
    """append(key, value) -> None

    Appends value to the value under key (creating it), atomically (compare_set)."""
    value = value.encode() if isinstance(value, str) else bytes(value)
    while True:  # compare_set fails when another rank appended in between
        current = self.get(key) if self.check([key]) else b""
        if self.compare_set(key, current, current + value) == current + value:
            return


def _store_multi_get(self, keys):
    """multi_get(keys) -> List[bytes]

    The values under keys, waiting up to the timeout for each."""
    return [self.get(k) for k in keys]


def _store_multi_set(self, keys, values):
    """multi_set(keys, values) -> None

    Stores each of values under the key at the same position of keys."""
    if len(keys) != len(values):
        raise ValueError(f"multi_set: got {len(keys)} keys and {len(values)} values")
    for k, v in zip(keys, values):
        self.set(k, v)


def _store_barrier(self, key, world_size, timeout=None):
    """barrier(key, world_size, timeout=None) -> None

    Waits until world_size callers have reached the barrier named key (the store's timeout
    unless timeout is given)."""
    if self.add(key, 1) == world_size:
        self.set(key + "/done", "1")
    self.wait([key + "/done"], timeout)


def _store_has_extended_api(self):
    """has_extended_api() -> bool

    Whether the store has append, multi_get, multi_set and barrier: every ember store has."""
    return True


for _name, _fn in (
    ("append", _store_append),
    ("multi_get", _store_multi_get),
    ("multi_set", _store_multi_set),
    ("barrier", _store_barrier),
    ("has_extended_api", _store_has_extended_api),
):
    _fn.__name__ = _fn.__qualname__ = _name
    setattr(Store, _name, _fn)

default_pg_timeout = datetime.timedelta(minutes=30)

_NO_GROUP = (
    "Default process group has not been initialized, please make sure to call init_process_group."
)


class Backend(str):
    """Backend(name)

    A backend's name, lower case ("gloo"); ember has only Gloo."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"
    UCC = "ucc"

    def __new__(cls, name):
        value = name.lower()
        if value.startswith("cpu:"):
            value = value[4:]
        if value in ("nccl", "mpi", "ucc", "xccl"):
            raise RuntimeError(f"Distributed package doesn't have {value.upper()} built in")
        if value != "gloo" and value != "undefined":
            raise ValueError(f"Invalid backend: '{name}'")
        return str.__new__(cls, value)


class ProcessGroup:
    """A group of ranks that calls collectives together (torch's ProcessGroup).

    rank() and size() are this process's rank in the group and the group's size."""

    def __init__(self, pg, ranks, name):
        self._pg = pg
        self._ranks = list(ranks)
        self.group_name = name

    def rank(self):
        """rank() -> int

        This process's rank in the group."""
        return self._pg.rank()

    def size(self):
        """size() -> int

        How many ranks the group has."""
        return self._pg.size()

    def name(self):
        """name() -> str

        The backend's name."""
        return "gloo"

    def __repr__(self):
        return f"<ProcessGroup gloo ranks={self._ranks}>"


class GroupMember:
    """The default group (WORLD) and the marker new_group returns to non-members."""

    WORLD = None
    NON_GROUP_MEMBER = -100


group = GroupMember


class _World:
    def __init__(self):
        self.default = None
        self.store = None
        self.default_store = None
        self.count = 0
        self.groups = []


_world = _World()


def is_available():
    """is_available() -> bool

    True: ember's distributed package runs on Gloo."""
    return True


def is_gloo_available():
    """is_gloo_available() -> bool

    True: Gloo is ember's backend."""
    return True


def is_nccl_available():
    """is_nccl_available() -> bool

    False: ember runs on CPUs."""
    return False


def is_mpi_available():
    """is_mpi_available() -> bool

    False: ember has no MPI backend."""
    return False


def is_ucc_available():
    """is_ucc_available() -> bool

    False: ember has no UCC backend."""
    return False


def is_backend_available(backend):
    """is_backend_available(backend) -> bool

    Whether backend ("gloo") can make process groups."""
    return str(backend).lower() in ("gloo", "cpu:gloo")


def is_initialized():
    """is_initialized() -> bool

    Whether the default process group exists."""
    return _world.default is not None


def is_torchelastic_launched():
    """is_torchelastic_launched() -> bool

    Whether a launcher (ember.distributed.run, torchrun) started this process."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def _default():
    if _world.default is None:
        raise ValueError(_NO_GROUP)
    return _world.default


def _group(g):
    if g is None or g is GroupMember.WORLD:
        return _default()
    if g == GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(g, ProcessGroup):
        raise TypeError(f"expected a ProcessGroup as group; got {type(g).__name__}")
    if g not in _world.groups:
        raise ValueError("Invalid process group specified")
    return g


def _timeout_arg(timeout):
    if timeout is None:
        return default_pg_timeout
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError(
            f"Expected timeout argument to be of type datetime.timedelta; got {timeout}"
        )
    return timeout


def _loopback(host):
    return host in ("localhost", "::1") or host.startswith("127.")


def _local_address(master_addr, master_port):
    """The address this machine reaches master_addr from: the one peers can reach it on."""
    if not master_addr or _loopback(master_addr):
        return "127.0.0.1"
    try:
        fam = socket.getaddrinfo(master_addr, master_port, type=socket.SOCK_DGRAM)[0]
        with socket.socket(fam[0], socket.SOCK_DGRAM) as s:
            s.connect(fam[4])
            return s.getsockname()[0]
    except OSError:
        return socket.gethostname()


def _env(name, method):
    v = os.environ.get(name)
    if v is None:
        raise ValueError(
            f"Error initializing torch.distributed using {method} rendezvous: environment "
            f"variable {name} expected, but not set"
        )
    return v


def _rendezvous(init_method, rank, world_size, timeout):
    """(store, rank, world_size, the master's address) for init_method."""
    url = urllib.parse.urlparse(init_method)
    query = dict(urllib.parse.parse_qsl(url.query))
    if rank == -1 and "rank" in query:
        rank = int(query["rank"])
    if world_size == -1 and "world_size" in query:
        world_size = int(query["world_size"])
    if url.scheme == "env":
        if rank == -1:
            rank = int(_env("RANK", "env://"))
        if world_size == -1:
            world_size = int(_env("WORLD_SIZE", "env://"))
        host = _env("MASTER_ADDR", "env://")
        port = int(_env("MASTER_PORT", "env://"))
    elif url.scheme == "tcp":
        if rank == -1 or world_size == -1:
            raise ValueError("rank and world_size must be given for the tcp:// init_method")
        host, port = url.hostname, url.port
        if host is None or port is None:
            raise ValueError(f"tcp:// init_method needs host:port; got '{init_method}'")
    elif url.scheme == "file":
        if rank == -1 or world_size == -1:
            raise ValueError("rank and world_size must be given for the file:// init_method")
        path = url.path if not url.netloc else url.netloc + url.path
        store = FileStore(path, world_size)
        store.set_timeout(timeout)
        return store, rank, world_size, None
    else:
        raise RuntimeError(f"No rendezvous handler for {url.scheme}://")
    # A launcher that hosts the store itself says so, and every rank is its client.
    agent_store = os.environ.get("TORCHELASTIC_USE_AGENT_STORE", "").lower() == "true"
    store = TCPStore(
        host, port, world_size, rank == 0 and not agent_store, timeout, wait_for_workers=False
    )
    return store, rank, world_size, host


def _new_pg(store, rank, size, timeout, master):
    iface = os.environ.get("GLOO_SOCKET_IFNAME", "").split(",")[0]
    hostname = "" if iface else _local_address(master, 0)
    check = os.environ.get("EMBER_DISTRIBUTED_CHECK", "1") != "0"
    return _C.ProcessGroupGloo(store, rank, size, timeout, hostname, iface, check)


def init_process_group(
    backend=None,
    init_method=None,
    timeout=None,
    world_size=-1,
    rank=-1,
    store=None,
    group_name="",
    pg_options=None,
    device_id=None,
):
    """init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
        store=None, group_name='', pg_options=None, device_id=None) -> None

    Joins this process to the default group: rendezvous through init_method ("env://" reads
    MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE; "tcp://host:port"; "file://path") or through
    a given store, then Gloo connects every pair of ranks."""
    if _world.default is not None:
        raise ValueError("trying to initialize the default process group twice!")
    Backend(backend or "gloo")
    timeout = _timeout_arg(timeout)
    if store is not None:
        if init_method is not None:
            raise ValueError("Cannot specify both init_method and store.")
        if world_size <= 0 or rank < 0:
            raise ValueError("world_size and rank must be given with a store")
        master = os.environ.get("MASTER_ADDR")
    else:
        store, rank, world_size, master = _rendezvous(
            init_method or "env://", rank, world_size, timeout
        )
    # A restarted job meets in the same launcher's store: each attempt uses its own keys; under
    # an elastic rendezvous each start of the workers is a new round, which the launcher
    # numbers (nodes of one round may have different restart counts).
    attempt = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
    rdzv_round = os.environ.get("EMBER_RDZV_ROUND")
    if rdzv_round is not None:
        prefix = "" if rdzv_round == "0" else f"round_{rdzv_round}/"
    else:
        prefix = "" if attempt == "0" else f"attempt_{attempt}/"
    prefixed = PrefixStore(f"{prefix}default_pg", store)
    pg = ProcessGroup(_new_pg(prefixed, rank, world_size, timeout, master), range(world_size), "0")
    _world.default, _world.store, _world.count = pg, store, 1
    # torch's default store is the group's own PrefixStore ("0/" under "default_pg")
    _world.default_store = PrefixStore("0/", prefixed)
    _world.master = master
    _world.prefix = prefix
    _world.groups = [pg]
    GroupMember.WORLD = pg


def _get_default_store():
    """_get_default_store() -> PrefixStore

    The default group's store, as torch's: PrefixStore "0/" over its "default_pg" one."""
    if _world.default is None:
        raise ValueError(
            "Default process group has not been initialized, please make sure to "
            "call init_process_group."
        )
    return _world.default_store


def destroy_process_group(group=None):
    """destroy_process_group(group=None) -> None

    Closes group (by default every group, the default one included)."""
    if group is None or group is GroupMember.WORLD:
        if _world.default is None:
            raise ValueError(_NO_GROUP)
        _world.groups.clear()
        _world.default = _world.store = _world.default_store = None
        GroupMember.WORLD = None
        return
    if group == GroupMember.NON_GROUP_MEMBER:
        return
    if group in _world.groups:
        _world.groups.remove(group)
        group._pg = None


def new_group(
    ranks=None,
    timeout=None,
    backend=None,
    pg_options=None,
    use_local_synchronization=False,
    group_desc=None,
    device_id=None,
):
    """new_group(ranks=None, timeout=None, backend=None, pg_options=None,
        use_local_synchronization=False) -> ProcessGroup

    A group of the given global ranks (all by default). Every process must call it, in the same
    order; processes outside ranks get GroupMember.NON_GROUP_MEMBER."""
    world = _default()
    if backend is not None:
        Backend(backend)
    timeout = _timeout_arg(timeout) if timeout is not None else world._pg.timeout
    n = world.size()
    ranks = sorted(range(n) if ranks is None else ranks)
    for r in ranks:
        if not 0 <= r < n:
            raise ValueError(
                f"Invalid rank {r}: every rank of a new group must be in [0, {n}); got {ranks}"
            )
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"new_group: ranks must be distinct; got {ranks}")
    name = str(_world.count)
    _world.count += 1
    me = world.rank()
    if me not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    store = PrefixStore(f"{_world.prefix}group_{name}", _world.store)
    pg = ProcessGroup(
        _new_pg(store, ranks.index(me), len(ranks), timeout, _world.master), ranks, name
    )
    _world.groups.append(pg)
    return pg


def get_rank(group=None):
    """get_rank(group=None) -> int

    This process's rank in group (-1 when it is not a member)."""
    g = _group(group)
    return -1 if g is None else g.rank()


def get_world_size(group=None):
    """get_world_size(group=None) -> int

    How many ranks group has (-1 when this process is not a member)."""
    g = _group(group)
    return -1 if g is None else g.size()


def get_backend(group=None):
    """get_backend(group=None) -> Backend

    The backend of group: "gloo"."""
    _group(group)
    return Backend("gloo")


def get_process_group_ranks(group):
    """get_process_group_ranks(group) -> List[int]

    The global ranks of group's members, in group-rank order."""
    return list(_group(group)._ranks)


def get_global_rank(group, group_rank):
    """get_global_rank(group, group_rank) -> int

    The global rank of group's member group_rank (on the default group: group_rank itself,
    unchecked, as torch)."""
    if group is GroupMember.WORLD:
        return group_rank
    g = _group(group)
    if not 0 <= group_rank < len(g._ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {g}")
    return g._ranks[group_rank]


def _get_global_rank(group, rank):
    """_get_global_rank(group, rank) -> int: get_global_rank's old name (warns as torch)."""
    warnings.warn(
        "`torch.distributed.distributed_c10d._get_global_rank` is deprecated, please use "
        "`torch.distributed.distributed_c10d.get_global_rank` instead",
        FutureWarning,
        stacklevel=2,
    )
    return get_global_rank(group, rank)


def get_group_rank(group, global_rank):
    """get_group_rank(group, global_rank) -> int

    The rank in group of the process with global_rank (on the default group: global_rank
    itself, unchecked, as torch)."""
    if group is GroupMember.WORLD:
        return global_rank
    g = _group(group)
    if global_rank not in g._ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {g}")
    return g._ranks.index(global_rank)


def _peer(g, global_rank, what):
    if global_rank not in g._ranks:
        raise ValueError(
            f"{what}: global rank {global_rank} is not part of the group (ranks {g._ranks})"
        )
    return g._ranks.index(global_rank)


def _done(work, async_op, stage=None):
    if stage is not None and stage.back:
        work.wait()  # (then the results go back into the caller's tensors)
        for t, dense in stage.back:
            t.copy_(dense)
        return work if async_op else None
    if async_op:
        return work
    work.wait()
    return None


class _Stage:
    """The tensors a collective is given, made ones Gloo can move as torch's gloo backend does:
    a non-contiguous tensor is replaced by a contiguous copy (outputs copied back after the
    call), and a complex tensor of a SUM or AVG reduction by its real view."""

    def __init__(self, name, op=None):
        self.name, self.op, self.back = name, op, []

    def __call__(self, t, out=False):
        if t is None or not isinstance(t, _C_root.Tensor):
            return t
        if not t.is_contiguous():
            dense = t.contiguous()
            if out:
                self.back.append((t, dense))
            t = dense
        if self.op is not None and t.is_complex():
            if self.op not in (ReduceOp.SUM, ReduceOp.AVG):
                raise ValueError(
                    f"{self.name} does not support RedOpType.{self.op.name} on complex tensors"
                )
            from .. import view_as_real

            t = view_as_real(t)
        return t

    def all(self, tensors, out=False):
        return [self(t, out) for t in tensors]


def _pg(group, op):
    g = _group(group)
    if g is None:
        warnings.warn(
            f"Running {op} on global rank {get_rank()} which does not belong to the given group."
        )
    return g


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False) -> Optional[Work]

    Reduces tensor over every rank of group, in place on every rank."""
    g = _pg(group, "all_reduce")
    if g is None:
        return None
    st = _Stage("all_reduce", op)
    return _done(g._pg.allreduce(st(tensor, True), op, async_op), async_op, st)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False) -> Optional[Work]

    Reduces tensor over every rank into the tensor of rank dst."""
    g = _pg(group, "reduce")
    if g is None:
        return None
    root = group_dst if group_dst is not None else _peer(g, 0 if dst is None else dst, "reduce")
    st = _Stage("reduce", op)
    return _done(g._pg.reduce(st(tensor, True), root, op, async_op), async_op, st)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """broadcast(tensor, src=None, group=None, async_op=False) -> Optional[Work]

    Copies rank src's tensor into every rank's tensor."""
    g = _pg(group, "broadcast")
    if g is None:
        return None
    root = group_src if group_src is not None else _peer(g, 0 if src is None else src, "broadcast")
    st = _Stage("broadcast")
    return _done(g._pg.broadcast(st(tensor, True), root, async_op), async_op, st)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """all_gather(tensor_list, tensor, group=None, async_op=False) -> Optional[Work]

    tensor_list[r] receives the tensor of group rank r, on every rank."""
    g = _pg(group, "all_gather")
    if g is None:
        return None
    st = _Stage("all_gather")
    work = g._pg.allgather(st.all(tensor_list, True), st(tensor), async_op)
    return _done(work, async_op, st)


def all_gather_single(output_tensor, input_tensor, group=None, async_op=False):
    """all_gather_single(output_tensor, input_tensor, group=None, async_op=False)
        -> Optional[Work]

    output_tensor receives every rank's input_tensor, concatenated on dim 0 (or stacked)."""
    g = _pg(group, "all_gather_into_tensor")
    if g is None:
        return None
    st = _Stage("all_gather_into_tensor")
    work = g._pg.allgather_into_tensor(st(output_tensor, True), st(input_tensor), async_op)
    return _done(work, async_op, st)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """gather(tensor, gather_list=None, dst=None, group=None, async_op=False) -> Optional[Work]

    Rank dst's gather_list[r] receives the tensor of group rank r."""
    g = _pg(group, "gather")
    if g is None:
        return None
    root = group_dst if group_dst is not None else _peer(g, 0 if dst is None else dst, "gather")
    outs = list(gather_list) if gather_list is not None and g.rank() == root else []
    if g.rank() != root and gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    st = _Stage("gather")
    return _done(g._pg.gather(st.all(outs, True), st(tensor), root, async_op), async_op, st)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """scatter(tensor, scatter_list=None, src=None, group=None, async_op=False) -> Optional[Work]

    tensor receives scatter_list[rank] from rank src."""
    g = _pg(group, "scatter")
    if g is None:
        return None
    root = group_src if group_src is not None else _peer(g, 0 if src is None else src, "scatter")
    if g.rank() != root and scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    ins = list(scatter_list) if scatter_list is not None and g.rank() == root else []
    st = _Stage("scatter")
    return _done(g._pg.scatter(st(tensor, True), st.all(ins), root, async_op), async_op, st)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False)
        -> Optional[Work]

    output receives the reduction over ranks of their input_list[rank]."""
    g = _pg(group, "reduce_scatter")
    if g is None:
        return None
    st = _Stage("reduce_scatter", op)
    work = g._pg.reduce_scatter(st(output, True), st.all(input_list), op, async_op)
    return _done(work, async_op, st)


def reduce_scatter_single(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """reduce_scatter_single(output, input, op=ReduceOp.SUM, group=None, async_op=False)
        -> Optional[Work]

    output receives the reduction over ranks of chunk rank of their input (split on dim 0)."""
    g = _pg(group, "reduce_scatter_tensor")
    if g is None:
        return None
    st = _Stage("reduce_scatter_tensor", op)
    work = g._pg.reduce_scatter_tensor(st(output, True), st(input), op, async_op)
    return _done(work, async_op, st)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False)
        -> Optional[Work]

    output_tensor_list[r] receives input_tensor_list[rank] of group rank r."""
    g = _pg(group, "all_to_all")
    if g is None:
        return None
    for what, tensors in (("input", input_tensor_list), ("output", output_tensor_list)):
        if len(tensors) != g.size():  # torch's RuntimeError and words
            raise RuntimeError(
                f"ProcessGroupGloo::alltoall: {what} tensor list size {len(tensors)} does not "
                f"match world size {g.size()}"
            )
    work = g._pg.alltoall(list(output_tensor_list), list(input_tensor_list), async_op)
    return _done(work, async_op)


def all_to_all_single(
    output, input, output_split_sizes=None, input_split_sizes=None, group=None, async_op=False
):
    """all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
        group=None, async_op=False) -> Optional[Work]

    Splits input on dim 0 (evenly, or by input_split_sizes) and sends split r to group rank r;
    output gathers the splits received, in rank order."""
    g = _pg(group, "all_to_all_single")
    if g is None:
        return None
    outs = list(output_split_sizes or [])
    ins = list(input_split_sizes or [])
    if not (output.is_contiguous() and input.is_contiguous()):
        raise ValueError("Tensors must be contiguous")  # torch's gloo: ValueError here
    return _done(g._pg.alltoall_base(output, input, outs, ins, async_op), async_op)


def barrier(group=None, async_op=False, device_ids=None):
    """barrier(group=None, async_op=False, device_ids=None) -> Optional[Work]

    Returns once every rank of group called it."""
    g = _pg(group, "barrier")
    if g is None:
        return None
    return _done(g._pg.barrier(async_op), async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """monitored_barrier(group=None, timeout=None, wait_all_ranks=False) -> None

    A barrier whose rank 0 raises RuntimeError naming the ranks that did not reach it within
    timeout (all of them with wait_all_ranks)."""
    g = _pg(group, "monitored_barrier")
    if g is None:
        return None
    timeout = g._pg.timeout if timeout is None else _timeout_arg(timeout)
    g._pg.monitored_barrier(timeout, wait_all_ranks)


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """isend(tensor, dst=None, group=None, tag=0) -> Optional[Work]

    Starts sending tensor to rank dst; wait() on the Work finishes it."""
    g = _pg(group, "isend")
    if g is None:
        return None
    peer = group_dst if group_dst is not None else _peer(g, dst, "isend")
    return g._pg.send(tensor, peer, tag)


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """irecv(tensor, src=None, group=None, tag=0) -> Optional[Work]

    Starts receiving into tensor from rank src (any rank when None)."""
    g = _pg(group, "irecv")
    if g is None:
        return None
    if group_src is not None:
        peer = group_src
    else:
        peer = -1 if src is None else _peer(g, src, "irecv")
    return g._pg.recv(tensor, peer, tag)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """send(tensor, dst=None, group=None, tag=0) -> None

    Sends tensor to rank dst and waits until it left."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """recv(tensor, src=None, group=None, tag=0) -> int

    Receives into tensor from rank src (any rank when None); returns the sender's rank."""
    g = _group(group)
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return g._ranks[work._source_rank()]


class P2POp:
    """P2POp(op, tensor, peer=None, group=None, tag=0)

    One send or receive of batch_isend_irecv: op is isend or irecv."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError(
                "Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                "``torch.distributed.irecv``."
            )
        self.op, self.tensor, self.peer, self.group, self.tag = op, tensor, peer, group, tag
        self.group_peer = group_peer


def batch_isend_irecv(p2p_op_list):
    """batch_isend_irecv(p2p_op_list) -> List[Work]

    Starts every send and receive of the list; returns their Works."""
    if not p2p_op_list or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError(
            "Invalid ``p2p_op_list``. Each op is expected to to be of type "
            "``torch.distributed.P2POp``."
        )
    return [p.op(p.tensor, p.peer, p.group, p.tag, p.group_peer) for p in p2p_op_list]


# ---- object collectives: pickled bytes in uint8 tensors ----


def _to_tensor(obj):
    import numpy as np  # (not at import: `import ember` leaves numpy unloaded)

    buf = io.BytesIO()
    pickle.Pickler(buf).dump(obj)
    data = np.frombuffer(buf.getbuffer(), dtype=np.uint8).copy()
    return _C_root.from_numpy(data), len(data)


def _from_tensor(t, size):
    return pickle.loads(t.numpy()[:size].tobytes())


def _bytes(n):
    import numpy as np

    return _C_root.from_numpy(np.zeros(n, dtype=np.uint8))


def _long(values):
    import numpy as np

    return _C_root.from_numpy(np.asarray(values, dtype=np.int64))


def all_gather_object(object_list, obj, group=None):
    """all_gather_object(object_list, obj, group=None) -> None

    object_list[r] receives group rank r's obj (any picklable object); entries past the group's
    size are left as they are."""
    g = _pg(group, "all_gather_object")
    if g is None:
        return
    n = g.size()
    if len(object_list) < n:  # a longer list keeps its extra entries, as torch's
        raise ValueError(
            f"all_gather_object: expected object_list of {n} entries; got {len(object_list)}"
        )
    t, size = _to_tensor(obj)
    sizes = _long([0] * n)
    all_gather_single(sizes, _long([size]), group=g)
    sizes = sizes.tolist()
    width = max(sizes)
    padded = _bytes(width)
    padded[:size] = t
    out = _bytes(width * n)
    all_gather_single(out, padded, group=g)
    for r in range(n):
        object_list[r] = _from_tensor(out[r * width : (r + 1) * width], sizes[r])


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """gather_object(obj, object_gather_list=None, dst=None, group=None) -> None

    Rank dst's object_gather_list[r] receives group rank r's obj."""
    g = _pg(group, "gather_object")
    if g is None:
        return
    n = g.size()
    root = (
        group_dst if group_dst is not None else _peer(g, 0 if dst is None else dst, "gather_object")
    )
    me = g.rank() == root
    if me and (object_gather_list is None or len(object_gather_list) < n):
        raise ValueError(
            f"gather_object: expected object_gather_list of {n} entries on the destination rank"
        )
    t, size = _to_tensor(obj)
    sizes = _long([0] * n)
    all_gather_single(sizes, _long([size]), group=g)
    sizes = sizes.tolist()
    width = max(sizes)
    padded = _bytes(width)
    padded[:size] = t
    outs = [_bytes(width) for _ in range(n)] if me else None
    gather(padded, outs, group=g, group_dst=root)
    if me:
        for r in range(n):
            object_gather_list[r] = _from_tensor(outs[r], sizes[r])


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """broadcast_object_list(object_list, src=None, group=None, device=None) -> None

    Replaces object_list's entries on every rank with rank src's (same length everywhere)."""
    g = _pg(group, "broadcast_object_list")
    if g is None:
        return
    root = (
        group_src
        if group_src is not None
        else _peer(g, 0 if src is None else src, "broadcast_object_list")
    )
    if g.rank() == root:
        parts = [_to_tensor(o) for o in object_list]
        sizes = _long([s for _, s in parts])
    else:
        sizes = _long([0] * len(object_list))
    broadcast(sizes, group=g, group_src=root)
    total = int(sizes.sum().item()) if len(object_list) else 0
    if g.rank() == root:
        data = _C_root.cat([t for t, _ in parts]) if parts else _bytes(0)
    else:
        data = _bytes(total)
    broadcast(data, group=g, group_src=root)
    if g.rank() != root:
        off = 0
        for i, s in enumerate(sizes.tolist()):
            object_list[i] = _from_tensor(data[off : off + s], s)
            off += s


def scatter_object_list(
    scatter_object_output_list, scatter_object_input_list=None, src=None, group=None, group_src=None
):
    """scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None,
        group=None) -> None

    scatter_object_output_list[0] receives rank src's scatter_object_input_list[rank]."""
    g = _pg(group, "scatter_object_list")
    if g is None:
        return
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError(
            "Expected argument scatter_object_output_list to be a list of size at least 1."
        )
    root = (
        group_src
        if group_src is not None
        else _peer(g, 0 if src is None else src, "scatter_object_list")
    )
    me = g.rank() == root
    if me:
        parts = [_to_tensor(o) for o in scatter_object_input_list]
        width = _long([max(s for _, s in parts)])
    else:
        width = _long([0])
    broadcast(width, group=g, group_src=root)
    w = int(width.item())
    ins = None
    sizes_in = None
    if me:
        ins = []
        for t, s in parts:
            p = _bytes(w)
            p[:s] = t
            ins.append(p)
        sizes_in = [_long([s]) for _, s in parts]
    out = _bytes(w)
    size = _long([0])
    scatter(out, ins, group=g, group_src=root)
    scatter(size, sizes_in, group=g, group_src=root)
    scatter_object_output_list[0] = _from_tensor(out, int(size.item()))


# ---- Work.get_future ----


def _get_future(self):
    """get_future() -> Future

    A Future completed with the call's output tensors once it finished."""
    from ..futures import Future

    fut = Future()

    def done():
        err = self.exception()
        if err is not None:
            fut.set_exception(err)
        else:
            fut.set_result(self.result())

    self._add_callback(done)
    return fut


Work.get_future = _get_future
