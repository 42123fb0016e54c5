"""Findings the fuzzer reports but does not count as new: behaviour ember does not have yet, or
where it knowingly differs from PyTorch. Keyed by (category, function), each with its reason.

crash and hang are never listed: they always fail. unnamed_message is tracked as a whole (see
UNNAMED_MESSAGES) rather than per function, and the reference's own crashes and hangs are never
ember's.
"""

# ember computes where PyTorch's CPU kernel has no implementation for the dtype (bool/integer
# pooling, losses, norms ...): a superset of PyTorch, not a wrong answer
MORE_DTYPES = "ember accepts a dtype PyTorch's CPU kernel does not implement"
# PyTorch's Python-level nn.functional reaches `input.dim()` on a str/number and raises
# AttributeError; ember's bindings reject the argument type first, with TypeError (the class
# for a wrong argument type), naming the function
TYPE_NOT_ATTRIBUTE = (
    "TypeError for a non-tensor input where PyTorch's Python code raises AttributeError"
)
# PyTorch's exception class here comes from an implementation detail (an internal select or
# dim-wrap that fails first, a Python-level check that runs before the C++ one)
TORCH_ACCIDENT = (
    "PyTorch's class comes from whichever internal check fails first; "
    "ember checks the argument itself"
)
LENIENT_ARGS = (
    "ember accepts an argument form PyTorch's parser rejects (bool for int, int for tuple, no size)"
)
# an empty shape such as [2**63 - 1, 0]: ember's overflow check counts zero-size dims as 1 (as
# PyTorch's stride check does), while PyTorch's creation functions let the empty tensor through
EMPTY_HUGE = "an empty shape with a dim near INT64_MAX: ember rejects it, PyTorch builds it"
NOT_YET = "not implemented in ember yet"
EMPTY_EDGE = "an empty input PyTorch accepts or rejects inconsistently (N=0 batch, empty class dim)"
# loss(float32 input, float16 target): PyTorch's result takes the target's dtype in some losses
MIXED_LOSS = "mixed float16/float32 loss operands: PyTorch's result dtype follows the target"

