"""torch's profiler rows inside ember's ops (Note [Profiler rows] in
csrc/ember/dispatch/profile_range.h): the ATen ops an op calls internally (`aten::linear` >
`aten::t` > `aten::transpose` > `aten::as_strided`, `aten::addmm` > `aten::expand`, `aten::to` >
`aten::_to_copy`, ...), their input shapes, the autograd engine's rows, the optimizer's ranges,
and key_averages() of a small CNN training step. Each case is checked against the tree written
here and, where torch is installed, against torch's own profile of the same code."""

import json

import pytest
from _cpu_tier import avx512_tier
from _docs_check import _libs

import ember


def _tree(prof, shapes=False):
    """The profile's events as indented lines (children in start order), optionally with shapes."""
    out = []

    def walk(e, depth):
        out.append("  " * depth + e.name + (f" {e.input_shapes}" if shapes else ""))
        for c in sorted(e.cpu_children, key=lambda c: c.time_range.start):
            walk(c, depth + 1)

    for e in sorted(prof.events(), key=lambda e: e.time_range.start):
        if e.cpu_parent is None:
            walk(e, 0)
    return out


def _profile(T, setup, run, shapes=False):
    state = setup(T)
    run(T, state)  # warm: first calls may allocate state torch records differently
    with T.profiler.profile(record_shapes=shapes) as prof:
        run(T, state)
    return _tree(prof, shapes)


def _check(expected, setup, run, shapes=False):
    for T in _libs():
        assert _profile(T, setup, run, shapes) == expected, T.__name__


def test_linear_rows_and_shapes():
    expected = [
        "aten::linear [[2, 4], [3, 4], [3]]",
        "  aten::t [[3, 4]]",
        "    aten::transpose [[3, 4], [], []]",
        "      aten::as_strided [[3, 4], [], [], []]",
        "  aten::addmm [[3], [2, 4], [4, 3], [], []]",
        "    aten::expand [[3], [], []]",
        "      aten::as_strided [[3], [], [], []]",
        "    aten::copy_ [[2, 3], [2, 3], []]",
        "    aten::resolve_conj [[2, 3]]",
        "    aten::resolve_conj [[2, 4]]",
    ]
    _check(
        expected,
        lambda T: (T.nn.Linear(4, 3), T.randn(2, 4)),
        lambda T, s: s[0](s[1]),
        shapes=True,
    )


def test_linear_3d_and_no_bias():
    _check(
        [
            "aten::linear",
            "  aten::view",
            "  aten::t",
            "    aten::transpose",
            "      aten::as_strided",
            "  aten::addmm",
            "    aten::expand",
            "      aten::as_strided",
            "    aten::copy_",
            "    aten::resolve_conj",
            "    aten::resolve_conj",
            "  aten::view",
        ],
        lambda T: (T.nn.Linear(4, 3), T.randn(5, 2, 4)),
        lambda T, s: s[0](s[1]),
    )
    _check(
        [
            "aten::linear",
            "  aten::t",
            "    aten::transpose",
            "      aten::as_strided",
            "  aten::matmul",
            "    aten::mm",
            "      aten::resolve_conj",
            "      aten::resolve_conj",
        ],
        lambda T: (T.nn.Linear(4, 3, bias=False), T.randn(2, 4)),
        lambda T, s: s[0](s[1]),
    )


def test_matmul_rows():
    _check(
        [
            "aten::matmul [[2, 3], [3, 4]]",
            "  aten::mm [[2, 3], [3, 4]]",
            "    aten::resolve_conj [[2, 4]]",
            "    aten::resolve_conj [[3, 4]]",
            "    aten::resolve_conj [[2, 3]]",
        ],
        lambda T: (T.randn(2, 3), T.randn(3, 4)),
        lambda T, s: s[0] @ s[1],
        shapes=True,
    )
    _check(
        [
            "aten::matmul",
            "  aten::reshape",
            "    aten::view",
            "  aten::mm",
            "    aten::resolve_conj",
            "    aten::resolve_conj",
            "    aten::resolve_conj",
            "  aten::_unsafe_view",
        ],
        lambda T: (T.randn(5, 2, 3), T.randn(3, 4)),
        lambda T, s: T.matmul(s[0], s[1]),
    )


