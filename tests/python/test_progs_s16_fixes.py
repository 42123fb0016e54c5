"""Fixes found by session 16's programs (tests/python/torch_scripts, legacy_tutorial among them):
the pre-0.4 idioms older tutorials still run (Variable, torch.cuda.FloatTensor, the deprecated
Number-first overloads of add/sub/addcmul/addcdiv), the deprecated cuda.amp and sdp_kernel forms,
and torch's wordings of the requires_grad refusals."""

import subprocess
import sys
import textwrap
import warnings

import pytest

import ember


def _run(code):
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout, out.stderr


# --- torch.autograd.Variable ------------------------------------------------------------


def test_variable_wraps_a_tensor_as_torch_does():
    from ember.autograd import Variable

    x = ember.ones(3)
    v = Variable(x, requires_grad=True)
    assert v is not x and v.data_ptr() == x.data_ptr()  # shares the data
    assert v.requires_grad and v.is_leaf and not x.requires_grad
    assert isinstance(x, Variable) and isinstance(v, ember.Tensor)
    y = (v * 2).sum()
    w = Variable(y)  # outside y's graph
    assert w.grad_fn is None and not w.requires_grad and w.item() == 6.0
    assert Variable().shape == (0,)
    assert Variable(ember.ones(2, dtype=ember.long)).dtype == ember.long
    v.sum().backward()
    assert v.grad.tolist() == [1.0, 1.0, 1.0]


def test_variable_refusals_and_volatile():
    from ember.autograd import Variable

    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        Variable([1, 2])
    with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype"):
        Variable(ember.ones(2, dtype=ember.long), requires_grad=True)
    with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
        v = Variable(ember.ones(1), volatile=True)
    assert not v.requires_grad


# --- torch.cuda.FloatTensor and its kind --------------------------------------------------


def test_cuda_legacy_types_exist_and_refuse_construction():
    for name in ("FloatTensor", "DoubleTensor", "LongTensor", "ByteTensor", "BoolTensor"):
        cls = getattr(ember.cuda, name)
        assert repr(cls) == f"<class 'torch.cuda.{name}'>"
        assert cls.dtype == getattr(ember, name).dtype and cls.is_cuda
        with pytest.raises(TypeError, match=f"type torch.cuda.{name} not available. Torch not"):
            cls(2)
    assert not isinstance(ember.ones(2), ember.cuda.FloatTensor)
    assert isinstance(ember.ones(2), ember.FloatTensor)
    with pytest.raises(RuntimeError, match="not compiled with CUDA"):
        ember.ones(2).type(ember.cuda.FloatTensor)
    with pytest.raises(RuntimeError, match="not compiled with CUDA"):
        ember.ones(2).type("torch.cuda.FloatTensor")


def test_cuda_legacy_types_match_torch():
    torch = pytest.importorskip("torch")
    for name in ("FloatTensor", "LongTensor"):
        with pytest.raises(TypeError) as want:
            getattr(torch.cuda, name)([1])
        with pytest.raises(TypeError) as got:
            getattr(ember.cuda, name)([1])
        assert str(got.value) == str(want.value)


# --- deprecated Number-first overloads ----------------------------------------------------