KNOWN = {
    **{
        ("torch_raises", fn): MORE_DTYPES
        for fn in (
            "F.adaptive_avg_pool1d",
            "F.adaptive_avg_pool2d",
            "F.adaptive_max_pool1d",
            "F.adaptive_max_pool2d",
            "F.avg_pool1d",
            "F.avg_pool2d",
            "F.max_pool1d",
            "F.max_pool2d",
            "F.lp_pool1d",
            "F.lp_pool2d",
            "F.binary_cross_entropy",
            "F.binary_cross_entropy_with_logits",
            "F.glu",
            "F.interpolate",
            "F.kl_div",
            "F.nll_loss",
            "F.cross_entropy",
            "F.prelu",
            "F.pad",
            "F.softmax",
            "F.log_softmax",
            "op:addcmul",
            "F.smooth_l1_loss",
            "F.huber_loss",
            "F.mse_loss",
            "F.l1_loss",
            "F.soft_margin_loss",
            "F.fold",
            "F.unfold",
            "F.conv1d",
            "F.conv2d",
            "F.conv_transpose1d",
            "F.conv_transpose2d",
            "F.embedding",
            "F.batch_norm",
            "F.instance_norm",
            "F.layer_norm",
            "F.group_norm",
            "F.linear",
            "F.one_hot",
            "F.pairwise_distance",
            "F.cosine_similarity",
            "F.normalize",
        )
    },
    **{
        ("exc_class", fn): TYPE_NOT_ATTRIBUTE
        for fn in (
            "F.sigmoid",
            "F.tanh",
            "F.softmax",
            "F.softmin",
            "F.log_softmax",
            "F.softsign",
            "F.tanhshrink",
            "F.normalize",
            "F.logsigmoid",
            "F.glu",
            "F.l1_loss",
            "F.mse_loss",
            "F.relu6",
            "F.hardswish",
            "F.hardsigmoid",
            "F.silu",
            "F.mish",
            "F.gelu",
            "F.elu",
            "F.selu",
            "F.celu",
            "F.leaky_relu",
            "F.softplus",
            "F.softshrink",
            "F.hardshrink",
            "F.hardtanh",
            "F.threshold",
            "F.dropout",
            "F.relu",
            "op:norm",
        )
    },
    **{
        ("exc_class", fn): TORCH_ACCIDENT
        for fn in (
            "F.adaptive_avg_pool2d",
            "F.adaptive_max_pool2d",
            "F.avg_pool2d",
            "F.lp_pool2d",
            "F.lp_pool1d",
            "F.max_pool2d",
            "F.batch_norm",
            "F.binary_cross_entropy",
            "F.cross_entropy",
            "F.nll_loss",
            "F.embedding",
            "F.group_norm",
            "F.huber_loss",
            "F.smooth_l1_loss",
            "F.instance_norm",
            "F.layer_norm",
            "F.interpolate",
            "F.pad",
            "F.pixel_shuffle",
            "F.relu",
            "F.hardtanh",
            "F.conv_transpose2d",
            "F.conv_transpose1d",
            "F.conv1d",
            "F.conv2d",
            "F.unfold",
            "F.fold",
            "Tensor.__getitem__",
            "setitem",
            "Tensor.narrow",
            "op:histc",
            "op:tile",
            "scatter",
            "scatter_add",
            "tensor",
            "F.kl_div",
            "F.multi_margin_loss",
            "op:relu",
            "F.adaptive_avg_pool1d",
            "F.max_pool1d",
            "Tensor.index_fill",
            "index_select",
            "op:add",
            "op:argmax",
            "op:argmin",
            "op:bincount",
            "op:einsum",
            "op:repeat_interleave",
            "op:var",
            "op:std",
            "F.soft_margin_loss",
            "F.mse_loss",
            "F.l1_loss",
            "F.binary_cross_entropy_with_logits",
            "F.prelu",
            "F.one_hot",
            "F.linear",
        )
    },
    **{
        ("torch_raises", fn): LENIENT_ARGS
        for fn in (
            "empty",
            "ones",
            "zeros",
            "rand",
            "randn",
            "op:cat",
            "op:stack",
            "op:logical_xor",
            "op:logical_and",
            "op:logical_or",
            "op:max",
            "op:min",
            "op:movedim",
            "op:unbind",
            "setitem",
            "F.hardtanh",
            "full",
            "op:tile",
            "op:repeat",
            "op:copysign",
            "op:fmod",
            "op:hypot",
            "op:ne",
            "op:eq",
            "op:pow_tensor_scalar",
            "op:flip",
            "op:prod",
            "op:sum",
            "op:argmin",
            "op:argmax",
            "F.dropout",
        )
    },
    **{
        ("wrong_dtype", fn): MIXED_LOSS
        for fn in (
            "F.binary_cross_entropy_with_logits",
            "F.huber_loss",
            "F.soft_margin_loss",
            "F.smooth_l1_loss",
            "F.mse_loss",
            "F.l1_loss",
        )
    },
    # a negative float converted to uint8 is undefined in C++; PyTorch gives 127 for -1 here
    (
        "wrong_values",
        "linspace",
    ): "negative values converted to uint8: undefined, PyTorch's result is an artefact",
    # bfloat16 with two elements per channel: not yet investigated (float32 agrees)
    (
        "wrong_values",
        "F.instance_norm",
    ): "bfloat16 instance_norm of 2-element planes differs; not investigated yet",
    **{
        ("ember_raises", fn): EMPTY_HUGE
        for fn in (
            "full",
            "zeros",
            "ones",
            "empty",
            "rand",
            "randn",
            "randint",
            "Tensor.expand",
            "F.one_hot",
            "Tensor.view",
            "Tensor.reshape",
        )
    },
    ("ember_raises", "take_along_dim"): NOT_YET + ": torch.take_along_dim",
    # arange(1, 2**62, 0.5): PyTorch's length check overflows its SymInt conversion; ember counts
    # the 2**63 elements and refuses the allocation (the fractional-step int8/16/32 values,
    # earlier listed here, now agree)
    ("torch_raises", "arange"): "a length past INT64_MAX: PyTorch's SymInt check raises first",
    ("torch_raises", "linspace"): MORE_DTYPES,
    ("torch_raises", "op:median"): MORE_DTYPES,
    ("exc_class", "op:flip"): LENIENT_ARGS,
    ("exc_class", "op:broadcast_to"): LENIENT_ARGS,
    ("exc_class", "take_along_dim"): NOT_YET + ": torch.take_along_dim",
    ("ember_raises", "F.softmax"): NOT_YET
    + ": softmax(dtype=bool/int) (PyTorch runs it on empty inputs only)",
    ("ember_raises", "F.log_softmax"): NOT_YET + ": log_softmax(dtype=bool/int) on empty inputs",
    **{
        ("ember_raises", fn): EMPTY_EDGE
        for fn in (
            "F.adaptive_avg_pool1d",
            "F.interpolate",  # mode='area' is adaptive_avg_pool1d
            "F.adaptive_avg_pool2d",
            "F.batch_norm",
            "F.cross_entropy",
            "F.pad",
            "F.instance_norm",
            "F.max_pool1d",
            "F.max_pool2d",
            "F.avg_pool1d",
            "F.avg_pool2d",
            "F.adaptive_max_pool1d",
            "F.adaptive_max_pool2d",
            "Tensor.__getitem__",
            "setitem",
            "Tensor.index_fill",
            "op:mm",
            "op:matmul",
            "op:bmm",
            "op:baddbmm",
        )
    },
    ("ember_raises", "F.softmin"): NOT_YET
    + ": softmin of an integer input (PyTorch runs it on empty inputs only)",
    **{
        ("ember_raises", fn): MORE_DTYPES.replace("accepts", "rejects") + " only on empty inputs"
        for fn in ("F.conv1d", "F.conv2d", "F.conv_transpose1d", "F.conv_transpose2d")
    },
    # PyTorch's block count wraps for a padding near 2**62 and it returns a wrong-sized result
    **{
        ("ember_raises", fn): "sizes near INT64_MAX: ember rejects what wraps in PyTorch"
        for fn in ("F.fold", "F.unfold")
    },
}

# Most of ember's messages copy PyTorch's wording, which often does not name the op (shared
# checks: dim wrapping, shape/size checks, nn.functional argument checks). Putting the op's name
# first (CONTRIBUTING.md, "Error messages") touches ~60 message sites (the dim-wrap helper alone
# has 50 callers that would pass the op's name): a follow-up, reported by count meanwhile.
UNNAMED_MESSAGES = "messages in PyTorch's wording that do not name the op"
# torch_crash / torch_hang: the reference failed after ember's call had returned (torch loops
# over the whole of a huge pooling kernel): nothing to fix in ember
REFERENCE_ONLY = {"unnamed_message": UNNAMED_MESSAGES, "torch_crash": "", "torch_hang": ""}


def is_known(category: str, fn: str) -> bool:
    return category in REFERENCE_ONLY or (category, fn) in KNOWN
