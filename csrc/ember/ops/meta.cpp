// The meta step of the elementwise ops (Note [Meta step] in ops/meta.h).
#include "ember/ops/meta.h"

#include "ember/core/shape.h"
#include "ember/core/type_promotion.h"
#include "ember/dispatch/profile_range.h"
#include "ember/schema/copy.h"

namespace ember::meta {

Elementwise binary(const char* name, const Tensor& a, const Tensor& b, Result kind) {
  ScalarType ct = result_type({a, b});
  if (kind == Result::Float && !is_differentiable_type(ct)) ct = default_dtype();
  return {ct, kind == Result::Bool ? kBool : ct, broadcast_shapes(a.sizes(), b.sizes(), name)};
}

Elementwise where(const Tensor& condition, const Tensor& self, const Tensor& other) {
  ScalarType ct = result_type({self, other});
  DimVector shape = broadcast_shapes(broadcast_shapes(condition.sizes(), self.sizes(), "where"),
                                     other.sizes(), "where");
  return {ct, ct, std::move(shape)};
}

Elementwise lerp(const Tensor& self, const Tensor& end, const Tensor& weight) {
  DimVector shape =
      broadcast_shapes(broadcast_shapes(self.sizes(), end.sizes(), "lerp"), weight.sizes(), "lerp");
  return {self.dtype(), self.dtype(), std::move(shape)};
}

void check_inplace(const Elementwise& m, const Tensor& self, const char* name) {
  EMBER_CHECK(m.shape.vec() == self.sizes().vec(), name, ": output with shape ", self.sizes(),
              " doesn't match the broadcast shape ", m.shape);
  check_inplace_dtype(self, m.result, name);
}

void check_alpha(const Scalar& alpha, ScalarType compute) {
  EMBER_CHECK(is_differentiable_type(compute) || !alpha.is_floating_point(),
              "For integral input tensors, argument alpha must not be a floating point number.");
}

void check_integer_pow(const Tensor& self, const Tensor& exponent) {
  // Tensor exponents truncate instead; only a Python number is refused (torch's rule).
  bool ints = is_integral(self.dtype(), true) && is_integral(exponent.dtype(), true);
  if (!ints || !exponent.impl()->is_wrapped_number) return;
  EMBER_CHECK(exponent.item().to_double() >= 0,
              "Integers to negative integer powers are not allowed.");
  // torch converts a number exponent to the integer result type with its overflow check
  check_scalar_fits(exponent.item(), result_type({self, exponent}));
}

void check_meta_devices(const char* name, std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors) {
    const Device d = t->device();
    EMBER_CHECK(d.type == DeviceType::Meta || (d.type == DeviceType::CPU && t->dim() == 0), name,
                ": Tensor on device ", d.str(), " is not on the expected device meta!");
  }
}

Tensor cast(const Tensor& t, ScalarType dt, DispatchKey k) {
  if (t.dtype() == dt) return t;
  // A real Python number (a 0-d CPU tensor) converts as the scalar it is: no loop, and it stays
  // a number for the kernels that ask (pow's exponent). A complex one has no Scalar form.
  if (t.impl()->is_wrapped_number && !is_complex(t.dtype()) && !is_complex(dt)) {
    auto number = [&] { return scalar_tensor(t.item(), dt, true); };
    if (!profiler::enabled()) [[likely]]
      return number();
    // torch converts a Python number through aten::to (Note [Profiler rows]); the value is
    // whole once made, so the copy_ row surrounds nothing.
    profiler::OpRange to("to", t, dt, false, false, std::nullopt);
    return profiler::to_copy_rows(
        t, dt, number, [](Tensor&) {}, true);
  }
  Tensor out = empty(t.sizes(), dt, device_of(k));
  kernel(op::copy_, k)(out, t);
  return out;
}

void copy(Tensor& dst, const Tensor& src, DispatchKey k) { kernel(op::copy_, k)(dst, src); }

}  // namespace ember::meta
