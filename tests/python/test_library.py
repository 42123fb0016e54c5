"""Custom operators from Python (ember.library): through the dispatcher, differentiable, captured
by graphs as one node, seen by the profiler; compared with torch.library where torch is
installed."""

import pickle
from typing import Optional

import numpy as np
import pytest

import ember
import ember.fx
from ember import Tensor
from ember.library import Library, custom_op, infer_schema, opcheck


def _np_kernel(x):
    """An opaque kernel: numpy computes, so only the op's registration makes it differentiable."""
    return ember.from_numpy(np.sin(x.detach().numpy()).copy())


@custom_op("emtest::npsin", mutates_args=())
def npsin(x: Tensor) -> Tensor:
    return _np_kernel(x)


@npsin.register_fake
def _(x):
    return ember.empty_like(x)


def _npsin_setup(ctx, inputs, output):
    (x,) = inputs
    ctx.save_for_backward(x)


def _npsin_backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return grad * x.cos()


npsin.register_autograd(_npsin_backward, setup_context=_npsin_setup)


@custom_op("emtest::npmul", mutates_args=())
def npmul(x: Tensor, y: Tensor, scale: float = 1.0) -> Tensor:
    return ember.from_numpy(x.detach().numpy() * y.detach().numpy() * scale)


def _npmul_setup(ctx, inputs, output):
    x, y, scale = inputs
    ctx.save_for_backward(x, y)
    ctx.scale = scale


def _npmul_backward(ctx, grad):
    x, y = ctx.saved_tensors
    gx = grad * y * ctx.scale if ctx.needs_input_grad[0] else None
    gy = grad * x * ctx.scale if ctx.needs_input_grad[1] else None
    return gx, gy, None


ember.library.register_autograd("emtest::npmul", _npmul_backward, setup_context=_npmul_setup)


@custom_op("emtest::noautograd", mutates_args=())
def noautograd(x: Tensor) -> Tensor:
    return _np_kernel(x)


@custom_op("emtest::bump", mutates_args=("x",))
def bump(x: Tensor, n: int) -> None:
    x.detach().numpy()[...] += n  # a write the op's schema declares


@custom_op("emtest::split2", mutates_args=())
def split2(x: Tensor) -> tuple[Tensor, Tensor]:
    return x * 2, x + 1


# --- calls, schema, ops namespace ------------------------------------------------------------


def test_call_goes_through_the_dispatcher_and_ops_names_it():
    x = ember.tensor([0.0, 0.5, 1.0])
    np.testing.assert_allclose(npsin(x).numpy(), np.sin(x.numpy()), rtol=1e-6)
    op = ember.ops.emtest.npsin.default
    assert op is npsin._opoverload
    assert op.name() == "emtest::npsin"
    assert str(op._schema) == "emtest::npsin(Tensor x) -> Tensor"
    np.testing.assert_allclose(op(x).numpy(), np.sin(x.numpy()), rtol=1e-6)
    np.testing.assert_allclose(ember.ops.emtest.npsin(x).numpy(), np.sin(x.numpy()), rtol=1e-6)
    assert ember.ops.emtest.npsin.overloads() == ["default"]
    entry = {e["name"]: e for e in ember._C._op_schemas()}["emtest::npsin"]
    assert entry["schema"] == "emtest::npsin(Tensor x) -> Tensor"
    assert "CPU" in entry["kernels"] and entry["has_autograd"]


def test_defaults_keywords_and_several_outputs():
    x, y = ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0])
    assert npmul(x, y).tolist() == [3.0, 8.0]
    assert npmul(x, y, 2.0).tolist() == [6.0, 16.0]
    assert npmul(x, y=y, scale=0.5).tolist() == [1.5, 4.0]
    a, b = split2(x)
    assert a.tolist() == [2.0, 4.0] and b.tolist() == [2.0, 3.0]


def test_wrong_arguments_raise():
    with pytest.raises(RuntimeError, match="Expected a value of type 'Tensor' for argument 'x'"):
        npsin(1)
    with pytest.raises(TypeError, match="missing value for argument 'y'"):
        npmul(ember.ones(2))
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        npmul(ember.ones(2), ember.ones(2), z=1)


# --- autograd ---------------------------------------------------------------------------------


def test_register_autograd_passes_gradcheck():
    x = ember.randn(5, dtype=ember.float64, requires_grad=True)
    y = ember.randn(5, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(npsin, (x,))
    assert ember.autograd.gradcheck(lambda a, b: npmul(a, b, 3.0), (x, y))
    out = npsin(x)
    assert type(out.grad_fn).__name__ == "GeneratedBackwardFor_emtest_npsin_defaultBackward"
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(x.detach().numpy()), rtol=1e-12)


