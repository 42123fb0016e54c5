"""ember.onnx.export, one test per layer family: each exported model passes onnx.checker
(full_check) and onnxruntime's outputs match ember's."""

import pytest

import ember
import ember.nn as nn

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from test_onnx import _ops, roundtrip  # noqa: E402

F = nn.functional


@pytest.fixture(autouse=True)
def _seed():
    ember.manual_seed(0)


class Fn(nn.Module):
    """A module around a function, so that functional forms are exported too."""

    def __init__(self, fn, *mods):
        super().__init__()
        self.fn = fn
        self.mods = nn.ModuleList(mods)

    def forward(self, a, b=None, c=None, d=None):
        return self.fn(self, *[t for t in (a, b, c, d) if t is not None])


@pytest.mark.parametrize("opset", [13, 17])
def test_linear(opset):
    roundtrip(nn.Linear(6, 4), ember.randn(3, 6), opset_version=opset)
    model, x = nn.Linear(6, 4, bias=False), ember.randn(2, 5, 6)
    proto = roundtrip(model, x, opset_version=opset, do_constant_folding=False)
    assert _ops(proto) == ["Transpose", "MatMul"]
    proto = roundtrip(model, x, opset_version=opset)  # the weight's transpose is folded
    assert _ops(proto) == ["MatMul"]
    roundtrip(Fn(lambda m, x, w: F.linear(x, w)), (ember.randn(2, 3), ember.randn(4, 3)))


@pytest.mark.parametrize(
    "conv",
    [
        lambda: nn.Conv1d(3, 4, 3),
        lambda: nn.Conv1d(4, 6, 5, stride=2, padding=2, groups=2, bias=False),
        lambda: nn.Conv2d(3, 4, 3, padding=1),
        lambda: nn.Conv2d(4, 8, (3, 2), stride=(2, 1), padding=(1, 0), dilation=(2, 1), groups=4),
        lambda: nn.Conv2d(3, 4, 4, padding="same", dilation=1),
        lambda: nn.Conv2d(3, 4, 3, padding="valid"),
        lambda: nn.Conv2d(3, 4, 3, padding=1, padding_mode="reflect"),
        lambda: nn.Conv2d(3, 4, 3, padding=2, padding_mode="replicate"),
        lambda: nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1),
        lambda: nn.ConvTranspose2d(4, 6, 2, stride=2, groups=2, bias=False),
    ],
)
def test_conv(conv):
    m = conv()
    spatial = (9,) if isinstance(m, nn.Conv1d) else (9, 8)
    roundtrip(m, ember.randn(2, m.in_channels, *spatial))


def test_conv_functional_and_unbatched():
    w, b = ember.randn(4, 3, 3, 3), ember.randn(4)
    roundtrip(Fn(lambda m, x: F.conv2d(x, w, b, stride=2, padding=1)), ember.randn(1, 3, 8, 8))
    roundtrip(nn.Conv2d(3, 4, 3), ember.randn(3, 6, 6))  # (C, H, W) input


def _stats(m, *shape):
    m.train()
    with ember.no_grad():
        for _ in range(3):
            m(ember.randn(*shape) * 2 + 1)
    return m.eval()


def test_batch_norm():
    roundtrip(_stats(nn.BatchNorm1d(5), 8, 5), ember.randn(4, 5))
    roundtrip(_stats(nn.BatchNorm1d(5), 8, 5, 7), ember.randn(4, 5, 7))
    roundtrip(_stats(nn.BatchNorm2d(3), 8, 3, 4, 4), ember.randn(2, 3, 4, 4))
    roundtrip(_stats(nn.BatchNorm2d(3, affine=False), 8, 3, 4, 4), ember.randn(2, 3, 4, 4))
    roundtrip(nn.BatchNorm2d(3, track_running_stats=False), ember.randn(2, 3, 4, 4))


@pytest.mark.parametrize("opset", [13, 17])
def test_layer_norm(opset):
    m = nn.LayerNorm((4, 5))
    with ember.no_grad():
        m.weight.uniform_(0.5, 1.5)
        m.bias.uniform_(-1, 1)
    proto = roundtrip(m, ember.randn(2, 3, 4, 5), opset_version=opset)
    assert ("LayerNormalization" in _ops(proto)) == (opset >= 17)
    roundtrip(nn.LayerNorm(5, elementwise_affine=False), ember.randn(2, 5), opset_version=opset)
    roundtrip(Fn(lambda m, x: F.layer_norm(x, (5,))), ember.randn(3, 5), opset_version=opset)


