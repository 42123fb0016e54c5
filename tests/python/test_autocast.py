"""ember.autocast on CPU: the op lists' output dtypes (against torch.autocast("cpu") where torch is
installed, and against the lists written out here), gradients' dtypes, the weight-cast cache,
nesting, the decorator form, disabled regions and GradScaler("cpu") under autocast."""

import numpy as np
import pytest

import ember

F = ember.nn.functional
RNG = np.random.RandomState(0)


def arr(*shape):
    return RNG.randn(*shape).astype(np.float32)


# Inputs as numpy arrays, built once: both frameworks see the same values.
X = {
    "a": arr(4, 5),
    "b": arr(5, 3),
    "c": arr(4, 3),
    "ba": arr(2, 4, 5),
    "bb": arr(2, 5, 3),
    "bc": arr(2, 4, 3),
    "w": arr(6, 5),
    "bias": arr(6),
    "x1": arr(2, 3, 8),
    "w1": arr(4, 3, 3),
    "x2": arr(2, 3, 6, 6),
    "w2": arr(4, 3, 3, 3),
    "b4": arr(4),
    "x3": arr(1, 2, 4, 4, 4),
    "w3": arr(3, 2, 2, 2, 2),
    "wt1": arr(3, 4, 3),
    "wt2": arr(3, 4, 3, 3),
    "wt3": arr(2, 3, 2, 2, 2),
    "q": arr(2, 3, 4, 8),
    "pw": np.array([0.25], np.float32),
    "p": arr(4, 5),
    "t": arr(4, 5),
    "logits": arr(4, 5),
    "prob": (1 / (1 + np.exp(-arr(4, 5)))).astype(np.float32),
    "spd": (lambda m: (m @ m.T + 4 * np.eye(4)).astype(np.float32))(arr(4, 4)),
    "v": arr(4, 3),
    "e1": arr(4, 5),
    "e2": arr(4, 5),
}
TARGET = np.array([1, 0, 4, 2], np.int64)


def tensors(lib, dtype):
    out = {k: lib.tensor(v).to(dtype) for k, v in X.items()}
    out["target"] = lib.tensor(TARGET)
    out["sign"] = lib.tensor(np.sign(X["t"]))
    out["ml_target"] = lib.tensor(np.array([[1, 3, -1, 0, 0]] * 4, np.int64))
    return out


# (name, fn(lib, T), expected output dtype under bf16 autocast with float32 inputs)
LOWER = [
    ("mm", lambda lib, T: lib.mm(T["a"], T["b"])),
    ("bmm", lambda lib, T: lib.bmm(T["ba"], T["bb"])),
    ("addmm", lambda lib, T: lib.addmm(T["c"], T["a"], T["b"])),
    ("baddbmm", lambda lib, T: lib.baddbmm(T["bc"], T["ba"], T["bb"])),
    ("addbmm", lambda lib, T: lib.addbmm(T["c"], T["ba"], T["bb"])),
    ("matmul", lambda lib, T: lib.matmul(T["a"], T["b"])),
    ("matmul_3d", lambda lib, T: lib.matmul(T["ba"], T["b"])),
    ("linear", lambda lib, T: lib.nn.functional.linear(T["a"], T["w"], T["bias"])),
    ("linear_nobias", lambda lib, T: lib.nn.functional.linear(T["ba"], T["w"])),
    ("conv1d", lambda lib, T: lib.nn.functional.conv1d(T["x1"], T["w1"], T["b4"])),
    ("conv2d", lambda lib, T: lib.nn.functional.conv2d(T["x2"], T["w2"], T["b4"], padding=1)),
    ("conv3d", lambda lib, T: lib.nn.functional.conv3d(T["x3"], T["w3"])),
    ("conv_transpose1d", lambda lib, T: lib.nn.functional.conv_transpose1d(T["x1"], T["wt1"])),
    ("conv_transpose2d", lambda lib, T: lib.nn.functional.conv_transpose2d(T["x2"], T["wt2"])),
    ("conv_transpose3d", lambda lib, T: lib.nn.functional.conv_transpose3d(T["x3"], T["wt3"])),
    ("prelu", lambda lib, T: lib.nn.functional.prelu(T["a"], T["pw"])),
    (
        "scaled_dot_product_attention",
        lambda lib, T: lib.nn.functional.scaled_dot_product_attention(T["q"], T["q"], T["q"]),
    ),
]

