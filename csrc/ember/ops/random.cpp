// Random sampling: argument checks, dispatch entry points and the (zero)
// derivatives of the sampling ops. Kernels are in cpu/random.cpp. See Note [torch's random stream].
#include "ember/ops/random.h"

#include <cmath>
#include <limits>
#include <random>

#include "ember/core/dispatch_dtype.h"
#include "ember/core/shape.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/ops/derivative.h"
#include "ember/ops/inplace.h"
#include "ember/ops/ops.h"
#include "ember/schema/random.h"

namespace ember {

// Defined in copy.cpp: bumps self's version after an in-place write, raising PyTorch's error when
// self is an inference tensor and InferenceMode is off (declared here to keep headers unchanged).
void bump_inplace_version(const Tensor& self);

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

const GeneratorPtr& gen_or_default(const GeneratorPtr& gen) {
  return gen ? gen : default_generator();
}

// Sampling ops have zero derivatives: an in-place fill cuts self's old history (as fill_ does),
// an out-of-place sample gets a node that sends zeros to its parameters.
Tensor zero_grad(const Tensor& g) { return zeros_like(g); }

template <class Run>
Tensor& fill_random_autograd(Tensor& self, const char* node, Run run) {
  check_inplace(self);
  run();  // a backend kernel: it runs with grad mode off
  auto n = autograd::record(node, {self}, {}, [](FunctionNode&, const variable_list& g) {
    return variable_list{zero_grad(g[0])};
  });
  if (n) {
    n->num_outputs = 1;  // record() counted no outputs: self becomes output 0 here
    autograd::set_history(self, n);
  }
  return self;
}

Tensor& uniform_autograd(Tensor& self, double from, double to, const GeneratorPtr& gen) {
  return fill_random_autograd(self, "UniformBackward0", [&] {
    op::uniform_.redispatch(backend_of(self), self, from, to, gen);
  });
}
Tensor& normal_autograd(Tensor& self, double mean, double std, const GeneratorPtr& gen) {
  return fill_random_autograd(self, "NormalBackward0", [&] {
    op::normal_.redispatch(backend_of(self), self, mean, std, gen);
  });
}
Tensor& bernoulli_scalar_autograd(Tensor& self, double p, const GeneratorPtr& gen) {
  return fill_random_autograd(self, "BernoulliBackward1",
                              [&] { op::bernoulli_.redispatch(backend_of(self), self, p, gen); });
}
Tensor& random_autograd(Tensor& self, int64_t from, std::optional<int64_t> to,
                        const GeneratorPtr& gen) {
  return fill_random_autograd(self, "RandomBackward1", [&] {
    op::random_.redispatch(backend_of(self), self, from, to, gen);
  });
}
Tensor& exponential_autograd(Tensor& self, double lambd, const GeneratorPtr& gen) {
  return fill_random_autograd(self, "ExponentialBackward0", [&] {
    op::exponential_.redispatch(backend_of(self), self, lambd, gen);
  });
}
Tensor& cauchy_autograd(Tensor& self, double median, double sigma, const GeneratorPtr& gen) {
  return fill_random_autograd(self, "CauchyBackward0", [&] {
    op::cauchy_.redispatch(backend_of(self), self, median, sigma, gen);
  });
}
Tensor& log_normal_autograd(Tensor& self, double mean, double std, const GeneratorPtr& gen) {
  return fill_random_autograd(self, "LogNormalBackward0", [&] {
    op::log_normal_.redispatch(backend_of(self), self, mean, std, gen);
  });
}
Tensor& geometric_autograd(Tensor& self, double p, const GeneratorPtr& gen) {
  return fill_random_autograd(self, "GeometricBackward0",
                              [&] { op::geometric_.redispatch(backend_of(self), self, p, gen); });
}
EMBER_REGISTER_KERNEL(op::uniform_, Autograd, uniform_autograd);
EMBER_REGISTER_KERNEL(op::normal_, Autograd, normal_autograd);
EMBER_REGISTER_KERNEL(op::bernoulli_, Autograd, bernoulli_scalar_autograd);
EMBER_REGISTER_KERNEL(op::random_, Autograd, random_autograd);
EMBER_REGISTER_KERNEL(op::exponential_, Autograd, exponential_autograd);
EMBER_REGISTER_KERNEL(op::cauchy_, Autograd, cauchy_autograd);
EMBER_REGISTER_KERNEL(op::log_normal_, Autograd, log_normal_autograd);
EMBER_REGISTER_KERNEL(op::geometric_, Autograd, geometric_autograd);

}  // namespace

EMBER_DERIVATIVE(op::bernoulli, "BernoulliBackward0", (self, generator), zero_grad(grad));
EMBER_DERIVATIVE(op::poisson, "PoissonBackward0", (self, generator), zero_grad(grad));
EMBER_DERIVATIVE(op::binomial, "BinomialBackward0", (count, prob, generator), zero_grad(grad),
                 zero_grad(grad));

