"""Random sampling: generators and seeds, random factories, samplers the core has no kernel for."""

from .. import _C
from .._C import Tensor
from .._device import factory_device, is_meta, meta_empty, place
from ..autograd.grad_mode import no_grad
from . import _op_range
from .creation import (
    _check_keywords,
    _finish,
    _laid_out_like,
    _like,
    _like_target,
    _size,
    empty,
    empty_like,
    tensor,
)

__all__ = [
    "default_generator",
    "rand",
    "randn",
    "randint",
    "randperm",
    "rand_like",
    "randn_like",
    "randint_like",
    "manual_seed",
    "seed",
    "initial_seed",
    "get_rng_state",
    "set_rng_state",
    "bernoulli",
    "multinomial",
    "normal",
    "poisson",
    "binomial",
    "_dirichlet_grad",
    "_sample_dirichlet",
    "_standard_gamma",
    "_standard_gamma_grad",
]


default_generator = _C.default_generator()


def _rand(size, generator, dtype):
    if dtype is not None and dtype.is_complex:  # both parts uniform on [0, 1), as torch
        return uniform_(empty(list(size), dtype=dtype), generator=generator)
    return _C._rand(size, generator, dtype)


def _randn(size, generator, dtype):
    if dtype is not None and dtype.is_complex:  # torch: normal_ of the real view, std 1/sqrt(2)
        from .complex_more import normal_c_

        return normal_c_(empty(list(size), dtype=dtype), 0.0, 1.0, generator)
    return _C._randn(size, generator, dtype)


def rand(
    *size, generator=None, dtype=None, device=None, requires_grad=False, pin_memory=False, **kwargs
):
    """rand(*size, *, generator=None, out=None, dtype=None, layout=torch.strided, device=None,
        requires_grad=False, pin_memory=False) -> Tensor

    A tensor of the given shape with values drawn uniformly from [0, 1)."""
    dev = factory_device(device, "rand", pin_memory)
    if is_meta(dev):  # no draws: the generator's state is left as it is, as torch's meta
        return meta_empty(_size(size, kwargs, "rand"), dtype, requires_grad)
    if dev is not None:
        return place(dev, _rand(_size(size, kwargs, "rand"), generator, dtype), requires_grad)
    return _finish(_rand(_size(size, kwargs, "rand"), generator, dtype), requires_grad)


def randn(
    *size, generator=None, dtype=None, device=None, requires_grad=False, pin_memory=False, **kwargs
):
    """randn(*size, *, generator=None, out=None, dtype=None, layout=torch.strided, device=None,
        requires_grad=False, pin_memory=False) -> Tensor

    A tensor of the given shape with values drawn from the standard normal distribution."""
    dev = factory_device(device, "randn", pin_memory)
    if is_meta(dev):  # no draws: the generator's state is left as it is, as torch's meta
        return meta_empty(_size(size, kwargs, "randn"), dtype, requires_grad)
    if dev is not None:
        return place(dev, _randn(_size(size, kwargs, "randn"), generator, dtype), requires_grad)
    return _finish(_randn(_size(size, kwargs, "randn"), generator, dtype), requires_grad)


def randint(
    *args, generator=None, dtype=None, device=None, requires_grad=False, pin_memory=False, **kwargs
):
    """randint(low=0, high, size, *, generator=None, out=None, dtype=None, layout=torch.strided,
        device=None, requires_grad=False) -> Tensor

    A tensor of the given shape with integers drawn uniformly from [low, high)."""
    low, high, size = _randint_args("randint", args, kwargs)
    dev = factory_device(device, "randint", pin_memory)
    if is_meta(dev):
        return meta_empty(list(size), dtype or _C.int64, requires_grad)
    return place(dev, _C._randint(low, high, list(size), generator, dtype), requires_grad)


