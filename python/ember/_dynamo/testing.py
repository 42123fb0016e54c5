"""ember._dynamo.testing: helpers for tests of ember.compile (torch._dynamo.testing's names)."""

__all__ = ["CompileCounter", "CompileCounterWithBackend", "EagerAndRecordGraphs"]


def _op_count(gm):
    return sum(1 for n in gm.graph.nodes if n.op in ("call_function", "call_method", "call_module"))


class CompileCounter:
    """CompileCounter()

    A backend that counts the graphs it is given (``frame_count``) and their ops
    (``op_count``), and runs each graph as captured."""

    def __init__(self):
        self.frame_count = 0
        self.op_count = 0

    def __call__(self, gm, example_inputs):
        self.frame_count += 1
        self.op_count += _op_count(gm)
        return gm.forward

    def clear(self):
        """clear() -> None

        Resets both counts."""
        self.frame_count = 0
        self.op_count = 0


class CompileCounterWithBackend(CompileCounter):
    """CompileCounterWithBackend(backend)

    A CompileCounter that compiles each graph with ``backend`` (a name or a callable) and keeps
    the graphs in ``graphs``."""

    def __init__(self, backend):
        super().__init__()
        from .backends import lookup_backend

        self.backend = lookup_backend(backend)
        self.graphs = []

    def __call__(self, gm, example_inputs):
        self.frame_count += 1
        self.op_count += _op_count(gm)
        self.graphs.append(gm)
        return self.backend(gm, example_inputs)


class EagerAndRecordGraphs:
    """EagerAndRecordGraphs()

    A backend that keeps every graph it is given in ``graphs`` and runs it as captured."""

    def __init__(self):
        self.graphs = []

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)
        return gm.forward