def test_group_and_instance_norm():
    m = nn.GroupNorm(2, 6)
    with ember.no_grad():
        m.weight.uniform_(0.5, 1.5)
    roundtrip(
        m,
        ember.randn(2, 6, 4, 3),
        run_args=ember.randn(3, 6, 4, 3),
        input_names=["x"],
        dynamic_axes={"x": {0: "n"}},
    )
    roundtrip(nn.GroupNorm(3, 6, affine=False), ember.randn(2, 6, 5))
    roundtrip(nn.InstanceNorm2d(3, affine=True), ember.randn(2, 3, 4, 4))


def test_dropout_is_identity_in_eval():
    proto = roundtrip(
        nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.3), nn.Dropout1d()), ember.randn(2, 3, 4)
    )
    assert _ops(proto).count("Identity") == 2
    roundtrip(Fn(lambda m, x: F.dropout(x, 0.5, training=m.training)), ember.randn(3))


@pytest.mark.parametrize(
    "pool, shape",
    [
        (lambda: nn.MaxPool2d(2), (2, 3, 8, 8)),
        (lambda: nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True), (2, 3, 9, 9)),
        (lambda: nn.MaxPool2d(2, dilation=2), (1, 2, 9, 9)),
        (lambda: nn.MaxPool1d(3, stride=1), (2, 3, 7)),
        (lambda: nn.AvgPool2d(2), (2, 3, 8, 8)),
        (lambda: nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False), (2, 3, 9, 9)),
        (lambda: nn.AvgPool1d(2), (2, 3, 8)),
        (lambda: nn.AdaptiveAvgPool2d(1), (2, 3, 5, 7)),
        (lambda: nn.AdaptiveAvgPool2d((2, 3)), (2, 3, 4, 9)),
        (lambda: nn.AdaptiveAvgPool1d(1), (2, 3, 5)),
        (lambda: nn.AdaptiveMaxPool2d(1), (2, 3, 5, 7)),
    ],
)
def test_pooling(pool, shape):
    roundtrip(pool(), ember.randn(*shape))


def test_pooling_functional():
    def fn(m, x):
        return F.max_pool2d(x, 2) + F.avg_pool2d(x, 2) + F.adaptive_avg_pool2d(x, 1)

    roundtrip(Fn(fn), ember.randn(2, 3, 6, 6))


def test_flatten_and_unflatten():
    roundtrip(nn.Flatten(), ember.randn(2, 3, 4, 5))
    roundtrip(nn.Flatten(0, 2), ember.randn(2, 3, 4, 5))
    roundtrip(
        nn.Flatten(1, 2),
        ember.randn(2, 3, 4, 5),
        run_args=ember.randn(3, 3, 4, 5),
        input_names=["x"],
        dynamic_axes={"x": [0]},
    )
    roundtrip(Fn(lambda m, x: x.flatten(2).unflatten(2, (4, 5))), ember.randn(2, 3, 4, 5))


def test_embedding():
    emb = nn.Embedding(10, 4, padding_idx=0)
    idx = ember.tensor([[1, 2, 0], [9, 3, 3]])
    roundtrip(emb, idx)
    model = Fn(lambda m, i: m.mods[0](i).sum(dim=1), emb)
    roundtrip(
        model,
        idx,
        run_args=ember.tensor([[4, 5, 6, 1]]),
        input_names=["ids"],
        dynamic_axes={"ids": {0: "batch", 1: "seq"}},
    )


ACTIVATIONS = [
    nn.ReLU, lambda: nn.GELU(), lambda: nn.GELU(approximate="tanh"), nn.SiLU, nn.Sigmoid,
    nn.Tanh, lambda: nn.LeakyReLU(0.2), lambda: nn.ELU(0.7), lambda: nn.Softmax(dim=1),
    lambda: nn.LogSoftmax(dim=-1), nn.Hardswish, nn.Hardsigmoid, nn.ReLU6, nn.Mish, nn.SELU,
    lambda: nn.Softplus(beta=2.0), nn.PReLU, nn.Softsign, lambda: nn.Hardtanh(-0.5, 0.5),
]  # fmt: skip


@pytest.mark.parametrize("act", ACTIVATIONS)
@pytest.mark.parametrize("opset", [17, 20])
def test_activations(act, opset):
    roundtrip(act(), ember.randn(3, 4, 5) * 3, opset_version=opset)


