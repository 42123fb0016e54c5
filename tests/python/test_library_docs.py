"""The capabilities torch.library's custom-operator documentation shows, run under ember (and,
where torch is installed, under torch with the same code, the results compared): custom_op with
register_fake / register_autograd / register_kernel and mutates_args, opcheck, infer_schema,
Library DEF / FRAGMENT with define and impl, torch.ops.<ns>.<op> and its .default overload and
schema, ops.aten overloads, the profiler and compile seeing a custom op, and the errors torch
raises (an output aliasing an input, a missing kernel, a duplicate definition)."""

import importlib
import itertools
import warnings

import numpy as np
from _docs_check import _each

_ids = itertools.count()


def _ns(T):
    """A fresh namespace per case and library (definitions live as long as the process)."""
    return f"docs{next(_ids)}{T.__name__}"


def _err(fn):
    try:
        fn()
    except Exception as e:  # the class is what is compared
        return type(e).__name__
    return None


def test_custom_op_call_forms_and_schema():
    def case(T):
        ns = _ns(T)

        @T.library.custom_op(f"{ns}::mysin", mutates_args=())
        def mysin(x: T.Tensor) -> T.Tensor:
            return x.sin()

        x = T.tensor([0.0, 1.0])
        op = getattr(T.ops, ns).mysin
        schema = str(op.default._schema).replace(ns, "NS")
        return mysin(x).numpy(), op(x).numpy(), op.default(x).numpy(), schema

    assert _each(case)[3] == "NS::mysin(Tensor x) -> Tensor"


def test_register_fake_and_opcheck():
    def case(T):
        ns = _ns(T)

        @T.library.custom_op(f"{ns}::numpy_mul", mutates_args=())
        def numpy_mul(x: T.Tensor, y: float) -> T.Tensor:
            return T.from_numpy(x.numpy() * y)

        @numpy_mul.register_fake
        def _(x, y):
            return T.empty_like(x)

        bad = _ns(T)

        @T.library.custom_op(f"{bad}::bad_fake", mutates_args=())
        def bad_fake(x: T.Tensor) -> T.Tensor:
            return x.clone()

        @bad_fake.register_fake
        def _(x):
            return T.empty(3, 3)

        ok = T.library.opcheck(numpy_mul, (T.randn(3), 3.14))
        return sorted(ok.items()), _err(lambda: T.library.opcheck(bad_fake, (T.ones(2),)))

    ok, bad = _each(case)
    assert [k for k, _ in ok] == [
        "test_aot_dispatch_dynamic",
        "test_autograd_registration",
        "test_faketensor",
        "test_schema",
    ]
    assert bad == "OpCheckError"


def test_register_autograd_and_mutation():
    def case(T):
        ns = _ns(T)

        @T.library.custom_op(f"{ns}::numpy_sin", mutates_args=())
        def numpy_sin(x: T.Tensor) -> T.Tensor:
            return T.from_numpy(np.sin(x.detach().numpy()))

        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * x.cos()

        numpy_sin.register_autograd(backward, setup_context=setup_context)
        x = T.tensor([0.5, 1.0], requires_grad=True)
        y = numpy_sin(x)
        y.sum().backward()

        @T.library.custom_op(f"{ns}::sin_out", mutates_args={"out"})
        def sin_out(x: T.Tensor, out: T.Tensor) -> None:
            out.copy_(x.sin())

        out = T.empty(1)
        ret = sin_out(T.tensor([0.5]), out)
        schema = str(getattr(T.ops, ns).sin_out.default._schema).replace(ns, "NS")
        return y.detach().numpy(), x.grad.numpy(), ret, out.numpy(), schema

    *_, schema = _each(case)
    assert schema == "NS::sin_out(Tensor x, Tensor(a1!) out) -> ()"