# lower-precision ops fed a bfloat16 activation and float32 parameters (a model's second layer)
MIXED = [
    ("linear", lambda lib, T: lib.nn.functional.linear(T["a"].bfloat16(), T["w"], T["bias"])),
    ("matmul", lambda lib, T: lib.matmul(T["a"].bfloat16(), T["b"])),
    ("conv1d", lambda lib, T: lib.nn.functional.conv1d(T["x1"].bfloat16(), T["w1"], T["b4"])),
    ("conv2d", lambda lib, T: lib.nn.functional.conv2d(T["x2"].bfloat16(), T["w2"], T["b4"])),
    (
        "conv2d_same",
        lambda lib, T: lib.nn.functional.conv2d(T["x2"].bfloat16(), T["w2"], padding="same"),
    ),
    ("conv3d", lambda lib, T: lib.nn.functional.conv3d(T["x3"].bfloat16(), T["w3"])),
    (
        "conv_transpose2d",
        lambda lib, T: lib.nn.functional.conv_transpose2d(T["x2"].bfloat16(), T["wt2"]),
    ),
    ("prelu", lambda lib, T: lib.nn.functional.prelu(T["a"].bfloat16(), T["pw"])),
]


@pytest.mark.parametrize("name,fn", MIXED, ids=[n for n, _ in MIXED])
def test_lower_precision_ops_with_mixed_inputs(name, fn):
    assert dtype_name(run_autocast(ember, fn, "float32")) == "bfloat16"
    torch = pytest.importorskip("torch")
    assert dtype_name(run_autocast(torch, fn, "float32")) == "bfloat16"


# float32 ops, fed bfloat16 inputs
FP32 = [
    ("mse_loss", lambda lib, T: lib.nn.functional.mse_loss(T["p"], T["t"])),
    ("l1_loss", lambda lib, T: lib.nn.functional.l1_loss(T["p"], T["t"])),
    ("smooth_l1_loss", lambda lib, T: lib.nn.functional.smooth_l1_loss(T["p"], T["t"])),
    ("huber_loss", lambda lib, T: lib.nn.functional.huber_loss(T["p"], T["t"])),
    ("cross_entropy", lambda lib, T: lib.nn.functional.cross_entropy(T["logits"], T["target"])),
    (
        "nll_loss",
        lambda lib, T: lib.nn.functional.nll_loss(
            lib.log_softmax(T["logits"].float(), 1).to(T["logits"].dtype), T["target"]
        ),
    ),
    ("kl_div", lambda lib, T: lib.nn.functional.kl_div(T["p"], T["prob"], reduction="sum")),
    (
        "binary_cross_entropy",
        lambda lib, T: lib.nn.functional.binary_cross_entropy(T["prob"], T["prob"]),
    ),
    (
        "binary_cross_entropy_with_logits",
        lambda lib, T: lib.nn.functional.binary_cross_entropy_with_logits(T["logits"], T["prob"]),
    ),
    ("soft_margin_loss", lambda lib, T: lib.nn.functional.soft_margin_loss(T["p"], T["sign"])),
    (
        "hinge_embedding_loss",
        lambda lib, T: lib.nn.functional.hinge_embedding_loss(T["p"], T["sign"]),
    ),
    (
        "margin_ranking_loss",
        lambda lib, T: lib.nn.functional.margin_ranking_loss(T["p"], T["t"], T["sign"]),
    ),
    (
        "cosine_embedding_loss",
        lambda lib, T: lib.nn.functional.cosine_embedding_loss(T["e1"], T["e2"], T["sign"][:, 0]),
    ),
    (
        "triplet_margin_loss",
        lambda lib, T: lib.nn.functional.triplet_margin_loss(T["p"], T["t"], T["e1"]),
    ),
    ("poisson_nll_loss", lambda lib, T: lib.nn.functional.poisson_nll_loss(T["p"], T["prob"])),
    ("multi_margin_loss", lambda lib, T: lib.nn.functional.multi_margin_loss(T["p"], T["target"])),
    (
        "multilabel_margin_loss",
        lambda lib, T: lib.nn.functional.multilabel_margin_loss(T["p"], T["ml_target"]),
    ),
    ("cdist", lambda lib, T: lib.cdist(T["p"], T["t"])),
    ("trace", lambda lib, T: lib.trace(T["spd"])),
    ("linalg_solve", lambda lib, T: lib.linalg.solve(T["spd"], T["v"])),
    ("linalg_cholesky", lambda lib, T: lib.linalg.cholesky(T["spd"])),
    ("linalg_qr", lambda lib, T: lib.linalg.qr(T["spd"])[0]),
    ("linalg_eigh", lambda lib, T: lib.linalg.eigh(T["spd"])[0]),
    ("linalg_svd", lambda lib, T: lib.linalg.svd(T["spd"])[1]),
]

