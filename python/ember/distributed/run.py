"""ember.distributed.run: start a distributed job's worker processes (torchrun's interface).

    python -m ember.distributed.run --nproc-per-node 2 train.py --epochs 3
    emberrun --nnodes 2 --node-rank 0 --master-addr host0 --nproc-per-node 4 train.py

Each worker gets torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,
GROUP_RANK, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_*), so `init_process_group("gloo")` needs no
arguments. The launcher of node 0 hosts the job's TCPStore (workers join it as clients; a
--master-port of 0 picks a free port). Every output line of a worker is prefixed with
"[rank<N>]:". When a worker fails, the launcher stops the others and, once --max-restarts are
spent, raises torch's ChildFailedError (exit status 1), whose table names the first failed rank,
its exit code and the traceback its @record entry point wrote to its error file
(TORCHELASTIC_ERROR_FILE, one per worker and attempt in a temporary directory). Each worker's
kernels use its share of the CPUs (OMP_NUM_THREADS) unless the environment sets it. An elastic
--nnodes MIN:MAX meets in the store at --rdzv-endpoint in rounds: a round starts once MIN nodes
joined and waits last_call_timeout (--rdzv-conf) for up to MAX; a node that comes later waits for
the next round, which the running nodes start (restarting their workers) as soon as they see it
waiting.
"""

import argparse
import datetime
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid

from .elastic.multiprocessing.errors import ChildFailedError, ProcessFailure

__all__ = ["main", "parse_args", "get_args_parser"]


def get_args_parser():
    """get_args_parser() -> argparse.ArgumentParser

    The launcher's command line: torchrun's flags (dashes or underscores)."""
    p = argparse.ArgumentParser(
        prog="python -m ember.distributed.run",
        description="Start the worker processes of a distributed ember (or torch) program.",
    )

    def opt(*names, **kw):
        spelled = []
        for n in names:
            spelled.append(n)
            if "-" in n[2:]:
                spelled.append("--" + n[2:].replace("-", "_"))
        p.add_argument(*spelled, **kw)

    opt("--nnodes", default="1", help="number of nodes, or MIN:MAX (elastic rendezvous)")
    opt("--nproc-per-node", default="1", help="workers per node: an int, 'cpu' or 'auto'")
    opt("--node-rank", type=int, default=0, help="this node's rank in [0, nnodes)")
    opt("--master-addr", default="127.0.0.1", help="address of node 0 (hosts the store)")
    opt("--master-port", type=int, default=29500, help="port of the store on node 0 (0: free)")
    opt("--rdzv-endpoint", default="", help="HOST:PORT of the store (overrides master-*)")
    opt("--rdzv-backend", default="static", help="accepted for torchrun compatibility")
    opt("--rdzv-id", default="none", help="the job id (TORCHELASTIC_RUN_ID)")
    opt("--rdzv-conf", default="", help="accepted for torchrun compatibility")
    opt("--standalone", action="store_true", help="one node, a free local port")
    opt("--max-restarts", type=int, default=0, help="restart the workers this often on failure")
    opt("--monitor-interval", type=float, default=0.1, help="seconds between health checks")
    opt("--role", default="default", help="the workers' role name")
    opt("--no-python", action="store_true", help="run the script as an executable")
    opt("--log-dir", default=None, help="accepted for torchrun compatibility")
    opt("--redirects", default="0", help="accepted for torchrun compatibility")
    opt("--tee", default="0", help="accepted for torchrun compatibility")
    p.add_argument("-m", "--module", action="store_true", help="run the script as a module")
    p.add_argument("training_script", help="the program each worker runs")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def parse_args(args=None):
    """parse_args(args=None) -> argparse.Namespace

    Parses the launcher's command line."""
    return get_args_parser().parse_args(args)


