"""ember.fx.passes: analyses and transformations over fx graphs (``shape_prop``,
``split_module``, ``graph_drawer``)."""

from . import shape_prop, split_module

__all__ = ["shape_prop", "split_module", "graph_drawer"]


def __getattr__(name):
    # graph_drawer imports the optional pydot: loaded on first use, not with ember.fx
    if name == "graph_drawer":
        import importlib

        return importlib.import_module(f"{__name__}.graph_drawer")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
