"""FloatFunctional, FXFloatFunctional and QFunctional (torch.ao.nn.quantized): add, mul, cat,
add_relu and the scalar forms as modules, so quantization can observe and replace them."""

from .....nn.modules.module import Module
from .. import _ops
from .utils import _ember, _tensor

__all__ = ["FloatFunctional", "FXFloatFunctional", "QFunctional"]


class FloatFunctional(Module):
    """FloatFunctional()

    The float ops add, cat, mul, add_relu, add_scalar and mul_scalar, each result (except the
    scalar forms) passed through `activation_post_process` (an observer after prepare)."""

    def __init__(self):
        super().__init__()
        self.activation_post_process = _ember().nn.Identity()

    def forward(self, x):
        raise RuntimeError(
            "FloatFunctional is not intended to use the 'forward'. Please use the underlying "
            "operation"
        )

    def add(self, x, y):
        """add(x, y) -> Tensor

        x + y, observed."""
        return self.activation_post_process(_ember().add(x, y))

    def add_scalar(self, x, y):
        """add_scalar(x, y) -> Tensor

        x + y for a number y (not observed)."""
        return _ember().add(x, y)

    def mul(self, x, y):
        """mul(x, y) -> Tensor

        x * y, observed."""
        return self.activation_post_process(_ember().mul(x, y))

    def mul_scalar(self, x, y):
        """mul_scalar(x, y) -> Tensor

        x * y for a number y (not observed)."""
        return _ember().mul(x, y)

    def cat(self, x, dim=0):
        """cat(x, dim=0) -> Tensor

        The tensors of x concatenated along dim, observed."""
        return self.activation_post_process(_ember().cat(x, dim=dim))

    def add_relu(self, x, y):
        """add_relu(x, y) -> Tensor

        relu(x + y), observed."""
        e = _ember()
        return self.activation_post_process(e.nn.functional.relu(e.add(x, y)))

    def matmul(self, x, y):
        """matmul(x, y) -> Tensor

        x @ y, observed."""
        return self.activation_post_process(_ember().matmul(x, y))


class FXFloatFunctional(Module):
    """FXFloatFunctional()

    FloatFunctional without its own observer (FX mode observes the graph instead)."""

    def forward(self, x):
        raise RuntimeError(
            "FloatFunctional is not intended to use the 'forward'. Please use the underlying "
            "operation"
        )

    def add(self, x, y):
        """add(x, y) -> Tensor

        x + y."""
        return _ember().add(x, y)

    def add_scalar(self, x, y):
        """add_scalar(x, y) -> Tensor

        x + y for a number y."""
        return _ember().add(x, y)

    def mul(self, x, y):
        """mul(x, y) -> Tensor

        x * y."""
        return _ember().mul(x, y)

    def mul_scalar(self, x, y):
        """mul_scalar(x, y) -> Tensor

        x * y for a number y."""
        return _ember().mul(x, y)

    def cat(self, x, dim=0):
        """cat(x, dim=0) -> Tensor

        The tensors of x concatenated along dim."""
        return _ember().cat(x, dim=dim)

    def add_relu(self, x, y):
        """add_relu(x, y) -> Tensor

        relu(x + y)."""
        e = _ember()
        return e.nn.functional.relu(e.add(x, y))

    def matmul(self, x, y):
        """matmul(x, y) -> Tensor

        x @ y."""
        return _ember().matmul(x, y)


class QFunctional(Module):
    """QFunctional()

    The quantized counterparts of FloatFunctional's ops, requantizing to `scale` and
    `zero_point`."""

    def __init__(self):
        super().__init__()
        self.scale = 1.0
        self.zero_point = 0
        self.activation_post_process = _ember().nn.Identity()

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "scale"] = _tensor(self.scale)
        destination[prefix + "zero_point"] = _tensor(self.zero_point)

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ):
        self.scale = float(state_dict.pop(prefix + "scale"))
        self.zero_point = int(state_dict.pop(prefix + "zero_point"))
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys, error_msgs
        )

    def _get_name(self):
        return "QFunctional"

    def extra_repr(self):
        return f"scale={self.scale}, zero_point={self.zero_point}"

    def forward(self, x):
        raise RuntimeError(
            "Functional is not intended to use the 'forward'. Please use the underlying operation"
        )

    def add(self, x, y):
        """add(x, y) -> Tensor

        Quantized x + y."""
        return self.activation_post_process(_ops.add(x, y, self.scale, self.zero_point))

    def add_scalar(self, x, y):
        """add_scalar(x, y) -> Tensor

        Quantized x + y for a number y."""
        return _ops.add_scalar(x, y)

    def mul(self, x, y):
        """mul(x, y) -> Tensor

        Quantized x * y."""
        return self.activation_post_process(_ops.mul(x, y, self.scale, self.zero_point))

    def mul_scalar(self, x, y):
        """mul_scalar(x, y) -> Tensor

        Quantized x * y for a number y."""
        return _ops.mul_scalar(x, y)

    def cat(self, x, dim=0):
        """cat(x, dim=0) -> Tensor

        Quantized tensors concatenated along dim."""
        return self.activation_post_process(_ops.cat(x, dim, self.scale, self.zero_point))

    def add_relu(self, x, y):
        """add_relu(x, y) -> Tensor

        Quantized relu(x + y)."""
        return self.activation_post_process(_ops.add_relu(x, y, self.scale, self.zero_point))

    def matmul(self, x, y):
        """matmul(x, y) -> Tensor

        Quantized x @ y (through float)."""
        e = _ember()
        r = e.matmul(x.dequantize(), y.dequantize())
        return e.quantize_per_tensor(r, self.scale, self.zero_point, x.dtype)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """from_float(mod, use_precomputed_fake_quant=False) -> QFunctional

        The QFunctional of an observed FloatFunctional."""
        if type(mod).__name__ != "FloatFunctional":
            raise AssertionError(
                "QFunctional.from_float expects an instance of FloatFunctional, "
                f"got {type(mod).__name__}"
            )
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        new_mod = QFunctional()
        new_mod.scale = float(scale)
        new_mod.zero_point = int(zero_point)
        return new_mod
