"""Updates of parameters whose gradient is sparse (Embedding(sparse=True)): SGD's and Adagrad's,
with torch's arithmetic, touching only the rows the gradient has."""

import math

from ..autograd.grad_mode import no_grad
from ..sparse import _ops as S
from ..sparse import _tensor as st
from .optimizer import _to_scalar


def sgd(opt, group, p, grad):
    """SGD's step for one parameter with a sparse gradient (momentum buffers stay sparse)."""
    if _to_scalar(group["weight_decay"]) != 0:
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    momentum = _to_scalar(group["momentum"])
    with no_grad():
        if group["maximize"]:
            grad = S.neg(grad)
        if momentum != 0:
            state = opt.state[p]
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = grad.clone().detach()
            else:
                buf = S.add(S.mul(buf, momentum), grad, alpha=1 - _to_scalar(group["dampening"]))
            state["momentum_buffer"] = buf
            grad = S.add(grad, buf, alpha=momentum) if group["nesterov"] else buf
        S.dense_add_sparse_(p, grad, -_to_scalar(group["lr"]))


def adagrad(opt, group, p, grad):
    """Adagrad's step for one parameter with a sparse gradient: the sum of squares and the
    parameter change only at the gradient's entries."""
    if _to_scalar(group["weight_decay"]) != 0:
        raise RuntimeError("weight_decay option is not compatible with sparse gradients")
    state = opt.state[p]
    with no_grad():
        state["step"].add_(1)
        step = float(state["step"])
        lr, lr_decay, eps = (_to_scalar(group[k]) for k in ("lr", "lr_decay", "eps"))
        clr = lr / (1 + (step - 1) * lr_decay)
        if group["maximize"]:
            grad = S.neg(grad)
        grad = st.coalesce(grad)
        vals = st._values_of(grad)
        S.dense_add_sparse_(state["sum"], st._like(grad, vals * vals))
        std = st._values_of(S.sparse_mask(state["sum"], grad)).sqrt() + eps
        S.dense_add_sparse_(p, st._like(grad, vals / std), -clr)


def adam(opt, group, p, grad):
    """SparseAdam's step: the moments and the parameter change only at the gradient's entries,
    with bias corrections of the step count."""
    state = opt.state[p]
    beta1, beta2 = group["betas"]
    with no_grad():
        if not state:
            state["step"] = 0
            state["exp_avg"] = p.new_zeros(p.shape)
            state["exp_avg_sq"] = p.new_zeros(p.shape)
        state["step"] += 1
        step = state["step"]
        if group["maximize"]:
            grad = S.neg(grad)
        grad = st.coalesce(grad)
        vals = st._values_of(grad)
        m_old = st._values_of(S.sparse_mask(state["exp_avg"], grad))
        m_delta = (vals - m_old) * (1 - beta1)
        S.dense_add_sparse_(state["exp_avg"], st._like(grad, m_delta))
        v_old = st._values_of(S.sparse_mask(state["exp_avg_sq"], grad))
        v_delta = (vals * vals - v_old) * (1 - beta2)
        S.dense_add_sparse_(state["exp_avg_sq"], st._like(grad, v_delta))
        m = m_delta + m_old
        denom = (v_delta + v_old).sqrt() + group["eps"]
        step_size = group["lr"] * math.sqrt(1 - beta2**step) / (1 - beta1**step)
        S.dense_add_sparse_(p, st._like(grad, m / denom), -step_size)