def _randint_args(fn, args, kwargs):
    """(low, high, size) of torch's two overloads, (int high, tuple of ints size) and (int low,
    int high, tuple of ints size), positional and keyword mixed as torch's parser binds them:
    randint(10, size=(1,)) and randint(2, 10, (3,)) and randint(low=2, high=10, size=(3,))."""
    kwargs = {k: v for k, v in kwargs.items() if k != "layout"}
    names = ("low", "high", "size")
    short = len(args) + len([k for k in kwargs if k in names]) <= 2 and "low" not in kwargs
    params = names[1:] if short else names
    if len(args) > len(params):
        raise TypeError(f"{fn}() takes from 2 to 3 positional arguments but {len(args)} were given")
    bound = dict(zip(params, args))
    for k, v in kwargs.items():
        if k not in params:
            raise TypeError(f"{fn}() got an unexpected keyword argument '{k}'")
        if k in bound:
            raise TypeError(f"{fn}() got multiple values for argument '{k}'")
        bound[k] = v
    missing = [p for p in params if p not in bound]
    if missing:
        raise TypeError(
            f"{fn}() received an invalid combination of arguments - got ({len(args)} arguments), "
            "but expected one of:\n * (int high, tuple of ints size, *, ...)\n"
            " * (int low, int high, tuple of ints size, *, ...)\n"
        )
    size = bound["size"]
    return bound.get("low", 0), bound["high"], [size] if isinstance(size, int) else size


def randperm(
    n, *, generator=None, dtype=None, device=None, requires_grad=False, pin_memory=False, **kwargs
):
    """randperm(n, *, generator=None, out=None, dtype=torch.int64,layout=torch.strided, device=None,
        requires_grad=False, pin_memory=False) -> Tensor

    A random permutation of the integers 0 .. n - 1."""
    _check_keywords("randperm", kwargs)
    dev = factory_device(device, "randperm", pin_memory)
    if is_meta(dev):
        return meta_empty([n], dtype or _C.int64, requires_grad)
    return place(dev, _C._randperm(n, generator, dtype), requires_grad)


def rand_like(
    input,
    *,
    generator=None,
    dtype=None,
    device=None,
    requires_grad=False,
    memory_format=None,
    pin_memory=False,
    **kwargs,
):
    """rand_like(input, *, generator=None, dtype=None, layout=None, device=None,
        requires_grad=False, memory_format=torch.preserve_format) -> Tensor

    Uniform [0, 1) draws with input's shape (and dtype unless given)."""
    _check_keywords("rand_like", kwargs)
    t = _like_target(input, dtype, device, memory_format, "rand_like", pin_memory)
    if t is not None:
        return _finish(t if t.is_meta else t.uniform_(generator=generator), requires_grad)
    t = _draw_laid_out_like(input, _like(input, dtype), memory_format, generator, _rand)
    return _finish(t, requires_grad)


def randn_like(
    input,
    *,
    generator=None,
    dtype=None,
    device=None,
    requires_grad=False,
    memory_format=None,
    pin_memory=False,
    **kwargs,
):
    """randn_like(input, *, generator=None, dtype=None, layout=None, device=None,
        requires_grad=False, memory_format=torch.preserve_format) -> Tensor

    Standard normal draws with input's shape (and dtype unless given)."""
    _check_keywords("randn_like", kwargs)
    t = _like_target(input, dtype, device, memory_format, "randn_like", pin_memory)
    if t is not None:
        return _finish(t if t.is_meta else t.normal_(generator=generator), requires_grad)
    t = _draw_laid_out_like(
        input, _like(input, dtype), memory_format, generator, _randn, in_place="normal_"
    )
    return _finish(t, requires_grad)


def randint_like(
    input,
    low=0,
    high=None,
    *,
    generator=None,
    dtype=None,
    device=None,
    requires_grad=False,
    memory_format=None,
    pin_memory=False,
    **kwargs,
):
    """randint_like(input, low=0, high, *, generator=None, dtype=None, layout=torch.strided,
        device=None, requires_grad=False, memory_format=torch.preserve_format) -> Tensor

    Integers drawn uniformly from [low, high) with input's shape (and dtype unless given)."""
    _check_keywords("randint_like", kwargs)
    if high is None:
        low, high = 0, low
    t = _like_target(input, dtype, device, memory_format, "randint_like", pin_memory)
    if t is not None:
        return _finish(t if t.is_meta else t.random_(low, high, generator=generator), requires_grad)

    def draw(size, gen, dt):
        return _C._randint(low, high, size, gen, dt)

    return _draw_laid_out_like(input, _like(input, dtype), memory_format, generator, draw)