namespace {

// Bounds of random_ for a dtype: [from, to) must fit, as in torch's random_from_to checks.
void check_random_bounds(ScalarType t, int64_t from, std::optional<int64_t> to) {
  if (to)
    EMBER_CHECK(from < *to, "random_ expects 'from' to be less than 'to', but got from=", from,
                " >= to=", *to);
  if (!is_integral(t, false)) return;
  int64_t lo = 0, hi = 0;
  switch (t) {
    case kByte:
      lo = 0, hi = 255;
      break;
    case kChar:
      lo = -128, hi = 127;
      break;
    case kShort:
      lo = -32768, hi = 32767;
      break;
    case kInt:
      lo = INT32_MIN, hi = INT32_MAX;
      break;
    default:
      lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  }
  const std::string_view name = cpp_type_name(t);
  EMBER_CHECK(from >= lo && from <= hi, "from is out of bounds for ", name);
  if (to) EMBER_CHECK(*to - 1 >= lo && *to - 1 <= hi, "to - 1 is out of bounds for ", name);
}

// An integer as a floating dtype holds it, read back (int64 -> T -> int64, as C++ casts).
template <class T>
int64_t held(int64_t v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) return int64_t(T(v));
  else return int64_t(float(T(float(v))));
}

// torch's update_from/update_to: a bound a floating dtype cannot hold exactly moves inward to
// the next one it can, so [from, to) keeps to integers the dtype represents.
std::pair<int64_t, std::optional<int64_t>> float_bounds(ScalarType t, int64_t from,
                                                        std::optional<int64_t> to) {
  if (!is_floating_point(t)) return {from, to};
  dispatch<kFloatTypes>(t, "random_update_from_to", [&](auto tag) {
    using T = decltype(tag);
    int digits = 0;
    if constexpr (std::is_same_v<T, Half>) digits = 11;
    else if constexpr (std::is_same_v<T, BFloat16>) digits = 8;
    else digits = std::numeric_limits<T>::digits;
    auto top_bit = [](int64_t v) {
      int n = 0;
      for (uint64_t a = uint64_t(v < 0 ? -v : v); a >>= 1;) ++n;
      return n;
    };
    const int64_t from_plus_1 = held<T>(from + 1);
    if (from_plus_1 < from) from = from_plus_1 + (int64_t(1) << (top_bit(from + 1) - digits + 1));
    if (to) {
      const int64_t to_minus_1 = held<T>(*to - 1);
      if (to_minus_1 >= *to) to = to_minus_1 - (int64_t(1) << (top_bit(*to - 1) - digits + 1));
      EMBER_CHECK(from < *to,
                  "random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, "
                  "but got from=",
                  from, " >= to=", *to);
    }
  });
  return {from, to};
}

}  // namespace

Tensor& uniform_(Tensor& self, double from, double to, const GeneratorPtr& gen) {
  EMBER_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from,
              " > to=", to);
  EMBER_CHECK(to - from <= std::numeric_limits<double>::max(),
              "uniform_ expects to-from <= "
              "std::numeric_limits<double>::max(), but found to=",
              to, " and from=", from, " which result in to-from to exceed the limit");
  op::uniform_.call(self, from, to, gen_or_default(gen));
  bump_inplace_version(self);
  return self;
}

Tensor& normal_(Tensor& self, double mean, double std, const GeneratorPtr& gen) {
  EMBER_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  op::normal_.call(self, mean, std, gen_or_default(gen));
  bump_inplace_version(self);
  return self;
}

