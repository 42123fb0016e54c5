"""torch.optim.SparseAdam: Adam for sparse gradients (Embedding(sparse=True))."""

from . import _sparse
from .optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """SparseAdam(params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, maximize=False)

    Adam for sparse gradients: the moments and parameters change only at the rows (entries) the
    gradient has, so a step costs the gradient's size, not the parameter's."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize}
        super().__init__(params, defaults)
        sparse_params = []
        complex_params = []
        for gi, group in enumerate(self.param_groups):
            for pi, p in enumerate(group["params"]):
                if getattr(p, "is_sparse", False):
                    sparse_params.append([gi, pi])
                if p.is_complex():
                    complex_params.append([gi, pi])
        if sparse_params:
            raise ValueError(
                f"Sparse params at indices {sparse_params}: SparseAdam requires dense parameter "
                "tensors"
            )
        if complex_params:
            raise ValueError(
                f"Complex params at indices {complex_params}: SparseAdam does not support "
                "complex parameters"
            )

    def step(self, closure=None):
        """step(closure=None) -> loss or None

        One step for every parameter that has a (sparse) gradient."""
        from ..autograd.grad_mode import enable_grad

        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if not g.is_sparse:
                    raise RuntimeError(
                        "SparseAdam does not support dense gradients, please consider Adam instead"
                    )
                _sparse.adam(self, group, p, g)
        return loss