@pytest.mark.parametrize(
    "name,fn",
    [
        ("transpose", lambda x: x.transpose(0, 1)),
        ("permute", lambda x: x.permute(2, 0, 1)),
        ("select", lambda x: x.select(0, 1)),
        ("unsqueeze", lambda x: x.unsqueeze(0)),
        ("diagonal", lambda x: x.diagonal()),
    ],
)
def test_views_make_their_geometry_through_as_strided(name, fn):
    _check(
        [
            f"aten::{name} [[2, 3, 4]{', []' * _NARGS[name]}]",
            "  aten::as_strided [[2, 3, 4], [], [], []]",
        ],
        lambda T: T.randn(2, 3, 4),
        lambda T, x: fn(x),
        shapes=True,
    )


_NARGS = {"transpose": 2, "permute": 1, "select": 2, "unsqueeze": 1, "diagonal": 3}


def test_view_and_flatten_have_no_as_strided():
    _check(["aten::view"], lambda T: T.randn(2, 3, 4), lambda T, x: x.view(6, 4))
    _check(["aten::flatten", "  aten::view"], lambda T: T.randn(2, 3, 4), lambda T, x: x.flatten(1))


def test_to_rows():
    to_copy = ["  aten::_to_copy", "    aten::empty_strided", "    aten::copy_"]
    _check(["aten::to"] + to_copy, lambda T: T.randn(2, 3), lambda T, x: x.to(T.float64))
    _check(["aten::to"] + to_copy, lambda T: T.randn(2, 3), lambda T, x: x.double())
    _check(["aten::to"], lambda T: T.randn(2, 3), lambda T, x: x.to(T.float32))
    _check(
        [
            "aten::to [[2, 3], [], [], [], []]",
            "  aten::_to_copy [[2, 3], [], [], [], [], [], []]",
            "    aten::empty_strided [[], [], [], [], [], []]",
            "    aten::copy_ [[2, 3], [2, 3], []]",
        ],
        lambda T: T.randn(2, 3),
        lambda T, x: x.to(T.float64),
        shapes=True,
    )


def test_python_number_operand_is_converted_through_to():
    rows = ["  aten::to", "    aten::_to_copy", "      aten::empty_strided", "      aten::copy_"]
    _check(["aten::add"] + rows, lambda T: T.randn(2, 3), lambda T, x: x + 1)
    _check(["aten::mul"] + rows, lambda T: T.randn(2, 3), lambda T, x: x * 2.0)
    # the same dtype needs no conversion, and alpha is no operand
    _check(["aten::add"], lambda T: T.arange(3), lambda T, x: x + 1)
    _check(
        ["aten::add_"], lambda T: (T.randn(3), T.randn(3)), lambda T, s: s[0].add_(s[1], alpha=2)
    )


def test_relu_and_max_pool_rows():
    _check(["aten::relu", "  aten::clamp_min"], lambda T: T.randn(2, 4), lambda T, x: T.relu(x))
    _check(
        ["aten::relu_", "  aten::clamp_min_"],
        lambda T: (T.nn.ReLU(inplace=True), T.randn(2, 4)),
        lambda T, s: s[0](s[1]),
    )
    _check(
        ["aten::max_pool2d", "  aten::max_pool2d_with_indices"],
        lambda T: (T.nn.MaxPool2d(2), T.randn(2, 4, 8, 8)),
        lambda T, s: s[0](s[1]),
    )


@avx512_tier
def test_conv2d_rows():
    _check(
        [
            "aten::conv2d",
            "  aten::convolution",
            "    aten::_convolution",
            "      aten::mkldnn_convolution",
            "        aten::empty",
            "        aten::empty",
            "        aten::as_strided_",
            "        aten::resize_",
        ],
        lambda T: (T.nn.Conv2d(1, 4, 3), T.randn(2, 1, 8, 8)),
        lambda T, s: s[0](s[1]),
    )


