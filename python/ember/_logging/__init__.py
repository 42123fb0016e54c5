"""ember._logging: torch._logging's ``set_logs`` for ember.compile's records.

``set_logs(graph_breaks=True)`` prints each graph break a capture meets (where and why);
``set_logs(recompiles=True)`` each capture of a function that already had cached graphs (a
guard failure). The records go to the ``ember._dynamo`` logger, printed to stderr as torch's
are. Other torch artifacts and log levels are accepted and have nothing to record in ember.
``set_logs()`` with no arguments turns everything off again."""

import logging
import os

__all__ = ["set_logs", "getArtifactLogger"]

_ARTIFACTS = {"graph_breaks": False, "recompiles": False, "recompiles_verbose": False}
_LOGGER = logging.getLogger("ember._dynamo")
_handler = None


def _ensure_handler():
    global _handler
    if _handler is None:
        _handler = logging.StreamHandler()
        _handler.setFormatter(logging.Formatter("[%(name)s] [__%(artifact)s] %(message)s"))
        _LOGGER.addHandler(_handler)
        _LOGGER.propagate = False
    _LOGGER.setLevel(logging.DEBUG)


def set_logs(**kwargs):
    """set_logs(*, all=None, dynamo=None, aot=None, inductor=None, graph_breaks=False,
        recompiles=False, recompiles_verbose=False, guards=False, graph=False,
        graph_code=False, output_code=False, **other_artifacts)

    Turns ember.compile's records on or off (torch._logging's signature; keyword-only). Every
    call resets what is not named, as torch's does."""
    for name in _ARTIFACTS:
        _ARTIFACTS[name] = bool(kwargs.get(name, False))
    if kwargs.get("recompiles_verbose"):
        _ARTIFACTS["recompiles"] = True
    if any(_ARTIFACTS.values()):
        _ensure_handler()


def enabled(artifact):
    """enabled(artifact) -> bool

    True while ``set_logs`` has turned ``artifact`` on."""
    return _ARTIFACTS.get(artifact, False)


def emit(artifact, message):
    """emit(artifact, message)

    Logs ``message`` as a record of ``artifact`` (when it is on)."""
    if enabled(artifact):
        _ensure_handler()
        _LOGGER.debug(message, extra={"artifact": artifact})


def getArtifactLogger(module_qname, artifact_name):  # noqa: N802 (torch's name)
    """getArtifactLogger(module_qname, artifact_name) -> logging.Logger

    The logger records of ``artifact_name`` go to."""
    return logging.getLogger(f"{module_qname}.__{artifact_name}")


def _from_environment():
    """TORCH_LOGS (or EMBER_LOGS), as torch reads it: comma-separated artifact names such as
    ``graph_breaks,recompiles``; ``+dynamo`` style level settings are accepted and ignored."""
    spec = os.environ.get("EMBER_LOGS") or os.environ.get("TORCH_LOGS") or ""
    names = {item.strip().lstrip("+-") for item in spec.split(",") if item.strip()}
    wanted = {name: True for name in names if name in _ARTIFACTS}
    if wanted:
        set_logs(**wanted)


_from_environment()