Tensor& bernoulli_(Tensor& self, double p, const GeneratorPtr& gen) {
  EMBER_CHECK(p >= 0 && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  op::bernoulli_.call(self, p, gen_or_default(gen));
  bump_inplace_version(self);
  return self;
}

Tensor& random_(Tensor& self, int64_t from, std::optional<int64_t> to, const GeneratorPtr& gen) {
  check_random_bounds(self.dtype(), from, to);
  auto [lo, hi] = float_bounds(self.dtype(), from, to);
  op::random_.call(self, lo, hi, gen_or_default(gen));
  bump_inplace_version(self);
  return self;
}

Tensor& exponential_(Tensor& self, double lambd, const GeneratorPtr& gen) {
  EMBER_CHECK(lambd > 0.0, "exponential_ expects lambda > 0.0, but found lambda=", lambd);
  EMBER_CHECK(self.numel() == 0 || is_floating_point(self.dtype()),
              "Exponential distribution is a continuous probability distribution. dtype must "
              "be a floating point but you specified ",
              scalar_type_name(self.dtype()));
  op::exponential_.call(self, lambd, gen_or_default(gen));
  bump_inplace_version(self);
  return self;
}

Tensor& cauchy_(Tensor& self, double median, double sigma, const GeneratorPtr& gen) {
  EMBER_CHECK(sigma > 0.0, "cauchy_ expects sigma > 0.0, but found sigma=", sigma);
  EMBER_CHECK(is_floating_point(self.dtype()),  // torch checks even an empty tensor here
              "Cauchy distribution is a continuous probability distribution. dtype must be a "
              "floating point but you specified ",
              cpp_type_name(self.dtype()));
  op::cauchy_.call(self, median, sigma, gen_or_default(gen));
  bump_inplace_version(self);
  return self;
}

Tensor& log_normal_(Tensor& self, double mean, double std, const GeneratorPtr& gen) {
  EMBER_CHECK(std > 0.0, "log_normal_ expects std > 0.0, but found std=", std);
  op::log_normal_.call(self, mean, std, gen_or_default(gen));
  bump_inplace_version(self);
  return self;
}

Tensor& geometric_(Tensor& self, double p, const GeneratorPtr& gen) {
  EMBER_CHECK(0 < p && p < 1, "geometric_ expects p to be in (0, 1), but got p=", p);
  op::geometric_.call(self, p, gen_or_default(gen));
  bump_inplace_version(self);
  return self;
}

// Factories fill through the ops, not the in-place functions: a fresh tensor is at version 0.
Tensor rand(IntArrayRef size, const GeneratorPtr& gen, ScalarType dtype) {
  Tensor t = empty(size, dtype);
  op::uniform_.call(t, 0.0, 1.0, gen_or_default(gen));
  return t;
}

Tensor randn(IntArrayRef size, const GeneratorPtr& gen, ScalarType dtype) {
  Tensor t = empty(size, dtype);
  op::normal_.call(t, 0.0, 1.0, gen_or_default(gen));
  return t;
}

Tensor rand_like(const Tensor& self, const GeneratorPtr& gen) {
  return rand(self.sizes(), gen, self.dtype());
}

Tensor randn_like(const Tensor& self, const GeneratorPtr& gen) {
  return randn(self.sizes(), gen, self.dtype());
}

Tensor randint(int64_t low, int64_t high, IntArrayRef size, const GeneratorPtr& gen,
               ScalarType dtype) {
  Tensor t = empty(size, dtype);
  check_random_bounds(dtype, low, high);
  auto [lo, hi] = float_bounds(dtype, low, high);
  op::random_.call(t, lo, hi, gen_or_default(gen));
  return t;
}

namespace {
Tensor with_grad(Tensor t, const TensorOptions& o) {
  if (o.requires_grad_) t.requires_grad_(true);
  return t;
}
}  // namespace

Tensor rand(IntArrayRef size, const TensorOptions& o) {
  return with_grad(rand(size, nullptr, o.dtype_or_default()), o);
}

Tensor randn(IntArrayRef size, const TensorOptions& o) {
  return with_grad(randn(size, nullptr, o.dtype_or_default()), o);
}

Tensor randint(int64_t low, int64_t high, IntArrayRef size, const TensorOptions& o) {
  return with_grad(randint(low, high, size, nullptr, o.dtype_.value_or(kLong)), o);
}

Tensor randint(int64_t high, IntArrayRef size, const TensorOptions& o) {
  return randint(0, high, size, o);
}

Tensor randperm(int64_t n, const GeneratorPtr& gen, ScalarType dtype) {
  Tensor t = empty({n}, dtype);  // a negative n raises here, with PyTorch's message
  op::_randperm_fill.call(t, gen_or_default(gen));
  return t;
}

Tensor bernoulli(const Tensor& self, const GeneratorPtr& gen) {
  return op::bernoulli.call(self, gen_or_default(gen));
}

Tensor multinomial(const Tensor& self, int64_t n, bool replacement, const GeneratorPtr& gen) {
  EMBER_CHECK(self.dim() > 0 && self.dim() <= 2, "prob_dist must be 1 or 2 dim");
  EMBER_CHECK(is_floating_point(self.dtype()),
              "multinomial only supports floating-point dtypes "
              "for input, got: ",
              scalar_type_name(self.dtype()));
  EMBER_CHECK(n > 0, "cannot sample n_sample <= 0 samples");
  int64_t categories = self.size(-1);
  EMBER_CHECK(replacement || n <= categories,
              "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  EMBER_CHECK(categories <= (int64_t(1) << 24), "number of categories cannot exceed 2^24");
  return op::multinomial.call(self, n, replacement, gen_or_default(gen));
}

Tensor normal(const Tensor& mean, const Tensor& stddev, const GeneratorPtr& gen) {
  EMBER_CHECK(stddev.numel() == 0 || all(ge(stddev.detach(), wrap_scalar(0))).item<bool>(),
              "normal expects all elements of std >= 0.0");
  ScalarType dtype = promote_types(mean.dtype(), stddev.dtype());
  Tensor out;
  {
    NoGradGuard g;
    Tensor z = empty(broadcast_shapes(mean.sizes(), stddev.sizes(), "normal"), dtype);
    op::normal_.call(z, 0.0, 1.0, gen_or_default(gen));
    out = mean.detach() + stddev.detach() * z;
  }
  autograd::record("NormalBackward3", {mean, stddev}, {out},
                   [](FunctionNode&, const variable_list& g) {
                     return variable_list{zero_grad(g[0]), zero_grad(g[0])};
                   });
  return out;
}

Tensor normal(double mean, double std, IntArrayRef size, const GeneratorPtr& gen,
              ScalarType dtype) {
  EMBER_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  Tensor t = empty(size, dtype);
  op::normal_.call(t, mean, std, gen_or_default(gen));
  return t;
}

}  // namespace ember