def test_only_inputs_that_need_grad_get_one():
    x = ember.randn(3, requires_grad=True)
    y = ember.randn(3)
    npmul(x, y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.numpy(), rtol=1e-6)
    assert y.grad is None


def test_backward_without_a_formula_raises():
    x = ember.ones(3, requires_grad=True)
    out = noautograd(x)
    assert out.requires_grad
    with pytest.raises(RuntimeError, match="no autograd formula was registered"):
        out.sum().backward()
    with ember.no_grad():
        assert not noautograd(x).requires_grad


# --- mutation ---------------------------------------------------------------------------------


def test_mutated_arguments_bump_the_version_counter():
    x = ember.zeros(3)
    v = x._version
    assert bump(x, 2) is None
    assert x.tolist() == [2.0, 2.0, 2.0]
    assert x._version > v
    assert ember.ops.emtest.bump.default._schema.arguments[0].is_write
    assert str(ember.ops.emtest.bump.default._schema) == (
        "emtest::bump(Tensor(a0!) x, SymInt n) -> ()"
    )


def test_a_saved_tensor_mutated_by_a_custom_op_is_detected():
    w = ember.randn(3, requires_grad=True)
    x = ember.randn(3)
    y = w * x  # saves x
    bump(x, 1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# --- fake kernels and opcheck -----------------------------------------------------------------


def test_opcheck_passes_on_a_complete_op_and_names_what_is_missing():
    x = ember.randn(4, requires_grad=True)
    assert opcheck(npsin, (x,)) == {
        "test_schema": "SUCCESS",
        "test_autograd_registration": "SUCCESS",
        "test_faketensor": "SUCCESS",
        "test_aot_dispatch_dynamic": "SUCCESS",
    }
    res = opcheck(noautograd, (x,), raise_exception=False)
    assert "no autograd formula" in str(res["test_autograd_registration"])
    assert "There was no fake impl registered for <CustomOpDef(emtest::noautograd)>" in str(
        res["test_faketensor"]
    )
    with pytest.raises(ember.library.OpCheckError):
        opcheck(noautograd, (x,))


def test_opcheck_finds_an_undeclared_mutation():
    @custom_op("emtest::sneaky", mutates_args=())
    def sneaky(x: Tensor) -> Tensor:
        x.detach().numpy()[...] += 1
        return x.clone()

    res = opcheck(sneaky, (ember.zeros(2),), test_utils="test_schema", raise_exception=False)
    assert "mutated" in str(res["test_schema"])


def test_fake_kernel_runs_for_the_meta_key():
    st = ember.library._state("emtest::npsin")
    out = ember._C._custom_op_redispatch(
        st.handle, "Meta", [ember.ones(2, 3)], (ember.ones(2, 3),), {}
    )
    assert tuple(out.shape) == (2, 3)


# --- graph capture and profiler ----------------------------------------------------------------


def test_compile_captures_the_op_as_one_node():
    graphs = []

    def fn(x):
        return npsin(x * 2) + 1

    cf = ember.compile(fn, backend=lambda gm, ex: graphs.append(gm) or gm.forward)
    x = ember.randn(4)
    np.testing.assert_allclose(cf(x).numpy(), fn(x).numpy(), rtol=1e-6)
    (gm,) = graphs
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert targets.count(ember.ops.emtest.npsin.default) == 1
    assert "ember.ops.emtest.npsin.default" in gm.code


def test_compile_trains_through_the_op():
    x = ember.randn(4, requires_grad=True)
    cf = ember.compile(lambda t: npsin(t).sum(), backend="aot_eager")
    cf(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(x.detach().numpy()), rtol=1e-5)


class _Net(ember.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = ember.nn.Linear(3, 3)

    def forward(self, x):
        return npmul(self.lin(x), x, 2.0)


def test_symbolic_trace_records_one_node_and_reruns():
    net = _Net()
    gm = ember.fx.symbolic_trace(net)
    nodes = [n for n in gm.graph.nodes if n.target is ember.ops.emtest.npmul.default]
    assert len(nodes) == 1 and nodes[0].op == "call_function"
    x = ember.randn(2, 3)
    np.testing.assert_allclose(gm(x).detach().numpy(), net(x).detach().numpy(), rtol=1e-6)
    gm2 = pickle.loads(pickle.dumps(gm))
    np.testing.assert_allclose(gm2(x).detach().numpy(), net(x).detach().numpy(), rtol=1e-6)
    assert (
        pickle.loads(pickle.dumps(ember.ops.emtest.npmul.default)) is ember.ops.emtest.npmul.default
    )


def test_profiler_records_the_op_by_name():
    x = ember.randn(8, requires_grad=True)
    with ember.profiler.profile(record_shapes=True) as prof:
        npsin(x).sum().backward()
    names = [e.name for e in prof.events()]
    assert "emtest::npsin" in names
    avg = {e.key: e for e in prof.key_averages()}
    assert avg["emtest::npsin"].count >= 1


# --- Library ----------------------------------------------------------------------------------


def test_library_define_and_impl_per_key():
    lib = Library("emlib", "DEF")
    try:
        assert lib.define("scale(Tensor x, float s) -> Tensor") == "scale"  # torch's return
        lib.impl("scale", lambda x, s: x * s, "CPU")
        x = ember.tensor([1.0, 2.0])
        assert ember.ops.emlib.scale(x, 3.0).tolist() == [3.0, 6.0]
        assert ember.ops.emlib.scale.default._schema.arguments[1].type == "float"
        # A composite made of ember ops is differentiable through them.
        lib.define("cube(Tensor x) -> Tensor")
        lib.impl("cube", lambda x: x * x * x, "CompositeImplicitAutograd")
        t = ember.tensor([2.0], requires_grad=True)
        ember.ops.emlib.cube(t).backward()
        assert t.grad.tolist() == [12.0]
        # Overloads.
        lib.define("scale.int(Tensor x, int s) -> Tensor")
        lib.impl("scale.int", lambda x, s: x * (s + 100), "CompositeExplicitAutograd")
        assert ember.ops.emlib.scale.int(x, 1).tolist() == [101.0, 202.0]
        assert sorted(ember.ops.emlib.scale.overloads()) == ["default", "int"]
        assert ember.ops.emlib.scale.int.name() == "emlib::scale.int"
    finally:
        lib._destroy()


def test_library_errors():
    with pytest.raises(ValueError, match="Unsupported kind: BAD"):
        Library("emlib2", "BAD")
    lib = Library("emlib3", "DEF")
    try:
        with pytest.raises(RuntimeError, match="Only a single TORCH_LIBRARY"):
            Library("emlib3", "DEF")
        lib.define("f(Tensor x) -> Tensor")
        with pytest.raises(RuntimeError, match="same name and overload name multiple times"):
            lib.define("f(Tensor x) -> Tensor")
        with pytest.raises(ValueError, match="unknown dispatch key"):
            lib.impl("f", lambda x: x, "Banana")
        with pytest.raises(NotImplementedError, match="Could not run 'emlib3::f'"):
            ember.ops.emlib3.f(ember.ones(1))
        frag = Library("emlib3", "FRAGMENT")
        frag.define("g(Tensor x) -> Tensor")
        frag.impl("g", lambda x: x + 1, "CPU")
        assert ember.ops.emlib3.g(ember.zeros(1)).tolist() == [1.0]
    finally:
        lib._destroy()
    with pytest.raises(NotImplementedError, match="typed"):
        Library("aten", "IMPL").impl("add.Tensor", lambda a, b, alpha=1: a, "CPU")
    with pytest.raises(AttributeError):
        ember.ops.emlib3.nothere


def test_register_kernel_per_device_type_and_module_level_helpers():
    ember.library.define("emtest2::twice", "(Tensor x) -> Tensor")

    @ember.library.impl("emtest2::twice", "cpu")
    def _(x):
        return x * 2

    assert ember.ops.emtest2.twice(ember.ones(2)).tolist() == [2.0, 2.0]

    @custom_op("emtest2::which", mutates_args=())
    def which(x: Tensor) -> Tensor:
        return x + 1

    @which.register_kernel("cpu")
    def _(x):
        return x + 10

    assert which(ember.zeros(1)).tolist() == [10.0]


# --- schema inference -------------------------------------------------------------------------


def _f1(
    x: Tensor,
    y: Optional[Tensor],
    n: int = 3,
    s: float = 1.5,
    b: bool = True,
    name: str = "a",
    lst: Optional[list[int]] = None,
    ts: list[Tensor] = None,
) -> tuple[Tensor, Tensor]:
    raise AssertionError


def _f2(x: Tensor, o: Optional[int] = None, *, kw: int = 2) -> None:
    raise AssertionError


def _f3(x: Tensor, lf: list[float], ob: Optional[bool]) -> list[Tensor]:
    raise AssertionError


def test_infer_schema():
    assert infer_schema(_f1, mutates_args=()) == (
        '(Tensor x, Tensor? y, SymInt n=3, float s=1.5, bool b=True, str name="a", '
        "SymInt[]? lst=None, Tensor[] ts=None) -> (Tensor, Tensor)"
    )
    assert infer_schema(_f1, mutates_args=("x", "ts"), op_name="foo").startswith(
        "foo(Tensor(a0!) x, Tensor? y"
    )
    assert "Tensor(a7!)[] ts=None" in infer_schema(_f1, mutates_args=("ts",))
    assert infer_schema(_f2, mutates_args=()) == "(Tensor x, SymInt? o=None, *, SymInt kw=2) -> ()"
    assert infer_schema(_f3, mutates_args="unknown") == (
        "(Tensor(a0!) x, float[] lf, bool? ob) -> Tensor[]"
    )


def test_infer_schema_matches_torch():
    torch = pytest.importorskip("torch")
    from torch.library import infer_schema as torch_infer

    def t1(
        x: torch.Tensor,
        y: Optional[torch.Tensor],
        n: int = 3,
        s: float = 1.5,
        b: bool = True,
        name: str = "a",
        lst: Optional[list[int]] = None,
        ts: list[torch.Tensor] = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        raise AssertionError

    def t2(x: torch.Tensor, o: Optional[int] = None, *, kw: int = 2) -> None:
        raise AssertionError

    def t3(x: torch.Tensor, lf: list[float], ob: Optional[bool]) -> list[torch.Tensor]:
        raise AssertionError

    for ours, theirs, mut in ((_f1, t1, ("x", "ts")), (_f2, t2, ()), (_f3, t3, "unknown")):
        assert infer_schema(ours, mutates_args=mut) == torch_infer(theirs, mutates_args=mut)


def _no_annotation(x):
    raise AssertionError


def _bad_type(x: dict) -> Tensor:
    raise AssertionError


def _bad_return(x: Tensor) -> dict:
    raise AssertionError


def _varargs(x: Tensor, *rest) -> Tensor:
    raise AssertionError


def _no_return(x: Tensor):
    raise AssertionError


def _tensor_default(x: Tensor, y: Tensor = ember.ones(1)) -> Tensor:
    raise AssertionError


@pytest.mark.parametrize(
    "fn, mut, message",
    [
        (_no_annotation, (), "Parameter x must have a type annotation."),
        (_bad_type, (), "Parameter x has unsupported type <class 'dict'>. The valid types are"),
        (_bad_return, (), "Return has unsupported type <class 'dict'>. The valid types are"),
        (_varargs, (), "We do not support positional-only args, varargs, or varkwargs."),
        (_no_return, (), "No return type annotation was provided. Please add one."),
        (_tensor_default, (), "Parameter y has an unsupported default value type"),
        (_bad_return, ("z",), "{'z'} in mutates_args were not found in the custom op's signature"),
    ],
)
def test_infer_schema_errors(fn, mut, message):
    with pytest.raises(ValueError, match="^infer_schema\\(func\\): ") as info:
        infer_schema(fn, mutates_args=mut)
    assert message in str(info.value)


def test_custom_op_name_and_arguments_are_checked():
    with pytest.raises(ValueError, match="namespace::name"):
        custom_op("nonamespace", mutates_args=())
    with pytest.raises(TypeError, match="mutates_args"):
        custom_op("emtest::x")
    with pytest.raises(RuntimeError, match="same name and overload name"):

        @custom_op("emtest::npsin", mutates_args=())
        def again(x: Tensor) -> Tensor:
            return x


# --- against torch.library --------------------------------------------------------------------


def test_same_op_in_torch_gives_the_same_values_and_gradients():
    torch = pytest.importorskip("torch")

    @torch.library.custom_op("emtest_ref::npsin", mutates_args=())
    def tsin(x: torch.Tensor) -> torch.Tensor:
        return torch.from_numpy(np.sin(x.detach().numpy()).copy())

    def setup(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.cos()

    tsin.register_autograd(backward, setup_context=setup)
    data = np.random.default_rng(0).standard_normal(6)
    tx = torch.tensor(data, requires_grad=True)
    ex = ember.tensor(data, requires_grad=True)
    tout, eout = tsin(tx), npsin(ex)
    np.testing.assert_allclose(eout.detach().numpy(), tout.detach().numpy(), rtol=1e-12)
    tout.sum().backward()
    eout.sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    assert str(ember.ops.emtest.npsin.default._schema) == str(
        torch.ops.emtest_ref.npsin.default._schema
    ).replace("emtest_ref", "emtest")
    assert type(eout.grad_fn).__name__ == type(tout.grad_fn).__name__.replace(
        "emtest_ref", "emtest"
    )
