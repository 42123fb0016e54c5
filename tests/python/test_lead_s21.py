"""Session 21 lead fixes: error texts word for word as torch 2.13's (after ember's op prefix),
float32 matrix_exp rounded from double."""

import pytest

import ember


def test_arange_inconsistent_step_names_lower_bound():
    with pytest.raises(
        RuntimeError, match="upper bound and lower bound inconsistent with step sign"
    ):
        ember.arange(0, 10, -1)


def test_mean_blames_the_optional_dtype_when_one_is_given():
    with pytest.raises(RuntimeError, match="Optional dtype must be either a floating point"):
        ember.ones(2, 3).mean(dtype=ember.int64)
    with pytest.raises(RuntimeError, match="Input dtype must be either a floating point"):
        ember.tensor([1, 2]).mean()


def test_embedding_index_dtype_error_names_the_legacy_tensor_type():
    with pytest.raises(RuntimeError, match="but got torch.FloatTensor instead"):
        ember.nn.Embedding(3, 2)(ember.tensor([1.0]))


def test_broadcast_error_starts_with_torchs_capital():
    with pytest.raises(RuntimeError, match="The size of tensor a"):
        ember.where(ember.ones(2) > 0, ember.ones(3), 0)


def test_matrix_exp_float32_is_the_double_result_rounded():
    a = [[1.0, 2.0], [3.0, 4.0]]
    want = ember.linalg.matrix_exp(ember.tensor(a, dtype=ember.float64)).float()
    got = ember.linalg.matrix_exp(ember.tensor(a))
    assert got.dtype == ember.float32
    assert ember.equal(got, want)  # five squarings in float32 had drifted 2 ulp
    x = ember.tensor(a, requires_grad=True)
    ember.linalg.matrix_exp(x).sum().backward()
    assert x.grad.dtype == ember.float32


def test_samplers_of_an_empty_integer_tensor_return_it_as_torch():
    # torch's iterator skips an empty tensor before its dtype switch (F.gumbel_softmax of an
    # empty integer tensor relies on it); cauchy_ and uniform_ check the dtype first
    for name in ("exponential_", "normal_", "log_normal_"):
        t = ember.empty(0, dtype=ember.int64)
        assert getattr(t, name)() is t
    for name in ("normal_", "log_normal_"):
        with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
            getattr(ember.empty(2, dtype=ember.int64), name)()
    with pytest.raises(RuntimeError, match="Exponential distribution is a continuous"):
        ember.empty(2, dtype=ember.int64).exponential_()
    with pytest.raises(RuntimeError, match="Cauchy distribution is a continuous"):
        ember.empty(0, dtype=ember.int64).cauchy_()


def test_conv_weight_without_output_channels_is_refused_as_torch():
    msg = r"Given groups=1, expected weight to be at least 1 at dimension 0, but got weight of size"
    F = ember.nn.functional
    with pytest.raises(RuntimeError, match=msg):
        F.conv2d(ember.ones(2, 3, 5, 5), ember.ones(0, 3, 3, 3))
    with pytest.raises(RuntimeError, match=msg):
        F.conv_transpose2d(ember.ones(2, 0, 5, 5), ember.ones(0, 4, 3, 3))
    with pytest.raises(RuntimeError, match=msg):
        F.conv3d(ember.ones(1, 2, 3, 3, 3), ember.ones(0, 2, 2, 2, 2))


def test_pool_of_an_empty_non_batch_dim_names_torchs_expectation():
    F = ember.nn.functional
    want = r"Expected 3D or 4D \(batch mode\) tensor with optional 0 dim batch size for input, "
    with pytest.raises(RuntimeError, match=want + r"but got:\[2, 0, 4, 4\]"):
        F.max_pool2d(ember.ones(2, 0, 4, 4), 2)
    with pytest.raises(RuntimeError, match=want + r"but got:\[2, 3, 0, 4\]"):
        F.avg_pool2d(ember.ones(2, 3, 0, 4), 2)
