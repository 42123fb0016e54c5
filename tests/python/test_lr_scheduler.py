"""ember.optim.lr_scheduler: lr sequences vs torch and vs closed-form formulas."""

import math
import warnings

import pytest

import ember
from ember.optim import lr_scheduler as ls

STEPS = 40


def make_opt(fw, cls="SGD", lrs=(0.1, 0.05), **kw):
    params = [fw.zeros(3, requires_grad=True) for _ in lrs]
    groups = [{"params": [p], "lr": lr} for p, lr in zip(params, lrs)]
    return getattr(fw.optim, cls)(groups, **kw)


def run(fw, make_sched, steps=STEPS, cls="SGD", opt_kw=None, metrics=None):
    """lrs (and momentum/beta1) of every group after construction and after each step."""
    opt = make_opt(fw, cls, **(opt_kw or {}))
    sched = make_sched(fw.optim.lr_scheduler, opt)
    out = []
    for i in range(steps + 1):
        mom = [g.get("momentum", g.get("betas", (None,))[0]) for g in opt.param_groups]
        out.append((list(sched.get_last_lr()), [g["lr"] for g in opt.param_groups], mom))
        if i == steps:
            break
        opt.step()
        if metrics is None:
            sched.step()
        else:
            sched.step(metrics[i])
    return out


def assert_same(a, b):
    assert len(a) == len(b)
    for (la, ga, ma), (lb, gb, mb) in zip(a, b):
        assert la == pytest.approx(lb, rel=1e-12, abs=1e-15)
        assert ga == pytest.approx(gb, rel=1e-12, abs=1e-15)
        assert [m for m in ma] == pytest.approx([m for m in mb], rel=1e-12, abs=1e-15)


PLATEAU = [1.0, 0.9, 0.95, 0.95, 0.95, 0.8, 0.85, 0.85, 0.85, 0.85] * 4

CASES = {
    "step": lambda m, o: m.StepLR(o, step_size=7, gamma=0.5),
    "multistep": lambda m, o: m.MultiStepLR(o, milestones=[3, 10, 10, 25], gamma=0.3),
    "exponential": lambda m, o: m.ExponentialLR(o, gamma=0.93),
    "cosine": lambda m, o: m.CosineAnnealingLR(o, T_max=12, eta_min=0.001),
    "linear": lambda m, o: m.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=9),
    "lambda": lambda m, o: m.LambdaLR(o, lr_lambda=[lambda e: 0.95**e, lambda e: 1 / (e + 1)]),
    "multiplicative": lambda m, o: m.MultiplicativeLR(o, lr_lambda=lambda e: 0.9),
    "constant": lambda m, o: m.ConstantLR(o, factor=0.4, total_iters=6),
    "polynomial": lambda m, o: m.PolynomialLR(o, total_iters=20, power=2.0),
    "warm_restarts": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=2, eta_min=0.01),
    "warm_restarts_1": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=7),
    "onecycle": lambda m, o: m.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=STEPS),
    "onecycle_linear3": lambda m, o: m.OneCycleLR(
        o, max_lr=0.8, epochs=4, steps_per_epoch=10, anneal_strategy="linear", three_phase=True
    ),
    "cyclic": lambda m, o: m.CyclicLR(
        o, base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=4, step_size_down=6
    ),
    "cyclic_triangular2": lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=5, mode="triangular2"),
    "cyclic_exp_range": lambda m, o: m.CyclicLR(
        o, 0.01, 0.1, step_size_up=3, mode="exp_range", gamma=0.97, cycle_momentum=False
    ),
    "sequential": lambda m, o: m.SequentialLR(
        o,
        [
            m.LinearLR(o, start_factor=0.1, total_iters=5),
            m.ExponentialLR(o, gamma=0.9),
            m.CosineAnnealingLR(o, T_max=10),
        ],
        milestones=[5, 20],
    ),
    "chained": lambda m, o: m.ChainedScheduler(
        [
            m.ConstantLR(o, factor=0.5, total_iters=4),
            m.ExponentialLR(o, gamma=0.95),
            m.StepLR(o, 6, 0.5),
        ]
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    torch = pytest.importorskip("torch")
    assert_same(run(ember, CASES[name]), run(torch, CASES[name]))


@pytest.mark.parametrize("name", ["onecycle", "cyclic"])
def test_cycled_adam_betas_match_torch(name):
    torch = pytest.importorskip("torch")
    make = {
        "onecycle": lambda m, o: m.OneCycleLR(o, max_lr=0.01, total_steps=STEPS, pct_start=0.25),
        "cyclic": lambda m, o: m.CyclicLR(o, 0.001, 0.01, step_size_up=7),
    }[name]
    assert_same(run(ember, make, cls="Adam"), run(torch, make, cls="Adam"))


def test_cyclic_hand_formula():
    lrs = [r[0][0] for r in run(ember, CASES["cyclic"])]
    for e, lr in enumerate(lrs):
        x = e % 10
        frac = x / 4 if x <= 4 else 1 - (x - 4) / 6
        assert lr == pytest.approx(0.01 + 0.09 * frac)


@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(mode="max", threshold_mode="abs", threshold=0.01),
        dict(patience=2, cooldown=3, factor=0.5, min_lr=[0.02, 0.001]),
        dict(patience=1, threshold_mode="abs", eps=0.01, min_lr=0.004),
    ],
)
def test_reduce_on_plateau_matches_torch(kw):
    torch = pytest.importorskip("torch")
    make = lambda m, o: m.ReduceLROnPlateau(o, **kw)
    assert_same(run(ember, make, metrics=PLATEAU), run(torch, make, metrics=PLATEAU))