def test_batch_norm_rows_begin_as_torchs():
    # torch's native_batch_norm allocates more than ember's kernel: compare its parents only
    for T in _libs():
        m, x = T.nn.BatchNorm2d(4).eval(), T.randn(2, 4, 8, 8)
        m(x)
        with T.profiler.profile(record_shapes=True) as prof:
            m(x)
        tree = [line for line in _tree(prof, True) if not line.startswith("      ")]
        assert tree[:4] == [
            "aten::batch_norm [[2, 4, 8, 8], [4], [4], [4], [4], [], [], [], []]",
            "  aten::_batch_norm_impl_index [[2, 4, 8, 8], [4], [4], [4], [4], [], [], [], []]",
            "    aten::empty [[], [], [], [], [], []]",
            "    aten::native_batch_norm [[2, 4, 8, 8], [4], [4], [4], [4], [], [], []]",
        ], T.__name__


def _subtree(tree, line):
    """The lines of `line`'s subtree in `tree` (itself first)."""
    i = tree.index(line)
    depth = len(line) - len(line.lstrip())
    out = [line]
    for nxt in tree[i + 1 :]:
        if len(nxt) - len(nxt.lstrip()) <= depth:
            break
        out.append(nxt)
    return out


def test_backward_rows():
    expected_relu = [
        "  ReluBackward0 [[2, 3]]",
        "    aten::threshold_backward [[2, 3], [2, 3], []]",
    ]
    expected_addmm = [
        "  AddmmBackward0 [[2, 3]]",
        "    aten::t [[4, 3]]",
        "      aten::transpose [[4, 3], [], []]",
        "        aten::as_strided [[4, 3], [], [], []]",
        "    aten::mm [[2, 3], [3, 4]]",
        "      aten::resolve_conj [[2, 4]]",
        "      aten::resolve_conj [[3, 4]]",
        "      aten::resolve_conj [[2, 3]]",
        "    aten::t [[2, 3]]",
        "      aten::transpose [[2, 3], [], []]",
        "        aten::as_strided [[2, 3], [], [], []]",
        "    aten::mm [[3, 2], [2, 4]]",
        "      aten::resolve_conj [[3, 4]]",
        "      aten::resolve_conj [[2, 4]]",
        "    aten::t [[3, 4]]",
        "      aten::transpose [[3, 4], [], []]",
        "        aten::as_strided [[3, 4], [], [], []]",
    ]
    for T in _libs():
        tree = _profile(
            T,
            lambda T: (T.nn.Linear(4, 3), T.randn(2, 4, requires_grad=True)),
            lambda T, s: s[0](s[1]).relu().backward(T.ones(2, 3)),
            shapes=True,
        )
        assert _subtree(tree, expected_relu[0]) == expected_relu, T.__name__
        assert _subtree(tree, expected_addmm[0]) == expected_addmm, T.__name__
        # the gradient of a broadcast bias is summed and reshaped outside the node, in its
        # evaluate_function range
        node = _subtree(tree, "autograd::engine::evaluate_function: AddmmBackward0 []")
        assert [line.split(" [")[0] for line in node if line.startswith("  aten::")] == [
            "  aten::sum",
            "  aten::view",
        ], T.__name__


def test_backward_seed_rows():
    # backward() of a scalar seeds its gradient with ones_like, as torch does
    for T in _libs():
        tree = _profile(
            T,
            lambda T: T.randn(2, 3, requires_grad=True),
            lambda T, x: (x * 2).sum().backward(),
            shapes=True,
        )
        assert _subtree(tree, "aten::ones_like [[], [], [], [], [], []]") == [
            "aten::ones_like [[], [], [], [], [], []]",
            "  aten::empty_like [[], [], [], [], [], []]",
            "    aten::empty_strided [[], [], [], [], [], []]",
            "  aten::fill_ [[], []]",
        ], T.__name__


