"""ember.ao.nn.intrinsic: fused modules (torch.ao.nn.intrinsic)."""
