"""torch's top-level in-place forms (torch.exp_(x) ...) and a few functional forms of methods
(torch.detach, torch.clamp_min, torch.fill): each calls the Tensor method of that name."""

# Top-level in-place forms torch exposes (torch.exp_(x) ...): each is the method of that name.
_TOP_INPLACE = (
    "abs_ acos_ acosh_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ atan_ "
    "atanh_ ceil_ clamp_ clamp_max_ clamp_min_ clip_ cos_ cosh_ deg2rad_ erf_ erfc_ exp2_ exp_ "
    "expm1_ fill_ fix_ floor_ frac_ gcd_ i0_ lcm_ ldexp_ log10_ log1p_ log2_ log_ logit_ "
    "nan_to_num_ neg_ negative_ rad2deg_ reciprocal_ relu_ round_ rsqrt_ sigmoid_ sin_ sinc_ "
    "sinh_ sqrt_ square_ tan_ tanh_ trunc_ xlogy_ zero_ index_put_ detach_ detach clamp_max "
    "clamp_min fill"
).split()


# torch's parameters of each after `input`, for the docstrings (none where absent).
_ARGS = {
    "clamp_": "min=None, max=None",
    "clip_": "min=None, max=None",
    "clamp_max_": "max",
    "clamp_min_": "min",
    "fill_": "value",
    "gcd_": "other",
    "lcm_": "other",
    "ldexp_": "other",
    "logit_": "eps=None",
    "nan_to_num_": "nan=0.0, posinf=None, neginf=None",
    "round_": "decimals=0",
    "xlogy_": "other",
    "index_put_": "indices, values, accumulate=False",
    "clamp_max": "max",
    "clamp_min": "min",
    "fill": "value",
}
_SENTENCES = {
    "detach": "A new tensor sharing input's data, cut off from the autograd graph.",
    "detach_": "Cuts input off from the autograd graph in place, making it a leaf.",
    "clamp_max": "Clamps input from above at max.",
    "clamp_min": "Clamps input from below at min.",
    "fill": "A copy of input with every element set to value.",
    "fill_": "Sets every element of input to value and returns input.",
    "zero_": "Sets every element of input to zero and returns input.",
}


def _doc(name):
    args = ", ".join(["input"] + ([_ARGS[name]] if name in _ARGS else []))
    sentence = _SENTENCES.get(name) or (
        f"In-place form of {name[:-1]}(): writes the result into input and returns it."
    )
    return f"{name}({args}) -> Tensor\n\n{sentence}"


def _top(name):
    method = name if name != "fill" else "fill_"

    def fn(input, *args, **kwargs):
        if name == "fill":
            return getattr(input.clone(), method)(*args, **kwargs)
        return getattr(input, method)(*args, **kwargs)

    fn.__name__ = name
    fn.__doc__ = _doc(name)
    return fn


__all__ = list(_TOP_INPLACE)
for _n in _TOP_INPLACE:
    globals()[_n] = _top(_n)
del _n
