"""parameters_to_vector and vector_to_parameters."""

from ..._C import Tensor, cat

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """parameters_to_vector(parameters)

    Flattens and concatenates the parameters into one vector."""
    return cat(
        [param.view(-1) if param.is_contiguous() else param.reshape(-1) for param in parameters]
    )


def vector_to_parameters(vec, parameters):
    """vector_to_parameters(vec, parameters)

    Copies consecutive slices of `vec` into the parameters' data."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    for param in parameters:
        num_param = param.numel()
        param.data = vec[pointer : pointer + num_param].view_as(param).data
        pointer += num_param