# ops outside the lists keep their input dtype (fed bfloat16, then float32)
UNLISTED = [
    ("relu", lambda lib, T: lib.relu(T["a"])),
    ("add", lambda lib, T: T["a"] + T["a"]),
    ("sum", lambda lib, T: T["a"].sum()),
    ("softmax", lambda lib, T: lib.softmax(T["a"], 1)),
    ("log_softmax", lambda lib, T: lib.log_softmax(T["a"], 1)),
    ("layer_norm", lambda lib, T: lib.nn.functional.layer_norm(T["a"], (5,))),
    ("gelu", lambda lib, T: lib.nn.functional.gelu(T["a"])),
]


def dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def run_autocast(lib, fn, in_dtype, ac_dtype="bfloat16"):
    T = tensors(lib, getattr(lib, in_dtype))
    with lib.autocast("cpu", dtype=getattr(lib, ac_dtype)):
        return fn(lib, T)


@pytest.mark.parametrize("name,fn", LOWER, ids=[n for n, _ in LOWER])
@pytest.mark.parametrize("ac_dtype", ["bfloat16", "float16"])
def test_lower_precision_ops(name, fn, ac_dtype):
    out = run_autocast(ember, fn, "float32", ac_dtype)
    assert dtype_name(out) == ac_dtype
    # the values are the op's on the rounded inputs: close to float32's at 16-bit tolerance
    ref = fn(ember, tensors(ember, ember.float32))
    np.testing.assert_allclose(out.float().numpy(), ref.numpy(), rtol=5e-2, atol=8e-2)
    torch = pytest.importorskip("torch")
    assert dtype_name(run_autocast(torch, fn, "float32", ac_dtype)) == ac_dtype


@pytest.mark.parametrize("name,fn", FP32, ids=[n for n, _ in FP32])
def test_fp32_ops(name, fn):
    out = run_autocast(ember, fn, "bfloat16")
    assert dtype_name(out) == "float32"
    torch = pytest.importorskip("torch")
    assert dtype_name(run_autocast(torch, fn, "bfloat16")) == "float32"


@pytest.mark.parametrize("name,fn", UNLISTED, ids=[n for n, _ in UNLISTED])
@pytest.mark.parametrize("in_dtype", ["bfloat16", "float32"])
def test_unlisted_ops_keep_dtype(name, fn, in_dtype):
    assert dtype_name(run_autocast(ember, fn, in_dtype)) == in_dtype
    torch = pytest.importorskip("torch")
    assert dtype_name(run_autocast(torch, fn, in_dtype)) == in_dtype


PROMOTE = [
    ("cat_mixed", lambda lib, T: lib.cat([T["a"].bfloat16(), T["a"].float()]), "float32"),
    ("cat_bf16", lambda lib, T: lib.cat([T["a"].bfloat16(), T["a"].bfloat16()]), "bfloat16"),
    ("stack_mixed", lambda lib, T: lib.stack([T["a"].bfloat16(), T["a"].float()]), "float32"),
    ("cat_double", lambda lib, T: lib.cat([T["a"].bfloat16(), T["a"].double()]), "float64"),
]


