"""The ember fixes that the session-11 real programs (tests/python/torch_scripts/, listed in
test_real_programs.py) led to, each checked on its own, against torch where it is installed."""

import pytest

import ember
from ember import nn


def _torch():
    return pytest.importorskip("torch")


def test_ema_multi_avg_fn_with_integer_buffers():
    """use_buffers=True hands BatchNorm's long num_batches_tracked to the EMA too: no lerp for
    integers (torch blends them in float and copies back), and one call per dtype group."""
    from ember.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    calls = []
    ema_fn = get_ema_multi_avg_fn(0.5)

    def spy(mine, theirs, n):
        calls.append({t.dtype for t in mine})
        ema_fn(mine, theirs, n)

    ema = AveragedModel(model, multi_avg_fn=spy, use_buffers=True)
    x = ember.arange(8.0).view(4, 2)
    for _ in range(3):
        model(x)
        ema.update_parameters(model)
    assert len(calls) == 4 and calls.count({ember.float32}) == 2 and calls.count({ember.int64}) == 2
    # num_batches_tracked: 1 (copied), then int(0.5 * 1 + 0.5 * 2) = 1, int(0.5 * 1 + 0.5 * 3) = 2
    assert ema.module[1].num_batches_tracked.item() == 2
    w0 = model[0].weight.detach().clone()
    assert ember.allclose(ema.module[0].weight, w0)  # the weights did not change in between
