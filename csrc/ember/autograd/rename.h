#pragma once
// torch's node names on composite results. See Note [Composite node names] in
// docs/ARCHITECTURE.md.
#include <string>

#include "ember/core/tensor.h"

namespace ember::autograd {

/// Gives `out` (a result with history) a pass-through grad_fn named `name`, as torch's one fused
/// node would be named; the composite's own nodes stay below it and gradients are unchanged.
/// A result without history is left as it is.
void rename_history(const Tensor& out, const std::string& name);

}  // namespace ember::autograd
