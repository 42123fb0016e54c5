// Activation functions: dispatch entry points, derivatives and the composites.
//
// Note [Activation kernels]
// Each fused activation is one operator `name(self, a, b, c)` whose three
// doubles carry its parameters, and one backward operator `name_backward(grad,
// self, a, b, c)` (cpu/activation.cpp). The backward node calls the fused
// backward kernel; when the backward itself is recorded (create_graph), the
// same gradient is computed from public ops instead, so double backward works.
#include "ember/ops/activation.h"

#include <numbers>

#include "ember/ops/autocast.h"
#include "ember/ops/derivative.h"
#include "ember/ops/ops.h"
#include "ember/schema/unary.h"

namespace ember {

namespace {

// The ACT rows of the unary table (Note [Unary table] in schema/unary.h).
#define EMBER_ACT_ROWS(name, kind, dtypes, node, ...) EMBER_ACT_ROW_##kind(name, node)
#define EMBER_ACT_ROW_FLOAT(name, node)
#define EMBER_ACT_ROW_SAME(name, node)
#define EMBER_ACT_ROW_INT(name, node)
#define EMBER_ACT_ROW_BOOL(name, node)
#define EMBER_ACT_ROW_SPECIAL(name, node)
#define EMBER_ACT_ROW_NOGRAD(name, node)
#define EMBER_ACT_ROW_ACT(name, node) EMBER_ACT_ROW(name, node)

enum class Act {
#define EMBER_ACT_ROW(name, node) name,
  EMBER_UNARY_OPS(EMBER_ACT_ROWS)
#undef EMBER_ACT_ROW
};

// Each activation's forward and backward op declarations.
template <Act K>
struct ActOps;
#define EMBER_ACT_ROW(name, node)                                \
  template <>                                                    \
  struct ActOps<Act::name> {                                     \
    static constexpr const auto& forward = op::name;             \
    static constexpr const auto& backward = op::name##_backward; \
  };
EMBER_UNARY_OPS(EMBER_ACT_ROWS)
#undef EMBER_ACT_ROW

Tensor gt0(const Tensor& x, double v) { return gt(x, wrap_scalar(v)); }
Tensor lt0(const Tensor& x, double v) { return lt(x, wrap_scalar(v)); }
Tensor zero_of(const Tensor& g) { return zeros({}, TensorOptions(g.dtype())); }

Tensor gelu_grad(const Tensor& g, const Tensor& x, double approximate_tanh) {
  using std::numbers::pi;
  if (approximate_tanh == 0)
    return g * (0.5 * (1 + erf(x * std::numbers::sqrt2 * 0.5)) +
                x * exp(x * x * -0.5) * (1 / std::sqrt(2 * pi)));
  const double k0 = std::sqrt(2 / pi), k1 = 0.044715;
  Tensor t = tanh((x + x * x * x * k1) * k0);
  return g * (0.5 * (1 + t) + x * 0.5 * (1 - t * t) * k0 * (1 + x * x * (3 * k1)));
}
Tensor silu_grad(const Tensor& g, const Tensor& x) {
  Tensor s = sigmoid(x);
  return g * s * (1 + x * (1 - s));
}
Tensor mish_grad(const Tensor& g, const Tensor& x) {
  Tensor t = tanh(softplus(x));
  return g * (t + x * sigmoid(x) * (1 - t * t));
}

// The gradients of Note [Activation kernels] in public ops (the differentiable
// path), one row per ACT row of the unary table: (name, piecewise, gradient
// over g, x and the parameters a, b, c). `piecewise` marks the piecewise-linear
// activations, whose backward ops are differentiable themselves (below).
#define EMBER_ACT_COMPOSITES(_)                                                            \
  _(gelu, false, gelu_grad(g, x, a))                                                       \
  _(silu, false, silu_grad(g, x))                                                          \
  _(mish, false, mish_grad(g, x))                                                          \
  _(leaky_relu, true, where(gt0(x, 0), g, g* a))                                           \
  _(elu, false, where(gt0(x, 0), g* b, g*(a * b * c) * exp(x * c)))                        \
  _(softplus, false, where(gt0(x* a, b), g, g* sigmoid(x* a)))                             \
  _(hardtanh, true, where(logical_and(gt0(x, a), lt0(x, b)), g, zero_of(g)))               \
  _(hardsigmoid, true, where(logical_and(gt0(x, -3), lt0(x, 3)), g / 6, zero_of(g)))       \
  _(hardswish, false, where(lt0(x, -3), zero_of(g), where(gt0(x, 3), g, g*(x / 3 + 0.5)))) \
  _(threshold, true, where(gt0(x, a), g, zero_of(g)))                                      \
  _(softshrink, true, where(gt0(abs(x), a), g, zero_of(g)))                                \
  _(hardshrink, true, where(gt0(abs(x), a), g, zero_of(g)))                                \
  _(logsigmoid, false, g* sigmoid(-x))

template <Act K>
struct ActComposite;
#define EMBER_ACT_COMPOSITE(name, is_piecewise, formula)                                       \
  template <>                                                                                  \
  struct ActComposite<Act::name> {                                                             \
    static constexpr bool piecewise = is_piecewise;                                            \
    static Tensor backward([[maybe_unused]] const Tensor& g, [[maybe_unused]] const Tensor& x, \
                           [[maybe_unused]] double a, [[maybe_unused]] double b,               \
                           [[maybe_unused]] double c) {                                        \
      return formula;                                                                          \
    }                                                                                          \
  };
EMBER_ACT_COMPOSITES(EMBER_ACT_COMPOSITE)
#undef EMBER_ACT_COMPOSITE

template <Act K>
Tensor act_backward(const Tensor& grad, const Tensor& self, double a = 0, double b = 0,
                    double c = 0) {
  // A recorded backward of a piecewise activation records its backward op (its
  // derivative gives self a zero gradient, as torch's, so double backward
  // reaches x); the others, and other backends or shapes, record the composite.
  if (GradMode::is_enabled() && (grad.requires_grad() || self.requires_grad()) &&
      !(ActComposite<K>::piecewise && backend_of(grad, self) == DispatchKey::CPU &&
        grad.sizes().equals(self.sizes()) && is_floating_point(grad.dtype())))
    return ActComposite<K>::backward(grad, self, a, b, c);
  EMBER_CHECK(grad.sizes().equals(self.sizes()), ActOps<K>::backward.name,
              ": expected grad of shape ", self.sizes(), "; got ", grad.sizes());
  return ActOps<K>::backward.call(grad, self, a, b, c);
}

}  // namespace

#define EMBER_ACT_ROW(name, node) \
  EMBER_DERIVATIVE(op::name, #node, (self, a, b, c), act_backward<Act::name>(grad, self, a, b, c));
EMBER_UNARY_OPS(EMBER_ACT_ROWS)
#undef EMBER_ACT_ROW

// The backward ops of the piecewise-linear activations are linear in the
// gradient and flat in self (torch's threshold_backward, leaky_relu_backward,
// ...: self's gradient is zeros).
#define EMBER_PIECEWISE_BACKWARD(name, node)                                \
  EMBER_DERIVATIVE(op::name##_backward, node, (grad_output, self, a, b, c), \
                   op::name##_backward.call(grad, self, a, b, c), zeros_like(grad));
EMBER_PIECEWISE_BACKWARD(leaky_relu, "LeakyReluBackwardBackward0")
EMBER_PIECEWISE_BACKWARD(hardtanh, "HardtanhBackwardBackward0")
EMBER_PIECEWISE_BACKWARD(threshold, "ThresholdBackwardBackward0")
EMBER_PIECEWISE_BACKWARD(softshrink, "SoftshrinkBackwardBackward0")
EMBER_PIECEWISE_BACKWARD(hardshrink, "HardshrinkBackwardBackward0")
#undef EMBER_PIECEWISE_BACKWARD
// torch has no derivative for hardsigmoid's backward: a double backward through
// it raises.
[[noreturn]] static Tensor no_derivative(const char* op) {
  EMBER_ERROR(ErrorKind::Runtime, "derivative for aten::", op, " is not implemented");
}
EMBER_DERIVATIVE(op::hardsigmoid_backward, "HardsigmoidBackwardBackward0",
                 (grad_output, self, a, b, c), no_derivative("hardsigmoid_backward"),
                 no_derivative("hardsigmoid_backward"));
#undef EMBER_ACT_ROWS
#undef EMBER_ACT_ROW_FLOAT
#undef EMBER_ACT_ROW_SAME
#undef EMBER_ACT_ROW_INT
#undef EMBER_ACT_ROW_BOOL
#undef EMBER_ACT_ROW_SPECIAL
#undef EMBER_ACT_ROW_NOGRAD
#undef EMBER_ACT_ROW_ACT

namespace {
template <Act K>
Tensor act(const Tensor& self, double a = 0, double b = 0, double c = 0) {
  return ActOps<K>::forward.call(self, a, b, c);
}
template <Act K>
Tensor& act_(Tensor& self, double a = 0, double b = 0, double c = 0) {
  return apply_inplace(self, [=](const Tensor& s) { return act<K>(s, a, b, c); });
}

bool is_integral(const Tensor& t) { return !is_floating_point(t.dtype()) && t.dtype() != kBool; }

double gelu_mode(std::string_view approximate) {
  EMBER_CHECK(approximate == "none" || approximate == "tanh",
              "approximate argument must be either none or tanh.");
  return approximate == "tanh" ? 1 : 0;
}

constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

double celu_alpha(const Scalar& alpha) {
  EMBER_CHECK(alpha.to_double() != 0, "ZeroDivisionError");
  return alpha.to_double();
}

}  // namespace

Tensor gelu(const Tensor& self, std::string_view approximate) {
  return act<Act::gelu>(self, gelu_mode(approximate));
}
Tensor& gelu_(Tensor& self, std::string_view approximate) {
  return act_<Act::gelu>(self, gelu_mode(approximate));
}
Tensor silu(const Tensor& self) { return act<Act::silu>(self); }
Tensor& silu_(Tensor& self) { return act_<Act::silu>(self); }
Tensor mish(const Tensor& self) { return act<Act::mish>(self); }
Tensor& mish_(Tensor& self) { return act_<Act::mish>(self); }
Tensor leaky_relu(const Tensor& self, const Scalar& slope) {
  return act<Act::leaky_relu>(self, slope.to_double());
}
Tensor& leaky_relu_(Tensor& self, const Scalar& slope) {
  return act_<Act::leaky_relu>(self, slope.to_double());
}
Tensor elu(const Tensor& self, const Scalar& alpha, const Scalar& scale,
           const Scalar& input_scale) {
  return act<Act::elu>(self, alpha.to_double(), scale.to_double(), input_scale.to_double());
}
Tensor& elu_(Tensor& self, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  return act_<Act::elu>(self, alpha.to_double(), scale.to_double(), input_scale.to_double());
}
Tensor selu(const Tensor& self) { return elu(self, kSeluAlpha, kSeluScale, 1); }
Tensor& selu_(Tensor& self) { return elu_(self, kSeluAlpha, kSeluScale, 1); }
Tensor celu(const Tensor& self, const Scalar& alpha) {
  double a = celu_alpha(alpha);
  return elu(self, a, 1, 1 / a);
}
Tensor& celu_(Tensor& self, const Scalar& alpha) {
  double a = celu_alpha(alpha);
  return elu_(self, a, 1, 1 / a);
}
Tensor softplus(const Tensor& self, const Scalar& beta, const Scalar& threshold) {
  return act<Act::softplus>(self, beta.to_double(), threshold.to_double());
}
Tensor hardtanh(const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  EMBER_CHECK(self.dtype() != kBool, "Bool inputs not supported for hardtanh");
  if (is_integral(self))  // torch clamps integer tensors, keeping their dtype
    return clamp(self, wrap_scalar(int64_t(min_val.to_double())),
                 wrap_scalar(int64_t(max_val.to_double())));
  return act<Act::hardtanh>(self, min_val.to_double(), max_val.to_double());
}
Tensor& hardtanh_(Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  return apply_inplace(self, [&](const Tensor& s) { return hardtanh(s, min_val, max_val); });
}
Tensor relu6(const Tensor& self) { return hardtanh(self, 0, 6); }
Tensor& relu6_(Tensor& self) { return hardtanh_(self, 0, 6); }
Tensor hardsigmoid(const Tensor& self) { return act<Act::hardsigmoid>(self); }
Tensor& hardsigmoid_(Tensor& self) { return act_<Act::hardsigmoid>(self); }
Tensor hardswish(const Tensor& self) { return act<Act::hardswish>(self); }
Tensor& hardswish_(Tensor& self) { return act_<Act::hardswish>(self); }
Tensor threshold(const Tensor& self, const Scalar& th, const Scalar& value) {
  if (is_integral(self))
    return where(le(self, wrap_scalar(th)), wrap_scalar(int64_t(value.to_double())), self);
  return act<Act::threshold>(self, th.to_double(), value.to_double());
}
Tensor& threshold_(Tensor& self, const Scalar& th, const Scalar& value) {
  return apply_inplace(self, [&](const Tensor& s) { return threshold(s, th, value); });
}
Tensor logsigmoid(const Tensor& self) { return act<Act::logsigmoid>(self); }
Tensor softshrink(const Tensor& self, const Scalar& lambd) {
  EMBER_CHECK(lambd.to_double() >= 0, "lambda must be greater or equal to 0, but found to be ",
              lambd.to_double(), ".");
  return act<Act::softshrink>(self, lambd.to_double());
}
Tensor hardshrink(const Tensor& self, const Scalar& lambd) {
  return act<Act::hardshrink>(self, lambd.to_double());
}

Tensor softsign(const Tensor& self) { return self / (abs(self) + 1); }
Tensor tanhshrink(const Tensor& self) { return self - tanh(self); }

Tensor prelu(const Tensor& self, const Tensor& weight) {
  if (autocast::is_active()) [[unlikely]]  // Note [Autocast]
    return autocast::run(
        autocast::CastPolicy::lower_precision_fp,
        [](const Tensor& x, const Tensor& w) { return prelu(x, w); }, self, weight);
  int64_t n = weight.numel();
  EMBER_CHECK(
      weight.dim() <= 1,
      "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = ", weight.dim());
  Tensor w = weight;
  if (n != 1) {
    EMBER_CHECK(self.dim() >= 2 && self.size(1) == n,
                "Mismatch of parameter numbers and input channel size. Found "
                "parameter numbers = ",
                n, " and channel size = ", self.dim() >= 2 ? self.size(1) : 1, ".");
    DimVector shape(size_t(self.dim()), 1);
    shape[1] = n;
    w = reshape(weight, shape);
  } else {
    w = reshape(weight, {});
  }
  return where(gt0(self, 0), self, self * w);
}

Tensor glu(const Tensor& self, int64_t dim) {
  EMBER_CHECK(self.dim() > 0, "glu does not support scalars because halving size must be even");
  int64_t d = dim < 0 ? dim + self.dim() : dim;
  EMBER_CHECK_INDEX(d >= 0 && d < self.dim(),
                    "Dimension out of range (expected to be in range of [", -self.dim(), ", ",
                    self.dim() - 1, "], but got ", dim, ")");
  int64_t n = self.size(d);
  EMBER_CHECK(n % 2 == 0, "Halving dimension must be even, but dimension ", d, " is size ", n);
  return narrow(self, d, 0, n / 2) * sigmoid(narrow(self, d, n / 2, n / 2));
}

Tensor gelu_backward(const Tensor& grad, const Tensor& self, std::string_view approximate) {
  return act_backward<Act::gelu>(grad, self, gelu_mode(approximate));
}
Tensor silu_backward(const Tensor& grad, const Tensor& self) {
  return act_backward<Act::silu>(grad, self);
}
Tensor leaky_relu_backward(const Tensor& grad, const Tensor& self, const Scalar& slope) {
  return act_backward<Act::leaky_relu>(grad, self, slope.to_double());
}
Tensor elu_backward(const Tensor& grad, const Tensor& self, const Scalar& alpha,
                    const Scalar& scale, const Scalar& input_scale) {
  return act_backward<Act::elu>(grad, self, alpha.to_double(), scale.to_double(),
                                input_scale.to_double());
}
Tensor softplus_backward(const Tensor& grad, const Tensor& self, const Scalar& beta,
                         const Scalar& threshold) {
  return act_backward<Act::softplus>(grad, self, beta.to_double(), threshold.to_double());
}
Tensor hardtanh_backward(const Tensor& grad, const Tensor& self, const Scalar& min_val,
                         const Scalar& max_val) {
  return act_backward<Act::hardtanh>(grad, self, min_val.to_double(), max_val.to_double());
}

}  // namespace ember
