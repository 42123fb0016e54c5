"""ember.ao.quantization.fx (torch.ao.quantization.fx). The quantized_decomposed operators of
its _decomposed module are defined on first use of ``ember.ops.quantized_decomposed`` (torch
defines them when this package is imported): ember imports ember.ao.quantization at start-up,
and defining them there would cost every program the operator library's import."""