def _draw_laid_out_like(input, dtype, memory_format, generator, draw, in_place=None):
    """draw(size, generator, dtype) laid out as empty_like(input) would be: torch fills that
    tensor in memory order, so the draw runs over the dims ordered by stride and is viewed
    with the target's strides (a fresh tensor, at version 0). normal_ of a non-contiguous
    tensor draws otherwise than of a contiguous one, so `in_place` names the method that fills
    such a layout itself."""
    shape = list(input.shape)
    target = _laid_out_like(empty(shape, dtype=dtype), input, memory_format)
    if target.is_contiguous():
        drawn = draw(shape, generator, dtype)
    elif in_place is not None:
        return getattr(target, in_place)(generator=generator)
    else:
        order = sorted(range(len(shape)), key=lambda d: -target.stride(d))
        drawn = draw([shape[d] for d in order], generator, dtype)
    if drawn.stride() == target.stride():
        return drawn
    # the same memory order; as_strided keeps the target's strides of size-1 dims too
    return drawn.as_strided(shape, target.stride())


def manual_seed(seed):
    """manual_seed(seed) -> Generator

    Seeds the default generator and returns it."""
    seed = int(seed)
    if not -(2**63) <= seed < 2**64:  # torch reads it as a signed or unsigned 64-bit integer
        raise ValueError("Overflow when unpacking long long")
    _C.manual_seed(seed & 0xFFFFFFFFFFFFFFFF)
    return default_generator


def seed():
    """seed() -> int

    Seeds the default generator from a non-deterministic source and returns the seed."""
    return default_generator.seed()


def initial_seed():
    """initial_seed() -> int

    The seed the default generator was last seeded with."""
    return default_generator.initial_seed()


def get_rng_state():
    """get_rng_state() -> Tensor

    The default generator's state as a uint8 tensor (restore it with set_rng_state)."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """set_rng_state(new_state) -> None

    Restores the default generator from a state returned by get_rng_state."""
    default_generator.set_state(new_state)


def bernoulli(input, p=None, *, generator=None):
    """bernoulli(input: Tensor, *, generator: Optional[Generator]) -> Tensor

    0/1 draws with probabilities input (or p when given), in input's shape and dtype."""
    if p is not None:
        out = empty_like(input)
        _C._bernoulli_(out, float(p), generator)
        return out
    return _C._bernoulli(input, generator)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """multinomial(input, num_samples, replacement=False, *, generator=None) -> LongTensor

    For each row of weights input, num_samples category indices drawn in proportion."""
    return _C._multinomial(input, num_samples, replacement, generator)


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, **_):
    """normal(mean, std=1.0, size=None, *, generator=None, out=None) -> Tensor

    Draws from normal distributions with the given means and standard deviations."""
    if isinstance(mean, Tensor) and mean.dtype.is_complex:  # both parts, variance std^2 / 2
        shape = _C.broadcast_shapes(mean.shape, std.shape if isinstance(std, Tensor) else ())
        return mean + std * _randn(list(shape), generator, mean.dtype)
    if isinstance(mean, Tensor) and not isinstance(std, Tensor):
        # torch draws N(0, std) into mean's shape, then adds mean
        if not std >= 0.0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        with no_grad():
            out = empty(list(mean.shape), dtype=mean.dtype).normal_(
                0.0, float(std), generator=generator
            )
        return out + mean
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        m = mean if isinstance(mean, Tensor) else tensor(float(mean))
        s = std if isinstance(std, Tensor) else tensor(float(std))
        return _C._normal(m, s, generator)
    return _C._normal_size(float(mean), float(std), list(size), generator, dtype)


def poisson(input, generator=None):
    """poisson(input, generator=None) -> Tensor

    Poisson draws with rates input, of input's shape and dtype."""
    return _C._poisson(input, generator)


def binomial(count, prob, generator=None):
    """binomial(count, prob, generator=None) -> Tensor

    Binomial draws with count trials of success probability prob (broadcast)."""
    return _C._binomial(count, prob, generator)


def _standard_gamma(input, generator=None):
    """_standard_gamma(input, generator=None) -> Tensor

    Gamma(input, 1) draws; differentiable in input by implicit reparameterization."""
    return _samplers().gamma_rsample(input, generator)