def test_activation_functions():
    def fn(m, x):
        return (
            F.relu(x)
            + F.gelu(x, approximate="tanh")
            + F.silu(x)
            + ember.sigmoid(x)
            + x.tanh()
            + F.leaky_relu(x, 0.1)
            + F.elu(x)
            + F.softmax(x, dim=-1)
            + ember.log_softmax(x, 1)
            + F.hardswish(x)
            + x.relu()
            + ember.clamp(x, -1, 1)
        )

    roundtrip(Fn(fn), ember.randn(3, 6) * 2)


@pytest.mark.parametrize("batch_first", [True, False])
def test_multihead_attention(batch_first):
    E, H = 8, 2
    m = nn.MultiheadAttention(E, H, batch_first=batch_first)
    shape = (2, 5, E) if batch_first else (5, 2, E)
    q, k = ember.randn(*shape), ember.randn(*shape)
    roundtrip(m, (q, q, q))  # self-attention, averaged weights
    roundtrip(Fn(lambda s, a, b: s.mods[0](a, b, b, need_weights=False)[0], m), (q, k))
    kpm = ember.tensor([[False] * 4 + [True], [False] * 5])
    mask = ember.triu(ember.ones(5, 5, dtype=ember.bool), diagonal=1)
    roundtrip(
        Fn(
            lambda s, a, p, am: s.mods[0](
                a, a, a, key_padding_mask=p, attn_mask=am, average_attn_weights=False
            ),
            m,
        ),
        (q, kpm, mask),
    )


def test_multihead_attention_dynamic_sequence():
    m = nn.MultiheadAttention(8, 2, batch_first=True)
    x = ember.randn(2, 5, 8)
    roundtrip(
        Fn(lambda s, a: s.mods[0](a, a, a)[0], m),
        x,
        run_args=ember.randn(3, 7, 8),
        input_names=["x"],
        dynamic_axes={"x": {0: "batch", 1: "seq"}},
    )


def test_scaled_dot_product_attention():
    q, k, v = ember.randn(2, 2, 5, 4), ember.randn(2, 2, 6, 4), ember.randn(2, 2, 6, 4)
    roundtrip(Fn(lambda m, a, b, c: F.scaled_dot_product_attention(a, b, c)), (q, k, v))
    roundtrip(Fn(lambda m, a: F.scaled_dot_product_attention(a, a, a, is_causal=True)), q)
    mask = ember.rand(5, 6) > 0.3
    mask[:, 0] = True
    roundtrip(
        Fn(lambda m, a, b, c, d: F.scaled_dot_product_attention(a, b, c, attn_mask=d, scale=0.3)),
        (q, k, v, mask),
    )


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU, nn.RNN])
@pytest.mark.parametrize(
    "layers, bidirectional, batch_first",
    [(1, False, False), (2, True, True), (2, False, True), (1, True, False)],
)
def test_rnn(cls, layers, bidirectional, batch_first):
    m = cls(4, 5, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first)
    x = ember.randn(3, 6, 4)
    proto = roundtrip(m, x)
    assert _ops(proto).count(cls.__name__) == layers


def test_rnn_initial_state_dynamic_and_unbatched():
    m = nn.LSTM(4, 5, num_layers=2, bidirectional=True, batch_first=True)
    x = ember.randn(3, 6, 4)
    h0, c0 = ember.randn(4, 3, 5), ember.randn(4, 3, 5)
    roundtrip(m, (x, (h0, c0)))
    roundtrip(
        m,
        x,
        run_args=ember.randn(2, 9, 4),
        input_names=["x"],
        dynamic_axes={"x": {0: "batch", 1: "seq"}},
    )
    roundtrip(nn.GRU(4, 5), (ember.randn(6, 4), ember.randn(1, 5)))  # unbatched with h0
    model = Fn(
        lambda s, a: s.mods[1](s.mods[0](a)[0][:, -1]),
        nn.GRU(4, 6, batch_first=True),
        nn.Linear(6, 2),
    )
    roundtrip(model, x)


def test_padding():
    roundtrip(nn.ZeroPad2d((1, 2, 0, 1)), ember.randn(1, 2, 3, 3))
    roundtrip(nn.ReflectionPad1d(2), ember.randn(1, 2, 5))
    roundtrip(Fn(lambda m, x: F.pad(x, (1, 1), value=3.0)), ember.randn(2, 3))
