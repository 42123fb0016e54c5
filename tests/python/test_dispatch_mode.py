"""TorchDispatchMode, FlopCounterMode, ModuleTracker, library.register_torch_dispatch and the tags
of aten OpOverloads, as torch 2.13 has them.

The modes run in one subprocess per library (ember, and torch where installed) executing the
same program, which prints its observations as JSON; each test checks ember's against the
values written here and against torch's."""

import importlib.util
import json
import subprocess
import sys
import textwrap

import pytest

_PROGRAM = textwrap.dedent(
    r"""
    import json, sys
    if sys.argv[1] == "torch":
        import torch
        from torch.utils._python_dispatch import (
            TorchDispatchMode, _get_current_dispatch_mode, _get_current_dispatch_mode_stack)
        from torch.utils.flop_counter import FlopCounterMode
        from torch.utils.module_tracker import ModuleTracker
    else:
        import ember as torch
        from ember.utils._python_dispatch import (
            TorchDispatchMode, _get_current_dispatch_mode, _get_current_dispatch_mode_stack)
        from ember.utils.flop_counter import FlopCounterMode
        from ember.utils.module_tracker import ModuleTracker
    F = torch.nn.functional
    out = {}
    torch.manual_seed(0)

    class Log(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops, self.shapes = [], []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            self.shapes.append([list(a.shape) for a in args if isinstance(a, torch.Tensor)])
            return func(*args, **(kwargs or {}))

    # what a mode sees of a forward program
    a = torch.ones(3, 3)
    with Log() as m:
        (a + 1, a.sin(), a @ a, a.mean(), a[0], a.view(9), a.clone(), a.t())
        a.add_(1)
    out["forward_ops"] = m.ops

    # losses and embedding as torch's decompositions (same values)
    logits = torch.arange(20.0).reshape(4, 5).sin()
    target, rows = torch.tensor([0, 1, 2, 1]), torch.tensor([1, 2])
    with Log() as m:
        ce = F.cross_entropy(logits, target, weight=torch.arange(1.0, 6.0), ignore_index=1)
        mse = F.mse_loss(logits, logits.cos(), reduction="sum")
        emb = F.embedding(rows, logits, padding_idx=-1)
    out["nn_ops"] = [m.ops, round(ce.item(), 4), round(mse.item(), 4), emb.tolist()]
    loss, total = torch.ops.aten.nll_loss_forward.default(
        logits.log_softmax(1), target, torch.arange(1.0, 6.0), 1, 1)
    out["total_weight"] = [round(loss.item(), 4), total.item()]

    # Linear forward and backward: the matmuls and the bias gradient's reduction
    lin = torch.nn.Linear(4, 3)
    x = torch.randn(2, 4, requires_grad=True)
    with Log() as m:
        lin(x).relu().sum().backward()
    kept = ("aten.addmm.default", "aten.mm.default", "aten.sum.dim_IntList")
    out["linear_ops"] = sorted(
        [op, s] for op, s in zip(m.ops, m.shapes) if op in kept)
    out["linear_grads"] = [x.grad.tolist(), lin.weight.grad.shape[0], lin.bias.grad.tolist()]

    # a training step: batch_norm, dropout, item, out=, data and detach as torch's overloads,
    # with the values the step gives outside the mode
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.bn = torch.nn.Conv2d(2, 3, 3), torch.nn.BatchNorm2d(3)
            self.drop, self.fc = torch.nn.Dropout(0.3), torch.nn.Linear(12, 2)

        def forward(self, x):
            return self.fc(self.drop(self.bn(self.conv(x)).relu()).flatten(1))

    nets, xs = [Net(), Net()], torch.randn(2, 2, 4, 4)
    nets[1].load_state_dict(nets[0].state_dict())

    def step():
        torch.manual_seed(1)
        net = nets.pop()
        loss = F.cross_entropy(net(xs), torch.tensor([1, 0]))
        loss.backward()
        return [loss.item(), net.bn.running_mean.tolist()] + [
            p.grad.tolist() for p in net.parameters()]

    plain = step()
    with Log() as m:
        under = step()
        b = torch.empty(3)
        torch.add(torch.ones(3).detach(), 1, out=b)
        float(b.sum())
    # torch's autograd also detaches the outputs it saves (relu's, _log_softmax's): not ember's
    ops = [op for op in m.ops if op != "aten.detach.default"]
    cut = ops.index("aten.nll_loss_forward.default") + 1
    # within float32 rounding: ember's fused cross_entropy kernel and torch's log_softmax +
    # nll_loss (what the mode runs) round the loss differently in the last place
    same = all(torch.allclose(torch.tensor(u), torch.tensor(v), rtol=1e-6, atol=0)
               for u, v in zip(plain, under))
    # the backward overloads of torch's that this test follows (test_dispatch_hook.py checks
    # the rest of the sequence, dropout's mul included)
    kept = ("aten.ones_like.default", "aten.nll_loss_backward.default",
            "aten._log_softmax_backward_data.default", "aten.mm.default", "aten.sum.dim_IntList",
            "aten.threshold_backward.default",
            "aten.native_batch_norm_backward.default", "aten.convolution_backward.default")
    backward = [op for op in ops[cut:-6] if op in kept]
    out["step"] = [ops[:cut], ops[-6:], same, backward]

    # an output the backward reads, changed in place before it runs: torch's error
    with Log():
        y = torch.relu(torch.randn(3, requires_grad=True))
        y.add_(1)
        try:
            y.sum().backward()
            out["saved_changed"] = None
        except RuntimeError as e:
            out["saved_changed"] = str(e).split(":")[0]

    # nesting: the innermost first, each mode off inside its handler; its result is the call's
    log = []

    class Tag(TorchDispatchMode):
        def __init__(self, tag):
            super().__init__()
            self.tag = tag

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            cur = _get_current_dispatch_mode()
            log.append([self.tag, str(func), list(types), cur.tag if cur else None])
            r = func(*args, **(kwargs or {}))
            if self.tag == "inner" and func is torch.ops.aten.add.Tensor:
                r = r * 2
            return r

    one = torch.ones(2)
    with Tag("outer"), Tag("inner"):
        depth = len(_get_current_dispatch_mode_stack())
        y = torch.add(one, 1)
    out["nested"] = [depth, log, y.tolist(), _get_current_dispatch_mode() is None]
    # function modes see a call before dispatch modes, whichever was entered first
    both = []

    class Fn(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            both.append("F:" + func.__name__)
            return func(*args, **(kwargs or {}))

    class Dp(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            both.append("D:" + str(func))
            return func(*args, **(kwargs or {}))

    with Dp(), Fn():
        torch.relu(one)
    with Fn(), Dp():
        torch.relu(one)
    out["function_then_dispatch"] = both
    op = torch.ops.aten.add.Tensor
    out["overload"] = [op.name(), str(op._schema), str(op.overloadpacket)]

    class Refuses(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return NotImplemented

    class Bare(TorchDispatchMode):
        pass

    errors = []
    for mode in (Refuses(), Bare()):
        try:
            with mode:
                torch.add(one, one)
        except Exception as e:
            errors.append([type(e).__name__, str(e).split(";")[0]])
    out["errors"] = errors

    # FlopCounterMode: forward and backward, by module
    def counts(fc):
        return {k: {str(o): v for o, v in d.items()} for k, d in fc.get_flop_counts().items()}

    mlp = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    with FlopCounterMode(display=False) as fc:
        mlp(torch.randn(5, 8)).sum().backward()
    out["mlp"] = [fc.get_total_flops(), counts(fc)]
    out["mlp_table_numbers"] = [line.split()[-2:] for line in fc.get_table().splitlines()[2:]]
    if sys.argv[1] == "ember":  # torch's display needs the tabulate package
        import contextlib, io

        shown = io.StringIO()
        with contextlib.redirect_stdout(shown), FlopCounterMode(display=True):
            torch.nn.Linear(4, 3)(torch.ones(2, 4))
        out["table"] = shown.getvalue().splitlines()
    convs = [torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ConvTranspose2d(3, 2, 3, stride=2),
             torch.nn.Conv1d(4, 6, 3, groups=2, bias=False)]
    shapes = [(2, 3, 8, 8), (1, 3, 4, 4), (2, 4, 9)]
    for conv, shape in zip(convs, shapes):
        with FlopCounterMode(display=False) as fc:
            conv(torch.randn(*shape, requires_grad=True)).sum().backward()
        out[type(conv).__name__] = counts(fc)
    with FlopCounterMode(display=False) as fc:
        b1 = torch.randn(2, 3, 4, requires_grad=True)
        b2 = torch.randn(2, 4, 5, requires_grad=True)
        torch.baddbmm(torch.randn(2, 3, 5), b1, b2, alpha=2).sum().backward()
        (torch.bmm(b1, b2) + b1 @ torch.randn(4, 5)).sum().backward()
        F.linear(torch.randn(2, 5, 4), torch.randn(3, 4), torch.randn(3))
        q = torch.randn(1, 2, 3, 4)
        F.scaled_dot_product_attention(q, q, q)
    out["matmuls"] = counts(fc)
    with FlopCounterMode(display=False) as fc:
        e1 = torch.randn(2, 3, 4, 5, requires_grad=True)
        e2 = torch.randn(2, 3, 6, 5, requires_grad=True)
        torch.einsum("bhqd,bhkd->bhqk", e1, e2).sum().backward()
        torch.einsum("i,j->ij", torch.ones(3), torch.ones(4))  # no sum: a mul, not counted
        xt = torch.randn(5, 2, 4).transpose(0, 1)  # rows that do not fold without a copy
        torch.matmul(xt, torch.randn(4, 3, requires_grad=True)).sum().backward()
    out["einsum_and_folds"] = counts(fc)
    mha, xm = torch.nn.MultiheadAttention(16, 2), torch.randn(5, 3, 16)
    with FlopCounterMode(display=False) as fc:
        mha(xm, xm, xm)  # need_weights: the attention as two bmm
    out["mha"] = counts(fc)["Global"]

    # the gradients computed under a mode (the wrapped backward) are the plain ones
    def grads(mode):
        torch.manual_seed(1)
        a, b = torch.randn(2, 4, 5, requires_grad=True), torch.randn(2, 6, 5, requires_grad=True)
        w, bias = torch.randn(5, 3, requires_grad=True), torch.randn(3, requires_grad=True)
        ct = torch.nn.ConvTranspose1d(2, 4, 3, stride=2, groups=2)
        xc = torch.randn(1, 2, 6, requires_grad=True)
        with mode:
            loss = torch.einsum("bqd,bkd->bqk", a, b).sin().sum()
            loss = loss + torch.addmm(bias, a[0], w, beta=0.5, alpha=2).exp().sum()
            loss = loss + torch.baddbmm(a[:, :, :3], a, b.transpose(1, 2)[:, :, :3]).sum()
            (loss + ct(xc).tanh().sum()).backward()
        return [t.grad for t in (a, b, w, bias, xc, ct.weight, ct.bias)]

    import contextlib
    plain, seen_grads = grads(contextlib.nullcontext()), grads(Log())
    out["same_grads"] = [torch.allclose(p, q, atol=1e-5) for p, q in zip(plain, seen_grads)]

    # ModuleTracker: the running modules, with their paths
    seen = []

    class Probe(torch.nn.Module):
        def forward(self, x):
            seen.append(sorted(tracker.parents))
            return x

    net = torch.nn.Sequential(torch.nn.Sequential(Probe()), Probe())
    with ModuleTracker() as tracker:
        net(torch.ones(1))
    out["tracker"] = [seen, sorted(tracker.parents)]

    # register_torch_dispatch: the rule runs instead of the mode's handler
    @torch.library.custom_op("dmtest::foo", mutates_args={})
    def foo(x: torch.Tensor) -> torch.Tensor:
        return x.clone()

    class MyMode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    @torch.library.register_torch_dispatch("dmtest::foo", MyMode)
    def _(mode, func, types, args, kwargs):
        return args[0] + 1

    with Log() as m:
        plain = foo(one)
    with MyMode():
        ruled = foo(one)
    out["custom_op"] = [m.ops, plain.tolist(), ruled.tolist()]

    def foo_flops(x_shape, out_shape=None, **kwargs):
        return 10 * x_shape[0]

    with FlopCounterMode(display=False, custom_mapping={torch.ops.dmtest.foo: foo_flops}) as fc:
        foo(torch.ones(3))
        foo(torch.ones(4))
    out["custom_mapping"] = counts(fc)
    print(json.dumps(out))
    """
)