@pytest.mark.parametrize("name,fn,expected", PROMOTE, ids=[n for n, _, _ in PROMOTE])
def test_promote_ops(name, fn, expected):
    assert dtype_name(run_autocast(ember, fn, "float32")) == expected
    torch = pytest.importorskip("torch")
    assert dtype_name(run_autocast(torch, fn, "float32")) == expected


def mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(
        lib.nn.Conv2d(1, 4, 3, padding=1),
        lib.nn.ReLU(),
        lib.nn.Flatten(),
        lib.nn.Linear(4 * 6 * 6, 8),
        lib.nn.ReLU(),
        lib.nn.Linear(8, 3),
    )


def test_gradients_are_float32_for_float32_params():
    model = mlp(ember)
    x = ember.tensor(arr(5, 1, 6, 6), requires_grad=True)
    y = ember.tensor(np.array([0, 1, 2, 1, 0]))
    with ember.autocast("cpu", dtype=ember.bfloat16):
        out = model(x)
        assert out.dtype == ember.bfloat16
        loss = F.cross_entropy(out, y)
        assert loss.dtype == ember.float32
    loss.backward()
    for p in model.parameters():
        assert p.grad is not None and p.grad.dtype == ember.float32
    assert x.grad.dtype == ember.float32
    # the gradients are float32's at bf16 tolerance
    ref = mlp(ember)
    F.cross_entropy(ref(x.detach()), y).backward()
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=0.1, atol=3e-2)


def test_gradient_dtypes_match_torch():
    torch = pytest.importorskip("torch")
    for lib in (ember, torch):
        model = mlp(lib)
        with lib.autocast("cpu"):
            loss = model(lib.tensor(arr(2, 1, 6, 6))).float().sum()
        loss.backward()
        assert [str(p.grad.dtype)[-7:] for p in model.parameters()] == ["float32"] * 6


def test_cache_reuses_parameter_casts_within_a_region():
    def same(t):  # two casts, both held so neither's memory is reused by the other
        x, y = (
            ember._C._autocast_cast(ember.bfloat16, t),
            ember._C._autocast_cast(ember.bfloat16, t),
        )
        return x.data_ptr() == y.data_ptr()

    w = ember.nn.Parameter(ember.tensor(arr(3, 3)))
    with ember.autocast("cpu"):
        assert same(w)
        a = ember._C._autocast_cast(ember.bfloat16, w)
        # a non-leaf and a tensor without grad are cast each time
        assert not same(w * 1)
        assert not same(w.detach())
    with ember.autocast("cpu"):  # the outermost exit cleared the cache
        assert ember._C._autocast_cast(ember.bfloat16, w).data_ptr() != a.data_ptr()
    with ember.autocast("cpu", cache_enabled=False):
        assert not same(w)
    # a nested region's exit keeps the outer region's cache
    with ember.autocast("cpu"):
        a = ember._C._autocast_cast(ember.bfloat16, w)
        with ember.autocast("cpu"):
            pass
        assert ember._C._autocast_cast(ember.bfloat16, w).data_ptr() == a.data_ptr()


def test_cached_weight_trains_twice_in_one_region():
    lin = ember.nn.Linear(4, 4)
    x = ember.tensor(arr(3, 4))
    with ember.autocast("cpu"):
        y = lin(x) + lin(x)
    y.float().sum().backward()
    ref = ember.nn.Linear(4, 4)
    ref.load_state_dict(lin.state_dict())
    (ref(x) + ref(x)).sum().backward()
    np.testing.assert_allclose(
        lin.weight.grad.numpy(), ref.weight.grad.numpy(), rtol=3e-2, atol=3e-2
    )