def _standard_gamma_grad(input, output):
    """_standard_gamma_grad(input, output) -> Tensor

    d output / d input of standard gamma draws output at fixed quantile."""
    return _C._standard_gamma_grad(input, output)


def _sample_dirichlet(input, generator=None):
    """_sample_dirichlet(input, generator=None) -> Tensor

    Dirichlet(input) draws over input's last dim (normalized gamma draws)."""
    return _C._sample_dirichlet(input, generator)


def _dirichlet_grad(x, alpha, total):
    """_dirichlet_grad(x, alpha, total) -> Tensor

    Reparameterized gradient of Dirichlet draws x with concentration alpha summing to total."""
    return _C._dirichlet_grad(x, alpha, total)


def _samplers():
    # ember.distributions.samplers draws with this module's rand/randn, so it is imported on use.
    from ..distributions import samplers

    return samplers


# --- Tensor sampler methods (installed by _tensor_methods) ---------------------------------


def uniform_(self, a=0.0, b=1.0, *, generator=None):
    """uniform_(from=0, to=1, *, generator=None) -> Tensor

    Fills self with samples from the uniform distribution on [from, to)."""
    if self.dtype.is_complex:  # both parts, as torch
        _C._uniform_(_C.view_as_real(self), float(a), float(b), generator)
        return self
    _C._uniform_(self, float(a), float(b), generator)
    return self


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """normal_(mean=0, std=1, *, generator=None) -> Tensor

    Fills self with samples from a normal distribution with the given mean and std."""
    if self.dtype.is_complex:
        from .complex_more import normal_c_

        return normal_c_(self, mean, std, generator)
    _C._normal_(self, float(mean), float(std), generator)
    return self


def bernoulli_(self, p=0.5, *, generator=None):
    """bernoulli_(p=0.5, *, generator=None) -> Tensor

    Fills self with 0/1 samples, each 1 with probability p."""
    if isinstance(p, Tensor):
        self.copy_(_C._bernoulli(p.expand_as(self), generator))
        return self
    _C._bernoulli_(self, float(p), generator)
    return self


_NO_TO = object()


def random_(self, from_=None, to=_NO_TO, *, generator=None):
    """random_(from=0, to=None, *, generator=None) -> Tensor

    Fills self with integers drawn uniformly from [from, to) (the dtype's range when to is None)."""
    if to is _NO_TO:  # random_() and random_(to), torch's overloads without `from`
        from_, to = (0, None) if from_ is None else (0, from_)
    _C._random_(self, 0 if from_ is None else from_, to, generator)
    return self


def exponential_(self, lambd=1.0, *, generator=None):
    """exponential_(lambd=1, *, generator=None) -> Tensor

    Fills self with samples from the exponential distribution with rate lambd."""
    _C._exponential_(self, float(lambd), generator)
    return self


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """cauchy_(median=0, sigma=1, *, generator=None) -> Tensor

    Fills self with samples from the Cauchy distribution with the given median and scale."""
    _C._cauchy_(self, float(median), float(sigma), generator)
    return self


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """log_normal_(mean=1, std=2, *, generator=None)

    Fills self with exp of normal samples of the given mean and std."""
    _C._log_normal_(self, float(mean), float(std), generator)
    return self


def geometric_(self, p, *, generator=None):
    """geometric_(p, *, generator=None) -> Tensor

    Fills self with the number of Bernoulli(p) trials up to and including the first success."""
    _C._geometric_(self, float(p), generator)
    return self


# torch's profiler names for the random factories (an allocation first, then the sampling),
# recorded while a profile records.
for _name, _inner in (
    ("rand", ("aten::empty",)),
    ("randn", ("aten::empty",)),
    ("randint", ("aten::empty",)),
    ("randperm", ("aten::empty",)),
    ("rand_like", ("aten::empty_like", "aten::empty_strided")),
    ("randn_like", ("aten::empty_like", "aten::empty_strided")),
    ("randint_like", ("aten::empty_like", "aten::empty_strided")),
):
    if _name in globals():
        _op_range.register(__name__, _name, "aten::" + _name, _inner)
del _name, _inner
