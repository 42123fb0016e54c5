"""ember.ao.nn: the quantized, QAT and fused modules (torch.ao.nn)."""
