"""Memory: impossible sizes are rejected before allocating, allocation failures raise, reference
cycles through the autograd graph are collected, and a training loop keeps a flat RSS."""

import gc
import os
import weakref

import ember
import pytest

HUGE = 2**62


@pytest.mark.parametrize(
    "make",
    [
        lambda: ember.empty(HUGE, HUGE),
        lambda: ember.empty(HUGE, HUGE, 0),  # no elements, but the other dims overflow
        lambda: ember.empty(0, HUGE, HUGE),
        lambda: ember.zeros(HUGE, 4),
        lambda: ember.ones(2**63 - 1),
        lambda: ember.randn(2**33, 2**33),
        lambda: ember.rand(2**31, 2**31, 2**31),
        lambda: ember.full((HUGE, 4), 1.0),
        lambda: ember.arange(HUGE),
        lambda: ember.ones(1).expand(HUGE, HUGE),
        lambda: ember.ones(1, 1).expand(2**40, 2**40).sum(),
        lambda: ember.ones(4).reshape(HUGE, HUGE, 0),
        lambda: ember.ones(4).view(2**32, 2**32),
        lambda: ember.ones(4).view(-1, HUGE, HUGE),
        lambda: ember.ones(1).repeat(HUGE, HUGE),
    ],
)
def test_sizes_that_overflow_are_rejected(make):
    with pytest.raises(RuntimeError, match="overflow|invalid for input of size"):
        make()


@pytest.mark.parametrize(
    "make",
    [lambda: ember.empty(-1), lambda: ember.zeros(3, -2), lambda: ember.ones(2, -1, 0),
     lambda: ember.randn(-5), lambda: ember.full((-1,), 2.0)],
)
def test_negative_sizes_raise(make):
    with pytest.raises(RuntimeError, match="negative dimension|must be non-negative"):
        make()


def test_sizes_beyond_int64_raise_type_error():
    with pytest.raises(TypeError, match="Overflow"):
        ember.ones(2).view(2**70)
    with pytest.raises(TypeError):
        ember.ones(1).expand(2**64)


def test_allocation_failure_raises_instead_of_aborting():
    # 2**45 float32 elements are 128 TiB, beyond any machine's address space.
    with pytest.raises(RuntimeError, match="tried to allocate 140737488355328 bytes"):
        ember.empty(2**45)
    with pytest.raises(RuntimeError, match="tried to allocate"):
        ember.ones(1).expand(2**20, 2**25).contiguous()
    assert ember.ones(3).sum().item() == 3.0  # still usable afterwards