class _Prefixer(threading.Thread):
    """Copies a worker's output stream to ours, each line prefixed with its rank. Only whole
    lines (ended by "\n" or a progress bar's "\r") are written, under one lock per stream, so
    that lines of different workers never interleave."""

    locks = {}

    def __init__(self, src, dst, prefix):
        super().__init__(daemon=True)
        self.src, self.dst, self.prefix = src, dst, prefix
        self.lock = _Prefixer.locks.setdefault(id(dst), threading.Lock())

    def run(self):
        out = self.dst.buffer if hasattr(self.dst, "buffer") else self.dst
        pending = b""
        while True:
            chunk = self.src.read1(65536) if hasattr(self.src, "read1") else self.src.read(4096)
            if not chunk:
                break
            pending += chunk
            cut = max(pending.rfind(b"\n"), pending.rfind(b"\r")) + 1
            if cut:
                self.emit(out, pending[:cut])
                pending = pending[cut:]
        if pending:
            self.emit(out, pending + b"\n")

    def emit(self, out, data):
        parts = []
        for piece in data.splitlines(keepends=True):
            if piece not in (b"\r", b"\n", b"\r\n"):  # (a bare "\r" rewinds a progress bar)
                parts.append(self.prefix)
            parts.append(piece)
        with self.lock:
            out.write(b"".join(parts))
            out.flush()


def _nproc(value):
    if value in ("cpu", "auto"):
        return os.cpu_count() or 1
    n = int(value)
    if n < 1:
        raise ValueError(f"--nproc-per-node must be at least 1; got {value}")
    return n


def _nnodes(value):
    """(min, max) of --nnodes N or MIN:MAX, as torchrun reads it."""
    lo, _, hi = str(value).partition(":")
    lo, hi = int(lo), int(hi or lo)
    if not 0 < lo <= hi:
        raise ValueError(f"--nnodes must be N or MIN:MAX with 0 < MIN <= MAX; got {value}")
    return lo, hi


def _rdzv_conf(text):
    """--rdzv-conf's KEY=VALUE,... as a dict of strings."""
    conf = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        key, _, value = item.partition("=")
        conf[key.strip()] = value.strip()
    return conf


def _is_local(addr):
    """Whether addr names this machine (a socket binds to it)."""
    import socket

    try:
        with socket.socket() as s:
            s.bind((addr, 0))
        return True
    except OSError:
        return False


def _describe(code):
    if code < 0:
        try:
            return f"was killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"failed with exit code {code}"


