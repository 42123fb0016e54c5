#include "ember/core/type_promotion.h"

namespace ember {

// Note [Wrapped numbers]
// A Python number becomes a 0-d tensor flagged is_wrapped_number. Promotion ranks operands in
// three tiers — tensors with dims, 0-d tensors, wrapped numbers — and a lower tier only matters
// when it is of a higher kind (bool < integer < floating), as in PyTorch's result_type.
// Python floats are held in double precision; result_type still gives them the default dtype.
Tensor wrap_scalar(const Scalar& s) {
  return scalar_tensor(s, s.is_integral(true) ? s.dtype() : kDouble, true);
}

namespace {
int kind_of(ScalarType t) {
  return t == kBool ? 0 : is_complex(t) ? 3 : is_floating_point(t) ? 2 : 1;
}

ScalarType combine(ScalarType higher, ScalarType lower) {
  if (higher == ScalarType::Undefined) return lower;
  if (lower == ScalarType::Undefined) return higher;
  // A complex operand of a lower tier keeps a floating higher tier's precision (torch's rule).
  if (is_complex(lower) && is_floating_point(higher)) return to_complex_type(higher);
  if (kind_of(lower) > kind_of(higher)) return promote_types(higher, lower);
  return higher;
}
}  // namespace

ScalarType result_type(TensorList tensors) {
  ScalarType dim = ScalarType::Undefined, zero = ScalarType::Undefined,
             wrapped = ScalarType::Undefined;
  auto merge = [](ScalarType& acc, ScalarType t) {
    acc = acc == ScalarType::Undefined ? t : promote_types(acc, t);
  };
  for (const Tensor& t : tensors) {
    if (!t.defined()) continue;
    if (t.impl()->is_wrapped_number) {
      // A Python float takes the default dtype; ints and bools keep int64/bool.
      // A Python complex takes the complex type of the default dtype.
      merge(wrapped, is_complex(t.dtype())          ? to_complex_type(default_dtype())
                     : is_floating_point(t.dtype()) ? default_dtype()
                                                    : t.dtype());
    } else if (t.dim() == 0) {
      merge(zero, t.dtype());
    } else {
      merge(dim, t.dtype());
    }
  }
  return combine(combine(dim, zero), wrapped);
}

bool can_cast(ScalarType from, ScalarType to) {
  if (is_floating_point(from) && is_integral(to, true)) return false;
  if (is_complex(from) && !is_complex(to)) return false;
  if (from != kBool && to == kBool) return false;
  return true;
}

void check_inplace_dtype(const Tensor& self, ScalarType result, const char* op) {
  EMBER_CHECK(can_cast(result, self.dtype()), op, ": result type ", scalar_type_name(result),
              " can't be cast to the desired output type ", scalar_type_name(self.dtype()));
}

}  // namespace ember
