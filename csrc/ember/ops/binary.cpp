// Binary ops: promotion rules, dispatch entry points and derivatives.
#include "ember/schema/binary.h"
#include "ember/autograd/node.h"
#include "ember/autograd/rename.h"
#include "ember/ops/binary_out.h"
#include "ember/ops/derivative.h"
#include "ember/ops/meta.h"
#include "ember/ops/ops.h"

#include <cmath>
#include <limits>
#include <string_view>
#include <utility>

namespace ember {

// Defined in copy.cpp: bumps self's version after an in-place write, raising PyTorch's error when
// self is an inference tensor and InferenceMode is off (declared here to keep headers unchanged).
void bump_inplace_version(const Tensor& self);

using autograd::FunctionNode;
using autograd::variable_list;

// result_type, can_cast and wrap_scalar (Note [Wrapped numbers]) are core/type_promotion.h.

#define EMBER_DEFINE_BINARY(name, node)                                                       \
  namespace {                                                                                 \
  constexpr const char* name##_node = #node;                                                  \
  }                                                                                           \
  Tensor name(const Tensor& self, const Tensor& other) { return op::name.call(self, other); } \
  Tensor& name##_(Tensor& self, const Tensor& other) {                                        \
    op::name##_.call(self, other);                                                            \
    bump_inplace_version(self);                                                               \
    return self;                                                                              \
  }
EMBER_BINARY_OPS(EMBER_DEFINE_BINARY)
EMBER_DEFINE_BINARY(div_trunc, DivBackward1)
#undef EMBER_DEFINE_BINARY

