"""The fuzzer's fast profile (tests/fuzz/run_fuzz.py), plus regression tests of what it found.

The profile runs a fixed (derandomized) set of calls in a child process, so a crash or a hang is
reported as a finding instead of killing pytest. It fails on any finding not in known.py.
"""

import os
import sys

import numpy as np
import pytest

import ember

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fuzz"))
import run_fuzz
from known import is_known

CI_CALLS = 2000  # about 15 s here


def test_fuzz_fast_profile():
    tally = run_fuzz.run(CI_CALLS, profile="ci", hang_s=30.0)
    report = run_fuzz.summary(tally)
    assert tally.calls == CI_CALLS, report
    assert (
        tally.kinds["matched"] + tally.kinds["raised_as_torch"] + tally.kinds["checked"]
        > CI_CALLS // 2
    ), report
    new = [key for key in tally.findings() if key[0] in ("crash", "hang") or not is_known(*key)]
    assert not new, report


# ----------------------------------------------------------------------------- regressions


@pytest.mark.parametrize("start, end", [(2, -2), (0.5, 7)])
def test_linspace_one_step_is_start(start, end):
    x = ember.linspace(start, end, 1)
    np.testing.assert_array_equal(x.numpy(), np.linspace(start, end, 1).astype(np.float32))


def test_circular_pad_wraps_the_cropped_data(torch):
    x = np.arange(2 * 5 * 4, dtype=np.float32).reshape(1, 2, 5, 4)
    pad = (2, -1, 1, -2)  # negative pads crop before the wrap
    got = ember.nn.functional.pad(ember.tensor(x), pad, mode="circular")
    want = torch.nn.functional.pad(torch.tensor(x), pad, mode="circular")
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_circular_pad_negative_matches_numpy():
    x = np.arange(5, dtype=np.float32).reshape(1, 1, 5)
    got = ember.nn.functional.pad(ember.tensor(x), (1, -2), mode="circular").numpy()
    cropped = x[..., :3]
    np.testing.assert_array_equal(got, np.concatenate([cropped[..., -1:], cropped], -1))


@pytest.mark.parametrize("fn", ["meshgrid", "cat", "stack"])
def test_sequence_of_tensors_with_a_str_raises_type_error(fn):
    with pytest.raises(TypeError, match=rf"{fn}: expected Tensor as element 1; got str"):
        getattr(ember, fn)([ember.ones(2), "abc"])


def test_max_pool_window_wholly_in_padding_is_minus_inf(torch):
    x = np.arange(6, dtype=np.float32).reshape(2, 3, 1)
    kw = {"kernel_size": (1, 2), "padding": (0, 1), "dilation": 2}
    got = ember.nn.functional.max_pool2d(ember.tensor(x), **kw).numpy()
    want = torch.nn.functional.max_pool2d(torch.tensor(x), **kw).numpy()
    assert np.isneginf(got).all()
    np.testing.assert_array_equal(got, want)


def test_pool_with_a_kernel_near_int64_max_raises_instead_of_hanging():
    # torch's avg_pool1d reads its sizes as 32-bit ints: its overflow error comes first
    with pytest.raises(RuntimeError, match="without overflow"):
        ember.nn.functional.avg_pool1d(ember.ones(2, 3), kernel_size=2**63 - 1, padding=1)


@pytest.mark.parametrize("size", [2**50, 2**63 - 1])
def test_pool_tables_too_large_to_allocate_raise_runtime_error(size):
    # the pool's window tables are sized from output_size before any tensor exists: they must
    # fail at once, not loop over 2**50 windows (nor abort a sanitizer build in operator new)
    with pytest.raises(RuntimeError, match="fits in memory"):
        ember.nn.functional.adaptive_max_pool1d(ember.ones(0, 2, 1), size)


def test_max_pool_with_a_huge_kernel_visits_only_the_input():
    x = ember.tensor([[[1.0, 5.0, 2.0]]])
    out = ember.nn.functional.max_pool1d(
        x, kernel_size=2**40, stride=1, padding=2**39, ceil_mode=False
    )
    assert out.shape == (1, 1, 4)
    np.testing.assert_array_equal(out.numpy(), np.full((1, 1, 4), 5.0, np.float32))