def test_nesting_and_disabled_regions():
    a, b = ember.tensor(X["a"]), ember.tensor(X["b"])
    assert not ember.is_autocast_enabled("cpu")
    with ember.autocast("cpu", enabled=False):
        assert (a @ b).dtype == ember.float32
    with ember.autocast("cpu"):
        assert ember.is_autocast_enabled("cpu")
        assert ember.get_autocast_dtype("cpu") == ember.bfloat16
        with ember.autocast("cpu", enabled=False):
            assert not ember.is_autocast_enabled("cpu")
            assert (a @ b).dtype == ember.float32
        with ember.autocast("cpu", dtype=ember.float16):
            assert (a @ b).dtype == ember.float16
        assert (a @ b).dtype == ember.bfloat16
    assert not ember.is_autocast_enabled("cpu")
    assert (a @ b).dtype == ember.float32


def test_state_restored_after_exception():
    with pytest.raises(ValueError):
        with ember.autocast("cpu", dtype=ember.float16):
            raise ValueError
    assert not ember.is_autocast_enabled("cpu")
    assert ember.get_autocast_dtype("cpu") == ember.bfloat16


def test_decorator_and_aliases():
    a, b = ember.tensor(X["a"]), ember.tensor(X["b"])

    @ember.autocast("cpu")
    def f(x, y):
        return x @ y

    @ember.cpu.amp.autocast()
    def g(x, y):
        return x @ y

    @ember.amp.autocast("cpu", enabled=False)
    def h(x, y):
        return x @ y

    assert f(a, b).dtype == ember.bfloat16
    assert g(a, b).dtype == ember.bfloat16
    assert h(a, b).dtype == ember.float32
    with ember.cpu.amp.autocast(dtype=ember.float16):
        assert (a @ b).dtype == ember.float16
    assert not ember.is_autocast_enabled("cpu")


def test_set_autocast_enabled_and_dtype():
    a, b = ember.tensor(X["a"]), ember.tensor(X["b"])
    try:
        ember.set_autocast_enabled("cpu", True)
        ember.set_autocast_dtype("cpu", ember.float16)
        assert (a @ b).dtype == ember.float16
    finally:
        ember.set_autocast_enabled("cpu", False)
        ember.set_autocast_dtype("cpu", ember.bfloat16)
    assert (a @ b).dtype == ember.float32


def test_unsupported_dtype_and_cuda_disable_with_warning():
    with pytest.warns(UserWarning):
        with ember.autocast("cpu", dtype=ember.float64):
            assert not ember.is_autocast_enabled("cpu")
    with pytest.warns(UserWarning):
        with ember.autocast("cuda"):
            assert not ember.is_autocast_enabled("cuda")


def test_double_inputs_are_left_alone():
    a = ember.tensor(X["a"]).double()
    with ember.autocast("cpu"):
        assert (a @ a.t()).dtype == ember.float64


def test_custom_fwd_bwd():
    seen = {}

    class Square(ember.autograd.Function):
        @staticmethod
        @ember.amp.custom_fwd(device_type="cpu", cast_inputs=ember.float32)
        def forward(ctx, x):
            seen["fwd"] = (x.dtype, ember.is_autocast_enabled("cpu"))
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @ember.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            seen["bwd"] = ember.is_autocast_enabled("cpu")
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = ember.tensor(X["a"]).bfloat16().requires_grad_()
    with ember.autocast("cpu"):
        y = Square.apply(x)
    y.sum().backward()
    assert seen["fwd"] == (ember.float32, False)
    assert seen["bwd"] is False
    assert y.dtype == ember.float32 and x.grad.dtype == ember.bfloat16


def test_grad_scaler_cpu_under_autocast():
    model = mlp(ember)
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    scaler = ember.amp.GradScaler("cpu", init_scale=2.0**8)
    x = ember.tensor(arr(8, 1, 6, 6))
    y = ember.tensor(np.array([0, 1, 2, 1, 0, 2, 1, 0]))
    losses = []
    for _ in range(15):
        opt.zero_grad()
        with ember.autocast("cpu"):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(float(loss))
    assert scaler.get_scale() == 2.0**8
    assert losses[-1] < losses[0]
