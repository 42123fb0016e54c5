"""torch.__future__: process-wide switches for behaviour torch plans to make the default. Both
decide how nn.Module._apply (.to(), .float(), .double(), ...) converts parameters."""

_overwrite_module_params_on_conversion = False
_swap_module_params_on_conversion = False


def set_overwrite_module_params_on_conversion(value: bool) -> None:
    """With True, converting a module gives each parameter (and its .grad) a new Parameter
    object instead of changing the existing one's .data."""
    global _overwrite_module_params_on_conversion
    _overwrite_module_params_on_conversion = value


def get_overwrite_module_params_on_conversion() -> bool:
    """Whether converting a module makes new Parameter objects (default False)."""
    return _overwrite_module_params_on_conversion


def set_swap_module_params_on_conversion(value: bool) -> None:
    """With True, converting a module swaps each parameter's contents with the converted one
    (utils.swap_tensors), keeping the object and its .grad object."""
    global _swap_module_params_on_conversion
    _swap_module_params_on_conversion = value


def get_swap_module_params_on_conversion() -> bool:
    """Whether converting a module swaps the parameters' contents (default False)."""
    return _swap_module_params_on_conversion