def test_deprecated_overloads_compute_the_new_forms():
    p, g = ember.arange(3.0), ember.full((3,), 2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ember.equal(p.clone().add_(-0.5, g), p.add(g, alpha=-0.5))
        assert ember.equal(p.clone().sub_(0.5, g), p.sub(g, alpha=0.5))
        assert ember.equal(ember.add(p, 3, g), ember.add(p, g, alpha=3))
        assert ember.equal(p.sub(2, g), p - 2 * g)
        assert ember.equal(p.clone().addcmul_(0.5, g, p), p.addcmul(g, p, value=0.5))
        assert ember.equal(p.clone().addcdiv_(0.5, p, g), p.addcdiv(p, g, value=0.5))
        assert ember.equal(ember.addcmul(p, 2, g, g), ember.addcmul(p, g, g, value=2))
        assert ember.equal(ember.addcdiv(p, 2, g, g), p + 2)
        out = ember.empty(3)
        assert ember.add(p, 2, g, out=out) is out and out.tolist() == [4.0, 5.0, 6.0]
    with pytest.raises(TypeError, match="add_\\(\\) received an invalid combination"):
        p.clone().add_(2, g, alpha=3)  # the deprecated form takes no alpha


def test_deprecated_overload_warns_once_with_torchs_text():
    _, err = _run(
        """
        import ember
        p = ember.ones(3)
        p.add_(-0.1, p)
        p.addcmul_(0.5, p, p)
        ember.add(p, 2, p)
        """
    )
    assert err.count("UserWarning") == 1  # once a process, as torch's TORCH_WARN_ONCE
    assert (
        "This overload of add_ is deprecated:\n\tadd_(Number alpha, Tensor other)\n"
        "Consider using one of the following signatures instead:\n"
        "\tadd_(Tensor other, *, Number alpha = 1)"
    ) in err
    assert "<string>:4: UserWarning" in err  # the caller's line


def test_deprecated_overload_function_text():
    _, err = _run("import ember\nember.addcmul(ember.ones(2), 2, ember.ones(2), ember.ones(2))")
    assert (
        "This overload of addcmul is deprecated:\n"
        "\taddcmul(Tensor input, Number value, Tensor tensor1, Tensor tensor2, *, "
        "Tensor out = None)\nConsider using one of the following signatures instead:\n"
        "\taddcmul(Tensor input, Tensor tensor1, Tensor tensor2, *, Number value = 1, "
        "Tensor out = None)"
    ) in err


# --- deprecated amp and attention forms ---------------------------------------------------


def test_cuda_amp_custom_fwd_bwd_decorate_a_function():
    with pytest.warns(FutureWarning, match=r"`torch.cuda.amp.custom_[fb]wd\(args...\)` is") as rec:

        class Scale(ember.autograd.Function):
            @staticmethod
            @ember.cuda.amp.custom_fwd(cast_inputs=ember.float32)
            def forward(ctx, x):
                return x * 3

            @staticmethod
            @ember.cuda.amp.custom_bwd
            def backward(ctx, g):
                return g * 3

    assert sum("custom_fwd" in str(r.message) for r in rec) == 1
    assert sum("custom_bwd" in str(r.message) for r in rec) == 1
    x = ember.ones(2, requires_grad=True)
    Scale.apply(x).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_device_amp_forms_warn_as_torch():
    with pytest.warns(FutureWarning, match=r"Please use `torch.amp.GradScaler\('cuda', args"):
        ember.cuda.amp.GradScaler(enabled=False)
    with pytest.warns(FutureWarning, match=r"Please use `torch.amp.autocast\('cuda', args"):
        ember.cuda.amp.autocast(enabled=False)
    with pytest.warns(FutureWarning, match=r"`torch.cpu.amp.autocast\(args...\)` is deprecated"):
        ember.cpu.amp.autocast()


def test_sdp_kernel_sets_and_restores_the_backend_switches():
    cuda = ember.backends.cuda
    with pytest.warns(FutureWarning, match=r"`torch.backends.cuda.sdp_kernel\(\)` is deprecated"):
        with cuda.sdp_kernel(enable_flash=False, enable_mem_efficient=False):
            assert not cuda.flash_sdp_enabled() and not cuda.mem_efficient_sdp_enabled()
            assert cuda.math_sdp_enabled()
    assert cuda.flash_sdp_enabled() and cuda.mem_efficient_sdp_enabled()


# --- wordings -------------------------------------------------------------------------------


def test_upsample_warning_text():
    with pytest.warns(UserWarning) as rec:
        ember.nn.functional.upsample(ember.ones(1, 1, 2, 2), scale_factor=2)
    assert str(rec[0].message) == (
        "`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead."
    )


def test_grad_scaler_without_cuda_warns_at_the_callers_line():
    with pytest.warns(UserWarning, match="CUDA is not available.  Disabling.") as rec:
        scaler = ember.amp.GradScaler()
    assert not scaler.is_enabled()
    assert [r.filename for r in rec if "Disabling" in str(r.message)] == [__file__]


def test_deprecated_autocast_cpu_gpu_names_warn_as_torch():
    with pytest.warns(DeprecationWarning, match=r"torch.is_autocast_cpu_enabled\(\) is depr"):
        assert ember.is_autocast_cpu_enabled() is False
    with pytest.warns(DeprecationWarning, match=r"Please use torch.get_autocast_dtype\('cpu'\)"):
        assert ember.get_autocast_cpu_dtype() == ember.get_autocast_dtype("cpu")
    before = ember.get_autocast_dtype("cuda")
    with pytest.warns(DeprecationWarning, match=r"set_autocast_dtype\('cuda', dtype\) instead"):
        ember.set_autocast_gpu_dtype(before)


def test_set_default_tensor_type_warns_once_and_words_its_refusal():
    out, err = _run(
        """
        import ember
        ember.set_default_tensor_type(ember.DoubleTensor)
        print(ember.get_default_dtype())
        ember.set_default_tensor_type("torch.FloatTensor")
        try:
            ember.set_default_tensor_type(ember.LongTensor)
        except TypeError as e:
            print(e)
        """
    )
    assert out.splitlines() == [
        "torch.float64",
        "only floating-point types are supported as the default type",
    ]
    assert err.count("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1") == 1


def test_torch_qr_returns_its_named_pair():
    a = ember.tensor([[2.0, 1.0], [1.0, 3.0], [0.0, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        q, r = ember.qr(a)
        res = ember.qr(a, some=False)
    assert ember.allclose(q @ r, a, atol=1e-6)
    assert type(res).__name__ == "qr" and res.Q.shape == (3, 3) and res.R.shape == (3, 2)
    assert repr(res).startswith("torch.return_types.qr(\nQ=")


def test_deprecated_linalg_forms_warn_once_each_with_torchs_text():
    _, err = _run(
        """
        import ember
        a = ember.eye(2)
        for _ in range(2):
            ember.qr(a)
            ember.cholesky(a)
            ember.lu(a)
            ember.chain_matmul(a, a)
        """
    )
    for text in (
        "torch.qr is deprecated in favor of torch.linalg.qr and will be removed",
        "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed",
        "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex",
        "torch.chain_matmul is deprecated and will be removed in a future PyTorch release.",
    ):
        assert err.count(text) == 1, text
    assert err.count("<string>:") == 4  # each at the caller's line


def test_deprecated_linalg_texts_match_torch():
    pytest.importorskip("torch")
    script = """
        import sys, warnings, importlib
        m = importlib.import_module(sys.argv[1])
        a = [[2.0, 0.5], [0.5, 1.0]]
        calls = [
            lambda: m.qr(m.tensor(a)),
            lambda: m.cholesky(m.tensor(a)),
            lambda: m.lu(m.tensor(a)),
            lambda: m.chain_matmul(m.tensor(a), m.tensor(a)),
            lambda: m.range(0, 2),
        ]
        for call in calls:
            with warnings.catch_warnings(record=True) as rec:
                warnings.simplefilter("always")
                call()
            for r in rec:
                print(repr(str(r.message).split(" (Triggered internally")[0]))
    """
    outs = []
    for lib in ("torch", "ember"):
        out = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(script), lib],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        outs.append(out.stdout.splitlines())
    assert len(outs[0]) == 5 and outs[1] == outs[0]


# --- requires_grad refusals: torch words them three ways ---------------------------------

_REFUSALS = [
    (lambda T, x: x.requires_grad_(), "only Tensors of floating point dtype can require gradients"),
    (
        lambda T, x: setattr(x, "requires_grad", True),
        "only Tensors of floating point and complex dtype can require gradients",
    ),
    (
        lambda T, x: T.zeros(2, dtype=T.int64, requires_grad=True),
        "Only Tensors of floating point and complex dtype can require gradients",
    ),
    (
        lambda T, x: T.full((2,), 1, dtype=T.int64, requires_grad=True),
        "Only Tensors of floating point and complex dtype can require gradients",
    ),
    (
        lambda T, x: T.empty_strided((2,), (1,), dtype=T.int64, requires_grad=True),
        "Only Tensors of floating point and complex dtype can require gradients",
    ),
    (
        lambda T, x: T.nn.Parameter(x),
        "Only Tensors of floating point and complex dtype can require gradients",
    ),
    (
        lambda T, x: T.ones(2).masked_fill(T.ones(2, dtype=T.uint8), 1.0),
        "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char",
    ),
]


@pytest.mark.parametrize("case", range(len(_REFUSALS)))
def test_requires_grad_refusals_in_torchs_words(case):
    call, text = _REFUSALS[case]
    libs = [ember]
    try:
        import torch

        libs.append(torch)
    except ImportError:
        pass
    for T in libs:
        with pytest.raises(RuntimeError) as info:
            call(T, T.ones(2, dtype=T.int64))
        assert str(info.value).splitlines()[0] == text, (T.__name__, str(info.value))