def test_cross_entropy_rows():
    # under a profile ember computes cross-entropy as torch does, log_softmax then nll_loss, so
    # the rows and the backward nodes are torch's (the fused kernel runs otherwise)
    def setup(T):
        return T.randn(2, 4, requires_grad=True), T.tensor([1, 2])

    def run(T, s):
        T.nn.functional.cross_entropy(*s).backward()

    _check(
        [
            "aten::cross_entropy_loss",
            "  aten::log_softmax",
            "    aten::to",
            "    aten::_log_softmax",
            "  aten::nll_loss_nd",
            "    aten::nll_loss",
            "      aten::nll_loss_forward",
            "aten::ones_like",
            "  aten::empty_like",
            "    aten::empty_strided",
            "  aten::fill_",
            "autograd::engine::evaluate_function: NllLossBackward0",
            "  NllLossBackward0",
            "    aten::nll_loss_backward",
            "      aten::zero_",
            "autograd::engine::evaluate_function: LogSoftmaxBackward0",
            "  LogSoftmaxBackward0",
            "    aten::_log_softmax_backward_data",
            "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad",
            "  torch::autograd::AccumulateGrad",
            "    aten::add_",
        ],
        setup,
        run,
    )
    for T in _libs():
        tree = _profile(T, setup, run, shapes=True)
        assert tree[:7] == [
            "aten::cross_entropy_loss [[2, 4], [2], [], [], [], []]",
            "  aten::log_softmax [[2, 4], [], []]",
            "    aten::to [[2, 4], [], [], [], [], [], [], []]",
            "    aten::_log_softmax [[2, 4], [], []]",
            "  aten::nll_loss_nd [[2, 4], [2], [], [], []]",
            "    aten::nll_loss [[2, 4], [2], [], [], []]",
            "      aten::nll_loss_forward [[2, 4], [2], [], [], []]",
        ], T.__name__


def test_cross_entropy_under_a_profile_gives_the_same_loss_and_gradient():
    x = ember.randn(4, 5, requires_grad=True)
    y = ember.tensor([0, 3, 1, 4])
    plain = ember.nn.functional.cross_entropy(x, y)
    (g_plain,) = ember.autograd.grad(plain, x)
    with ember.profiler.profile():
        profiled = ember.nn.functional.cross_entropy(x, y)
        (g_profiled,) = ember.autograd.grad(profiled, x)
    assert abs(profiled.item() - plain.item()) < 1e-6
    assert (g_profiled - g_plain).abs().max().item() < 1e-6