def test_register_autograd_with_keyword_only_inputs():
    # torch's docs: setup_context(ctx, inputs, keyword_only_inputs, output) for an op with
    # keyword-only arguments; backward returns a gradient per positional argument only.
    # Keyword-only tensors are refused (NotImplementedError) by custom_op and register_autograd.
    def case(T):
        ns = _ns(T)

        @T.library.custom_op(f"{ns}::numpy_mul", mutates_args=())
        def numpy_mul(x: T.Tensor, y: T.Tensor, *, val: float) -> T.Tensor:
            return T.from_numpy(x.numpy() * y.numpy() * val)

        seen = []

        def setup_context(ctx, inputs, keyword_only_inputs, output):
            # (torch's tuple here has one more entry: its Function's hidden last input)
            seen.append((len(inputs), keyword_only_inputs, ctx.needs_input_grad[:2]))
            ctx.val = keyword_only_inputs["val"]
            ctx.save_for_backward(*inputs)

        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            return grad * y * ctx.val, grad * x * ctx.val

        numpy_mul.register_autograd(backward, setup_context=setup_context)
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = T.tensor([3.0, 4.0])
        out = numpy_mul(x, y, val=0.5)
        (gx,) = T.autograd.grad(out.sum(), x)

        def kw_tensor_op(x: T.Tensor, *, w: T.Tensor) -> T.Tensor: ...

        refused = _err(lambda: T.library.custom_op(f"{ns}::kw", mutates_args=())(kw_tensor_op))
        T.library.define(f"{ns}::kw2", "(Tensor x, *, Tensor w) -> Tensor")
        refused_autograd = _err(lambda: T.library.register_autograd(f"{ns}::kw2", backward))
        return out.detach().numpy(), gx.numpy(), seen, refused, refused_autograd

    *_, seen, refused, refused_autograd = _each(case)
    assert seen == [(2, {"val": 0.5}, (True, False))]
    assert refused == refused_autograd == "NotImplementedError"


def test_opcheck_failures_name_what_torch_names():
    def case(T):
        ns = _ns(T)

        @T.library.custom_op(f"{ns}::bad_fake", mutates_args=())
        def bad_fake(x: T.Tensor) -> T.Tensor:
            return x.sum(0)

        bad_fake.register_fake(lambda x: T.empty_like(x))

        @T.library.custom_op(f"{ns}::sneaky", mutates_args=())
        def sneaky(x: T.Tensor, y: T.Tensor) -> T.Tensor:
            y.add_(1)
            return x.clone()

        fake = T.library.opcheck(bad_fake, (T.ones(2, 3),), raise_exception=False)
        schema = T.library.opcheck(
            sneaky, (T.ones(2), T.ones(2)), test_utils="test_schema", raise_exception=False
        )
        errors = (fake["test_faketensor"], schema["test_schema"])
        return [(isinstance(e, RuntimeError), str(e).replace(ns, "NS")) for e in errors]

    (fake, schema) = _each(case)
    assert fake[1] == (
        "When comparing the output of NS.bad_fake.default on FakeTensor and concrete Tensors, "
        "found mismatched tensor metadata: Shapes torch.Size([3]) and torch.Size([2, 3]) are not "
        "equal!"
    )
    assert schema == (True, "Argument y is not defined as mutable but was mutated")


def test_register_autocast_casts_floating_inputs_and_runs_with_autocast_off():
    def case(T):
        ns = _ns(T)
        inside = []

        @T.library.custom_op(f"{ns}::my_sin", mutates_args=())
        def my_sin(x: T.Tensor, n: T.Tensor) -> T.Tensor:
            inside.append((T.is_autocast_enabled("cpu"), str(x.dtype), str(n.dtype)))
            return T.sin(x)

        T.library.register_autocast(f"{ns}::my_sin", "cpu", T.bfloat16)
        x, n = T.ones(3), T.arange(3)
        with T.autocast("cpu", dtype=T.float16):
            dtypes = [my_sin(x, n).dtype, my_sin(x.double(), n).dtype]  # float64 is not cast
        dtypes.append(my_sin(x, n).dtype)  # outside the region: as is
        bad = _err(lambda: T.library.register_autocast(3, "cpu", T.float16))
        return [str(d) for d in dtypes], inside, bad

    dtypes, inside, bad = _each(case)
    assert dtypes == ["torch.bfloat16", "torch.float64", "torch.float32"]
    assert inside[0] == (False, "torch.bfloat16", "torch.int64")
    assert bad == "ValueError"


