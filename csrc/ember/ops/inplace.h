#pragma once
// In-place ops under autograd. See Note [In-place under autograd].
//
// Note [In-place under autograd]
// When the graph is recorded, an in-place op runs as its out-of-place twin on a clone of self
// (so tensors saved for backward never see the overwrite), copies the result into self's
// storage, bumps the version counter and makes self the output of the twin's node. Views of self
// see the new values; a view of a leaf that requires grad, or such a leaf itself, is rejected as
// in PyTorch. Without recording, the backend's in-place kernel writes directly.
#include <functional>

#include "ember/core/tensor.h"
#include "ember/core/type_promotion.h"  // check_inplace_dtype

namespace ember {

/// Raises PyTorch's errors for in-place writes to leaves (or their views) that require grad.
void check_inplace(const Tensor& self);
/// Runs `outofplace(self_or_clone)` with autograd and writes the result into self.
Tensor& apply_inplace(Tensor& self, const std::function<Tensor(const Tensor&)>& outofplace);

}  // namespace ember