@pytest.mark.parametrize(
    "call",
    [
        lambda F: F.conv1d(
            ember.ones(1, 1, 3, dtype=ember.bool), ember.ones(1, 1, 1, dtype=ember.bool)
        ),
        # torch's slow conv_transpose kernel takes int64 (test_edges_s12.py) but not int32
        lambda F: F.conv_transpose2d(
            ember.ones(1, 1, 3, 3, dtype=ember.int32), ember.ones(1, 1, 1, 1, dtype=ember.int32)
        ),
        lambda F: F.unfold(ember.ones(1, 1, 3, 3, dtype=ember.int64), 2),
        lambda F: F.interpolate(ember.ones(1, 1, 3, dtype=ember.int64), size=4, mode="linear"),
        lambda F: F.layer_norm(ember.ones(2, 3, dtype=ember.int64), [3]),
        lambda F: F.batch_norm(ember.ones(2, 3, dtype=ember.int64), None, None, training=True),
    ],
    ids=["conv1d", "conv_transpose2d", "unfold", "interpolate", "layer_norm", "batch_norm"],
)
def test_unsupported_dtype_is_not_implemented_error(call):
    with pytest.raises(NotImplementedError):
        call(ember.nn.functional)


def test_index_add_out_of_bounds_is_runtime_error_not_index_error():
    # a matrix: RuntimeError as torch; a vector raises IndexError in torch 2.13 (test_overloads.py)
    with pytest.raises(RuntimeError, match=r"index_add_\(\): index 3 is out of bounds") as info:
        ember.zeros(3, 2).index_add(0, ember.tensor([3]), ember.ones(1, 2))
    assert not isinstance(info.value, IndexError)


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (
            lambda F: F.pixel_shuffle(ember.ones(1, 4, 2, 2), 0),
            RuntimeError,
            r"pixel_shuffle: expected a positive",
        ),
        (
            lambda F: F.pad(ember.ones(3), "abc"),
            TypeError,
            r"pad: expected pad to be a tuple of ints",
        ),
        (
            lambda F: F.hardtanh(ember.ones(3), 1.0, -1.0),
            ValueError,
            r"hardtanh: expected min_val <= max_val",
        ),
        (
            lambda F: F.conv_transpose2d(
                ember.ones(1, 1, 3, 3), ember.ones(1, 1, 2, 2), output_padding=-1
            ),
            RuntimeError,
            r"conv_transpose: expected a non-negative output_padding",
        ),
    ],
    ids=["pixel_shuffle_zero", "pad_str", "hardtanh_min_gt_max", "negative_output_padding"],
)
def test_bad_arguments_raise_pytorchs_class(call, exc, match):
    with pytest.raises(exc, match=match):
        call(ember.nn.functional)


def test_narrow_with_a_huge_length_raises():
    with pytest.raises(RuntimeError, match="exceeds dimension size"):
        ember.ones(3, 2).narrow(0, 2, 2**63 - 1)


@pytest.mark.parametrize(
    "call",
    [
        lambda F: F.conv1d(ember.ones(1, 4), ember.ones(2, 1, 2), stride=3, padding=2**63 - 1),
        lambda F: F.fold(ember.ones(2, 2, 1), 2**63 - 1, 1),
        lambda F: F.unfold(ember.ones(1, 1, 4, 5), 2, padding=2**62),
    ],
    ids=["conv1d_padding", "fold_output_size", "unfold_padding"],
)
def test_sizes_near_int64_max_raise_instead_of_wrapping(call):
    # these wrapped into small, valid-looking sizes and the kernels wrote out of bounds
    with pytest.raises(RuntimeError, match="fits? in int64"):
        call(ember.nn.functional)


@pytest.mark.parametrize(
    "call",
    [
        lambda: ember.eye(2**33),
        lambda: ember.zeros(2**40, 2**40),
        lambda: ember.nn.functional.pad(ember.ones(2, 3), (2**62, 0, 2**62, 0)),
    ],
    ids=["eye", "zeros", "pad"],
)
def test_element_counts_that_overflow_raise(call):
    # eye(2**33) wrapped to a small allocation and its diagonal fill wrote past it
    with pytest.raises(RuntimeError, match="overflow"):
        call()


def test_conv_with_a_stride_near_int64_max():
    # the first valid output column, ceil(padding / stride), overflowed and im2col wrote before
    # its buffer (double free); torch's oneDNN path rejects this call, so the check is by hand:
    # one output column, whose only tap (-2) lies in the padding
    x, w = ember.ones(2, 1, 6), ember.ones(1, 1, 1)
    out = ember.nn.functional.conv1d(x, w, stride=2**63 - 1, padding=2, dilation=2)
    np.testing.assert_array_equal(out.numpy(), np.zeros((2, 1, 1), np.float32))


@pytest.mark.parametrize("sizes", [(1, -5, -1), (0, -(2**40), -1, -1, 3)])
def test_expand_rejects_negative_sizes(sizes):
    # expand(1, -5, -1) made a (1, -5, 3) view with numel -15
    x = ember.ones(*([1, 1, 3] if len(sizes) == 3 else [1, 3, 4, 3]))
    with pytest.raises(RuntimeError, match=r"expand: expected sizes >= 0"):
        x.expand(*sizes)
