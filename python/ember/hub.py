"""ember.hub, as torch.hub for the part programs use offline: the hub directory and
load_state_dict_from_url reading checkpoints already in its cache (a download needs the network,
which fails with urllib's error where there is none). Fetching GitHub repositories
(hub.load / list / help) is not supported."""

import os
import urllib.parse

from ._atomic import atomic_write

__all__ = [
    "get_dir",
    "set_dir",
    "download_url_to_file",
    "load_state_dict_from_url",
    "load",
    "list",
    "help",
]

_hub_dir = None


def get_dir():
    """get_dir() -> str

    The hub cache directory: set_dir's, else $TORCH_HOME/hub, else ~/.cache/torch/hub (with
    $XDG_CACHE_HOME in place of ~/.cache where set), as torch's."""
    if _hub_dir is not None:
        return _hub_dir
    home = os.environ.get("TORCH_HOME")
    if home is None:
        cache = os.environ.get("XDG_CACHE_HOME", os.path.join(os.path.expanduser("~"), ".cache"))
        home = os.path.join(cache, "torch")
    return os.path.join(os.path.expanduser(home), "hub")


def set_dir(d):
    """set_dir(d) -> None

    Makes `d` the hub cache directory."""
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """download_url_to_file(url, dst, hash_prefix=None, progress=True) -> None

    Downloads `url` to the file `dst` (through a temporary file, so a failed download leaves no
    partial file), checking the SHA-256 prefix when given."""
    import hashlib
    import urllib.request  # http.client and email cost ~40 ms: only a download pays them

    dst = os.path.expanduser(dst)

    def download(out):
        sha = hashlib.sha256()
        with urllib.request.urlopen(url) as resp:
            while True:
                chunk = resp.read(1 << 20)
                if not chunk:
                    break
                out.write(chunk)
                sha.update(chunk)
        if hash_prefix is not None and not sha.hexdigest().startswith(hash_prefix):
            raise RuntimeError(
                f'invalid hash value (expected "{hash_prefix}", got "{sha.hexdigest()}")'
            )

    atomic_write(dst, download)


def load_state_dict_from_url(
    url,
    model_dir=None,
    map_location=None,
    progress=True,
    check_hash=False,
    file_name=None,
    weights_only=False,
):
    """load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
        check_hash=False, file_name=None, weights_only=False)

    Loads the checkpoint at `url` from <hub dir>/checkpoints (or model_dir), downloading it
    there first when it is missing."""
    from .serialization import load

    model_dir = model_dir or os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    name = file_name or os.path.basename(urllib.parse.urlparse(url).path)
    cached = os.path.join(model_dir, name)
    if not os.path.exists(cached):
        prefix = None
        if check_hash:
            stem = name.split(".")[0].split("-")
            prefix = stem[-1] if len(stem) > 1 else None
        download_url_to_file(url, cached, prefix, progress=progress)
    return load(cached, map_location=map_location, weights_only=weights_only)


def _no_repositories(*args, **kwargs):
    raise RuntimeError(
        "ember.hub: loading models from GitHub repositories (hub.load, hub.list, hub.help) is "
        "not supported; build the model in code and load its weights with "
        "load_state_dict_from_url or ember.load"
    )


def load(repo_or_dir, model, *args, **kwargs):
    """load(repo_or_dir, model, *args, **kwargs) -> Module

    Not supported in ember (it would fetch and run a repository's hubconf.py): raises
    RuntimeError."""
    _no_repositories()


def list(github, force_reload=False, skip_validation=False, trust_repo=None, verbose=True):  # noqa: A001
    """list(github, force_reload=False, skip_validation=False, trust_repo=None, verbose=True)

    Not supported in ember: raises RuntimeError."""
    _no_repositories()


def help(github, model, force_reload=False, skip_validation=False, trust_repo=None):  # noqa: A001
    """help(github, model, force_reload=False, skip_validation=False, trust_repo=None)

    Not supported in ember: raises RuntimeError."""
    _no_repositories()
