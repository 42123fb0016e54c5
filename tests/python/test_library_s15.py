"""torch.library custom ops as torch 2.13 documents them (session 15): schema text, opcheck's
results without a fake kernel, ops that only mutate, the aliasing error. Each case checks the
expectation written here under ember and, where torch is installed, under torch."""

import pytest
from _docs_check import _libs


def _ns(T, tag):
    return f"s15{tag}_{T.__name__}"


def test_schema_prints_float_defaults_as_c10():
    for T in _libs():
        ns = _ns(T, "a")

        @T.library.custom_op(f"{ns}::f", mutates_args=())
        def f(x: T.Tensor, a: float = 2.0, b: float = 1e-5, c: float = 0.1, d: float = -3.5,
              e: float = 1e20, k: int = -1) -> T.Tensor:  # fmt: skip
            return x.clone()

        assert str(f._opoverload._schema) == (
            f"{ns}::f(Tensor x, float a=2., float b=1.0000000000000001e-05, "
            "float c=0.10000000000000001, float d=-3.5, float e=1e+20, SymInt k=-1) -> Tensor"
        ), T.__name__
        lib = T.library.Library(_ns(T, "b"), "DEF")
        lib.define("g(Tensor x, float eps=1e-05, Scalar s=0.5, Scalar n=0) -> Tensor")
        op = getattr(T.ops, _ns(T, "b")).g.default
        assert str(op._schema) == (
            f"{_ns(T, 'b')}::g(Tensor x, float eps=1.0000000000000001e-05, Scalar s=0.5, "
            "Scalar n=0) -> Tensor"
        ), T.__name__
        assert op._schema.arguments[1].default_value == 1e-05


def test_op_that_only_mutates_needs_no_fake_kernel():
    for T in _libs():

        @T.library.custom_op(f"{_ns(T, 'c')}::sin_out", mutates_args={"out"})
        def sin_out(x: T.Tensor, out: T.Tensor) -> None:
            out.copy_(x.sin())

        x, out = T.tensor([0.1, 0.2]), T.empty(2)
        assert sin_out(x, out) is None
        assert out.tolist() == pytest.approx([0.0998334166, 0.1986693308], abs=1e-6)
        assert str(sin_out._opoverload._schema).endswith("(Tensor x, Tensor(a1!) out) -> ()")
        assert T.library.opcheck(sin_out, (x, out)) == {
            "test_schema": "SUCCESS",
            "test_autograd_registration": "SUCCESS",
            "test_faketensor": "SUCCESS",
            "test_aot_dispatch_dynamic": "SUCCESS",
        }, T.__name__


def test_opcheck_without_fake_kernel_reports_torch_error():
    for T in _libs():
        ns = _ns(T, "d")

        @T.library.custom_op(f"{ns}::nofake", mutates_args=())
        def nofake(x: T.Tensor) -> T.Tensor:
            return x.clone()

        text = (
            f"There was no fake impl registered for <CustomOpDef({ns}::nofake)>. This is "
            "necessary for torch.compile/export/fx tracing to work. Please use "
            "`nofake.register_fake` to add an fake impl."
        )
        res = T.library.opcheck(nofake, (T.ones(2),), raise_exception=False)
        assert res["test_schema"] == "SUCCESS" and res["test_autograd_registration"] == "SUCCESS"
        for test in ("test_faketensor", "test_aot_dispatch_dynamic"):
            assert type(res[test]) is RuntimeError and str(res[test]) == text, T.__name__
        with pytest.raises(Exception) as info:
            T.library.opcheck(nofake, (T.ones(2),))
        assert type(info.value).__name__ == "OpCheckError", T.__name__
        assert str(info.value) == (
            f"opcheck(op, ...): test_faketensor failed with {text} (scroll up for stack trace)"
        ), T.__name__


def test_returning_an_input_raises_torch_text():
    for T in _libs():

        @T.library.custom_op(f"{_ns(T, 'e')}::same", mutates_args=())
        def same(x: T.Tensor) -> T.Tensor:
            return x

        with pytest.raises(RuntimeError) as info:
            same(T.ones(2))
        msg = str(info.value)
        assert msg.startswith("same"), T.__name__
        assert (
            "The output of this custom operator (1) must not also be an input to this custom "
            "operator and (2) may not alias any inputs to this custom operator or other returns."
        ) in msg, T.__name__


def test_register_vmap_rule_runs_under_vmap():
    for T in _libs():
        ns = _ns(T, "f")

        @T.library.custom_op(f"{ns}::axpy", mutates_args=())
        def axpy(x: T.Tensor, y: T.Tensor, k: float) -> T.Tensor:
            return x * k + y

        seen = []

        def rule(info, in_dims, x, y, k):
            seen.append((info.batch_size, info.randomness, in_dims[1:], k))
            x = x.movedim(in_dims[0], 0)  # torch may hand the batch in any dimension
            return axpy(x, y, k), 0

        T.library.register_vmap(axpy, rule)
        a, b = T.arange(6.0).reshape(2, 3), T.ones(3)
        assert T.func.vmap(axpy, in_dims=(0, None, None))(a, b, 2.0).tolist() == [
            [1.0, 3.0, 5.0],
            [7.0, 9.0, 11.0],
        ], T.__name__
        out = T.func.vmap(axpy, in_dims=(1, None, None), out_dims=1)(a.T.contiguous(), b, 2.0)
        assert out.tolist() == [[1.0, 7.0], [3.0, 9.0], [5.0, 11.0]], T.__name__
        assert seen == [(2, "error", (None, None), 2.0)] * 2, T.__name__

        @T.library.custom_op(f"{ns}::two", mutates_args=())
        def two(x: T.Tensor) -> tuple[T.Tensor, T.Tensor]:
            return x * 2, x.sum()

        @two.register_vmap
        def _(info, in_dims, x):
            x = x.movedim(in_dims[0], 0)
            return (x * 2, x.sum(1)), (0, 0)

        doubled, sums = T.func.vmap(two)(a)
        assert doubled.tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]], T.__name__
        assert sums.tolist() == [3.0, 12.0], T.__name__
