"""ember.distributed.run: start a distributed job's worker processes (torchrun's interface).

    python -m ember.distributed.run --nproc-per-node 2 train.py --epochs 3
    emberrun --nnodes 2 --node-rank 0 --master-addr host0 --nproc-per-node 4 train.py

Each worker gets torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,
GROUP_RANK, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_*), so `init_process_group("gloo")` needs no
arguments. The launcher of node 0 hosts the job's TCPStore (workers join it as clients; a
--master-port of 0 picks a free port). Every output line of a worker is prefixed with
"[rank<N>]:". When a worker fails, the launcher stops the others and, once --max-restarts are
spent, exits with status 1 naming the failed rank and its exit code. Each worker's kernels use its
share of the CPUs (OMP_NUM_THREADS) unless the environment sets it.
"""

import argparse
import datetime
import os
import signal
import subprocess
import sys
import threading
import time
import uuid

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

    opt("--nnodes", default="1", help="number of nodes, or MIN:MAX (only a fixed count runs)")
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
    lo, _, hi = str(value).partition(":")
    if hi and int(hi) != int(lo):
        raise ValueError(f"--nnodes {value}: elastic node counts are not supported; give one count")
    return int(lo)


def _describe(code):
    if code < 0:
        try:
            return f"was killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"failed with exit code {code}"


class _Job:
    def __init__(self, args):
        self.args = args
        self.nproc = _nproc(args.nproc_per_node)
        self.nnodes = _nnodes(args.nnodes)
        if not 0 <= args.node_rank < self.nnodes:
            raise ValueError(f"--node-rank must be in [0, {self.nnodes}); got {args.node_rank}")
        if args.standalone:
            self.addr, self.port = "127.0.0.1", 0
        elif args.rdzv_endpoint:
            host, _, port = args.rdzv_endpoint.rpartition(":")
            self.addr, self.port = (host or args.rdzv_endpoint), int(port or 29400)
        else:
            self.addr, self.port = args.master_addr, args.master_port
        self.world = self.nnodes * self.nproc
        self.run_id = args.rdzv_id if args.rdzv_id != "none" else uuid.uuid4().hex[:12]
        self.store = None
        self.procs = []

    def host_store(self):
        """Node 0 serves the job's store; workers and other nodes connect to it."""
        if self.args.node_rank != 0:
            return
        from .distributed_c10d import TCPStore

        self.store = TCPStore(
            "0.0.0.0", self.port, None, True, datetime.timedelta(minutes=30), False
        )
        self.port = self.store.port

    def command(self):
        a = self.args
        if a.no_python:
            return [a.training_script] + a.training_script_args
        if a.module:
            return [sys.executable, "-u", "-m", a.training_script] + a.training_script_args
        return [sys.executable, "-u", a.training_script] + a.training_script_args

    def env(self, local_rank, restart):
        env = dict(os.environ)
        rank = self.args.node_rank * self.nproc + local_rank
        env.update(
            RANK=str(rank),
            LOCAL_RANK=str(local_rank),
            GROUP_RANK=str(self.args.node_rank),
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
            PYTHONUNBUFFERED="1",
        )
        if "OMP_NUM_THREADS" not in os.environ:
            env["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // self.nproc))
        return env

    def start(self, restart):
        self.procs = []
        self.pumps = []
        for lr in range(self.nproc):
            rank = self.args.node_rank * self.nproc + lr
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
        """None once every worker succeeded, else (rank, local rank, pid, code) of the first
        failure."""
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
            time.sleep(self.args.monitor_interval)

    def drain(self):
        for t in self.pumps:
            t.join(timeout=5)


def main(args=None):
    """main(args=None) -> None

    Runs the launcher with args (sys.argv[1:] by default); exits with the job's status."""
    args = parse_args(args)
    job = _Job(args)
    job.host_store()

    def on_signal(signum, frame):
        job.stop()
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, on_signal)
    for restart in range(args.max_restarts + 1):
        job.start(restart)
        try:
            failure = job.monitor()
        except KeyboardInterrupt:
            job.stop()
            sys.exit(130)
        if failure is None:
            job.drain()
            return
        rank, lr, pid, code = failure
        job.stop()
        job.drain()
        left = args.max_restarts - restart
        msg = (
            f"ember.distributed.run: worker rank {rank} (local rank {lr}, pid {pid}) "
            f"{_describe(code)}"
        )
        if left > 0:
            print(f"{msg}; restarting all workers ({left} restarts left)", file=sys.stderr)
            continue
        print(f"{msg}; stopped the other workers", file=sys.stderr, flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
