"""torch.library.get_ctx in fake kernels, as torch's custom-ops tutorial uses it for an op whose
output size depends on the data (session 16). Each case checks the expectation written here
under ember and, where torch is installed, under torch."""

import numpy as np
import pytest
from _docs_check import _libs


def _nonzero_op(T, tag, fake_rows=None, min=0):
    @T.library.custom_op(f"s16{tag}_{T.__name__}::nz", mutates_args=())
    def nz(x: T.Tensor) -> T.Tensor:
        return x.nonzero()

    @nz.register_fake
    def _(x):
        if fake_rows is not None:  # a wrong fake kernel: a fixed size
            return x.new_empty(fake_rows, x.dim(), dtype=T.int64)
        n = T.library.get_ctx().new_dynamic_size(min=min)
        return x.new_empty(n, x.dim(), dtype=T.int64)

    return nz


def test_dynamic_size_in_a_fake_kernel_passes_opcheck():
    for T in _libs():
        assert T.library.get_ctx() is None, T.__name__  # outside a fake kernel
        nz = _nonzero_op(T, "a")
        x = T.tensor([0.0, 1.0, 2.0, 0.0, 3.0])
        assert nz(x).tolist() == [[1], [2], [4]]
        result = T.library.opcheck(nz, (x,))
        assert set(result.values()) == {"SUCCESS"} and len(result) == 4, T.__name__
        nz_min = _nonzero_op(T, "b", min=1)
        assert T.library.opcheck(nz_min, (x,))["test_faketensor"] == "SUCCESS", T.__name__


def test_fake_kernel_with_a_wrong_fixed_size_fails_opcheck():
    for T in _libs():
        nz = _nonzero_op(T, "c", fake_rows=5)
        x = T.tensor([0.0, 1.0, 2.0])
        result = T.library.opcheck(nz, (x,), raise_exception=False)
        assert isinstance(result["test_faketensor"], Exception), T.__name__
        assert result["test_schema"] == "SUCCESS", T.__name__


def test_negative_min_is_refused():
    for T in _libs():
        nz = _nonzero_op(T, "d", min=-1)
        with pytest.raises(Exception) as info:
            T.library.opcheck(nz, (T.tensor([1.0]),), test_utils="test_faketensor")
        assert type(info.value).__name__ == "OpCheckError", T.__name__
        text = "ctx.new_dynamic_size(min=-1, ...): expected min to be greater than or equal to 0"
        assert text in str(info.value) or text in str(info.value.__cause__), T.__name__


def test_meta_tensors_cannot_give_a_dynamic_size():
    for T in _libs():
        nz = _nonzero_op(T, "e")
        with pytest.raises(
            RuntimeError, match="You're trying to run this operator with meta Tensors"
        ) as info:
            nz(T.ones(3, device="meta"))
        assert str(info.value).startswith(f"s16e_{T.__name__}::nz ("), T.__name__
        assert "please use FakeTensors" in str(info.value)


def test_setup_context_marks_an_output_non_differentiable():
    for T in _libs():

        @T.library.custom_op(f"s16f_{T.__name__}::twice", mutates_args=())
        def twice(x: T.Tensor) -> tuple[T.Tensor, T.Tensor]:
            return x.clone(), x * 2

        def setup_context(ctx, inputs, output):
            ctx.mark_non_differentiable(output[0])

        twice.register_autograd(lambda ctx, g0, g1: g1 * 2, setup_context=setup_context)
        x = T.ones(2, requires_grad=True)
        a, b = twice(x)
        assert (a.requires_grad, b.requires_grad) == (False, True), T.__name__
        b.sum().backward()
        assert x.grad.tolist() == [2.0, 2.0], T.__name__


def test_numpy_in_a_custom_op_kernel_of_an_input_that_requires_grad():
    # torch's custom-ops tutorial: the kernel runs below autograd and calls x.cpu().numpy()
    for T in _libs():

        @T.library.custom_op(f"s16numpy_{T.__name__}::sin", mutates_args=())
        def np_sin(x: T.Tensor) -> T.Tensor:
            return T.from_numpy(np.sin(x.cpu().numpy()))

        np_sin.register_autograd(
            lambda ctx, g: g * ctx.saved_tensors[0].cos(),
            setup_context=lambda ctx, inputs, output: ctx.save_for_backward(inputs[0]),
        )
        x = T.tensor([0.5, 1.0], dtype=T.float64, requires_grad=True)
        np_sin(x).sum().backward()
        assert np.allclose(x.grad.numpy(), np.cos([0.5, 1.0])), T.__name__
        with T.no_grad():
            assert np.allclose(x.numpy(), [0.5, 1.0]), T.__name__
        with pytest.raises(RuntimeError, match="Can't call numpy"):
            x.numpy()


def test_triton_op_without_triton_is_a_custom_op_run_eagerly():
    """torch.library.triton_op on a CPU install: the implementation runs as the op's kernel and
    is its fake kernel (opcheck passes); wrap_triton needs triton (session 20)."""
    import importlib.util

    for T in _libs():

        @T.library.triton_op(f"s20tr_{T.__name__}::mul", mutates_args=())
        def mul(x: T.Tensor, y: T.Tensor) -> T.Tensor:
            return x * y

        assert type(mul).__name__ == "CustomOpDef", T.__name__
        x, y = T.ones(2), T.full((2,), 3.0)
        assert mul(x, y).tolist() == [3.0, 3.0], T.__name__
        op = getattr(T.ops, f"s20tr_{T.__name__}").mul.default
        assert op(x, y).tolist() == [3.0, 3.0], T.__name__
        result = T.library.opcheck(mul, (T.randn(3), T.randn(3)))
        assert set(result.values()) == {"SUCCESS"} and len(result) == 4, T.__name__
        if importlib.util.find_spec("triton") is None:
            with pytest.raises(ModuleNotFoundError, match="triton"):
                T.library.wrap_triton(lambda: 0)
