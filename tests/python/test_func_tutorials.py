"""The code samples of torch.func's tutorials (Jacobians/Hessians/hvp/vhp, per-sample gradients,
model ensembling) run under ember and torch on the same data and weights; every quantity they
compute is compared, and their own asserts run on both. Sizes are the tutorials' except where
noted (a smaller batch or width keeps the suite fast; the computation is the same)."""

import copy
import functools
import importlib
from functools import partial

import numpy as np
import pytest

import ember


def _data(M, shape, seed):
    return M.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=M.float32)


def _load(model, reference):
    """model gets the reference (torch) model's weights."""
    ember_state = {k: ember.tensor(v.detach().numpy()) for k, v in reference.state_dict().items()}
    model.load_state_dict(ember_state)
    return model


def _timer(M):
    return importlib.import_module(M.__name__ + ".utils.benchmark").Timer


def _compare(ours, theirs, rtol=1e-4, atol=1e-5):
    assert ours.keys() == theirs.keys()
    for name in ours:
        a, b = ours[name], theirs[name]
        if isinstance(a, dict):
            _compare(a, b, rtol, atol)
            continue
        if isinstance(a, (tuple, list)):
            for x, y in zip(a, b):
                _compare({name: x}, {name: y}, rtol, atol)
            continue
        assert tuple(a.shape) == tuple(b.shape), name
        np.testing.assert_allclose(
            a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol, err_msg=name
        )


# ----------------------------------------------------------------------------- Jacobians/Hessians


def jacobians_hessians(M):
    F = M.nn.functional
    vmap, vjp, jvp, grad = M.func.vmap, M.func.vjp, M.func.jvp, M.func.grad
    jacrev, jacfwd, hessian = M.func.jacrev, M.func.jacfwd, M.func.hessian
    out = {}

    def predict(weight, bias, x):
        return F.linear(x, weight, bias).tanh()

    D = 16
    weight, bias, x = _data(M, (D, D), 0), _data(M, D, 1), _data(M, D, 2)
    unit_vectors = M.eye(D)

    def compute_jac(xp):
        rows = [M.autograd.grad(predict(weight, bias, xp), xp, vec)[0] for vec in unit_vectors]
        return M.stack(rows)

    xp = x.clone().requires_grad_()
    jacobian = compute_jac(xp)
    _, vjp_fn = vjp(partial(predict, weight, bias), x)
    (ft_jacobian,) = vmap(vjp_fn)(unit_vectors)
    assert M.allclose(ft_jacobian, jacobian)
    ft_jacobian = jacrev(predict, argnums=2)(weight, bias, x)
    assert M.allclose(ft_jacobian, jacobian)
    out["jacobian"] = jacobian

    Timer = _timer(M)
    scope = {"compute_jac": compute_jac, "xp": xp, "jacrev": jacrev, "predict": predict}
    scope.update(weight=weight, bias=bias, x=x)
    for stmt in ("compute_jac(xp)", "jacrev(predict, argnums=2)(weight, bias, x)"):
        measurement = Timer(stmt=stmt, globals=scope).timeit(2)
        assert len(measurement.times) == 1 and measurement.times[0] > 0

    out["jac_weight_bias"] = jacrev(predict, argnums=(0, 1))(weight, bias, x)

    for din, dout in ((32, 2048), (2048, 32)):
        weight, bias, x = _data(M, (dout, din), 3), _data(M, dout, 4), _data(M, din, 5)
        fwd = jacfwd(predict, argnums=2)(weight, bias, x)
        rev = jacrev(predict, argnums=2)(weight, bias, x)
        out[f"jacfwd_{din}_{dout}"], out[f"jacrev_{din}_{dout}"] = fwd, rev

    din, dout = 512, 32
    weight, bias, x = _data(M, (dout, din), 6), _data(M, dout, 7), _data(M, din, 8)
    hess_api = hessian(predict, argnums=2)(weight, bias, x)
    hess_fwdfwd = jacfwd(jacfwd(predict, argnums=2), argnums=2)(weight, bias, x)
    assert M.allclose(hess_api, hess_fwdfwd, atol=1e-6)
    # jacrev of jacrev on the first 64 inputs only (Din 512 in the tutorial): ember's vmap over
    # a backward pass runs one pass per row (the session report has the figures)
    x64 = x[:64]
    hess_revrev = jacrev(jacrev(predict, argnums=2), argnums=2)(weight[:, :64], bias, x64)
    out.update(hess_api=hess_api, hess_fwdfwd=hess_fwdfwd, hess_revrev=hess_revrev)

    batch_size, din, dout = 64, 31, 33
    weight, bias, x = _data(M, (dout, din), 9), _data(M, dout, 10), _data(M, (batch_size, din), 11)
    compute_batch_jacobian = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))
    batch_jacobian0 = compute_batch_jacobian(weight, bias, x)

    def predict_with_output_summed(weight, bias, x):
        return predict(weight, bias, x).sum(0)

    batch_jacobian1 = jacrev(predict_with_output_summed, argnums=2)(weight, bias, x).movedim(1, 0)
    assert M.allclose(batch_jacobian0, batch_jacobian1)
    out["batch_jacobian"] = batch_jacobian0
    compute_batch_hessian = vmap(hessian(predict, argnums=2), in_dims=(None, None, 0))
    out["batch_hessian"] = compute_batch_hessian(weight, bias, x)

    def hvp(f, primals, tangents):
        return jvp(grad(f), primals, tangents)[1]

    def f(x):
        return x.sin().sum()

    x, tangent = _data(M, 2048, 12), _data(M, 2048, 13)
    result = hvp(f, (x,), (tangent,))

    def hvp_revrev(f, primals, tangents):
        _, vjp_fn = vjp(grad(f), *primals)
        return vjp_fn(*tangents)

    result_hvp_revrev = hvp_revrev(f, (x,), (tangent,))
    assert M.allclose(result, result_hvp_revrev[0])
    out["hvp"] = result
    return out


