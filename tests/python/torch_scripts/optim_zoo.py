"""Every optimizer on one small regression problem: Rprop, NAdam, RAdam, ASGD, Adamax, Adagrad,
RMSprop (centered, momentum), SGD (nesterov, dampening), AdamW (amsgrad), maximize, parameter
groups, add_param_group, state_dict round trips, print(optimizer) and LBFGS with strong Wolfe."""

import torch
import torch.nn as nn


def det_init(model, seed=0.0):
    with torch.no_grad():
        for k, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_(
                (torch.sin(torch.arange(n, dtype=torch.float32) * 0.7 + k + seed) * 0.4).view_as(p)
            )


def make_model():
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    det_init(model)
    return model


X = torch.arange(-32.0, 32.0).view(16, 4) / 32  # exact in binary
Y = (X**2).sum(1, keepdim=True) - X[:, :1]


def run(make_opt, steps=12):
    model = make_model()
    opt = make_opt(model)
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(X), Y)
        loss.backward()
        opt.step()
    with torch.no_grad():
        final = nn.functional.mse_loss(model(X), Y).item()
    return final, opt


OPTS = {
    "sgd_nesterov": lambda m: torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9, nesterov=True),
    "sgd_dampening": lambda m: torch.optim.SGD(
        m.parameters(), lr=0.05, momentum=0.5, dampening=0.3, weight_decay=1e-3
    ),
    "adam_amsgrad": lambda m: torch.optim.Adam(m.parameters(), lr=0.02, amsgrad=True),
    "adamw": lambda m: torch.optim.AdamW(m.parameters(), lr=0.02, weight_decay=0.1),
    "nadam": lambda m: torch.optim.NAdam(m.parameters(), lr=0.02),
    "nadam_decoupled": lambda m: torch.optim.NAdam(
        m.parameters(), lr=0.02, weight_decay=0.01, decoupled_weight_decay=True
    ),
    "radam": lambda m: torch.optim.RAdam(m.parameters(), lr=0.02),
    "radam_decoupled": lambda m: torch.optim.RAdam(
        m.parameters(), lr=0.02, weight_decay=0.01, decoupled_weight_decay=True
    ),
    "adamax": lambda m: torch.optim.Adamax(m.parameters(), lr=0.02),
    "adagrad": lambda m: torch.optim.Adagrad(m.parameters(), lr=0.05, lr_decay=0.01),
    "adadelta": lambda m: torch.optim.Adadelta(m.parameters(), lr=1.0, rho=0.8),
    "rmsprop_centered": lambda m: torch.optim.RMSprop(
        m.parameters(), lr=0.01, centered=True, momentum=0.5
    ),
    "rprop": lambda m: torch.optim.Rprop(m.parameters(), lr=0.01, etas=(0.4, 1.3)),
    "asgd": lambda m: torch.optim.ASGD(m.parameters(), lr=0.05, t0=3),
    "adam_maximize": lambda m: torch.optim.Adam(m.parameters(), lr=0.01, maximize=True),
}


def main():
    for name, make in OPTS.items():
        final, opt = run(make)
        state = opt.state_dict()
        keys = sorted(state["state"][0].keys())
        print(f"{name} loss {final:.5f} state_keys {keys}")
    # the ASGD averages
    _, opt = run(OPTS["asgd"])
    st = opt.state[opt.param_groups[0]["params"][0]]
    print(
        f"asgd_eta {float(st['eta']):.6f} mu {float(st['mu']):.5f} "
        f"ax_sum {st['ax'].sum().item():.5f}"
    )

    # parameter groups and add_param_group
    model = make_model()
    opt = torch.optim.Adam(
        [{"params": model[0].parameters()}, {"params": model[2].weight, "lr": 0.001}], lr=0.01
    )
    opt.add_param_group({"params": [model[2].bias], "weight_decay": 0.5})
    print(f"groups {len(opt.param_groups)} lrs {[g['lr'] for g in opt.param_groups]}")
    print(f"wd {[g['weight_decay'] for g in opt.param_groups]}")
    print(opt)
    for _ in range(3):
        opt.zero_grad()
        nn.functional.mse_loss(model(X), Y).backward()
        opt.step()
    sd = opt.state_dict()
    print(f"sd_groups_params {[g['params'] for g in sd['param_groups']]}")
    print(f"sd_step {[float(sd['state'][i]['step']) for i in sorted(sd['state'])]}")
    # round trip into a fresh optimizer continues identically
    model2 = make_model()
    model2.load_state_dict(model.state_dict())
    opt2 = torch.optim.Adam(
        [{"params": model2[0].parameters()}, {"params": model2[2].weight, "lr": 0.001}], lr=0.01
    )
    opt2.add_param_group({"params": [model2[2].bias], "weight_decay": 0.5})
    opt2.load_state_dict(sd)
    for o, m in ((opt, model), (opt2, model2)):
        o.zero_grad()
        nn.functional.mse_loss(m(X), Y).backward()
        o.step()
    same = all(
        torch.allclose(a, b, atol=1e-6) for a, b in zip(model.parameters(), model2.parameters())
    )
    print(f"resume_identical {same}")
    opt.zero_grad(set_to_none=False)
    print(
        f"zero_grad_keep {model[0].weight.grad is not None} "
        f"{model[0].weight.grad.abs().sum().item()}"
    )
    opt.zero_grad()
    print(f"zero_grad_none {model[0].weight.grad is None}")

    # LBFGS with strong Wolfe line search (in float64: its line search amplifies rounding)
    model = make_model().double()
    Xd, Yd = X.double(), Y.double()
    opt = torch.optim.LBFGS(
        model.parameters(), lr=1, max_iter=10, history_size=5, line_search_fn="strong_wolfe"
    )
    evals = []

    def closure():
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(Xd), Yd)
        loss.backward()
        evals.append(loss.item())
        return loss

    for _ in range(3):
        loss = opt.step(closure)
    print(f"lbfgs_loss {loss.item():.5f} final {evals[-1]:.6f} decreased {evals[-1] < evals[0]}")
    print(f"lbfgs_state_keys {sorted(opt.state[opt._params[0]].keys())}")


if __name__ == "__main__":
    main()
