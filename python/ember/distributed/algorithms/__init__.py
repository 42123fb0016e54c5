"""ember.distributed.algorithms: additions to data-parallel training (DDP communication hooks)."""