def _libs():
    return ["ember"] + (["torch"] if importlib.util.find_spec("torch") else [])


@pytest.fixture(scope="module", params=_libs())
def seen(request):
    proc = subprocess.run(
        [sys.executable, "-c", _PROGRAM, request.param],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return request.param, json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_mode_sees_each_call_as_the_aten_overload_torch_runs(seen):
    lib, out = seen
    assert out["forward_ops"] == [
        "aten.add.Tensor",
        "aten.sin.default",
        "aten.mm.default",
        "aten.mean.default",
        "aten.select.int",
        "aten.view.default",
        "aten.clone.default",
        "aten.t.default",
        "aten.add_.Tensor",
    ], lib
    assert out["overload"] == [
        "aten::add.Tensor",
        "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
        "aten.add",
    ], lib


def test_losses_and_embedding_reach_the_mode_as_torchs_overloads(seen):
    lib, out = seen
    ops, ce, mse, emb = out["nn_ops"]
    assert ops == [
        "aten.arange.start",
        "aten._log_softmax.default",
        "aten.nll_loss_forward.default",
        "aten.cos.default",
        "aten.mse_loss.default",
        "aten.embedding.default",
    ], lib
    assert (ce, mse) == (2.2152, 21.9438), lib
    assert len(emb) == 2 and len(emb[0]) == 5, lib
    assert out["total_weight"] == [2.2152, 4.0], lib  # targets 0 and 2 (weights 1, 3)


def test_backward_matmuls_reach_the_mode_and_gradients_are_right(seen):
    lib, out = seen
    assert out["linear_ops"] == [
        ["aten.addmm.default", [[3], [2, 4], [4, 3]]],
        ["aten.mm.default", [[2, 3], [3, 4]]],  # grad of the input
        ["aten.mm.default", [[3, 2], [2, 4]]],  # grad of the weight, as grad.t() @ input
        ["aten.sum.dim_IntList", [[2, 3]]],  # grad of the bias
    ], lib
    x_grad, rows, bias_grad = out["linear_grads"]
    assert rows == 3 and len(x_grad) == 2 and all(v in (0.0, 2.0) for v in bias_grad), lib


def test_a_training_steps_ops_reach_the_mode_as_torchs_with_the_same_values(seen):
    lib, out = seen
    forward, last, same, backward = out["step"]
    assert forward == [
        "aten.convolution.default",
        "aten.add_.Tensor",  # num_batches_tracked
        "aten.empty.memory_format",
        "aten.native_batch_norm.default",
        "aten.relu.default",
        "aten.empty_like.default",
        "aten.bernoulli_.float",
        "aten.div_.Scalar",
        "aten.mul.Tensor",
        "aten.view.default",
        "aten.t.default",
        "aten.addmm.default",
        "aten.lift_fresh.default",  # the targets, made from Python data
        "aten._log_softmax.default",
        "aten.nll_loss_forward.default",
    ], lib
    assert backward == [
        "aten.ones_like.default",  # the engine's seed
        "aten.nll_loss_backward.default",
        "aten._log_softmax_backward_data.default",
        "aten.mm.default",
        "aten.mm.default",
        "aten.sum.dim_IntList",  # the Linear's bias, after its matmuls
        "aten.threshold_backward.default",
        "aten.native_batch_norm_backward.default",
        "aten.convolution_backward.default",
    ], lib
    assert last == [
        "aten._local_scalar_dense.default",  # loss.item()
        "aten.empty.memory_format",
        "aten.ones.default",
        "aten.add.out",
        "aten.sum.default",
        "aten._local_scalar_dense.default",  # float(...)
    ], lib
    assert same, lib
    assert out["saved_changed"] == (
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation"
    ), lib


def test_modes_nest_innermost_first_and_refusals_raise(seen):
    lib, out = seen
    depth, log, y, none_after = out["nested"]
    assert depth == 2 and none_after, lib
    assert log == [
        ["inner", "aten.add.Tensor", [], "outer"],
        ["outer", "aten.add.Tensor", [], None],
        ["outer", "aten.mul.Tensor", [], None],  # the inner handler's own r * 2
    ], lib
    assert y == [4.0, 4.0], lib  # the inner mode doubled what the outer one computed
    assert out["function_then_dispatch"] == ["F:relu", "D:aten.relu.default"] * 2, lib
    (refused, refusal), bare = out["errors"]
    assert refused == "TypeError" and bare == ["NotImplementedError", ""], lib
    assert refusal.startswith("Multiple dispatch failed for '"), lib
    assert refusal.endswith("ops.aten.add.Tensor'"), lib  # torch._ops. / ember.ops.


def test_flop_counter_counts_forward_and_backward_by_module(seen):
    lib, out = seen
    total, counts = out["mlp"]
    assert total == 4480, lib
    assert counts == {
        "Global": {"aten.addmm": 1920, "aten.mm": 2560},
        "Sequential": {"aten.addmm": 1920, "aten.mm": 2560},
        "Sequential.0": {"aten.addmm": 1280, "aten.mm": 1280},
        "Sequential.2": {"aten.addmm": 640, "aten.mm": 1280},
    }, lib
    assert out["mlp_table_numbers"] == [
        ["4480", "100.00%"],
        ["1920", "42.86%"],
        ["2560", "57.14%"],
        ["2560", "57.14%"],
        ["1280", "28.57%"],
        ["1280", "28.57%"],
        ["1920", "42.86%"],
        ["640", "14.29%"],
        ["1280", "28.57%"],
    ], lib
    conv = {"aten.convolution": 27648, "aten.convolution_backward": 55296}
    assert out["Conv2d"] == {"Global": conv, "Conv2d": conv}, lib
    conv_t = {"aten.convolution": 1728, "aten.convolution_backward": 3456}
    assert out["ConvTranspose2d"] == {"Global": conv_t, "ConvTranspose2d": conv_t}, lib
    grouped = {"aten.convolution": 1008, "aten.convolution_backward": 3024}
    assert out["Conv1d"] == {"Global": grouped, "Conv1d": grouped}, lib
    # baddbmm 240 + its backward's bmms 480; bmm 240 + 480 in backward; the folded 3-D @ 2-D
    # matmul 240 + 240 (the input's gradient only); the 3-D Linear's addmm 240; attention on
    # the CPU is not counted
    assert out["matmuls"] == {
        "Global": {
            "aten.baddbmm": 240,
            "aten.bmm": 1200,
            "aten.mm": 480,
            "aten.addmm": 240,
        }
    }, lib


def test_einsum_and_folded_matmuls_count_torchs_flops_and_keep_gradients(seen):
    lib, out = seen
    # einsum: one bmm (2·6·4·6·5) and its two in backward; the unfoldable rows times a matrix
    # that requires grad: one mm (10·4·3·2) and the matrix's gradient
    assert out["einsum_and_folds"] == {"Global": {"aten.bmm": 4320, "aten.mm": 480}}, lib
    assert out["same_grads"] == [True] * 7, lib


def test_multihead_attention_counts_its_projections_and_attention_bmms(seen):
    lib, out = seen
    # in_proj 5·3 rows × 16 → 48 and out_proj 16 → 16 (addmm); scores and weighted values as
    # two bmm over 3·2 heads of 5×8 by 8×5 and 5×5 by 5×8
    assert out["mha"] == {"aten.addmm": 30720, "aten.bmm": 4800}, lib


def test_module_tracker_names_the_running_modules(seen):
    lib, out = seen
    inner, outer = (
        ["Global", "Sequential", "Sequential.0", "Sequential.0.0"],
        [
            "Global",
            "Sequential",
            "Sequential.1",
        ],
    )
    assert out["tracker"] == [[inner, outer], ["Global"]], lib


def test_register_torch_dispatch_rule_replaces_the_modes_handler(seen):
    lib, out = seen
    ops, plain, ruled = out["custom_op"]
    assert ops == ["dmtest.foo.default"], lib
    assert plain == [1.0, 1.0] and ruled == [2.0, 2.0], lib
    assert out["custom_mapping"] == {"Global": {"dmtest.foo": 70}}, lib


def test_flop_counter_table_prints_torch_layout(seen):
    lib, out = seen
    if lib != "ember":
        pytest.skip("torch's table needs the tabulate package")
    # tabulate's "simple" layout with the hierarchy's indentation kept (PRESERVE_WHITESPACE)
    assert out["table"] == [
        "Module           FLOP    % Total",
        "-------------  ------  ---------",
        "Linear             48    100.00%",
        " - aten.addmm      48    100.00%",
    ]


def test_aten_overload_tags_are_torchs():
    import ember

    aten = ember.ops.aten
    Tag = ember.Tag
    assert aten.mm.default.tags == [Tag.core, Tag.pt2_compliant_tag]
    assert aten.add_.Tensor.tags == [Tag.inplace, Tag.pointwise, Tag.pt2_compliant_tag]
    assert aten.add.out.tags == [Tag.out, Tag.pointwise, Tag.pt2_compliant_tag]
    assert aten.transpose.int.tags == [Tag.pt2_compliant_tag]
    assert Tag.pointwise in aten.sin.default.tags
    assert aten.convolution_backward.ember.tags == []  # ember's own overload: none
    torch = pytest.importorskip("torch")
    checked = 0
    for name in dir(aten):
        packet = getattr(aten, name, None)
        theirs = getattr(torch.ops.aten, name, None)
        if theirs is None or not hasattr(packet, "overloads"):
            continue
        for overload in packet.overloads():
            their = getattr(theirs, overload, None)
            if their is None:
                continue
            mine = [t.name for t in getattr(packet, overload).tags]
            assert mine == [t.name for t in their.tags], f"{name}.{overload}"
            checked += 1
    assert checked > 400
