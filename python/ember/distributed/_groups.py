"""Process groups (torch.distributed.distributed_c10d's group half): init_process_group, the
default group, new_group and the rank maps. Ranks passed to the collectives are global ranks, as
in torch; each group maps them to its own. The C++ side (ember._C._distributed,
csrc/ember/distributed) runs Gloo: Note [Process groups] in process_group.h."""

import datetime
import os
import socket
import urllib.parse
import warnings

from .._C import _distributed as _C
from ._store import FileStore, PrefixStore, TCPStore

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
        # "cpu:gloo" (a backend per device type) stays as written, as torch's
        for part in value.split(","):
            backend = part[4:] if part.startswith("cpu:") else part
            if backend in ("nccl", "mpi", "ucc", "xccl"):
                raise RuntimeError(f"Distributed package doesn't have {backend.upper()} built in")
            if backend != "gloo" and backend != "undefined":
                raise ValueError(f"Invalid backend: '{name}'")
        return str.__new__(cls, value)


class ProcessGroup:
    """A group of ranks that calls collectives together (torch's ProcessGroup).

    rank() and size() are this process's rank in the group and the group's size."""

    def __init__(self, pg, ranks, name, backend="gloo"):
        self._pg = pg
        self._ranks = list(ranks)
        self.group_name = name
        self._backend = backend  # as init_process_group or new_group got it (get_backend)

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
    backend = Backend(backend or "gloo")
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
    pg = _new_pg(prefixed, rank, world_size, timeout, master)
    pg = ProcessGroup(pg, range(world_size), "0", backend)
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
    backend = world._backend if backend is None else Backend(backend)
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
        _new_pg(store, ranks.index(me), len(ranks), timeout, _world.master), ranks, name, backend
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

    The backend of group ("gloo", or "cpu:gloo" as init_process_group or new_group got it)."""
    g = _group(group)
    if g is None:
        raise ValueError("Invalid process group specified")
    return Backend(g._backend)


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