def _cnn_step(T, record_shapes=False):
    T.manual_seed(0)
    nn = T.nn
    m = nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1),
        nn.BatchNorm2d(4),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(4 * 4 * 4, 10),
    )
    opt = T.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    x, y = T.randn(2, 1, 8, 8), T.tensor([1, 2])

    def step():
        loss = nn.functional.cross_entropy(m(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()

    step()
    with T.profiler.profile(record_shapes=record_shapes) as prof:
        step()
    return prof


# Rows of the CNN step whose count both profilers agree on (ember's optimizer is one fused update
# per group, so the step's inner rows differ, as do the allocations inside some kernels).
_CNN_ROWS = {
    "aten::conv2d": 1,
    "aten::convolution": 1,
    "aten::_convolution": 1,
    "aten::mkldnn_convolution": 1,
    "aten::batch_norm": 1,
    "aten::_batch_norm_impl_index": 1,
    "aten::native_batch_norm": 1,
    "aten::relu": 1,
    "aten::clamp_min": 1,
    "aten::max_pool2d": 1,
    "aten::max_pool2d_with_indices": 1,
    "aten::flatten": 1,
    "aten::linear": 1,
    "aten::addmm": 1,
    "aten::expand": 1,
    "aten::t": 5,
    "aten::transpose": 5,
    "aten::mm": 2,
    "aten::view": 3,
    "aten::reshape": 1,
    "aten::ones_like": 1,
    "aten::cross_entropy_loss": 1,
    "aten::log_softmax": 1,
    "aten::_log_softmax": 1,
    "aten::nll_loss_nd": 1,
    "aten::nll_loss": 1,
    "aten::nll_loss_forward": 1,
    "aten::nll_loss_backward": 1,
    "aten::_log_softmax_backward_data": 1,
    "LogSoftmaxBackward0": 1,
    "aten::threshold_backward": 1,
    "aten::max_pool2d_with_indices_backward": 1,
    "aten::native_batch_norm_backward": 1,
    "aten::convolution_backward": 1,
    "aten::detach": 6,
    "detach": 6,
    "torch::autograd::AccumulateGrad": 6,
    "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad": 6,
    "AddmmBackward0": 1,
    "TBackward0": 1,
    "ViewBackward0": 1,
    "MaxPool2DWithIndicesBackward0": 1,
    "ReluBackward0": 1,
    "NativeBatchNormBackward0": 1,
    "ConvolutionBackward0": 1,
    "NllLossBackward0": 1,
    "Optimizer.step#SGD.step": 1,
    "Optimizer.zero_grad#SGD.zero_grad": 1,
}


def test_cnn_training_step_rows():
    for T in _libs():
        counts = {e.key: e.count for e in _cnn_step(T).key_averages()}
        got = {k: counts.get(k) for k in _CNN_ROWS}
        assert got == _CNN_ROWS, T.__name__


def test_cnn_training_step_nesting_and_shapes():
    for T in _libs():
        prof = _cnn_step(T, record_shapes=True)
        avg = {
            (e.key, str(e.input_shapes)): e for e in prof.key_averages(group_by_input_shape=True)
        }
        for key in [
            ("aten::linear", "[[2, 64], [10, 64], [10]]"),
            ("aten::addmm", "[[10], [2, 64], [64, 10], [], []]"),
            ("aten::conv2d", "[[2, 1, 8, 8], [4, 1, 3, 3], [4], [], [], [], []]"),
            ("aten::relu", "[[2, 4, 8, 8]]"),
            ("aten::clamp_min", "[[2, 4, 8, 8], []]"),
            ("aten::max_pool2d_with_indices", "[[2, 4, 8, 8], [], [], [], [], []]"),
        ]:
            assert key in avg, (T.__name__, key)
        # nesting: an op's CPU total holds its children's; self time excludes them
        lin = next(e for e in prof.events() if e.name == "aten::linear")
        assert [c.name for c in lin.cpu_children] == ["aten::t", "aten::addmm"]
        assert lin.cpu_time_total >= sum(c.cpu_time_total for c in lin.cpu_children)
        assert lin.self_cpu_time_total == pytest.approx(
            lin.cpu_time_total - sum(c.cpu_time_total for c in lin.cpu_children), abs=1e-3
        )


def test_optimizer_ranges():
    def run(T, opt):
        opt.step()
        opt.zero_grad()

    for T in _libs():
        p = T.nn.Parameter(T.randn(3))
        opt = T.optim.Adam([p], lr=0.1)
        p.grad = T.randn(3)
        run(T, opt)
        p.grad = T.randn(3)
        with T.profiler.profile() as prof:
            run(T, opt)
        tops = _top(prof)
        assert [e.name for e in tops] == [
            "Optimizer.step#Adam.step",
            "Optimizer.zero_grad#Adam.zero_grad",
        ], T.__name__
        assert tops[0].cpu_children, T.__name__  # the update's ops run inside the step's range
        assert not tops[1].cpu_children, T.__name__  # set_to_none runs no op


def _top(prof):
    return sorted(
        (e for e in prof.events() if e.cpu_parent is None), key=lambda e: e.time_range.start
    )


def test_accumulate_grad_steals_the_gradient():
    # torch's AccumulateGrad takes an unshared gradient buffer as the leaf's .grad (detach), as
    # ember's now does: no copy
    for T in _libs():
        w = T.randn(3, requires_grad=True)
        with T.profiler.profile() as prof:
            (w * 2).sum().backward()
        acc = next(e for e in prof.events() if e.name == "torch::autograd::AccumulateGrad")
        assert [c.name for c in acc.cpu_children] == ["aten::detach"], T.__name__
        assert [c.name for c in acc.cpu_children[0].cpu_children] == ["detach"], T.__name__
        assert w.grad.tolist() == [2.0, 2.0, 2.0]


def test_chrome_trace_args(tmp_path):
    for T in _libs():
        m, x = T.nn.Linear(4, 3), T.randn(2, 4)
        with T.profiler.profile(record_shapes=True) as prof:
            with T.profiler.record_function("block"):
                m(x)
        path = tmp_path / f"{T.__name__}.json"
        prof.export_chrome_trace(str(path))
        events = json.loads(path.read_text())["traceEvents"]
        block = next(e for e in events if e.get("name") == "block")
        assert block["cat"] == "user_annotation"
        assert list(block["args"]) == ["External id", "Record function id", "Ev Idx"]
        assert block["args"]["Record function id"] == 0
        addmm = next(e for e in events if e.get("name") == "aten::addmm")
        assert addmm["args"]["Input Dims"] == [[3], [2, 4], [4, 3], [], []]
        assert {"External id", "Record function id", "Input Dims", "Ev Idx"} <= set(addmm["args"])
        assert "Parent id" not in addmm["args"]
