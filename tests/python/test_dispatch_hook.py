"""The dispatcher's per-op hook into TorchDispatchModes: ops that C++ runs (backward formulas,
composites) reach the modes under torch's overload names, in torch's order, each mode switched
off while its handler runs, with errors and results passing through as torch's do.

The program runs in one subprocess per library (ember, and torch where installed) and prints
its observations as JSON; each test checks ember's against torch's and against values written
here. Note [Dispatch modes] in ember/_dispatch_bridge.py lists what torch shows that ember's
modes do not (``_UNSEEN``)."""

import importlib.util
import json
import subprocess
import sys
import textwrap

import pytest

_PROGRAM = textwrap.dedent(
    r"""
    import json, sys, threading
    if sys.argv[1] == "torch":
        import torch
        from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode
    else:
        import ember as torch
        from ember.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode
    F = torch.nn.functional
    out = {}
    torch.manual_seed(0)

    class Log(TorchDispatchMode):
        def __init__(self, name="", log=None):
            super().__init__()
            self.name, self.ops = name, [] if log is None else log

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(f"{self.name}{func}")
            return func(*args, **(kwargs or {}))

    def backward_ops(f):
        x = torch.randn(3, 4, requires_grad=True)
        y = f(x)
        with Log() as m:
            y.backward()
        return m.ops

    # backward formulas computed in C++: their ops, forward run outside the mode
    out["backward"] = {
        "exp_mul": backward_ops(lambda x: (x.exp() * 2).sum()),
        "div": backward_ops(lambda x: (x / 3).sum()),
        "relu": backward_ops(lambda x: x.relu().sum()),
        "log_softmax": backward_ops(lambda x: F.log_softmax(x, 1).sum()),
        "softmax": backward_ops(lambda x: F.softmax(x, 1).sum()),
    }

    # a training step under the mode: dropout's mask multiply in backward
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.bn = torch.nn.Conv2d(2, 3, 3), torch.nn.BatchNorm2d(3)
            self.drop, self.fc = torch.nn.Dropout(0.3), torch.nn.Linear(12, 2)

        def forward(self, x):
            return self.fc(self.drop(self.bn(self.conv(x)).relu()).flatten(1))

    net = Net()
    with Log() as m:
        loss = F.cross_entropy(net(torch.randn(2, 2, 4, 4)), torch.tensor([1, 0]))
        cut = len(m.ops)
        loss.backward()
    out["step_backward"] = m.ops[cut:]

    # a handler's result is the op's: doubling backward's products doubles each factor
    class Double(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            r = func(*args, **(kwargs or {}))
            return r * 2 if func is torch.ops.aten.mul.Tensor else r

    x = torch.tensor([0.5, 1.0], requires_grad=True)
    y = (x.exp() * 3).sum()
    with Double():
        y.backward()
    out["doubled_grad"] = [round(v, 4) for v in x.grad.tolist()]

    # nested: the innermost first, its func(*args) reaching the outer mode
    log = []
    x = torch.randn(2, requires_grad=True)
    y = (x.exp() * 2).sum()
    with Log("outer:", log), Log("inner:", log):
        y.backward()
    out["nested"] = log

    # an error raised by a handler in backward is backward's error; the mode is left clean
    class Refuse(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func is torch.ops.aten.mul.Tensor:
                raise ValueError("refused " + str(func))
            return func(*args, **(kwargs or {}))

    x = torch.randn(2, requires_grad=True)
    y = (x * 2).sum()
    try:
        with Refuse():
            y.backward(retain_graph=True)
        out["refused"] = None
    except ValueError as e:
        out["refused"] = str(e)
    y.backward()
    out["after_refusal"] = [_get_current_dispatch_mode() is None, x.grad.tolist()]

    # modes are per thread: another thread's ops are not seen
    seen_elsewhere = []
    a = torch.ones(3, requires_grad=True)
    with Log() as m:
        t = threading.Thread(target=lambda: (a * 2).sum().backward())
        t.start()
        t.join()
        seen_elsewhere.append(len(m.ops))
        (a * 3).sum().backward()
    out["threads"] = [seen_elsewhere[0], m.ops[-2:], a.grad.tolist()]

    # optimizer steps: the mode sees torch's single-tensor ops, and the values are the fused
    # step's (two steps each, plain and under the mode)
    makers = {
        "sgd": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01),
        "adam": lambda p: torch.optim.Adam(p, lr=0.1),
    }
    for name, make in makers.items():
        values, ops = [], []
        for under in (False, True):
            torch.manual_seed(0)
            lin = torch.nn.Linear(3, 2)
            opt = make(lin.parameters())
            for _ in range(2):
                lin(torch.ones(4, 3)).pow(2).sum().backward()
                m = Log()
                if under:
                    with m:
                        opt.step()
                else:
                    opt.step()
                ops.append([op for op in m.ops if not op.startswith("profiler.")])
                opt.zero_grad()
            values.append([round(v, 5) for p in lin.parameters() for v in p.flatten().tolist()])
        out[name] = [ops[2:], values[0] == values[1]]

    # FlopCounterMode over a whole training step, the optimizer's included
    if sys.argv[1] == "torch":
        from torch.utils.flop_counter import FlopCounterMode
    else:
        from ember.utils.flop_counter import FlopCounterMode
    net = Net()
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    with FlopCounterMode(display=False) as fc:
        F.cross_entropy(net(torch.randn(2, 2, 4, 4)), torch.tensor([1, 0])).backward()
        opt.step()
    out["step_flops"] = {str(k): v for k, v in fc.get_flop_counts()["Global"].items()}
    print(json.dumps(out))
    """
)

