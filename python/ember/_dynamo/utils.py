"""ember._dynamo.utils: the counters ember.compile keeps (torch._dynamo.utils.counters).

``counters["frames"]`` counts captures ("total") and those that gave a whole graph ("ok");
``counters["stats"]["unique_graphs"]`` the graphs handed to backends; ``counters["graph_break"]``
each break reason. ``ember._dynamo.reset()`` does not clear them (as torch's); call
``counters.clear()``."""

import collections

__all__ = ["counters"]

counters = collections.defaultdict(collections.Counter)
