// The meta step of the elementwise ops (Note [Meta step] in ops/meta.h).
#include "ember/ops/meta.h"

#include <string_view>

#include "ember/core/memory_format.h"
#include "ember/core/shape.h"
#include "ember/core/type_promotion.h"
#include "ember/dispatch/profile_range.h"
#include "ember/schema/copy.h"

namespace ember {
// Defined in copy.cpp: bumps self's version after an in-place write, raising PyTorch's error when
// self is an inference tensor and InferenceMode is off.
void bump_inplace_version(const Tensor& self);
}  // namespace ember

namespace ember::meta {

Elementwise binary(const char* name, const Tensor& a, const Tensor& b, Result kind) {
  ScalarType ct = result_type({a, b});
  if (kind == Result::Float && !is_differentiable_type(ct)) ct = default_dtype();
  return {ct, kind == Result::Bool ? kBool : ct, broadcast_shapes(a.sizes(), b.sizes(), name)};
}

Elementwise unary(const char* name, const Tensor& self, Result kind) {
  // torch's text, which its meta function raises too
  EMBER_CHECK(self.dtype() != kBool || std::string_view(name).substr(0, 3) != "neg",
              "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
              "to invert a mask, use the `~` or `logical_not()` operator instead.");
  ScalarType ct = self.dtype();
  // ints and bools compute in the default float; a complex input stays complex, so an op with
  // no complex kernel refuses it rather than dropping the imaginary part
  if (kind == Result::Float && !is_floating_point(ct) && !is_complex(ct)) ct = default_dtype();
  return {ct, kind == Result::Bool ? kBool : ct, DimVector(self.sizes())};
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
  EMBER_CHECK(self.sizes().equals(m.shape), name, ": output with shape ", self.sizes(),
              " doesn't match the broadcast shape ", m.shape);
  check_inplace_dtype(self, m.result, name);
}

void check_alpha(const Scalar& alpha, ScalarType compute) {
  EMBER_CHECK(is_differentiable_type(compute) || !alpha.is_floating_point(),
              "For integral input tensors, argument alpha must not be a floating point number.");
}

void check_integer_pow(const Tensor& self, const Tensor& exponent) {
  // Tensor exponents truncate instead; only a Python number is refused (torch's rule).
  if (!exponent.impl()->is_wrapped_number) return;
  bool ints = is_integral(self.dtype(), true) && is_integral(exponent.dtype(), true);
  if (!ints) {
    // torch converts a real number exponent of a half/bfloat16 tensor to that dtype, with the
    // same overflow check (float16 ** 70000 raises; float32 ** 1e39 does not)
    const ScalarType st = self.dtype();
    if ((st == kHalf || st == kBFloat16) && !is_complex(exponent.dtype()))
      check_scalar_fits(exponent.item(), st);
    return;
  }
  EMBER_CHECK(exponent.item().to_double() >= 0,
              "Integers to negative integer powers are not allowed.");
  // torch converts a number exponent to the integer result type with its overflow check
  check_scalar_fits(exponent.item(), result_type({self, exponent}));
}

void check_devices(const char* name, Device device, std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors) {
    const Device d = t->device();
    EMBER_CHECK(d == device || (d.type == DeviceType::CPU && t->dim() == 0), name,
                ": Tensor on device ", d.str(), " is not on the expected device ", device.str(),
                "!");
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

void bump_out_version(const Tensor& out) { bump_inplace_version(out); }

void check_meta_dtype(const char* name, const Elementwise& m) {
  EMBER_CHECK(m.compute != kBool || std::string_view(name).substr(0, 12) != "floor_divide",
              "torch.bool not supported for floor_divide");
}

namespace {
// Where torch tells overlaps apart (get_overlap_status): a non-empty, non-overlapping dense
// tensor spans exactly numel elements from its first; other layouts are "too hard" and pass.
bool spans_its_elements(const Tensor& t) {
  return t.numel() > 0 && is_non_overlapping_and_dense(t.sizes(), t.strides());
}
}  // namespace

void check_no_internal_overlap(const Tensor& t) {
  // torch's has_internal_overlap: only a stride-0 dim of size > 1 is a sure overlap
  for (size_t d = 0; d < t.sizes().size() && t.numel() > 0; ++d)
    EMBER_CHECK(t.sizes()[d] <= 1 || t.strides()[d] != 0,
                "unsupported operation: more than one element of the written-to tensor refers to "
                "a single memory location. Please clone() the tensor before performing the "
                "operation.");
}

void check_out_overlap(const Tensor& out, std::initializer_list<const Tensor*> inputs) {
  if (!spans_its_elements(out)) return;
  const char* o0 = static_cast<const char*>(out.data_ptr());
  const char* o1 = o0 + out.nbytes();
  for (const Tensor* t : inputs) {
    if (t->storage().get() != out.storage().get() || !spans_its_elements(*t)) continue;
    const char* i0 = static_cast<const char*>(t->data_ptr());
    const char* i1 = i0 + t->nbytes();
    // the same span with the same strides is the same elements; any other shared byte raises
    // (x.t().copy_(x) too)
    const bool same = i0 == o0 && i1 == o1 && t->strides().equals(out.strides());
    EMBER_CHECK(same || i1 <= o0 || o1 <= i0,
                "unsupported operation: some elements of the input tensor and the written-to "
                "tensor refer to a single memory location. Please clone() the tensor before "
                "performing the operation.");
  }
}

void check_out(const char* name, const Elementwise& m, Tensor& out, OutDtype rule) {
  // torch's TensorIterator refuses an out whose elements share memory (a stride-0 dim of size > 1)
  // before it looks at dtypes or resizes: exp(tensor(1.), out=zeros(1).expand(3)) raises
  check_no_internal_overlap(out);
  switch (rule) {
    case OutDtype::Cast:
      EMBER_CHECK(can_cast(m.result, out.dtype()), "result type ", scalar_type_name(m.result),
                  " can't be cast to the desired output type ", scalar_type_name(out.dtype()));
      break;
    case OutDtype::Exact:
      EMBER_CHECK(out.dtype() == m.result, "Found dtype ", scalar_type_name(out.dtype()),
                  " but expected ", scalar_type_name(m.result));
      break;
    case OutDtype::Bool:
      EMBER_CHECK(out.dtype() == kBool, name, " does not support non-boolean outputs.");
      break;
  }
  if (out.sizes().equals(m.shape)) return;
  const DimVector strides = contiguous_strides(m.shape);
  const int64_t n = numel_of(m.shape), offset = out.storage_offset();
  const int64_t room = int64_t(out.storage()->nbytes() / out.element_size()) - offset;
  if (n > room) {
    out.impl()->set_storage(empty({n}, out.dtype(), out.device()).storage(), out.dtype());
    out.impl()->set_geometry(m.shape, strides, 0);
  } else {
    out.impl()->set_geometry(m.shape, strides, offset);
  }
}

}  // namespace ember::meta
