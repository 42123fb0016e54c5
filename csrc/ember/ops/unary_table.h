#pragma once
// The public function of every row of the unary table (Note [Unary table] in schema/unary.h):
// `ember::name(self)`, and `ember::name_(self)` for the kinds with an in-place form. Included
// only by the files that define or bind them (ops/unary.cpp, python/src/ops_unary.cpp,
// python/src/ops_special.cpp) and by code that calls an op outside the stable C++ API of
// ops/unary.h and ops/special.h. (A function declared in both is the same function.) The fused
// activations (kind ACT) have their own signatures, in ops/activation.h.
#include "ember/core/tensor.h"
#include "ember/schema/unary.h"

namespace ember {

// `name_out(self, out)` is the op with torch's out= rules (Python's `out=`): out's dtype
// checked, out resized, the result written into it (Note [Meta step] in ops/meta.h).
#define EMBER_DECLARE_ROW(name, kind, ...) EMBER_DECLARE_ROW_##kind(name)
#define EMBER_DECLARE_ROW_FLOAT(name) \
  EMBER_DECLARE_ROW_BOOL(name)        \
  Tensor& name##_(Tensor& self);
#define EMBER_DECLARE_ROW_SAME(name) EMBER_DECLARE_ROW_FLOAT(name)
#define EMBER_DECLARE_ROW_INT(name) EMBER_DECLARE_ROW_FLOAT(name)
#define EMBER_DECLARE_ROW_BOOL(name) \
  Tensor name(const Tensor& self);   \
  Tensor& name##_out(const Tensor& self, Tensor& out);
#define EMBER_DECLARE_ROW_SPECIAL(name) EMBER_DECLARE_ROW_BOOL(name)
#define EMBER_DECLARE_ROW_NOGRAD(name) EMBER_DECLARE_ROW_BOOL(name)
#define EMBER_DECLARE_ROW_ACT(name)
EMBER_UNARY_OPS(EMBER_DECLARE_ROW)
#undef EMBER_DECLARE_ROW
#undef EMBER_DECLARE_ROW_FLOAT
#undef EMBER_DECLARE_ROW_SAME
#undef EMBER_DECLARE_ROW_INT
#undef EMBER_DECLARE_ROW_BOOL
#undef EMBER_DECLARE_ROW_SPECIAL
#undef EMBER_DECLARE_ROW_NOGRAD
#undef EMBER_DECLARE_ROW_ACT

}  // namespace ember