def test_define_returns_the_name_as_written_and_impl_abstract():
    def case(T):
        ns = _ns(T)
        lib = T.library.Library(ns, "FRAGMENT")
        names = [
            lib.define("foo(Tensor x) -> Tensor"),
            lib.define("foo.two(Tensor x, Tensor y) -> Tensor"),
            lib.define("bar(Tensor x) -> Tensor"),
        ]
        T.library.impl(f"{ns}::bar", "cpu", lambda x: x * 2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            T.library.impl_abstract(f"{ns}::bar", lambda x: T.empty_like(x))
        checked = T.library.opcheck(getattr(T.ops, ns).bar.default, (T.ones(2),))
        return names, checked["test_faketensor"], [w.category.__name__ for w in caught]

    assert _each(case) == (["foo", "foo", "bar"], "SUCCESS", ["FutureWarning"])


def test_infer_schema_kernels_and_multiple_outputs():
    def case(T):
        def f(x: T.Tensor, n: int = 2, *, flag: bool = True) -> tuple[T.Tensor, T.Tensor]: ...

        ns = _ns(T)

        @T.library.custom_op(f"{ns}::g", mutates_args=(), device_types="cpu")
        def g(x: T.Tensor) -> T.Tensor:
            return x + 1

        @g.register_kernel("cpu")
        def _(x):
            return x + 100

        @T.library.custom_op(f"{ns}::mo", mutates_args=())
        def mo(x: T.Tensor) -> tuple[T.Tensor, T.Tensor]:
            return x + 1, x * 2

        a, b = mo(T.ones(2))
        return (
            T.library.infer_schema(f, mutates_args=(), op_name="foo"),
            g(T.zeros(1)).numpy(),
            a.numpy(),
            b.numpy(),
            str(getattr(T.ops, ns).mo.default._schema).replace(ns, "NS"),
        )

    _each(case)


def test_library_define_impl_and_fragment():
    def case(T):
        ns = _ns(T)
        lib = T.library.Library(ns, "DEF")
        lib.define("foo(Tensor x, Scalar alpha=1) -> Tensor")
        lib.impl("foo", lambda x, alpha=1: x * alpha + 1, "CPU")
        lib.define("sq(Tensor x) -> Tensor")
        lib.impl("sq", lambda x: x * x, "CompositeImplicitAutograd")
        op = getattr(T.ops, ns)
        x = T.tensor([3.0], requires_grad=True)
        op.sq(x).sum().backward()
        other = _ns(T)
        T.library.define(f"{other}::bar", "(Tensor x) -> Tensor")

        @T.library.impl(f"{other}::bar", "cpu")
        def bar(x):
            return x * 3

        frag = T.library.Library(_ns(T), "FRAGMENT")
        frag.define("twice(Tensor x) -> Tensor")
        frag.impl("twice", lambda x: x * 2, "CompositeExplicitAutograd")
        return (
            op.foo(T.ones(2)).numpy(),
            op.foo(T.ones(2), 3).numpy(),
            str(op.foo.default._schema).replace(ns, "NS"),
            op.foo.default.name().replace(ns, "NS"),
            x.grad.numpy(),
            getattr(T.ops, other).bar(T.ones(1)).numpy(),
            getattr(T.ops, frag.ns).twice(T.ones(2)).numpy(),
        )

    _each(case)


def test_errors_torch_raises():
    def case(T):
        ns = _ns(T)

        @T.library.custom_op(f"{ns}::al", mutates_args=())
        def al(x: T.Tensor) -> T.Tensor:
            return x

        lib = T.library.Library(ns, "FRAGMENT")
        lib.define("nokernel(Tensor x) -> Tensor")

        def duplicate():
            lib.define("nokernel(Tensor x) -> Tensor")

        return (
            _err(lambda: al(T.ones(2))),
            _err(lambda: getattr(T.ops, ns).nokernel(T.ones(1))),
            _err(duplicate),
            _err(lambda: getattr(T.ops, ns).nope),
        )

    assert _each(case) == ("RuntimeError", "NotImplementedError", "RuntimeError", "AttributeError")


def test_aten_overloads_profiler_and_compile():
    def case(T):
        a = T.ops.aten
        x, y = T.tensor([1.0, 2.0]), T.tensor([3.0, 4.0])
        ns = _ns(T)

        @T.library.custom_op(f"{ns}::cc", mutates_args=())
        def cc(x: T.Tensor) -> T.Tensor:
            return x.clone() * 2

        @cc.register_fake
        def _(x):
            return T.empty_like(x)

        profiler = importlib.import_module(f"{T.__name__}.profiler")
        with profiler.profile() as prof:
            cc(x)
        keys = sorted(e.key.replace(ns, "NS") for e in prof.key_averages() if ns in e.key)
        compiled = T.compile(lambda v: cc(v) + 1, backend="eager")
        return (
            a.add.Tensor(x, y).numpy(),
            a.mm.default(x[None], y[:, None]).numpy(),
            a.sin.default.name(),
            str(a.mul.Tensor._schema),
            keys,
            compiled(x).numpy(),
        )

    _each(case)


def test_custom_op_tags_inplace_and_out_forms():
    # torch.library.custom_op's documented numpy_sin_ (Tag.inplace) and numpy_sin_out (Tag.out)
    def case(T):
        ns = _ns(T)
        Tag = T.Tag

        @T.library.custom_op(
            f"{ns}::sin_", mutates_args={"x"}, device_types="cpu", tags=Tag.inplace
        )
        def sin_(x: T.Tensor) -> T.Tensor:
            x.copy_(x.sin())
            return x

        @T.library.custom_op(f"{ns}::sin_out", mutates_args={"out"}, tags=Tag.out)
        def sin_out(x: T.Tensor, *, out: T.Tensor) -> T.Tensor:
            out.copy_(x.sin())
            return out

        @T.library.custom_op(f"{ns}::plain", mutates_args=(), tags=(Tag.pointwise, Tag.pointwise))
        def plain(x: T.Tensor) -> T.Tensor:
            return x.clone()

        @T.library.custom_op(f"{ns}::bad_", mutates_args={"x"}, tags=Tag.inplace)
        def bad_(x: T.Tensor) -> T.Tensor:
            return x.clone()

        x, out = T.tensor([0.5, 1.0]), T.empty(2)
        ops = getattr(T.ops, ns)
        meta_out = T.empty(3, device="meta")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sin_.register_fake(lambda x: x)
        return (
            sin_(x) is x,
            sin_out(T.tensor([0.5, 1.0]), out=out) is out,
            x.numpy(),
            out.numpy(),
            [[t.name for t in getattr(ops, n).default.tags] for n in ("sin_", "sin_out", "plain")],
            [t.name for t in plain._tags],
            [str(getattr(ops, n).default._schema).replace(ns, "NS") for n in ("sin_", "sin_out")],
            sin_out(T.empty(3, device="meta"), out=meta_out) is meta_out,  # generated fake
            _err(lambda: bad_(T.ones(2))),
            _err(lambda: sin_out.register_autograd(lambda ctx, g: g)),
            [str(w.message).replace(ns, "NS") for w in caught],
        )

    r = _each(case)
    assert r[:2] == (True, True)
    assert r[4] == [["pt2_compliant_tag", "inplace"], ["pt2_compliant_tag", "out"],
                    ["pt2_compliant_tag", "pointwise"]]  # fmt: skip
    assert r[6] == [
        "NS::sin_(Tensor(a0!) x) -> Tensor(a0!)",
        "NS::sin_out(Tensor x, *, Tensor(a1!) out) -> Tensor(a1!)",
    ]
    assert r[8:10] == ("RuntimeError", "RuntimeError")
    assert "already get an autogenerated fake kernel" in r[10][0]


def test_define_tags_and_tagged_schema_checks():
    def case(T):
        ns = _ns(T)
        lib = T.library.Library(ns, "FRAGMENT")
        lib.define("d(Tensor x) -> Tensor", tags=[T.Tag.pointwise, T.Tag.core])
        T.library.define(f"{ns}::e", "(Tensor x) -> Tensor", tags=T.Tag.reduction)
        errors = []
        for tag, schema in (
            ("out", "o1(Tensor x, Tensor(a!) out) -> Tensor(a!)"),
            ("out", "o2(Tensor x, *, Tensor(a!) out) -> Tensor"),
            ("out", "o3(Tensor x) -> Tensor"),
            ("inplace", "i1(Tensor x) -> Tensor"),
            ("inplace", "i2(Tensor(a!) x) -> Tensor"),
        ):
            try:
                lib.define(schema, tags=getattr(T.Tag, tag))
            except ValueError as e:
                errors.append(str(e))
        lib.define("i3(Tensor(a!) x) -> Tensor(a!)", tags=T.Tag.inplace)
        ops = getattr(T.ops, ns)

        def bad_sin(x: T.Tensor) -> T.Tensor:
            return x

        return (
            [[t.name for t in getattr(ops, n).default.tags] for n in ("d", "e", "i3")],
            errors,
            _err(lambda: lib.define("z(Tensor x) -> Tensor", tags=["core"])),
            _err(lambda: lib.define("z(Tensor x) -> Tensor", alias_analysis="X")),
            _err(lambda: T.library.infer_schema(bad_sin, mutates_args=(), tags=T.Tag.inplace)),
        )

    r = _each(case)
    assert r[0] == [["pointwise", "core"], ["reduction"], ["inplace"]]
    assert len(r[1]) == 5 and r[1][0].startswith("Schema tagged with torch.Tag.out requires all")
    assert r[2:] == ("TypeError", "RuntimeError", "ValueError")


def test_impl_with_keyset_and_redispatch():
    def case(T):
        ns = _ns(T)
        lib = T.library.Library(ns, "FRAGMENT")
        lib.define("f(Tensor x) -> Tensor")
        seen = []

        def cpu(keyset, x):
            seen.append(repr(keyset))
            return x * 2

        def autograd(keyset, x):
            top = keyset.highestPriorityTypeId()
            seen.append((repr(keyset), top.name))
            with T.no_grad():  # the backend keys below the Autograd one
                return getattr(T.ops, ns).f.default.redispatch(keyset.remove(top), x)

        lib.impl("f", cpu, "CPU", with_keyset=True)
        plain = getattr(T.ops, ns).f(T.ones(2)).numpy()
        lib.impl("f", autograd, "Autograd", with_keyset=True)
        grad = getattr(T.ops, ns).f(T.ones(2, requires_grad=True)).detach().numpy()
        return plain, grad, seen

    r = _each(case)
    assert r[2] == [
        "DispatchKeySet(CPU)",
        ("DispatchKeySet(CPU, AutogradCPU)", "AutogradCPU"),
        "DispatchKeySet(CPU)",
    ]


def test_fallthrough_kernel_and_get_kernel():
    def case(T):
        ns = _ns(T)
        lib = T.library.Library(ns, "FRAGMENT")
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x * 2, "CPU")
        original = T.library.get_kernel(f"{ns}::f", "CPU")
        lib.impl("f", T.library.fallthrough_kernel, "Autograd")
        x = T.ones(2, requires_grad=True)
        y = getattr(T.ops, ns).f(x)  # the CPU kernel runs with grad mode on: mul's graph
        y.sum().backward()

        def wrapped(keyset, x):
            return original.call_boxed(keyset, x) + 1

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch warns that the CPU kernel is replaced
            lib.impl("f", wrapped, "CPU", with_keyset=True)
            over = getattr(T.ops, ns).f(T.ones(2)).numpy()
            lib.impl("f", T.library.fallthrough_kernel, "CPU")
        return (
            type(original).__name__,
            y.grad_fn.name(),
            x.grad.numpy(),
            over,
            _err(lambda: getattr(T.ops, ns).f(T.ones(2))),
            _err(T.library.fallthrough_kernel),
            _err(lambda: T.library.get_kernel(3, "CPU")),
        )

    r = _each(case)
    assert r[0] == "_SafeKernelFunction" and r[1] == "MulBackward0"
    np.testing.assert_array_equal(r[3], [3.0, 3.0])
    assert r[4:] == ("NotImplementedError", "NotImplementedError", "ValueError")