// The backend kernels (CPU and Meta) of the binary ops: the meta step, then the out= kernel
// (Note [Meta step] in ops/meta.h).
namespace {
using meta::Result;
constexpr DispatchKey kCPU = DispatchKey::CPU, kMeta = DispatchKey::Meta;

// The binary ops whose kernels are the step and the out= kernel of the same name, with their
// result dtype rule.
#define EMBER_STRUCTURED_BINARY_OPS(_) \
  _(mul, Same)                         \
  _(true_divide, Float)                \
  _(div_trunc, Same)                   \
  _(floor_divide, Same)                \
  _(remainder, Same)                   \
  _(fmod, Same)                        \
  _(atan2, Float)                      \
  _(hypot, Same)                       \
  _(copysign, Float)                   \
  _(minimum, Same)                     \
  _(maximum, Same)                     \
  _(fmin, Same)                        \
  _(fmax, Same)                        \
  _(bitwise_and, Same)                 \
  _(bitwise_or, Same)                  \
  _(bitwise_xor, Same)                 \
  _(bitwise_left_shift, Same)          \
  _(bitwise_right_shift, Same)         \
  _(logical_and, Bool)                 \
  _(logical_or, Bool)                  \
  _(logical_xor, Bool)                 \
  _(eq, Bool)                          \
  _(ne, Bool)                          \
  _(lt, Bool)                          \
  _(le, Bool)                          \
  _(gt, Bool)                          \
  _(ge, Bool)

// Note [Opmath scalars] in ops/meta.h
constexpr bool opmath_scalar(std::string_view name) {
  return name == "mul" || name == "true_divide";
}

#define EMBER_STRUCTURED_BINARY(name, kind)                                                \
  template <DispatchKey K>                                                                 \
  Tensor name##_structured(const Tensor& a, const Tensor& b) {                             \
    return meta::binary_op<K, opmath_scalar(#name)>(                                       \
        #name, Result::kind, a, b, [](const Tensor& x, const Tensor& y, Tensor& out) {     \
          meta::kernel(op::name##_out, K)(x, y, out);                                      \
        });                                                                                \
  }                                                                                        \
  template <DispatchKey K>                                                                 \
  Tensor& name##_structured_(Tensor& a, const Tensor& b) {                                 \
    return meta::binary_op_<K, opmath_scalar(#name)>(                                      \
        #name "_", Result::kind, a, b, [](const Tensor& x, const Tensor& y, Tensor& out) { \
          meta::kernel(op::name##_out, K)(x, y, out);                                      \
        });                                                                                \
  }                                                                                        \
  EMBER_REGISTER_KERNEL(op::name, CPU, name##_structured<kCPU>);                           \
  EMBER_REGISTER_KERNEL(op::name, Meta, name##_structured<kMeta>);                         \
  EMBER_REGISTER_KERNEL(op::name##_, CPU, name##_structured_<kCPU>);                       \
  EMBER_REGISTER_KERNEL(op::name##_, Meta, name##_structured_<kMeta>);
EMBER_STRUCTURED_BINARY_OPS(EMBER_STRUCTURED_BINARY)
#undef EMBER_STRUCTURED_BINARY

template <DispatchKey K>
Tensor pow_structured(const Tensor& a, const Tensor& b) {
  meta::check_integer_pow(a, b);
  return meta::binary_op<K>("pow", Result::Same, a, b,
                            [](const Tensor& x, const Tensor& y, Tensor& out) {
                              meta::kernel(op::pow_out, K)(x, y, out);
                            });
}
template <DispatchKey K>
Tensor& pow_structured_(Tensor& a, const Tensor& b) {
  meta::check_integer_pow(a, b);
  return meta::binary_op_<K>("pow_", Result::Same, a, b,
                             [](const Tensor& x, const Tensor& y, Tensor& out) {
                               meta::kernel(op::pow_out, K)(x, y, out);
                             });
}
EMBER_REGISTER_KERNEL(op::pow, CPU, pow_structured<kCPU>);
EMBER_REGISTER_KERNEL(op::pow, Meta, pow_structured<kMeta>);
EMBER_REGISTER_KERNEL(op::pow_, CPU, pow_structured_<kCPU>);
EMBER_REGISTER_KERNEL(op::pow_, Meta, pow_structured_<kMeta>);

// add and sub (sub is add of -alpha): the step checks alpha against the compute dtype.
template <DispatchKey K>
Tensor add_structured(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  return meta::binary_op<K>(
      "add", Result::Same, a, b,
      [&](const Tensor& x, const Tensor& y, Tensor& out) {
        meta::kernel(op::add_out, K)(x, y, alpha, out);
      },
      [&](const meta::Elementwise& m) { meta::check_alpha(alpha, m.compute); });
}
template <DispatchKey K>
Tensor& add_structured_(Tensor& a, const Tensor& b, const Scalar& alpha) {
  return meta::binary_op_<K>(
      "add_", Result::Same, a, b,
      [&](const Tensor& x, const Tensor& y, Tensor& out) {
        meta::kernel(op::add_out, K)(x, y, alpha, out);
      },
      [&](const meta::Elementwise& m) { meta::check_alpha(alpha, m.compute); });
}
template <DispatchKey K>
Tensor sub_structured(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  return add_structured<K>(a, b, -alpha);
}
template <DispatchKey K>
Tensor& sub_structured_(Tensor& a, const Tensor& b, const Scalar& alpha) {
  return add_structured_<K>(a, b, -alpha);
}
EMBER_REGISTER_KERNEL(op::add, CPU, add_structured<kCPU>);
EMBER_REGISTER_KERNEL(op::add, Meta, add_structured<kMeta>);
EMBER_REGISTER_KERNEL(op::add_, CPU, add_structured_<kCPU>);
EMBER_REGISTER_KERNEL(op::add_, Meta, add_structured_<kMeta>);
EMBER_REGISTER_KERNEL(op::sub, CPU, sub_structured<kCPU>);
EMBER_REGISTER_KERNEL(op::sub, Meta, sub_structured<kMeta>);
EMBER_REGISTER_KERNEL(op::sub_, CPU, sub_structured_<kCPU>);
EMBER_REGISTER_KERNEL(op::sub_, Meta, sub_structured_<kMeta>);

template <DispatchKey K>
Tensor where_structured(const Tensor& cond, const Tensor& a, const Tensor& b) {
  if constexpr (K == kMeta) meta::check_meta_devices("where", {&cond, &a, &b});
  const meta::Elementwise m = meta::where(cond, a, b);
  Tensor out = empty_like_inputs(m.shape, m.result, {&cond, &a, &b}, meta::device_of(K));
  if constexpr (K != kMeta)
    meta::kernel(op::where_out, K)(meta::cast(cond, kBool, K), meta::cast(a, m.compute, K),
                                   meta::cast(b, m.compute, K), out);
  return out;
}
EMBER_REGISTER_KERNEL(op::where, CPU, where_structured<kCPU>);
EMBER_REGISTER_KERNEL(op::where, Meta, where_structured<kMeta>);

// The public lerp checked the dtypes and gave a 0-d weight its computing dtype.
template <DispatchKey K>
Tensor lerp_structured(const Tensor& self, const Tensor& end, const Tensor& weight) {
  if constexpr (K == kMeta) meta::check_meta_devices("lerp", {&self, &end, &weight});
  const meta::Elementwise m = meta::lerp(self, end, weight);
  Tensor out = empty_like_inputs(m.shape, m.result, {&self, &end, &weight}, meta::device_of(K));
  if constexpr (K != kMeta) meta::kernel(op::lerp_out, K)(self, end, weight, out);
  return out;
}
EMBER_REGISTER_KERNEL(op::lerp, CPU, lerp_structured<kCPU>);
EMBER_REGISTER_KERNEL(op::lerp, Meta, lerp_structured<kMeta>);

// out= (Python's `out=`): the step and an op's own `check`, torch's out= rules, then
// `run(k, a, b, out)`, the out= kernel with the cast operands (`b` read as the functional form
// reads it: Note [Opmath scalars]).
template <bool OpmathScalar = false, class Run, class Check = meta::NoCheck>
Tensor& binary_out(const char* name, Result kind, const Tensor& a, const Tensor& b, Tensor& out,
                   Run run, Check check = {}) {
  return meta::out_op(
      name, meta::OutDtype::Cast, {&a, &b}, out, [&] { return meta::binary(name, a, b, kind); },
      [&](DispatchKey k, const meta::Elementwise& m, Tensor& dst) {
        run(k, meta::cast(a, m.compute, k), meta::cast_second<OpmathScalar>(b, m, k), dst);
      },
      check);
}

// add.out and sub.out (sub is add of -alpha), under their own names.
Tensor& alpha_out(const char* name, const Tensor& self, const Tensor& other, const Scalar& alpha,
                  Tensor& out) {
  return binary_out(
      name, Result::Same, self, other, out,
      [&](DispatchKey k, const Tensor& x, const Tensor& y, Tensor& o) {
        meta::kernel(op::add_out, k)(x, y, alpha, o);
      },
      [&](const meta::Elementwise& m) { meta::check_alpha(alpha, m.compute); });
}
}  // namespace

#define EMBER_BINARY_OUT(name, kind)                                         \
  Tensor& name##_out(const Tensor& self, const Tensor& other, Tensor& out) { \
    return binary_out<opmath_scalar(#name)>(                                 \
        #name, Result::kind, self, other, out,                               \
        [](DispatchKey k, const Tensor& x, const Tensor& y, Tensor& o) {     \
          meta::kernel(op::name##_out, k)(x, y, o);                          \
        });                                                                  \
  }
EMBER_STRUCTURED_BINARY_OPS(EMBER_BINARY_OUT)
#undef EMBER_BINARY_OUT
#undef EMBER_STRUCTURED_BINARY_OPS

Tensor& pow_out(const Tensor& self, const Tensor& exponent, Tensor& out) {
  meta::check_integer_pow(self, exponent);
  return binary_out("pow", Result::Same, self, exponent, out,
                    [](DispatchKey k, const Tensor& x, const Tensor& y, Tensor& o) {
                      meta::kernel(op::pow_out, k)(x, y, o);
                    });
}
Tensor& add_out(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor& out) {
  return alpha_out("add", self, other, alpha, out);
}

namespace {
Tensor zero_grad_like(const Tensor& g) { return zeros_like(g); }

// Gradient of maximum/minimum: the loser gets none, ties split it, and where a nan makes
// both comparisons false both sides get all of it (as PyTorch). A where(), not a product, so an
// infinite grad does not turn into nan at the losers.
Tensor pick_grad(const Tensor& grad, const Tensor& self, const Tensor& other, bool max) {
  Tensor lose = max ? lt(self, other) : gt(self, other);
  Tensor zero = zeros({}, TensorOptions(grad.dtype()));
  Tensor g = where(eq(self, other), grad * 0.5, grad);
  return where(lose, zero, g);
}

// Gradient of fmax/fmin: all of it to the side the result came from (self on ties and where
// other is nan), none to the other.
Tensor fpick_grad(const Tensor& grad, const Tensor& self, const Tensor& other, bool max,
                  bool to_self) {
  Tensor from_self = logical_or(max ? ge(self, other) : le(self, other), isnan(other));
  Tensor zero = zeros({}, TensorOptions(grad.dtype()));
  return to_self ? where(from_self, grad, zero) : where(from_self, zero, grad);
}

// pow's gradients mask the points where the formula is 0 * inf.
Tensor pow_self_grad(const Tensor& grad, const Tensor& self, const Tensor& exponent) {
  Tensor d = exponent * pow(self, exponent - 1);
  return grad * where(eq(exponent, wrap_scalar(0)), zeros({}, TensorOptions(d.dtype())), d);
}
Tensor pow_exponent_grad(const Tensor& grad, const Tensor& self, const Tensor& exponent,
                         const Tensor& result) {
  Tensor g = grad * result * log(self);
  Tensor zero_base = logical_and(eq(self, wrap_scalar(0)), ge(exponent, wrap_scalar(0)));
  return where(zero_base, zeros({}, TensorOptions(g.dtype())), g);
}
}  // namespace

// (name, grad wrt self, grad wrt other): formulas in public ops over grad, self, other, result.
#define EMBER_BINARY_DERIVATIVES(_)                                                                \
  _(mul, grad* conj_physical(other), grad* conj_physical(self))                                    \
  _(true_divide, grad / conj_physical(other),                                                      \
    (grad * conj_physical(self)) / conj_physical(other * other) * wrap_scalar(-1))                 \
  _(div_trunc, zero_grad_like(grad), zero_grad_like(grad))                                         \
  _(floor_divide, zero_grad_like(grad), zero_grad_like(grad))                                      \
  _(remainder, grad, -(grad * floor_divide(self, other)))                                          \
  _(fmod, grad, -(grad * div_trunc(self, other)))                                                  \
  _(atan2, grad* other / (self * self + other * other),                                            \
    -(grad * self) / (self * self + other * other))                                                \
  _(hypot, grad* self / result, grad * other / result)                                             \
  _(copysign,                                                                                      \
    where(eq(self, wrap_scalar(0)), zeros({}, TensorOptions(grad.dtype())), grad* result / self),  \
    zero_grad_like(grad))                                                                          \
  _(minimum, pick_grad(grad, self, other, false), pick_grad(grad, other, self, false))             \
  _(maximum, pick_grad(grad, self, other, true), pick_grad(grad, other, self, true))               \
  _(fmin, fpick_grad(grad, self, other, false, true), fpick_grad(grad, self, other, false, false)) \
  _(fmax, fpick_grad(grad, self, other, true, true), fpick_grad(grad, self, other, true, false))

#define EMBER_BINARY_AUTOGRAD(name, grad_self, grad_other)                       \
  EMBER_DERIVATIVE(op::name, name##_node, (self, other), grad_self, grad_other); \
  EMBER_INPLACE_DERIVATIVE(op::name##_, op::name);
EMBER_BINARY_DERIVATIVES(EMBER_BINARY_AUTOGRAD)
#undef EMBER_BINARY_AUTOGRAD

namespace {
// torch names pow's node by its overload: PowBackward0 for tensor ** scalar, PowBackward1 for
// tensor ** tensor, PowBackward2 for scalar ** tensor. A Python number reaches op::pow as a
// wrapped 0-d tensor (Note [Wrapped numbers]), which tells the overloads apart.
const char* pow_node_name(const Tensor& self, const Tensor& exponent) {
  if (exponent.impl()->is_wrapped_number) return "PowBackward0";
  if (self.impl()->is_wrapped_number) return "PowBackward2";
  return pow_node;
}
}  // namespace
EMBER_DERIVATIVE(op::pow, pow_node_name(self, other), (self, other),
                 pow_self_grad(grad, self, other), pow_exponent_grad(grad, self, other, result));
EMBER_INPLACE_DERIVATIVE(op::pow_, op::pow);

Tensor times_alpha(const Tensor& grad, const Scalar& alpha) {
  return alpha.to_double() == 1 ? grad : grad * alpha;
}

// add/sub: alpha rides along.
EMBER_DERIVATIVE(op::add, "AddBackward0", (self, other, alpha), grad, times_alpha(grad, alpha));
EMBER_INPLACE_DERIVATIVE(op::add_, op::add);
EMBER_DERIVATIVE(op::sub, "SubBackward0", (self, other, alpha), grad, grad * -alpha);
EMBER_INPLACE_DERIVATIVE(op::sub_, op::sub);

namespace {
void check_sub(const Tensor& self, const Tensor& other) {
  bool a = self.dtype() == kBool, b = other.dtype() == kBool;
  EMBER_CHECK(!(a && b),
              "Subtraction, the `-` operator, with two bool tensors is not supported. "
              "Use the `^` or `logical_xor()` operator instead.");
  EMBER_CHECK(!(a || b),
              "Subtraction, the `-` operator, with a bool tensor is not supported. If "
              "you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
}

}  // namespace

Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return op::add.call(self, other, alpha);
}
Tensor& add_(Tensor& self, const Tensor& other, const Scalar& alpha) {
  op::add_.call(self, other, alpha);
  bump_inplace_version(self);
  return self;
}
Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  check_sub(self, other);
  return op::sub.call(self, other, alpha);
}
Tensor& sub_(Tensor& self, const Tensor& other, const Scalar& alpha) {
  check_sub(self, other);
  op::sub_.call(self, other, alpha);
  bump_inplace_version(self);
  return self;
}
Tensor& sub_out(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor& out) {
  check_sub(self, other);
  return alpha_out("sub", self, other, -alpha, out);
}

namespace {
// div's rounding_mode picks the op: none (true division), "trunc" or "floor".
template <class True, class Trunc, class Floor>
decltype(auto) by_rounding_mode(const std::optional<std::string>& mode, True t, Trunc trunc,
                                Floor floor) {
  if (!mode) return t();
  if (*mode == "trunc") return trunc();
  EMBER_CHECK(*mode == "floor",
              "div expected rounding_mode to be one of None, 'trunc', or "
              "'floor' but found '",
              *mode, "'");
  return floor();
}
}  // namespace

Tensor div(const Tensor& self, const Tensor& other, std::optional<std::string> mode) {
  return by_rounding_mode(
      mode, [&] { return true_divide(self, other); }, [&] { return div_trunc(self, other); },
      [&] { return floor_divide(self, other); });
}
Tensor& div_(Tensor& self, const Tensor& other, std::optional<std::string> mode) {
  return by_rounding_mode(
      mode, [&]() -> Tensor& { return true_divide_(self, other); },
      [&]() -> Tensor& { return div_trunc_(self, other); },
      [&]() -> Tensor& { return floor_divide_(self, other); });
}
Tensor& div_out(const Tensor& self, const Tensor& other, std::optional<std::string> mode,
                Tensor& out) {
  return by_rounding_mode(
      mode, [&]() -> Tensor& { return true_divide_out(self, other, out); },
      [&]() -> Tensor& { return div_trunc_out(self, other, out); },
      [&]() -> Tensor& { return floor_divide_out(self, other, out); });
}

// grad - grad * w, not grad * (1 - w): a 0-d weight may be a wrapped number, and 1 - w of two
// wrapped numbers would be computed in the default dtype (float32) instead of the weight's
// torch's node is named by its overload: a number weight LerpBackward0, a tensor LerpBackward1.
EMBER_DERIVATIVE(op::lerp, weight.impl()->is_wrapped_number ? "LerpBackward0" : "LerpBackward1",
                 (self, end, weight), grad - grad * weight, grad* weight,
                 to_dtype(grad*(end - self), weight.dtype()));
EMBER_DERIVATIVE(op::where, "WhereBackward0", (condition, self, other), not_differentiable(),
                 where(condition, grad, zeros({}, TensorOptions(grad.dtype()))),
                 where(condition, zeros({}, TensorOptions(grad.dtype())), grad));

namespace {
// torch's "value cannot be converted to type ... without overflow" for a Python number operand
void check_wrapped_fits(const Tensor& t, ScalarType dtype) {
  if (t.defined() && t.impl()->is_wrapped_number) check_scalar_fits(t.item(), dtype);
}
}  // namespace

Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other) {
  EMBER_CHECK(condition.dtype() == kBool || condition.dtype() == kByte,
              "where expected condition to be a boolean tensor, but got a tensor with dtype ",
              scalar_type_name(condition.dtype()));
  if (self.impl()->is_wrapped_number || other.impl()->is_wrapped_number) {
    std::vector<Tensor> ins{self, other};
    ScalarType rt = result_type(TensorList(ins));
    // torch converts a number to a float16 or bfloat16 result unchecked (1e39 gives inf)
    if (rt != kHalf && rt != kBFloat16) {
      check_wrapped_fits(self, rt);
      check_wrapped_fits(other, rt);
    }
  }
  return op::where.call(condition, self, other);
}

namespace {
// The bounds of clamp(x, lo, hi) as hardtanh's (l, h) where that gives clamp's values: x a dense
// float32/float64 CPU tensor, each bound a real Python number (exact in double; not NaN). An
// absent bound is infinite; lo > hi gives hi everywhere, as min(max(x, lo), hi) does.
std::optional<std::pair<double, double>> number_bounds(const Tensor& self,
                                                       const std::optional<Tensor>& min,
                                                       const std::optional<Tensor>& max) {
  if ((self.dtype() != kFloat && self.dtype() != kDouble) || backend_of(self) != DispatchKey::CPU)
    return std::nullopt;
  auto read = [](const std::optional<Tensor>& t, double none) -> std::optional<double> {
    if (!t) return none;
    if (!t->impl()->is_wrapped_number || is_complex(t->dtype())) return std::nullopt;
    Scalar v = t->item();
    if (!v.is_floating_point() &&
        (v.to_long() > (int64_t(1) << 53) || v.to_long() < -(int64_t(1) << 53)))
      return std::nullopt;
    double d = v.to_double();
    if (std::isnan(d)) return std::nullopt;
    return d;
  };
  const double inf = std::numeric_limits<double>::infinity();
  auto lo = read(min, -inf), hi = read(max, inf);
  if (!lo || !hi) return std::nullopt;
  return std::pair{std::min(*lo, *hi), *hi};
}

// The bounds of clamp(x, lo, hi) for _ember_clamp_int: x an integer CPU tensor, each bound an
// integer Python number (already checked to fit x's dtype, so the result keeps it); an absent
// bound is the int64 extreme, which the kernel reads as none.
std::optional<std::pair<int64_t, int64_t>> int_bounds(const Tensor& self,
                                                      const std::optional<Tensor>& min,
                                                      const std::optional<Tensor>& max) {
  if (!is_integral(self.dtype(), false) || backend_of(self) != DispatchKey::CPU)
    return std::nullopt;
  auto read = [](const std::optional<Tensor>& t, int64_t none) -> std::optional<int64_t> {
    if (!t) return none;
    if (!t->impl()->is_wrapped_number || !is_integral(t->dtype(), false)) return std::nullopt;
    return t->item().to_long();
  };
  auto lo = read(min, std::numeric_limits<int64_t>::min());
  auto hi = read(max, std::numeric_limits<int64_t>::max());
  if (!lo || !hi) return std::nullopt;
  return std::pair{*lo, *hi};
}
}  // namespace

Tensor clamp(const Tensor& self, const std::optional<Tensor>& min,
             const std::optional<Tensor>& max) {
  EMBER_CHECK(min || max, "torch.clamp: At least one of 'min' or 'max' must not be None");
  Tensor r = self;
  std::vector<Tensor> ins{self};
  if (min) ins.push_back(*min);
  if (max) ins.push_back(*max);
  if ((min && min->impl()->is_wrapped_number) || (max && max->impl()->is_wrapped_number)) {
    ScalarType rt = result_type(TensorList(ins));
    if (min) check_wrapped_fits(*min, rt);
    if (max) check_wrapped_fits(*max, rt);
  }
  if (!autograd::any_requires_grad(TensorList(ins))) {
    // Python-number bounds of a float32/float64 CPU tensor (hardtanh's kernel) or of an integer
    // one: one pass.
    if (auto b = number_bounds(self, min, max)) return hardtanh(self, b->first, b->second);
    if (auto b = int_bounds(self, min, max))
      return op::_ember_clamp_int.call(self, b->first, b->second);
    // clamp(x, lo, hi) = min(max(x, lo), hi): NaN in x propagates, as in PyTorch.
    if (min) r = maximum(r, *min);
    if (max) r = minimum(r, *max);
    return r;
  }
  // Under autograd, selects instead: a value equal to a bound keeps its gradient (PyTorch's clamp
  // passes the gradient wherever lo <= x <= hi; maximum/minimum would split it at ties), and a
  // bound gets the gradient only where it was strictly chosen. NaN still propagates (the
  // comparisons are false for it).
  if (min) r = where(lt(r, *min), *min, r);
  if (max) r = where(gt(r, *max), *max, r);
  // torch's node is named by its overload: numbers (ClampBackward1) or tensors (ClampBackward0)
  bool numbers =
      (!min || min->impl()->is_wrapped_number) && (!max || max->impl()->is_wrapped_number);
  autograd::rename_history(r, numbers ? "ClampBackward1" : "ClampBackward0");
  return r;
}

Tensor& clamp_(Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  apply_inplace(self, [&](const Tensor& s) { return clamp(s, min, max); });
  bump_inplace_version(self);
  return self;
}

Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight) {
  EMBER_CHECK(end.dtype() == self.dtype(), "expected dtype ", cpp_type_name(self.dtype()),
              " for `end` but got dtype ", cpp_type_name(end.dtype()));
  // a weight with dims must have self's dtype, checked before the kernel's dtype refusal (as
  // torch's meta step)
  EMBER_CHECK(weight.dim() == 0 || weight.dtype() == self.dtype(), "expected dtype ",
              cpp_type_name(self.dtype()), " for `weight` but got dtype ",
              cpp_type_name(weight.dtype()));
  EMBER_CHECK_KIND(is_floating_point(self.dtype()), ErrorKind::NotImplemented, "\"lerp_kernel_",
                   weight.impl()->is_wrapped_number ? "scalar" : "tensor",
                   "\" not implemented for '", scalar_type_name(self.dtype()), "'");
  // A 0-d weight is a scalar of self's dtype (a bool one included: True is 1), as torch's scalar
  // kernel; a number must fit that dtype.
  Tensor w = weight;
  if (weight.dim() == 0) {
    // a number weight is checked against float for float16 and bfloat16 (their opmath type)
    if (weight.impl()->is_wrapped_number)
      check_scalar_fits(weight.item(),
                        self.dtype() == kHalf || self.dtype() == kBFloat16 ? kFloat : self.dtype());
    // float16/bfloat16 keep a float weight (torch's opmath scalar), other dtypes self's
    ScalarType wt = self.dtype() == kHalf || self.dtype() == kBFloat16 ? kFloat : self.dtype();
    if (weight.dtype() != wt) {
      w = weight.to(wt);
      w.impl()->is_wrapped_number = weight.impl()->is_wrapped_number;  // names the node
    }
  }
  // Two formulas switching at |weight| = 0.5, each exact at its end and fused (one rounding),
  // as PyTorch's kernel: see lerp_kernel (cpu/binary.cpp).
  return op::lerp.call(self, end, w);
}

namespace {
void check_addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2) {
  // torch's fused kernel has no bool loop (the product and sum below would compute one)
  std::vector<Tensor> ins{self, t1, t2};
  EMBER_CHECK_KIND(result_type(TensorList(ins)) != kBool, ErrorKind::NotImplemented,
                   "\"addcmul_cpu_out\" not implemented for 'Bool'");
}

void check_addcdiv(const Tensor& t1, const Tensor& t2) {
  // torch refuses only a pair of integral (or bool) operands: a complex one divides truly
  EMBER_CHECK(!is_integral(t1.dtype(), true) || !is_integral(t2.dtype(), true),
              "Integer division with addcdiv is no longer supported, and in a future release "
              "addcdiv will perform a true division of tensor1 and tensor2.");
}
}  // namespace

Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  check_addcmul(self, t1, t2);
  Tensor out = add(self, t1 * t2, value);
  autograd::rename_history(out, "AddcmulBackward0");  // torch's one fused kernel
  return out;
}

Tensor& addcmul_(Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  check_addcmul(self, t1, t2);
  return add_(self, t1 * t2, value);
}

Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  check_addcdiv(t1, t2);
  Tensor out = add(self, t1 / t2, value);
  autograd::rename_history(out, "AddcdivBackward0");  // torch's one fused kernel
  return out;
}

Tensor& addcdiv_(Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  check_addcdiv(t1, t2);
  return add_(self, t1 / t2, value);
}

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return true_divide(a, b); }
Tensor operator-(const Tensor& a) { return neg(a); }
Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, wrap_scalar(b)); }
Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, wrap_scalar(b)); }
Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, wrap_scalar(b)); }
Tensor operator/(const Tensor& a, const Scalar& b) { return true_divide(a, wrap_scalar(b)); }
Tensor operator*(const Scalar& a, const Tensor& b) { return mul(wrap_scalar(a), b); }
Tensor operator+(const Scalar& a, const Tensor& b) { return add(wrap_scalar(a), b); }
Tensor operator-(const Scalar& a, const Tensor& b) { return sub(wrap_scalar(a), b); }

}  // namespace ember
