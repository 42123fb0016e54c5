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