class _Rendezvous:
    """torch's c10d rendezvous for an elastic --nnodes MIN:MAX, in rounds kept in the job's
    store under prefix. A round takes node ranks in order of arrival and closes when MAX nodes
    joined, or last_call_timeout after MIN were seen, with the count at that moment. A node that
    arrives after a round closed waits for the next one; while the round has room it counts as
    waiting, which makes the running nodes restart their workers (num_nodes_waiting), and the
    next round opens once every node of the closed one has left it or is dead. A node arriving
    at a full round is redundant: it waits without a deadline and ends quietly with the job.

    Heartbeats (torch's keep_alive_interval and keep_alive_max_attempt): a member of a round
    counts up its beat key every interval, from a thread with its own store connection; a
    waiting node takes a member whose beat did not move for interval * max_attempt (by its own
    clock, so the nodes' clocks need not agree) and that did not leave as dead, so a node that
    was killed does not hold the next round back."""

    def __init__(self, store, prefix, nodes, last_call, join_timeout, where, keep_alive):
        self.store, self.key = store, prefix
        self.min_nodes, self.max_nodes = nodes
        self.last_call, self.join_timeout, self.where = last_call, join_timeout, where
        self.round, self.nodes, self.mine = None, 0, None
        self.interval, self.max_attempt, self.connect = keep_alive
        self.beats = {}  # (round, rank) -> (last beat seen, when it was seen)
        self.beating = threading.Event()
        threading.Thread(target=self._beat, daemon=True).start()

    def _beat(self):
        try:
            store = self.connect()
            while True:
                r, mine = self.round, self.mine
                if r is not None:
                    store.add(f"{self.key}{r}/beat/{mine}", 1)
                time.sleep(self.interval)
        except RuntimeError:
            pass  # the store has gone with the node that hosted it

    def _dead(self, r, members):
        """How many members of round r neither left nor beat within the dead window."""
        now, dead = time.monotonic(), 0
        for rank in range(members):
            if self.store.check([f"{self.key}{r}/left/{rank}"]):
                continue
            beat = self._count(f"{r}/beat/{rank}")
            last = self.beats.get((r, rank))
            if last is None or last[0] != beat:
                self.beats[(r, rank)] = (beat, now)
            elif now - last[1] > self.interval * self.max_attempt:
                dead += 1
        return dead

    def _open_next(self, r):
        if self.store.add(f"{self.key}{r}/opened", 1) == 1:
            self.store.add(self.key + "round", 1)

    def _count(self, key):
        return int(self.store.add(self.key + key, 0))

    def next_round(self):
        """(nodes, this node's rank) of the round it joined; None when it was redundant and
        the job ended."""
        store = self.store
        deadline = time.monotonic() + self.join_timeout
        waiting_in, redundant = None, False
        while True:
            if store.check([self.key + "shut"]):
                if redundant:
                    return None
                raise RuntimeError(
                    f"ember.distributed.run: the rendezvous at {self.where} is closed (the job "
                    "ended) before this node could join"
                )
            r = self._count("round")
            if not store.check([f"{self.key}{r}/closed"]):
                mine = store.add(f"{self.key}{r}/joined", 1) - 1
                nodes = self._close(r, deadline)
                if mine < nodes:
                    self.round, self.nodes, self.mine = r, nodes, mine
                    return nodes, mine
                continue  # it closed just before this node joined: wait as a late node
            members = int(store.get(f"{self.key}{r}/closed"))
            staying = members - self._count(f"{r}/left")
            if staying and staying <= self._dead(r, members):
                self._open_next(r)
                continue
            redundant = staying >= self.max_nodes
            if not redundant and waiting_in != r:
                store.add(f"{self.key}{r}/waiting", 1)
                waiting_in = r
            if not redundant and time.monotonic() > deadline:
                raise RuntimeError(
                    f"ember.distributed.run: rendezvous at {self.where} timed out after "
                    f"{self.join_timeout:g}s waiting for the next round"
                )
            time.sleep(0.1)

    def _close(self, r, deadline):
        """The node count of round r, once it closed (this node may close it)."""
        store, closed = self.store, f"{self.key}{r}/closed"
        seen_min = None
        while not store.check([closed]):
            count = self._count(f"{r}/joined")
            now = time.monotonic()
            if count >= self.min_nodes and seen_min is None:
                seen_min = now
            if count >= self.max_nodes or (
                seen_min is not None and now - seen_min >= self.last_call
            ):
                store.compare_set(closed, "", str(min(count, self.max_nodes)))
                break
            if now > deadline:
                raise RuntimeError(
                    f"ember.distributed.run: rendezvous at {self.where} timed out after "
                    f"{self.join_timeout:g}s with {count} of at least {self.min_nodes} nodes"
                )
            time.sleep(0.05)
        return int(store.get(closed))

    def num_nodes_waiting(self):
        """How many nodes wait to join after this node's round closed (0 once the store has
        gone: the node hosting it ended, and this node's workers decide how it ends)."""
        try:
            return self._count(f"{self.round}/waiting")
        except RuntimeError:
            return 0

    def leave(self):
        """This node leaves its round; the last to leave opens the next one."""
        r, self.round = self.round, None
        self.store.set(f"{self.key}{r}/left/{self.mine}", "1")
        if self.store.add(f"{self.key}{r}/left", 1) == self.nodes:
            self._open_next(r)

    def shutdown(self, succeeded, timeout=300.0):
        """The job ended on this node. After a success, torch's exit barrier first: wait (up to
        timeout) until every node of the round finished, so that the node hosting the store
        outlives the others' use of it. Then the rendezvous is shut: nodes that wait stop."""
        try:
            if succeeded:
                self.store.add(f"{self.key}{self.round}/finished", 1)
                deadline = time.monotonic() + timeout
                while self._count(f"{self.round}/finished") < self.nodes:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.1)
            self.store.set(self.key + "shut", "1")
        except RuntimeError:
            pass  # the store has gone with the node that hosted it


