"""ember.version, as torch.version: this build's version and the accelerator toolkits it was
built with (none: ember runs on the CPU)."""

__all__ = ["__version__", "cuda", "hip", "xpu", "debug", "git_version"]

__version__ = "0.1.0"
cuda = None
hip = None
xpu = None
debug = False
git_version = "unknown"
