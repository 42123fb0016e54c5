"""ember.distributed.elastic: the part of torch.distributed.elastic that worker scripts import
(multiprocessing.errors.record). The launcher itself is ember.distributed.run."""