class _Job:
    def __init__(self, args):
        self.args = args
        self.nproc = _nproc(args.nproc_per_node)
        self.min_nodes, self.max_nodes = _nnodes(args.nnodes)
        self.elastic = self.min_nodes != self.max_nodes
        self.nnodes = self.max_nodes
        if not self.elastic and not 0 <= args.node_rank < self.nnodes:
            raise ValueError(f"--node-rank must be in [0, {self.nnodes}); got {args.node_rank}")
        if args.standalone:
            self.addr, self.port = "127.0.0.1", 0
        elif args.rdzv_endpoint:
            host, _, port = args.rdzv_endpoint.rpartition(":")
            self.addr, self.port = (host or args.rdzv_endpoint), int(port or 29400)
        else:
            self.addr, self.port = args.master_addr, args.master_port
        self.node_rank = args.node_rank
        self.world = self.nnodes * self.nproc
        self.run_id = args.rdzv_id if args.rdzv_id != "none" else uuid.uuid4().hex[:12]
        self.store = None
        self.procs = []
        self.log_dir = tempfile.mkdtemp(prefix="torchelastic_")

    def host_store(self):
        """Node 0 serves the job's store; workers and other nodes connect to it. With an
        elastic --nnodes the node whose address is the endpoint's hosts it (the first to bind
        the port, as torch's c10d rendezvous), and the others join as clients."""
        from .distributed_c10d import TCPStore

        life = datetime.timedelta(minutes=30)
        if not self.elastic:
            if self.node_rank == 0:
                self.store = TCPStore("0.0.0.0", self.port, None, True, life, False)
                self.port = self.store.port
            return
        if self.port == 0 or _is_local(self.addr):
            try:
                self.store = TCPStore("0.0.0.0", self.port, None, True, life, False)
                self.port = self.store.port
            except RuntimeError:
                if self.port == 0:
                    raise
        conf = _rdzv_conf(self.args.rdzv_conf)
        join = float(conf.get("join_timeout", 600))

        def connect():
            return TCPStore(
                self.addr, self.port, None, False, datetime.timedelta(seconds=join), False
            )

        keep_alive = (
            float(conf.get("keep_alive_interval", 5)),
            int(conf.get("keep_alive_max_attempt", 3)),
            connect,
        )
        self.rdzv = _Rendezvous(
            connect(),
            f"ember_rdzv/{self.args.rdzv_id}/",
            (self.min_nodes, self.max_nodes),
            float(conf.get("last_call_timeout", 30)),
            join,
            f"{self.addr}:{self.port}",
            keep_alive,
        )

    def rendezvous(self):
        """Elastic --nnodes: joins the next round (see _Rendezvous); False when this node was
        redundant and the job ended without it (torch's graceful exit)."""
        got = self.rdzv.next_round()
        if got is None:
            return False
        self.nnodes, self.node_rank = got
        self.world = self.nnodes * self.nproc
        return True

    def command(self):
        a = self.args
        if a.no_python:
            return [a.training_script] + a.training_script_args
        if a.module:
            return [sys.executable, "-u", "-m", a.training_script] + a.training_script_args
        return [sys.executable, "-u", a.training_script] + a.training_script_args

    def env(self, local_rank, restart):
        env = dict(os.environ)
        rank = self.node_rank * self.nproc + local_rank
        env.update(
            RANK=str(rank),
            LOCAL_RANK=str(local_rank),
            GROUP_RANK=str(self.node_rank),
            ROLE_RANK=str(rank),
            ROLE_NAME=self.args.role,
            WORLD_SIZE=str(self.world),
            LOCAL_WORLD_SIZE=str(self.nproc),
            ROLE_WORLD_SIZE=str(self.world),
            GROUP_WORLD_SIZE=str(self.nnodes),
            MASTER_ADDR=self.addr,
            MASTER_PORT=str(self.port),
            TORCHELASTIC_RUN_ID=self.run_id,
            TORCHELASTIC_RESTART_COUNT=str(restart),
            TORCHELASTIC_MAX_RESTARTS=str(self.args.max_restarts),
            TORCHELASTIC_USE_AGENT_STORE="True",
            TORCHELASTIC_ERROR_FILE=self.error_file(local_rank, restart),
            PYTHONUNBUFFERED="1",
        )
        if self.elastic:  # each round's workers meet under their own keys (distributed_c10d)
            env["EMBER_RDZV_ROUND"] = str(self.rdzv.round)
        if "OMP_NUM_THREADS" not in os.environ:
            env["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // self.nproc))
        return env

    def error_file(self, local_rank, restart):
        folder = os.path.join(self.log_dir, self.run_id, f"attempt_{restart}", str(local_rank))
        os.makedirs(folder, exist_ok=True)
        return os.path.join(folder, "error.json")

    def failures(self, root, restart):
        """ChildFailedError's failures: root (the first failure, read when it was seen), then
        every other worker that ended with a non-zero status (the ones stop() ended among
        them, as torch's agent reports)."""
        out = {root[0]: root[1]}
        for rank, lr, p in self.procs:
            if p.returncode and rank not in out:
                out[rank] = ProcessFailure(lr, p.pid, p.returncode, self.error_file(lr, restart))
        return out

    def start(self, restart):
        self.procs = []
        self.pumps = []
        for lr in range(self.nproc):
            rank = self.node_rank * self.nproc + lr
            p = subprocess.Popen(
                self.command(),
                env=self.env(lr, restart),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
            prefix = f"[rank{rank}]:".encode()
            for src, dst in ((p.stdout, sys.stdout), (p.stderr, sys.stderr)):
                t = _Prefixer(src, dst, prefix)
                t.start()
                self.pumps.append(t)
            self.procs.append((rank, lr, p))

    def stop(self, grace=5.0):
        for _, _, p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + grace
        for _, _, p in self.procs:
            try:
                p.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()

    def monitor(self):
        """None once every worker succeeded, "waiting" when an elastic rendezvous has nodes
        waiting to join (the group restarts with them), else (rank, local rank, pid, code) of
        the first failure."""
        while True:
            running = False
            for rank, lr, p in self.procs:
                code = p.poll()
                if code is None:
                    running = True
                elif code != 0:
                    return rank, lr, p.pid, code
            if not running:
                return None
            if self.elastic and self.rdzv.num_nodes_waiting() > 0:
                return "waiting"
            time.sleep(self.args.monitor_interval)

    def drain(self):
        for t in self.pumps:
            t.join(timeout=5)

    def leave(self):
        if self.elastic:
            self.rdzv.leave()

    def close(self, succeeded):
        """The job ended on this node: an elastic rendezvous closes (waiting nodes stop). The
        error files stay after a failure (its report names them)."""
        if self.elastic:
            self.rdzv.shutdown(succeeded)
        if succeeded:
            shutil.rmtree(self.log_dir, ignore_errors=True)


def main(args=None):
    """main(args=None) -> None

    Runs the launcher with args (sys.argv[1:] by default); returns when every worker
    succeeded, raises ChildFailedError when workers failed (and no restart is left). Under
    an elastic --nnodes every start of the workers is a new rendezvous round: after a failure
    (while --max-restarts last) and, without counting as a restart, when nodes wait to join,
    as torchrun's agent."""
    args = parse_args(args)
    job = _Job(args)
    job.host_store()

    def on_signal(signum, frame):
        job.stop()
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, on_signal)
    restart = 0
    while True:
        if job.elastic and not job.rendezvous():
            shutil.rmtree(job.log_dir, ignore_errors=True)
            return  # a redundant node of a full group, and the job ended without it
        job.start(restart)
        try:
            failure = job.monitor()
        except KeyboardInterrupt:
            job.stop()
            sys.exit(130)
        if failure is None:
            job.drain()
            job.close(succeeded=True)
            return
        if failure != "waiting":
            rank, lr, pid, code = failure
            root = (rank, ProcessFailure(lr, pid, code, job.error_file(lr, restart)))
        job.stop()
        job.drain()
        if failure == "waiting":
            print(
                "ember.distributed.run: new nodes are waiting to join; restarting the workers "
                "in the next rendezvous round",
                file=sys.stderr,
                flush=True,
            )
            job.leave()
            continue
        left = args.max_restarts - restart
        msg = (
            f"ember.distributed.run: worker rank {rank} (local rank {lr}, pid {pid}) "
            f"{_describe(code)}"
        )
        if left > 0:
            print(f"{msg}; restarting all workers ({left} restarts left)", file=sys.stderr)
            restart += 1
            job.leave()
            continue
        print(f"{msg}; stopped the other workers", file=sys.stderr, flush=True)
        job.close(succeeded=False)
        raise ChildFailedError(args.training_script, job.failures(root, restart))


if __name__ == "__main__":
    main()