# What torch's modes see that ember's do not: torch's autograd detaches the outputs it saves
# and SumBackward expands the gradient; ember's are steps without a dispatcher op.
_UNSEEN = ("aten.detach.default", "aten.expand.default")


def _libs():
    return ["ember"] + (["torch"] if importlib.util.find_spec("torch") else [])


def _run(lib):
    proc = subprocess.run(
        [sys.executable, "-c", _PROGRAM, lib], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def seen():
    return {lib: _run(lib) for lib in _libs()}


def _torchs(seen, key):
    if "torch" not in seen:
        pytest.skip("torch is not installed")
    return seen["torch"][key]


def _visible(ops):
    return [op for op in ops if op not in _UNSEEN]


def test_cpp_backward_formulas_reach_the_mode_under_torchs_names(seen):
    backward = seen["ember"]["backward"]
    assert backward == {
        "exp_mul": ["aten.ones_like.default", "aten.mul.Tensor", "aten.mul.Tensor"],
        "div": ["aten.ones_like.default", "aten.div.Tensor"],
        "relu": ["aten.ones_like.default", "aten.threshold_backward.default"],
        "log_softmax": ["aten.ones_like.default", "aten._log_softmax_backward_data.default"],
        "softmax": ["aten.ones_like.default", "aten._softmax_backward_data.default"],
    }
    theirs = _torchs(seen, "backward")
    assert {k: _visible(v) for k, v in theirs.items()} == backward


def test_a_training_steps_backward_shows_dropouts_multiply_in_torchs_order(seen):
    ours = seen["ember"]["step_backward"]
    assert "aten.mul.Tensor" in ours  # the dropout mask's, from MulBackward0 in C++
    theirs = _torchs(seen, "step_backward")
    # every op ember's mode sees, torch's sees in the same order (ember's view backward nodes
    # and TBackward0 compute without dispatcher ops, so torch shows more)
    rest = iter(theirs)
    assert all(op in rest for op in ours), (ours, theirs)
    assert ours.index("aten.mul.Tensor") == ours.index("aten.threshold_backward.default") - 1


def test_a_handlers_result_is_the_ops_result_in_backward(seen):
    # d/dx of 3·exp(x), each of backward's two products doubled: 12·exp(x) in float32
    assert seen["ember"]["doubled_grad"] == [19.7847, 32.6194]
    assert seen["ember"]["doubled_grad"] == _torchs(seen, "doubled_grad")


def test_nested_modes_see_backward_ops_innermost_first(seen):
    ours = seen["ember"]["nested"]
    assert ours == [
        f"{who}:aten.{op}"
        for op in ("ones_like.default", "mul.Tensor", "mul.Tensor")
        for who in ("inner", "outer")
    ]
    theirs = [op for op in _torchs(seen, "nested") if op.split(":")[1] not in _UNSEEN]
    assert ours == theirs


def test_a_handlers_error_in_backward_propagates_and_leaves_no_mode(seen):
    assert seen["ember"]["refused"] == "refused aten.mul.Tensor"
    assert seen["ember"]["after_refusal"] == [True, [2.0, 2.0]]
    for key in ("refused", "after_refusal"):
        assert seen["ember"][key] == _torchs(seen, key)


def test_modes_are_per_thread(seen):
    # the main thread's backward: its product, then accumulating into a.grad
    assert seen["ember"]["threads"] == [
        0,
        ["aten.mul.Tensor", "aten.add_.Tensor"],
        [5.0, 5.0, 5.0],
    ]
    theirs = _torchs(seen, "threads")
    assert seen["ember"]["threads"] == [theirs[0], _visible(theirs[1])[-2:], theirs[2]]


def test_an_sgd_step_shows_torchs_ops_with_the_fused_steps_values(seen):
    steps, same = seen["ember"]["sgd"]
    # per parameter: the weight decay, the momentum buffer (made on the first step), the update
    first = ["aten.add.Tensor", "aten.detach.default", "aten.clone.default", "aten.add_.Tensor"]
    later = ["aten.add.Tensor", "aten.mul_.Tensor", "aten.add_.Tensor", "aten.add_.Tensor"]
    assert steps == [first * 2, later * 2] and same
    assert steps == _torchs(seen, "sgd")[0]


def test_an_adam_step_shows_its_state_and_update_ops_with_the_fused_steps_values(seen):
    steps, same = seen["ember"]["adam"]
    assert same
    theirs = _torchs(seen, "adam")[0]
    # the state torch creates before the first update (step, exp_avg, exp_avg_sq per param)
    assert steps[0][:6] == theirs[0][:6]
    # ember's lerp_, addcmul_ and addcdiv_ are composites whose parts the mode sees instead
    parts = {
        "aten.lerp_.Scalar": ["aten.lerp.Tensor", "aten.copy_.default"],
        "aten.addcmul_.default": ["aten.mul.Tensor", "aten.add_.Tensor"],
        "aten.addcdiv_.default": ["aten.div.Tensor", "aten.add_.Tensor"],
    }
    assert steps[1] == [part for op in theirs[1] for part in parts.get(op, [op])]


def test_flop_counter_totals_of_a_training_step_are_torchs(seen):
    # the input needs no gradient: convolution_backward computes the weight's only
    assert seen["ember"]["step_flops"] == {
        "aten.convolution": 864,
        "aten.addmm": 96,
        "aten.mm": 192,
        "aten.convolution_backward": 864,
    }
    assert seen["ember"]["step_flops"] == _torchs(seen, "step_flops")
