"""The stores ranks meet through (torch.distributed's Store family), with torch's Python API.

TCPStore, FileStore, HashStore and PrefixStore are the C++ stores (csrc/ember/distributed/store.h);
the methods torch adds on top of set/get/add/compare_set/wait are added here, on Store."""

import datetime
import os
import re
import time

from .._C import _distributed as _C

Store = _C.Store
TCPStore = _C.TCPStore
FileStore = _C.FileStore
HashStore = _C.HashStore
PrefixStore = _C.PrefixStore
DistStoreError = _C.DistStoreError


class QueueEmptyError(DistStoreError):
    """QueueEmptyError(message)

    A store's queue that had nothing to pop (a DistStoreError)."""

    __module__ = "ember.distributed"


# torch's extended Store API, on every store (the binding's set/get/add/compare_set/wait below
# it): this module is where Store gets its Python face, so the methods are added here.
def _store_append(self, key, value):
    """append(key, value) -> None

    Appends value to the value under key (creating it), atomically (compare_set)."""
    value = value.encode() if isinstance(value, str) else bytes(value)
    while True:  # compare_set fails when another rank appended in between
        current = self.get(key) if _check(self, [key]) else b""
        if self.compare_set(key, current, current + value) == current + value:
            return


def _store_multi_get(self, keys):
    """multi_get(keys) -> List[bytes]

    The values under keys, waiting up to the store's timeout for all of them."""
    self.wait(list(keys))
    return [self.get(k) for k in keys]


def _store_multi_set(self, keys, values):
    """multi_set(keys, values) -> None

    Stores each of values under the key at the same position of keys."""
    if len(keys) != len(values):
        raise ValueError(f"multi_set: got {len(keys)} keys and {len(values)} values")
    for k, v in zip(keys, values):
        self.set(k, v)


def _store_barrier(self, key, world_size, timeout=None):
    """barrier(key, world_size, timeout=None) -> None

    Waits until world_size callers have reached the barrier named key (the store's timeout
    unless timeout is given)."""
    if self.add(key, 1) == world_size:
        self.set(key + "/done", "1")
    self.wait([key + "/done"], timeout)


def _store_has_extended_api(self):
    """has_extended_api() -> bool

    Whether the store has append, multi_get, multi_set and barrier: every ember store has."""
    return True


# Note [Store queues]: torch's queues live beside the keys (a queue "q" and a key "q" are
# unrelated, and num_keys counts no queue). ember keeps queue "q" in the store's own keys under
# "\x01queue/q/": "tail" counts the pushes (add), "head" the pops (compare_set to "count token",
# so that each item goes to the one popper whose token is there), item i is key str(i). Keys
# holding \x01 are not counted by num_keys (store.cpp, tcp_store.cpp). A PrefixStore's queue is
# its store's, under its prefix, as torch's.
def _queue_key(key, part):
    return f"\x01queue/{key}/{part}"


_check = Store.check  # the binding's: keys only


def _store_check(self, keys):
    """check(keys) -> bool

    Whether every one of keys is set, or names a queue that holds values (torch's)."""
    keys = list(keys)
    if _check(self, keys):
        return True
    if not _has_queues(self):
        return False
    return all(_check(self, [k]) or _queue_holds(self, k) for k in keys)


def _queue_holds(store, key):
    # (a missing key costs one more request, not the two of queue_len)
    return _check(store, [_queue_key(key, "tail")]) and _store_queue_len(store, key) > 0


def _has_queues(store):
    base = store
    while isinstance(base, PrefixStore):
        base = base.underlying_store
    return not isinstance(base, FileStore)  # torch's FileStore has no queues either


def _queue_support(store):
    if not _has_queues(store):
        raise NotImplementedError("queue support is not implemented.")


def _counter(store, key):
    """(raw value, count) of counter key (its first word), (b"", 0) while it is not set."""
    raw = store.get(key) if _check(store, [key]) else b""
    return raw, int(raw.split()[0]) if raw else 0


def _store_queue_push(self, key, value):
    """queue_push(key, value) -> None

    Appends value (str or bytes) to the queue named key."""
    _queue_support(self)
    i = self.add(_queue_key(key, "tail"), 1) - 1
    self.set(_queue_key(key, i), value)


def _store_queue_pop(self, key, block=True):
    """queue_pop(key, block=True) -> bytes

    Takes the oldest value of the queue named key; when it is empty, waits up to the store's
    timeout (DistStoreError after it), or with block=False raises QueueEmptyError."""
    _queue_support(self)
    deadline = time.monotonic() + self.timeout.total_seconds()
    head = _queue_key(key, "head")
    pause = 0.001
    while True:
        raw, h = _counter(self, head)
        if h < _counter(self, _queue_key(key, "tail"))[1]:
            claim = f"{h + 1} {os.urandom(8).hex()}".encode()  # (tells this popper's claim)
            if self.compare_set(head, raw, claim) == claim:
                value = self.get(_queue_key(key, h))  # (its pusher may still be setting it)
                self.delete_key(_queue_key(key, h))
                return value
            continue  # another popper took item h
        if not block:
            raise QueueEmptyError("queue is empty")
        # Until item h is pushed, then race for it. Polled, not waited on: another popper may
        # take and delete item h first, and a wait for it would never end.
        if time.monotonic() < deadline:
            time.sleep(pause)
            pause = min(2 * pause, 0.05)
            continue
        try:  # (raises: the store's own text, naming the queue and the timeout)
            self.wait([_queue_key(key, h)], datetime.timedelta(0))
        except DistStoreError as e:
            ms = f"after {int(self.timeout.total_seconds() * 1000)}ms"
            raise DistStoreError(
                re.sub(r"after \d+ms", ms, str(e).replace(_queue_key(key, h), key))
            ) from None


def _store_queue_len(self, key):
    """queue_len(key) -> int

    How many values the queue named key holds."""
    _queue_support(self)
    tail = _counter(self, _queue_key(key, "tail"))[1]
    return max(0, tail - _counter(self, _queue_key(key, "head"))[1])


for _name, _fn in (
    ("check", _store_check),
    ("append", _store_append),
    ("multi_get", _store_multi_get),
    ("multi_set", _store_multi_set),
    ("barrier", _store_barrier),
    ("has_extended_api", _store_has_extended_api),
    ("queue_push", _store_queue_push),
    ("queue_pop", _store_queue_pop),
    ("queue_len", _store_queue_len),
):
    _fn.__name__ = _fn.__qualname__ = _name
    setattr(Store, _name, _fn)