def test_jacobians_hessians_tutorial_as_torch(torch):
    _compare(jacobians_hessians(ember), jacobians_hessians(torch))


# ----------------------------------------------------------------------------- per-sample grads


@functools.cache
def _cnn_class(M):
    nn, F = M.nn, M.nn.functional

    class SimpleCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = self.conv1(x)
            x = F.relu(x)
            x = self.conv2(x)
            x = F.relu(x)
            x = F.max_pool2d(x, 2)
            x = M.flatten(x, 1)
            x = self.fc1(x)
            x = F.relu(x)
            x = self.fc2(x)
            return F.log_softmax(x, dim=1)

    return SimpleCNN


def _simple_cnn(M):
    return _cnn_class(M)()


def per_sample_grads(M, reference_model):
    F = M.nn.functional
    functional_call, vmap, grad = M.func.functional_call, M.func.vmap, M.func.grad
    batch_size = 8  # 64 in the tutorial
    data = _data(M, (batch_size, 1, 28, 28), 20)
    targets = M.tensor(np.random.default_rng(21).integers(0, 10, batch_size))
    model = _load(_simple_cnn(M), reference_model) if M is ember else reference_model

    def loss_fn(predictions, targets):
        return F.nll_loss(predictions, targets)

    predictions = model(data)
    loss = loss_fn(predictions, targets)
    loss.backward()
    out = {"loss": loss, "batch_grads": [p.grad for p in model.parameters()]}

    def compute_grad(sample, target):
        sample = sample.unsqueeze(0)
        target = target.unsqueeze(0)
        prediction = model(sample)
        loss = loss_fn(prediction, target)
        return M.autograd.grad(loss, list(model.parameters()))

    def compute_sample_grads(data, targets):
        sample_grads = [compute_grad(data[i], targets[i]) for i in range(batch_size)]
        sample_grads = zip(*sample_grads)
        return [M.stack(shards) for shards in sample_grads]

    per_sample = compute_sample_grads(data, targets)
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        batch = sample.unsqueeze(0)
        targets = target.unsqueeze(0)
        predictions = functional_call(model, (params, buffers), (batch,))
        return loss_fn(predictions, targets)

    ft_compute_sample_grad = vmap(grad(compute_loss), in_dims=(None, None, 0, 0))
    ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)
    for per_sample_grad, ft_per_sample_grad in zip(per_sample, ft_per_sample_grads.values()):
        assert M.allclose(per_sample_grad, ft_per_sample_grad, atol=3e-3, rtol=1e-5)
    out["per_sample"] = per_sample
    out["ft_per_sample"] = ft_per_sample_grads
    return out


