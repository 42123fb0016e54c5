"""ember.ao: architecture optimization (torch.ao): quantization and pruning."""
