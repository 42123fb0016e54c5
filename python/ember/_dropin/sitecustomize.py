"""Opt-in startup hook for programs that tools start (DataLoader/multiprocessing children,
subprocesses, launchers): active only when this directory is on PYTHONPATH *and*
EMBER_AS_TORCH=1, which ``python -m ember.run`` sets for the processes it starts (or
``eval "$(python -m ember.run --env)"`` sets in a shell). It installs the torch -> ember import
alias, then runs whatever sitecustomize it shadows."""

import os
import sys


def _install_alias():
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(os.path.dirname(here), "_torch_alias.py")
    spec = importlib.util.spec_from_file_location("_ember_torch_alias", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sys.modules["_ember_torch_alias"] = mod
    mod.install()


def _chain():
    here = os.path.dirname(os.path.abspath(__file__))
    saved_path = sys.path[:]
    me = sys.modules.pop("sitecustomize", None)
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    try:
        import sitecustomize  # noqa: F401  (the next one on the path, if any)
    except ImportError:
        if me is not None:
            sys.modules["sitecustomize"] = me
    finally:
        sys.path[:] = saved_path


if os.environ.get("EMBER_AS_TORCH") == "1":
    _install_alias()
_chain()
