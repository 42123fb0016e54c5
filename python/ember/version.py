"""ember.version, as torch.version: the version and the accelerator toolkits of this build (none:
ember runs on the CPU).

__version__ names the torch release whose API ember follows, with ember's own version as the
local label ("2.13.0+ember.0.1.0"): programs that check torch.__version__ before using an API
must see the API level they get. ember_version is the package's own version."""

from .torch_version import TorchVersion

__all__ = ["__version__", "cuda", "ember_version", "hip", "xpu", "debug", "git_version"]

ember_version = "0.1.0"
__version__ = TorchVersion("2.13.0+ember." + ember_version)
cuda = None
hip = None
xpu = None
debug = False
git_version = "unknown"