def test_cosine_closed_form_and_epoch_argument_match_torch():
    torch = pytest.importorskip("torch")

    def drive(fw):
        opt = make_opt(fw)
        sched = fw.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for e in [3, 7, 12, 30]:
                sched.step(e)
                out.append(sched.get_last_lr())
        return out

    for a, b in zip(drive(ember), drive(torch)):
        assert a == pytest.approx(b, rel=1e-12)


def test_hand_formulas():
    lrs = [r[0][0] for r in run(ember, CASES["step"])]
    assert lrs == pytest.approx([0.1 * 0.5 ** (e // 7) for e in range(STEPS + 1)])
    lrs = [r[0][0] for r in run(ember, CASES["exponential"])]
    assert lrs == pytest.approx([0.1 * 0.93**e for e in range(STEPS + 1)])
    lrs = [r[0][0] for r in run(ember, CASES["cosine"], steps=12)]
    assert lrs == pytest.approx(
        [0.001 + (0.1 - 0.001) * (1 + math.cos(math.pi * e / 12)) / 2 for e in range(13)]
    )
    lrs = [r[0][1] for r in run(ember, CASES["linear"])]
    assert lrs == pytest.approx([0.05 * (0.2 + 0.7 * min(e, 9) / 9) for e in range(STEPS + 1)])
    lrs = [r[0][0] for r in run(ember, CASES["polynomial"])]
    assert lrs == pytest.approx(
        [0.1 * (1 - min(e, 20) / 20) ** 2 for e in range(STEPS + 1)], abs=1e-15
    )
    lrs = [r[0][0] for r in run(ember, CASES["multistep"])]
    assert lrs == pytest.approx(
        [0.1 * 0.3 ** ((e >= 3) + 2 * (e >= 10) + (e >= 25)) for e in range(STEPS + 1)]
    )
    lrs = [r[0][0] for r in run(ember, CASES["constant"])]
    assert lrs == pytest.approx([0.1 * (0.4 if e < 6 else 1.0) for e in range(STEPS + 1)])
    lrs = [r[0][0] for r in run(ember, CASES["warm_restarts_1"])]
    assert lrs == pytest.approx(
        [(0.1) * (1 + math.cos(math.pi * (e % 7) / 7)) / 2 for e in range(STEPS + 1)]
    )


def test_onecycle_hand_formula_and_momentum():
    out = run(ember, CASES["onecycle"])
    start, top, end = 1.0 / 25, 1.0, 1.0 / 25 / 1e4
    warm = 0.3 * STEPS - 1
    for e, (lrs, _, mom) in enumerate(out):
        if e <= warm:
            pct, a, b, ma, mb = e / warm, start, top, 0.95, 0.85
        else:
            pct, a, b, ma, mb = (e - warm) / (STEPS - 1 - warm), top, end, 0.85, 0.95
        assert lrs[0] == pytest.approx(b + (a - b) / 2 * (math.cos(math.pi * pct) + 1))
        assert mom[0] == pytest.approx(mb + (ma - mb) / 2 * (math.cos(math.pi * pct) + 1))
    opt = make_opt(ember)
    sched = ls.OneCycleLR(opt, max_lr=1.0, total_steps=3)
    for _ in range(3):
        opt.step()
        sched.step()
    with pytest.raises(ValueError, match="Tried to step 4 times"):
        sched.step()


def test_reduce_on_plateau_hand():
    opt = make_opt(ember)
    sched = ls.ReduceLROnPlateau(opt, patience=2, factor=0.5)
    for metric in [1.0, 1.0, 1.0]:
        sched.step(metric)
    assert sched.get_last_lr() == [0.1, 0.05]
    sched.step(1.0)
    assert sched.get_last_lr() == pytest.approx([0.05, 0.025])


def test_initial_lr_base_lrs_and_state_dict_round_trip():
    opt = make_opt(ember)
    sched = ls.StepLR(opt, step_size=3, gamma=0.5)
    assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.05]
    assert sched.base_lrs == [0.1, 0.05] and sched.last_epoch == 0
    for _ in range(4):
        opt.step()
        sched.step()
    state = sched.state_dict()
    assert "optimizer" not in state and state["last_epoch"] == 4
    opt2 = make_opt(ember)
    sched2 = ls.StepLR(opt2, step_size=3, gamma=0.5)
    sched2.load_state_dict(state)
    assert sched2.last_epoch == 4 and sched2.get_last_lr() == sched.get_last_lr()
    with pytest.raises(KeyError, match="initial_lr"):
        ls.StepLR(make_opt(ember), step_size=3, last_epoch=5)


def test_no_warnings_in_normal_use_and_warning_when_out_of_order():
    opt = make_opt(ember)
    sched = ls.CosineAnnealingLR(opt, T_max=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(5):
            opt.step()
            sched.step()
    opt = make_opt(ember)
    sched = ls.ExponentialLR(opt, gamma=0.5)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    with pytest.warns(UserWarning, match="get_last_lr"):
        sched.get_lr()


def test_tensor_lr_is_updated_in_place():
    p = ember.zeros(2, requires_grad=True)
    lr = ember.tensor(0.1)
    opt = ember.optim.SGD([p], lr=lr)
    sched = ls.ExponentialLR(opt, gamma=0.5)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] is lr
    assert lr.item() == pytest.approx(0.05)


def test_errors():
    opt = make_opt(ember)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        ls.StepLR(object(), 3)
    with pytest.raises(ValueError, match="Constant multiplicative factor"):
        ls.ConstantLR(opt, factor=2.0)
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        ls.LinearLR(opt, start_factor=0)
    with pytest.raises(ValueError, match="Factor should be < 1.0."):
        ls.ReduceLROnPlateau(opt, factor=1.5)
    with pytest.raises(ValueError, match="mode foo is unknown!"):
        ls.ReduceLROnPlateau(opt, mode="foo")
    with pytest.raises(ValueError, match="Expected positive integer T_0"):
        ls.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="You must define either total_steps"):
        ls.OneCycleLR(opt, max_lr=1.0)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        ls.LambdaLR(opt, [lambda e: 1.0])
    with pytest.raises(ValueError, match="number of milestone points"):
        ls.SequentialLR(opt, [ls.StepLR(opt, 2)], milestones=[3])
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        ls.ChainedScheduler([ls.ReduceLROnPlateau(opt)])
