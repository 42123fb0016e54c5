"""nn layers against torch: construction (repr, parameter names and shapes, buffers, default
initialisation) and forward/backward with torch's weights copied in."""

import math
import re

import numpy as np
import pytest

import ember
import ember.nn as nn


def _torch():
    return pytest.importorskip("torch")


def _build(path, args, kwargs, lib):
    mod = lib.nn
    for part in path.split("."):
        mod = getattr(mod, part)
    return mod(*args, **kwargs)


# (class, args, kwargs) built identically in both libraries.
CONSTRUCT = [
    ("Linear", (5, 3), {}),
    ("Linear", (5, 3), {"bias": False}),
    ("Bilinear", (4, 5, 3), {}),
    ("Identity", (3,), {"x": 1}),
    ("Flatten", (), {}),
    ("Unflatten", (1, (2, 5)), {}),
    ("Conv1d", (4, 6, 3), {"stride": 2, "padding": 1}),
    ("Conv2d", (4, 6, 3), {}),
    ("Conv2d", (4, 8, (3, 5)), {"padding": "same", "dilation": 2, "groups": 2, "bias": False}),
    ("Conv2d", (4, 6, 3), {"padding": 1, "padding_mode": "reflect"}),
    ("Conv2d", (2, 2, 3), {"padding": "valid"}),
    ("ConvTranspose1d", (4, 6, 3), {"stride": 2, "output_padding": 1}),
    ("ConvTranspose2d", (4, 6, 3), {"stride": 2, "padding": 1, "groups": 2}),
    ("MaxPool1d", (3,), {}),
    ("MaxPool2d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True}),
    ("AvgPool1d", (3,), {"stride": 2}),
    ("AvgPool2d", (2,), {}),
    ("AdaptiveAvgPool1d", (4,), {}),
    ("AdaptiveAvgPool2d", ((3, None),), {}),
    ("AdaptiveMaxPool2d", (2,), {"return_indices": True}),
    ("BatchNorm1d", (5,), {}),
    ("BatchNorm2d", (5,), {"momentum": None, "affine": False}),
    ("BatchNorm2d", (5,), {"track_running_stats": False}),
    ("LayerNorm", ((4, 5),), {"elementwise_affine": True, "bias": False}),
    ("LayerNorm", (5,), {"eps": 1e-3}),
    ("GroupNorm", (2, 6), {}),
    ("InstanceNorm1d", (4,), {}),
    ("InstanceNorm2d", (4,), {"affine": True, "track_running_stats": True}),
    ("RMSNorm", (6,), {}),
    ("Dropout", (), {}),
    ("Dropout2d", (0.2,), {"inplace": True}),
    ("AlphaDropout", (0.1,), {}),
    ("Embedding", (10, 4), {"padding_idx": 2}),
    ("Embedding", (10, 4), {"max_norm": 1.0, "norm_type": 1.0, "scale_grad_by_freq": True}),
    ("EmbeddingBag", (10, 4), {"mode": "sum"}),
    ("RNN", (4, 6), {}),
    ("RNN", (4, 6, 2), {"nonlinearity": "relu", "batch_first": True, "bidirectional": True}),
    ("LSTM", (4, 6), {"num_layers": 2, "dropout": 0.5, "bias": False}),
    ("LSTM", (4, 6), {"proj_size": 3, "bidirectional": True}),
    ("GRU", (4, 6, 3), {}),
    ("RNNCell", (4, 6), {"nonlinearity": "relu"}),
    ("LSTMCell", (4, 6), {"bias": False}),
    ("GRUCell", (4, 6), {}),
    ("MultiheadAttention", (8, 2), {}),
    (
        "MultiheadAttention",
        (8, 2),
        {"kdim": 5, "vdim": 3, "add_bias_kv": True, "batch_first": True},
    ),
    ("MultiheadAttention", (8, 4), {"bias": False}),
    ("TransformerEncoderLayer", (8, 2), {"dim_feedforward": 16}),
    (
        "TransformerDecoderLayer",
        (8, 2),
        {"dim_feedforward": 16, "norm_first": True, "activation": "gelu"},
    ),
    (
        "Transformer",
        (),
        {
            "d_model": 8,
            "nhead": 2,
            "num_encoder_layers": 2,
            "num_decoder_layers": 1,
            "dim_feedforward": 16,
        },
    ),
    ("ReLU", (), {"inplace": True}),
    ("ReLU6", (), {}),
    ("LeakyReLU", (0.2,), {}),
    ("PReLU", (3,), {"init": 0.1}),
    ("ELU", (), {"alpha": 0.5}),
    ("CELU", (), {}),
    ("SELU", (), {}),
    ("GELU", (), {"approximate": "tanh"}),
    ("SiLU", (), {}),
    ("Mish", (), {}),
    ("Sigmoid", (), {}),
    ("Tanh", (), {}),
    ("Hardtanh", (-2.0, 2.0), {}),
    ("Hardsigmoid", (), {}),
    ("Hardswish", (), {}),
    ("Softplus", (), {"beta": 2.0}),
    ("Softsign", (), {}),
    ("Softmax", (), {"dim": 1}),
    ("LogSoftmax", (-1,), {}),
    ("Softmin", (0,), {}),
    ("Threshold", (0.1, 20.0), {}),
    ("LogSigmoid", (), {}),
    ("Tanhshrink", (), {}),
    ("Softshrink", (), {}),
    ("Hardshrink", (0.3,), {}),
    ("GLU", (), {}),
    ("CrossEntropyLoss", (), {"label_smoothing": 0.1}),
    ("NLLLoss", (), {"ignore_index": 1}),
    ("BCELoss", (), {}),
    ("BCEWithLogitsLoss", (), {}),
    ("MSELoss", (), {"reduction": "sum"}),
    ("L1Loss", (), {}),
    ("SmoothL1Loss", (), {"beta": 0.5}),
    ("HuberLoss", (), {}),
    ("KLDivLoss", (), {"reduction": "batchmean"}),
    ("CosineEmbeddingLoss", (), {}),
    ("MarginRankingLoss", (), {}),
    ("TripletMarginLoss", (), {}),
    ("CTCLoss", (), {}),
    ("Upsample", (), {"scale_factor": 2, "mode": "bilinear"}),
    ("Upsample", (), {"size": (4, 5)}),
    ("ZeroPad2d", (2,), {}),
    ("ConstantPad1d", ((1, 2), 3.5), {}),
    ("ReflectionPad2d", ((1, 0, 2, 1),), {}),
    ("ReplicationPad1d", (2,), {}),
    ("Fold", ((4, 5), 2), {}),
    ("Unfold", (2,), {"stride": 2}),
    ("PixelShuffle", (2,), {}),
    ("PixelUnshuffle", (2,), {}),
    ("ChannelShuffle", (2,), {}),
    ("LocalResponseNorm", (3,), {}),
    ("MaxUnpool1d", (2,), {}),
    ("MaxUnpool2d", ((2, 3),), {"stride": 1, "padding": 1}),
    ("CosineSimilarity", (), {}),
    ("PairwiseDistance", (), {}),
]


@pytest.mark.parametrize(
    "name,args,kwargs", CONSTRUCT, ids=[c[0] + str(i) for i, c in enumerate(CONSTRUCT)]
)
def test_construction_matches_torch(name, args, kwargs):
    torch = _torch()
    t = _build(name, args, kwargs, torch)
    e = _build(name, args, kwargs, ember)
    assert repr(e) == repr(t)
    assert [(n, tuple(p.shape), p.requires_grad) for n, p in e.named_parameters()] == [
        (n, tuple(p.shape), p.requires_grad) for n, p in t.named_parameters()
    ]
    assert [(n, tuple(b.shape), str(b.dtype)) for n, b in e.named_buffers()] == [
        (n, tuple(b.shape), str(b.dtype)) for n, b in t.named_buffers()
    ]
    assert list(e.state_dict()) == list(t.state_dict())


def test_sequential_repr_matches_torch():
    torch = _torch()

    def build(lib):
        n = lib.nn
        return n.Sequential(
            n.Conv2d(1, 8, 3, padding=1),
            n.BatchNorm2d(8),
            n.ReLU(),
            n.MaxPool2d(2),
            n.Flatten(),
            n.Linear(8 * 14 * 14, 10),
            n.ModuleList([n.ReLU(), n.ReLU()]),
        )

    assert repr(build(ember)) == repr(build(torch))


# ---- default initialisation -------------------------------------------------------------------


def _np(t):
    return t.detach().numpy()


@pytest.mark.parametrize(
    "make,fan_in",
    [
        (lambda: nn.Linear(300, 200), 300),
        (lambda: nn.Conv2d(8, 16, 5), 200),
        (lambda: nn.Conv1d(20, 30, 4, groups=2), 40),
        (lambda: nn.ConvTranspose2d(16, 8, 3), 72),
    ],
)
def test_default_init_kaiming_uniform_sqrt5(make, fan_in):
    ember.manual_seed(0)
    m = make()
    bound = 1 / math.sqrt(fan_in)
    w, b = _np(m.weight), _np(m.bias)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.1 * bound
    assert np.abs(b).max() <= bound


def test_default_init_other_layers():
    ember.manual_seed(0)
    rnn = nn.LSTM(10, 25, 2)
    bound = 1 / 5.0
    assert all(np.abs(_np(p)).max() <= bound for p in rnn.parameters())
    emb = nn.Embedding(500, 40, padding_idx=-1)
    assert emb.padding_idx == 499
    w = _np(emb.weight)
    assert (w[499] == 0).all() and abs(w[:499].std() - 1.0) < 0.05
    bn = nn.BatchNorm1d(4)
    assert (
        (_np(bn.weight) == 1).all()
        and (_np(bn.bias) == 0).all()
        and bn.num_batches_tracked.item() == 0
    )
    mha = nn.MultiheadAttention(16, 4)
    assert (_np(mha.in_proj_bias) == 0).all() and (_np(mha.out_proj.bias) == 0).all()
    a = math.sqrt(6 / (16 + 48))
    assert np.abs(_np(mha.in_proj_weight)).max() <= a
    bl = nn.Bilinear(9, 4, 3)
    assert np.abs(_np(bl.weight)).max() <= 1 / 3
    p = nn.PReLU(3, init=0.1)
    np.testing.assert_allclose(_np(p.weight), [0.1] * 3)


def _sorted_sets(msg):
    # A set literal's print order depends on the hash seed of the process that compiled it.
    return re.sub(
        r"\{([^{}]*)\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", msg
    )


def test_default_init_transformer_xavier():
    ember.manual_seed(0)
    tr = nn.Transformer(
        d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16
    )
    lin = tr.encoder.layers[0].linear1
    assert np.abs(_np(lin.weight)).max() <= math.sqrt(6 / 24)


def test_constructor_errors_match_torch():
    torch = _torch()
    cases = [
        ("Conv2d", (3, 4, 3), {"groups": 2}),
        ("Conv2d", (4, 3, 3), {"groups": 2}),
        ("Conv2d", (4, 4, 3), {"padding": "same", "stride": 2}),
        ("Conv2d", (4, 4, 3), {"padding": "full"}),
        ("Conv2d", (4, 4, 3), {"padding_mode": "mirror"}),
        ("ConvTranspose2d", (4, 4, 3), {"padding_mode": "reflect"}),
        ("Dropout", (1.5,), {}),
        ("GroupNorm", (4, 6), {}),
        ("MultiheadAttention", (0, 2), {}),
        ("RNN", (3, 4), {"nonlinearity": "sigmoid"}),
        ("GRU", (3, 4), {"proj_size": 2}),
        ("LSTM", (3, 4), {"proj_size": 4}),
        ("LSTM", (3, 0), {}),
        ("TripletMarginLoss", (), {"margin": 0.0}),
        ("MultiMarginLoss", (), {"p": 3}),
    ]
    for name, args, kwargs in cases:
        with pytest.raises(Exception) as te:
            _build(name, args, kwargs, torch)
        with pytest.raises(type(te.value)) as ee:
            _build(name, args, kwargs, ember)
        assert _sorted_sets(str(ee.value)) == _sorted_sets(str(te.value)), name


def test_transformer_mask_and_from_pretrained():
    torch = _torch()
    e = nn.Transformer.generate_square_subsequent_mask(4)
    t = torch.nn.Transformer.generate_square_subsequent_mask(4)
    np.testing.assert_array_equal(_np(e), t.numpy())
    w = ember.randn(5, 3)
    emb = nn.Embedding.from_pretrained(w)
    assert not emb.weight.requires_grad and emb.weight.data_ptr() == w.data_ptr()
    assert nn.Embedding.from_pretrained(w, freeze=False).weight.requires_grad
    bag = nn.EmbeddingBag.from_pretrained(w, mode="max")
    assert bag.mode == "max" and not bag.weight.requires_grad


def test_batchnorm_loads_old_checkpoint_without_num_batches_tracked():
    bn = nn.BatchNorm1d(3)
    sd = bn.state_dict()
    del sd["num_batches_tracked"]
    sd._metadata[""] = {"version": 1}
    bn.load_state_dict(sd)
    sd._metadata[""] = {"version": 2}
    with pytest.raises(
        RuntimeError, match='Missing key\\(s\\) in state_dict: "num_batches_tracked"'
    ):
        bn.load_state_dict(sd)


# ---- forward / backward against torch ----------------------------------------------------------


def _copy_weights(t_mod, e_mod):
    e_mod.load_state_dict(
        {k: ember.tensor(v.detach().numpy()) for k, v in t_mod.state_dict().items()}
    )


def _to_ember(x):
    if isinstance(x, (tuple, list)):
        return type(x)(_to_ember(v) for v in x)
    if hasattr(x, "detach") and hasattr(x, "numpy"):
        e = ember.tensor(x.detach().numpy())
        return e.requires_grad_(True) if x.requires_grad else e
    return x


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [o for v in out for o in _flat(v)]
    return [] if out is None else [out]


def _r(torch, *shape, grad=True):
    return torch.randn(*shape, requires_grad=grad)


# name -> (class, args, kwargs, inputs(torch) -> tuple, train)
FORWARD = {
    "linear": ("Linear", (5, 3), {}, lambda t: (_r(t, 4, 5),)),
    "linear_3d_nobias": ("Linear", (5, 3), {"bias": False}, lambda t: (_r(t, 2, 4, 5),)),
    "bilinear": ("Bilinear", (4, 5, 3), {}, lambda t: (_r(t, 6, 4), _r(t, 6, 5))),
    "conv1d": ("Conv1d", (4, 6, 3), {"stride": 2, "padding": 1}, lambda t: (_r(t, 2, 4, 9),)),
    "conv2d": ("Conv2d", (3, 4, 3), {}, lambda t: (_r(t, 2, 3, 7, 6),)),
    "conv2d_same_groups": (
        "Conv2d",
        (4, 6, (3, 2)),
        {"padding": "same", "groups": 2, "dilation": 2},
        lambda t: (_r(t, 2, 4, 7, 6),),
    ),
    "conv2d_reflect": (
        "Conv2d",
        (2, 3, 3),
        {"padding": 1, "padding_mode": "reflect"},
        lambda t: (_r(t, 1, 2, 5, 5),),
    ),
    "conv2d_unbatched": ("Conv2d", (2, 3, 3), {}, lambda t: (_r(t, 2, 5, 5),)),
    "conv_transpose1d": ("ConvTranspose1d", (4, 2, 3), {"stride": 2}, lambda t: (_r(t, 2, 4, 5),)),
    "conv_transpose2d": (
        "ConvTranspose2d",
        (4, 6, 3),
        {"stride": 2, "padding": 1, "groups": 2},
        lambda t: (_r(t, 2, 4, 5, 4),),
    ),
    "conv_transpose2d_output_size": (
        "ConvTranspose2d",
        (2, 3, 3),
        {"stride": 2},
        lambda t: (_r(t, 1, 2, 4, 4), [10, 10]),
    ),
    "maxpool1d": ("MaxPool1d", (3,), {"stride": 2}, lambda t: (_r(t, 2, 3, 9),)),
    "maxpool2d": ("MaxPool2d", (2,), {}, lambda t: (_r(t, 2, 3, 6, 6),)),
    "maxpool2d_ceil": (
        "MaxPool2d",
        (3,),
        {"stride": 2, "padding": 1, "ceil_mode": True},
        lambda t: (_r(t, 2, 3, 8, 7),),
    ),
    "avgpool1d": ("AvgPool1d", (3,), {"stride": 2, "padding": 1}, lambda t: (_r(t, 2, 3, 9),)),
    "avgpool2d": ("AvgPool2d", (2,), {}, lambda t: (_r(t, 2, 3, 6, 6),)),
    "adaptive_avg1d": ("AdaptiveAvgPool1d", (4,), {}, lambda t: (_r(t, 2, 3, 10),)),
    "adaptive_avg2d": ("AdaptiveAvgPool2d", ((3, 2),), {}, lambda t: (_r(t, 2, 3, 7, 5),)),
    "adaptive_max1d": ("AdaptiveMaxPool1d", (4,), {}, lambda t: (_r(t, 2, 3, 10),)),
    "adaptive_max2d": (
        "AdaptiveMaxPool2d",
        (2,),
        {"return_indices": True},
        lambda t: (_r(t, 2, 3, 7, 5),),
    ),
    "batchnorm1d_train": ("BatchNorm1d", (3,), {}, lambda t: (_r(t, 8, 3),), True),
    "batchnorm1d_3d_eval": ("BatchNorm1d", (3,), {}, lambda t: (_r(t, 4, 3, 5),)),
    "batchnorm2d_train": (
        "BatchNorm2d",
        (3,),
        {"momentum": None},
        lambda t: (_r(t, 4, 3, 5, 5),),
        True,
    ),
    "batchnorm2d_no_stats": (
        "BatchNorm2d",
        (3,),
        {"track_running_stats": False, "affine": False},
        lambda t: (_r(t, 4, 3, 2, 2),),
    ),
    "layernorm": ("LayerNorm", ((4, 5),), {}, lambda t: (_r(t, 3, 4, 5),)),
    "layernorm_nobias": ("LayerNorm", (5,), {"bias": False}, lambda t: (_r(t, 3, 5),)),
    "groupnorm": ("GroupNorm", (2, 6), {}, lambda t: (_r(t, 3, 6, 4),)),
    "instancenorm1d": ("InstanceNorm1d", (4,), {"affine": True}, lambda t: (_r(t, 3, 4, 6),), True),
    "instancenorm2d_unbatched": ("InstanceNorm2d", (4,), {}, lambda t: (_r(t, 4, 3, 3),)),
    "rmsnorm": ("RMSNorm", (6,), {}, lambda t: (_r(t, 2, 6),)),
    "dropout_eval": ("Dropout", (0.5,), {}, lambda t: (_r(t, 4, 4),)),
    "embedding": (
        "Embedding",
        (10, 4),
        {"padding_idx": 0},
        lambda t: (t.tensor([[0, 2, 9], [4, 4, 1]]),),
    ),
    "embedding_bag": (
        "EmbeddingBag",
        (10, 4),
        {"mode": "sum"},
        lambda t: (t.tensor([1, 2, 4, 5, 4, 3]), t.tensor([0, 2])),
    ),
    "rnn": ("RNN", (4, 6), {}, lambda t: (_r(t, 5, 3, 4),)),
    "rnn_relu_bi_bf": (
        "RNN",
        (4, 6, 2),
        {"nonlinearity": "relu", "batch_first": True, "bidirectional": True},
        lambda t: (_r(t, 3, 5, 4), _r(t, 4, 3, 6)),
    ),
    "rnn_unbatched": ("RNN", (4, 6), {}, lambda t: (_r(t, 5, 4), _r(t, 1, 6))),
    "lstm": ("LSTM", (4, 6), {"num_layers": 2}, lambda t: (_r(t, 5, 3, 4),)),
    "lstm_bi_h0": (
        "LSTM",
        (4, 6),
        {"bidirectional": True, "batch_first": True},
        lambda t: (_r(t, 3, 5, 4), (_r(t, 2, 3, 6), _r(t, 2, 3, 6))),
    ),
    "lstm_proj": ("LSTM", (4, 6), {"proj_size": 3, "num_layers": 2}, lambda t: (_r(t, 5, 2, 4),)),
    "lstm_unbatched_nobias": ("LSTM", (4, 6), {"bias": False}, lambda t: (_r(t, 5, 4),)),
    "gru": ("GRU", (4, 6, 2), {"bidirectional": True}, lambda t: (_r(t, 5, 3, 4), _r(t, 4, 3, 6))),
    "rnn_cell": ("RNNCell", (4, 6), {"nonlinearity": "relu"}, lambda t: (_r(t, 3, 4), _r(t, 3, 6))),
    "lstm_cell": ("LSTMCell", (4, 6), {}, lambda t: (_r(t, 3, 4), (_r(t, 3, 6), _r(t, 3, 6)))),
    "lstm_cell_unbatched": ("LSTMCell", (4, 6), {}, lambda t: (_r(t, 4),)),
    "gru_cell": ("GRUCell", (4, 6), {}, lambda t: (_r(t, 3, 4),)),
    "prelu": ("PReLU", (3,), {}, lambda t: (_r(t, 2, 3, 4),)),
    "gelu_tanh": ("GELU", (), {"approximate": "tanh"}, lambda t: (_r(t, 5, 3),)),
    "softmax": ("Softmax", (1,), {}, lambda t: (_r(t, 4, 5),)),
    "log_softmax": ("LogSoftmax", (-1,), {}, lambda t: (_r(t, 4, 5),)),
    "hardtanh": ("Hardtanh", (-0.5, 0.5), {}, lambda t: (_r(t, 4, 5),)),
    "glu": ("GLU", (), {}, lambda t: (_r(t, 4, 6),)),
    "zeropad2d": ("ZeroPad2d", ((1, 2, 0, 1),), {}, lambda t: (_r(t, 1, 2, 3, 3),)),
    "reflectionpad1d": ("ReflectionPad1d", (2,), {}, lambda t: (_r(t, 1, 2, 5),)),
    "replicationpad2d": ("ReplicationPad2d", (1,), {}, lambda t: (_r(t, 1, 2, 3, 3),)),
    "upsample_nearest": ("Upsample", (), {"scale_factor": 2}, lambda t: (_r(t, 1, 2, 3, 3),)),
    "upsample_bilinear": (
        "Upsample",
        (),
        {"size": (5, 4), "mode": "bilinear", "align_corners": False},
        lambda t: (_r(t, 1, 2, 3, 3),),
    ),
    "unfold": ("Unfold", (2,), {"stride": 1}, lambda t: (_r(t, 2, 3, 4, 4),)),
    "fold": ("Fold", ((3, 3), 2), {}, lambda t: (_r(t, 2, 12, 4),)),
    "pixel_shuffle": ("PixelShuffle", (2,), {}, lambda t: (_r(t, 2, 8, 3, 3),)),
    "pixel_unshuffle": ("PixelUnshuffle", (2,), {}, lambda t: (_r(t, 2, 2, 4, 6),)),
    "channel_shuffle": ("ChannelShuffle", (3,), {}, lambda t: (_r(t, 2, 6, 2),)),
    "local_response_norm": (
        "LocalResponseNorm",
        (3,),
        {"alpha": 0.1, "k": 2.0},
        lambda t: (_r(t, 2, 5, 3, 2),),
    ),
    "local_response_norm_3d": ("LocalResponseNorm", (2,), {}, lambda t: (_r(t, 2, 5, 4),)),
    "flatten": ("Flatten", (), {}, lambda t: (_r(t, 2, 3, 4),)),
    "unflatten": ("Unflatten", (1, (3, -1)), {}, lambda t: (_r(t, 2, 12),)),
    "cosine_similarity": ("CosineSimilarity", (), {}, lambda t: (_r(t, 3, 4), _r(t, 3, 4))),
    "pairwise_distance": ("PairwiseDistance", (), {}, lambda t: (_r(t, 3, 4), _r(t, 3, 4))),
    "cross_entropy": (
        "CrossEntropyLoss",
        (),
        {"label_smoothing": 0.1},
        lambda t: (_r(t, 4, 5), t.tensor([0, 4, 2, 1])),
    ),
    "nll": ("NLLLoss", (), {}, lambda t: (_r(t, 4, 5), t.tensor([0, 4, 2, 1]))),
    "bce": ("BCELoss", (), {}, lambda t: (t.rand(4, 3).requires_grad_(), t.rand(4, 3))),
    "bce_logits": (
        "BCEWithLogitsLoss",
        (),
        {"pos_weight": None},
        lambda t: (_r(t, 4, 3), t.rand(4, 3)),
    ),
    "mse": ("MSELoss", (), {}, lambda t: (_r(t, 4, 3), t.randn(4, 3))),
    "l1": ("L1Loss", (), {"reduction": "sum"}, lambda t: (_r(t, 4, 3), t.randn(4, 3))),
    "smooth_l1": ("SmoothL1Loss", (), {"beta": 0.5}, lambda t: (_r(t, 4, 3), t.randn(4, 3))),
    "huber": ("HuberLoss", (), {"delta": 0.7}, lambda t: (_r(t, 4, 3), t.randn(4, 3))),
    "kldiv": ("KLDivLoss", (), {"reduction": "batchmean"}, lambda t: (_r(t, 4, 3), t.rand(4, 3))),
    "cosine_embedding": (
        "CosineEmbeddingLoss",
        (),
        {},
        lambda t: (_r(t, 4, 3), _r(t, 4, 3), t.tensor([1, -1, 1, -1])),
    ),
    "margin_ranking": (
        "MarginRankingLoss",
        (),
        {"margin": 0.1},
        lambda t: (_r(t, 4), _r(t, 4), t.tensor([1.0, -1, 1, -1])),
    ),
    "triplet": ("TripletMarginLoss", (), {}, lambda t: (_r(t, 4, 3), _r(t, 4, 3), _r(t, 4, 3))),
    "ctc": (
        "CTCLoss",
        (),
        {},
        lambda t: (
            t.randn(6, 2, 4).log_softmax(2).detach().requires_grad_(),
            t.tensor([[1, 2, 2], [1, 3, 0]]),
            t.tensor([6, 5]),
            t.tensor([3, 2]),
        ),
    ),
    "mha": (
        "MultiheadAttention",
        (8, 2),
        {},
        lambda t: (_r(t, 5, 3, 8), _r(t, 4, 3, 8), _r(t, 4, 3, 8)),
    ),
    "mha_self_bf_mask": (
        "MultiheadAttention",
        (8, 2),
        {"batch_first": True},
        lambda t: _self_attn(
            t,
            (3, 5, 8),
            attn_mask=t.rand(5, 5) > 0.7,
            key_padding_mask=t.tensor([[False] * 4 + [True]] * 3),
        ),
    ),
    "mha_kv_dims_bias_kv": (
        "MultiheadAttention",
        (8, 4),
        {"kdim": 5, "vdim": 3, "add_bias_kv": True, "add_zero_attn": True},
        lambda t: (_r(t, 5, 2, 8), _r(t, 4, 2, 5), _r(t, 4, 2, 3)),
    ),
    "mha_unbatched_per_head": (
        "MultiheadAttention",
        (8, 2),
        {},
        lambda t: _kw(_r(t, 5, 8), _r(t, 4, 8), _r(t, 4, 8), average_attn_weights=False),
    ),
    "mha_no_weights_causal": (
        "MultiheadAttention",
        (8, 2),
        {},
        lambda t: _self_attn(
            t,
            (5, 2, 8),
            need_weights=False,
            is_causal=True,
            attn_mask=t.nn.Transformer.generate_square_subsequent_mask(5),
        ),
    ),
    "encoder_layer": ("TransformerEncoderLayer", (8, 2, 16, 0.0), {}, lambda t: (_r(t, 5, 3, 8),)),
    "encoder_layer_norm_first_gelu_bf": (
        "TransformerEncoderLayer",
        (8, 2, 16, 0.0),
        {"norm_first": True, "activation": "gelu", "batch_first": True},
        lambda t: (_r(t, 3, 5, 8),),
    ),
    "decoder_layer": (
        "TransformerDecoderLayer",
        (8, 2, 16, 0.0),
        {},
        lambda t: (_r(t, 4, 3, 8), _r(t, 5, 3, 8)),
    ),
    "transformer": (
        "Transformer",
        (),
        {
            "d_model": 8,
            "nhead": 2,
            "num_encoder_layers": 2,
            "num_decoder_layers": 2,
            "dim_feedforward": 16,
            "dropout": 0.0,
        },
        lambda t: _kw(
            _r(t, 5, 3, 8),
            _r(t, 4, 3, 8),
            tgt_mask=t.nn.Transformer.generate_square_subsequent_mask(4),
            src_key_padding_mask=t.tensor([[False] * 4 + [True]] * 3),
        ),
    ),
}


class _Call(tuple):
    """Positional inputs plus keyword arguments for a forward call."""

    kwargs = {}


def _kw(*args, **kwargs):
    c = _Call(args)
    c.kwargs = kwargs
    return c


def _self_attn(t, shape, **kwargs):
    x = _r(t, *shape)
    return _kw(x, x, x, **kwargs)


@pytest.mark.parametrize("case", list(FORWARD))
def test_forward_backward_matches_torch(case):
    torch = _torch()
    name, args, kwargs, make_inputs, *rest = FORWARD[case]
    train = rest[0] if rest else False
    torch.manual_seed(0)
    t_mod = _build(name, args, kwargs, torch)
    e_mod = _build(name, args, kwargs, ember)
    inputs = make_inputs(torch)
    call_kwargs = getattr(inputs, "kwargs", {})
    _copy_weights(t_mod, e_mod)
    t_mod.train(train)
    e_mod.train(train)
    e_inputs = _to_ember(tuple(inputs))
    # Self-attention passes the same tensor three times; keep the aliasing on the ember side.
    if len(inputs) == 3 and inputs[0] is inputs[1] is inputs[2]:
        e_inputs = (e_inputs[0],) * 3
    t_out = _flat(t_mod(*inputs, **call_kwargs))
    e_out = _flat(e_mod(*e_inputs, **{k: _to_ember(v) for k, v in call_kwargs.items()}))
    assert len(t_out) == len(e_out)
    for a, b in zip(t_out, e_out):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(_np(b), a.detach().numpy(), rtol=1e-4, atol=1e-5)
    float_pairs = [
        (a, b) for a, b in zip(t_out, e_out) if a.is_floating_point() and a.requires_grad
    ]
    if not float_pairs:
        return
    weights = [torch.randn(a.shape) for a, _ in float_pairs]
    sum((a * w).sum() for (a, _), w in zip(float_pairs, weights)).backward()
    sum((b * ember.tensor(w.numpy())).sum() for (_, b), w in zip(float_pairs, weights)).backward()
    for (n, tp), (m, ep) in zip(t_mod.named_parameters(), e_mod.named_parameters()):
        assert n == m
        if tp.grad is None:
            assert ep.grad is None, n
        else:
            np.testing.assert_allclose(
                _np(ep.grad), tp.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=n
            )
    seen = set()
    for a, b in zip(_flat(list(inputs)), _flat(list(e_inputs))):
        if id(b) in seen or not (hasattr(a, "requires_grad") and a.requires_grad):
            continue
        seen.add(id(b))
        np.testing.assert_allclose(_np(b.grad), a.grad.numpy(), rtol=1e-4, atol=1e-5)
    if train:
        for (n, tb), (_, eb) in zip(t_mod.named_buffers(), e_mod.named_buffers()):
            np.testing.assert_allclose(_np(eb), tb.numpy(), rtol=1e-5, atol=1e-6, err_msg=n)


def test_batchnorm_running_stats_over_steps():
    torch = _torch()
    for momentum in (0.1, None):
        t_bn, e_bn = (
            torch.nn.BatchNorm1d(3, momentum=momentum),
            nn.BatchNorm1d(3, momentum=momentum),
        )
        for _ in range(3):
            x = torch.randn(6, 3) * 2 + 1
            t_bn(x)
            e_bn(ember.tensor(x.numpy()))
        for (n, tb), (_, eb) in zip(t_bn.named_buffers(), e_bn.named_buffers()):
            np.testing.assert_allclose(_np(eb), tb.numpy(), rtol=1e-5, err_msg=n)
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        nn.BatchNorm2d(3)(ember.randn(2, 3, 4))


def test_rnn_input_errors_match_torch():
    torch = _torch()
    cases = [
        ("LSTM", (4, 6), lambda t: (t.randn(5, 3, 5),)),
        ("GRU", (4, 6), lambda t: (t.randn(5, 3, 4), t.randn(1, 2, 6))),
        ("RNN", (4, 6), lambda t: (t.randn(2, 5, 3, 4),)),
        ("LSTM", (4, 6), lambda t: (t.randn(5, 3, 4), (t.randn(1, 3, 6), t.randn(1, 3, 5)))),
    ]
    for name, args, make in cases:
        t_in = make(torch)
        with pytest.raises(Exception) as te:
            _build(name, args, {}, torch)(*t_in)
        with pytest.raises(type(te.value)) as ee:
            _build(name, args, {}, ember)(*_to_ember(t_in))
        assert str(ee.value) == str(te.value)


def test_rnn_train_dropout_and_grad_flow():
    ember.manual_seed(0)
    lstm = nn.LSTM(3, 4, num_layers=2, dropout=0.5)
    out, (h, c) = lstm(ember.randn(6, 2, 3))
    assert out.shape == (6, 2, 4) and h.shape == (2, 2, 4) and c.shape == (2, 2, 4)
    out.sum().backward()
    assert all(p.grad is not None for p in lstm.parameters())


def test_scaled_dot_product_attention_matches_torch():
    torch = _torch()
    F, tF = nn.functional, torch.nn.functional
    q, k, v = torch.randn(2, 3, 5, 4), torch.randn(2, 3, 6, 4), torch.randn(2, 3, 6, 4)
    bool_mask = torch.rand(5, 6) > 0.3
    bool_mask[:, 0] = True
    float_mask = torch.randn(2, 1, 5, 6)
    for kwargs in ({}, {"attn_mask": bool_mask}, {"attn_mask": float_mask}, {"scale": 0.3}):
        t = tF.scaled_dot_product_attention(q, k, v, **kwargs)
        e = F.scaled_dot_product_attention(
            *_to_ember((q, k, v)), **{a: _to_ember(b) for a, b in kwargs.items()}
        )
        np.testing.assert_allclose(_np(e), t.numpy(), rtol=1e-4, atol=1e-5)
    qs = torch.randn(2, 3, 6, 4)
    t = tF.scaled_dot_product_attention(qs, k, v, is_causal=True)
    e = F.scaled_dot_product_attention(*_to_ember((qs, k, v)), is_causal=True)
    np.testing.assert_allclose(_np(e), t.numpy(), rtol=1e-4, atol=1e-5)
    # torch combines an explicit boolean mask with the causal one.
    square = (torch.rand(6, 6) > 0.3) | torch.eye(6, dtype=torch.bool)
    t = tF.scaled_dot_product_attention(qs, k, v, attn_mask=square, is_causal=True)
    e = F.scaled_dot_product_attention(
        *_to_ember((qs, k, v)), attn_mask=_to_ember(square), is_causal=True
    )
    np.testing.assert_allclose(_np(e), t.numpy(), rtol=1e-4, atol=1e-5)
    kg, vg = torch.randn(2, 1, 6, 4), torch.randn(2, 1, 6, 4)
    t = tF.scaled_dot_product_attention(q, kg, vg, enable_gqa=True)
    e = F.scaled_dot_product_attention(*_to_ember((q, kg, vg)), enable_gqa=True)
    np.testing.assert_allclose(_np(e), t.numpy(), rtol=1e-4, atol=1e-5)


def test_scaled_dot_product_attention_fully_masked_row_is_zero():
    F = nn.functional
    q, k, v = (ember.randn(1, 3, 4, requires_grad=True) for _ in range(3))
    mask = ember.ones(3, 3, dtype=ember.bool)
    mask[1] = False
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert (out[0, 1] == 0).all()
    out.sum().backward()
    assert not q.grad.isnan().any() and not k.grad.isnan().any()


def test_scaled_dot_product_attention_gradcheck():
    F = nn.functional
    q, k, v = (ember.randn(1, 2, 3, 4, dtype=ember.float64, requires_grad=True) for _ in range(3))
    mask = ember.tensor([[True, False, True], [True, True, False], [True, True, True]])
    assert ember.autograd.gradcheck(
        lambda a, b, c: F.scaled_dot_product_attention(a, b, c, attn_mask=mask), (q, k, v)
    )


def test_packed_sequence_lstm_matches_torch():
    torch = _torch()
    from ember.nn.utils import rnn as rnn_utils

    t_lstm = torch.nn.LSTM(3, 4, bidirectional=True)
    e_lstm = nn.LSTM(3, 4, bidirectional=True)
    _copy_weights(t_lstm, e_lstm)
    x = torch.randn(5, 3, 3)
    lengths = [5, 2, 4]
    t_out, (t_h, _) = t_lstm(
        torch.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=False)
    )
    e_out, (e_h, _) = e_lstm(
        rnn_utils.pack_padded_sequence(_to_ember(x), lengths, enforce_sorted=False)
    )
    t_pad, _ = torch.nn.utils.rnn.pad_packed_sequence(t_out)
    e_pad, _ = rnn_utils.pad_packed_sequence(e_out)
    np.testing.assert_allclose(_np(e_pad), t_pad.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_np(e_h), t_h.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_composite_functionals_gradcheck_and_errors():
    F = nn.functional
    x = ember.randn(2, 4, 3, 2, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a: F.local_response_norm(a, 3, alpha=0.5), (x,))
    assert ember.autograd.gradcheck(lambda a: F.rms_norm(a, (3, 2)), (x,))
    with pytest.raises(ValueError, match="Expected 3D or higher dimensionality"):
        F.local_response_norm(ember.randn(2, 3), 2)
    with pytest.raises(RuntimeError, match="divisible by the square of upscale_factor"):
        F.pixel_shuffle(ember.randn(1, 3, 2, 2), 2)
    with pytest.raises(RuntimeError, match="Number of channels must be divisible by groups"):
        F.channel_shuffle(ember.randn(1, 3, 2), 2)
    e = nn.functional.rms_norm(ember.tensor([[3.0, 4.0]]), (2,), eps=0.0)
    np.testing.assert_allclose(_np(e), [[3 / math.sqrt(12.5), 4 / math.sqrt(12.5)]], rtol=1e-6)


@pytest.mark.parametrize("output_size", [None, (7, 7), [2, 3, 6, 7]])
def test_max_unpool_matches_torch(output_size):
    torch = _torch()
    x = torch.randn(2, 3, 6, 6)
    pooled, idx = torch.nn.functional.max_pool2d(x, 2, return_indices=True)
    t = torch.nn.MaxUnpool2d(2)(pooled, idx, output_size)
    e = nn.MaxUnpool2d(2)(_to_ember(pooled), _to_ember(idx), output_size)
    np.testing.assert_array_equal(_np(e), t.numpy())
    x1 = torch.randn(3, 8)
    p1, i1 = torch.nn.functional.max_pool1d(x1, 2, return_indices=True)
    e1 = nn.functional.max_unpool1d(_to_ember(p1), _to_ember(i1), 2)
    np.testing.assert_array_equal(_np(e1), torch.nn.functional.max_unpool1d(p1, i1, 2).numpy())


def test_max_unpool_grad_and_errors():
    idx = ember.tensor([[[[0, 3], [9, 14]]]])
    v = ember.randn(1, 1, 2, 2, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a: nn.functional.max_unpool2d(a, idx, 2), (v,))
    with pytest.raises(
        ValueError, match=r'invalid output_size "\(9, 9\)" \(dim 0 must be between 2 and 6\)'
    ):
        nn.functional.max_unpool2d(v, idx, 2, output_size=(9, 9))
    with pytest.raises(
        ValueError, match="output_size should be a sequence containing 2 or 4 elements"
    ):
        nn.functional.max_unpool2d(v, idx, 2, output_size=(4, 4, 4))
