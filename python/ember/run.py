"""Runs an unmodified PyTorch program on ember.

    python -m ember.run script.py [args...]
    python -m ember.run -m package.module [args...]
    eval "$(python -m ember.run --env)"     # for programs other tools start

Every ``import torch`` / ``import torch.x`` / ``from torch.x import y`` in every module of the
program resolves to ``ember`` / ``ember.x`` (an import hook on sys.meta_path); a submodule ember
lacks fails at import with ModuleNotFoundError naming it. Processes the program starts (spawned
DataLoader workers, subprocesses running Python) inherit EMBER_AS_TORCH=1 and a PYTHONPATH entry
for ember's opt-in startup hook, so they alias torch too.
"""

import builtins
import os
import runpy
import sys
import types

from . import _torch_alias

USAGE = (
    "usage: python -m ember.run script.py [args...]\n"
    "       python -m ember.run -m module [args...]\n"
    "       python -m ember.run --env   (prints the shell exports that make Python processes "
    "alias torch to ember)"
)


def hook_dir():
    """hook_dir() -> str

    The directory holding ember's opt-in sitecustomize hook (put it on PYTHONPATH together with
    EMBER_AS_TORCH=1)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_dropin")


def child_environment(env=None):
    """child_environment(env=None) -> dict

    A copy of `env` (default os.environ) in which Python processes alias torch to ember."""
    env = dict(os.environ if env is None else env)
    env["EMBER_AS_TORCH"] = "1"
    parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != hook_dir()]
    env["PYTHONPATH"] = os.pathsep.join([hook_dir()] + parts)
    return env


def main(argv=None):
    """main(argv=None) -> None

    The command line of ``python -m ember.run``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else 2
    if argv[0] == "--env":
        env = child_environment()
        print(f"export EMBER_AS_TORCH=1 PYTHONPATH='{env['PYTHONPATH']}'")
        return 0
    _torch_alias.install()
    os.environ.update(child_environment())
    if argv[0] == "-m":
        if len(argv) < 2:
            print(USAGE, file=sys.stderr)
            return 2
        sys.argv[:] = argv[1:]
        name = argv[1]
        if name == "torch" or name.startswith("torch."):
            # the aliases are packages, which runpy cannot run as __main__ (torch.distributed.run,
            # torchrun's module): run the ember module itself
            name = "ember" + name[len("torch") :]
        runpy.run_module(name, run_name="__main__", alter_sys=True)
        return 0
    script = argv[0]
    sys.argv[:] = argv
    path = os.path.abspath(script)
    sys.path[0] = os.path.dirname(path)
    if not (os.path.isfile(path) and path.endswith(".py")):
        runpy.run_path(script, run_name="__main__")  # a directory or zip with __main__.py
        return 0
    # As `python script.py` runs it: __file__ absolute (warnings and tracebacks name the file
    # so), sys.argv[0] as given, the script's module installed as __main__.
    with open(path, "rb") as f:
        code = compile(f.read(), path, "exec")
    main_module = types.ModuleType("__main__")
    main_module.__dict__.update(__file__=path, __builtins__=builtins, __cached__=None)
    sys.modules["__main__"] = main_module
    exec(code, main_module.__dict__)
    return 0


if __name__ == "__main__":
    sys.exit(main())
