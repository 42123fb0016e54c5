#pragma once
// The out= forms of the binary ops (Python's `out=`): `name_out(self, other, out)` is the op with
// torch's out= rules -- out's dtype checked (can_cast), out resized, the result written into it
// by the op's out= kernel (Note [Meta step] in ops/meta.h). Included only by the files that
// define or bind them, so the public ops/binary.h (read by most of the tree) is unchanged.
#include <optional>
#include <string>

#include "ember/ops/binary.h"

namespace ember {

#define EMBER_DECLARE_BINARY_OUT(name, node) \
  Tensor& name##_out(const Tensor& self, const Tensor& other, Tensor& out);
EMBER_BINARY_OPS(EMBER_DECLARE_BINARY_OUT)
#undef EMBER_DECLARE_BINARY_OUT
Tensor& add_out(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor& out);
Tensor& sub_out(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor& out);
/// div's rounding_mode: none (true_divide_out), "trunc" or "floor" (floor_divide_out).
Tensor& div_out(const Tensor& self, const Tensor& other, std::optional<std::string> rounding_mode,
                Tensor& out);

}  // namespace ember
