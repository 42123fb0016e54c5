"""ember.distributed.elastic.multiprocessing: see errors (record, ChildFailedError)."""
