"""ember.ao.ns (torch.ao.ns): numeric suites comparing a float model with its quantized version
(``_numeric_suite`` for eager-mode models, ``fx.utils`` for the comparison functions)."""
