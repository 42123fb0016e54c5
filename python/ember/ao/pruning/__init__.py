"""ember.ao.pruning (placeholder)."""
