"""Runs many programs of tests/python/torch_scripts/ on ember from one import of ember.

    python _program_runner.py SCRIPTS_DIR JOBS NAME [NAME ...]

Importing ember takes most of a small program's time (1.3 of its 1.5 CPU seconds), so this
process imports it once and forks one child per program; each child runs the program as
``python -m ember.run NAME.py`` would (ember.run.main, in SCRIPTS_DIR), from a state no other
program has touched. At most JOBS children run at once. Prints one JSON object: name ->
[exit status, stdout, stderr].

Forking is safe here because nothing has started a thread yet: the caller sets
OMP_NUM_THREADS=1, under which importing ember starts none (the pool is made on first use).
"""

import json
import os
import signal
import sys
import tempfile
import traceback


def _child(directory, name, out_path, err_path):
    signal.alarm(300)  # a program that hangs ends (SIGALRM) instead of holding the suite
    out = os.open(out_path, os.O_WRONLY)
    err = os.open(err_path, os.O_WRONLY)
    os.dup2(out, 1)
    os.dup2(err, 2)
    status = 0
    try:
        os.chdir(directory)
        from ember import run

        run.main([f"{name}.py"])
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:
        traceback.print_exc()
        status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def main(directory, jobs, names):
    import ember  # noqa: F401  (imported once, before the forks)

    results, running, pending = {}, {}, list(names)
    with tempfile.TemporaryDirectory() as tmp:

        def reap():
            pid, wait_status = os.wait()
            name, out_path, err_path = running.pop(pid)
            with open(out_path) as o, open(err_path) as e:
                results[name] = [os.waitstatus_to_exitcode(wait_status), o.read(), e.read()]

        while pending or running:
            if pending and len(running) < jobs:
                name = pending.pop(0)
                out_path = os.path.join(tmp, f"{name}.out")
                err_path = os.path.join(tmp, f"{name}.err")
                open(out_path, "w").close()
                open(err_path, "w").close()
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    _child(directory, name, out_path, err_path)
                running[pid] = (name, out_path, err_path)
            else:
                reap()
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3:])