def test_per_sample_grads_tutorial_as_torch(torch):
    torch.manual_seed(0)
    reference = _simple_cnn(torch)
    _compare(per_sample_grads(ember, reference), per_sample_grads(torch, reference))


# ----------------------------------------------------------------------------- model ensembling


@functools.cache
def _mlp_class(M):
    nn, F = M.nn, M.nn.functional

    class SimpleMLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(784, 128)
            self.fc2 = nn.Linear(128, 128)
            self.fc3 = nn.Linear(128, 10)

        def forward(self, x):
            x = x.flatten(1)
            x = self.fc1(x)
            x = F.relu(x)
            x = self.fc2(x)
            x = F.relu(x)
            return self.fc3(x)

    return SimpleMLP


def _simple_mlp(M):
    return _mlp_class(M)()


def ensembling(M, references):
    num_models = len(references)
    data = _data(M, (num_models, 16, 1, 28, 28), 30)  # (100, 64, ...) in the tutorial
    models = [_simple_mlp(M) for _ in range(num_models)]
    if M is ember:
        for m, r in zip(models, references):
            _load(m, r)
    else:
        models = references
    minibatches = data[:num_models]
    predictions_diff_minibatch_loop = [model(mb) for model, mb in zip(models, minibatches)]
    minibatch = data[0]
    predictions2 = [model(minibatch) for model in models]

    params, buffers = M.func.stack_module_state(models)
    base_model = copy.deepcopy(models[0]).to("meta")

    def fmodel(params, buffers, x):
        return M.func.functional_call(base_model, (params, buffers), (x,))

    assert [p.size(0) for p in params.values()] == [num_models] * 6
    predictions1_vmap = M.vmap(fmodel)(params, buffers, minibatches)
    assert M.allclose(
        predictions1_vmap, M.stack(predictions_diff_minibatch_loop), atol=1e-3, rtol=1e-5
    )
    predictions2_vmap = M.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
    assert M.allclose(predictions2_vmap, M.stack(predictions2), atol=1e-3, rtol=1e-5)
    Timer = _timer(M)
    scope = {"vmap": M.vmap, "fmodel": fmodel, "params": params, "buffers": buffers}
    scope.update(models=models, minibatches=minibatches)
    for stmt in (
        "[model(minibatch) for model, minibatch in zip(models, minibatches)]",
        "vmap(fmodel)(params, buffers, minibatches)",
    ):
        assert Timer(stmt=stmt, globals=scope).timeit(2).times[0] > 0
    return {"vmap_diff": predictions1_vmap, "vmap_same": predictions2_vmap}


def test_ensembling_tutorial_as_torch(torch):
    torch.manual_seed(0)
    references = [_simple_mlp(torch) for _ in range(4)]  # 10 in the tutorial
    _compare(ensembling(ember, references), ensembling(torch, references))


@pytest.mark.parametrize("din", [64])
def test_hessian_of_the_tutorials_predict_equals_reverse_over_reverse(din):
    # without torch: the three Hessians of the tutorial agree in float64
    F = ember.nn.functional
    w = _data(ember, (8, din), 40).double()
    b = _data(ember, 8, 41).double()
    x = _data(ember, din, 42).double()

    def predict(weight, bias, x):
        return F.linear(x, weight, bias).tanh()

    fn = ember.func
    api = fn.hessian(predict, argnums=2)(w, b, x)
    fwdfwd = fn.jacfwd(fn.jacfwd(predict, argnums=2), argnums=2)(w, b, x)
    revrev = fn.jacrev(fn.jacrev(predict, argnums=2), argnums=2)(w, b, x)
    np.testing.assert_allclose(api.numpy(), revrev.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fwdfwd.numpy(), revrev.numpy(), rtol=1e-10, atol=1e-12)
