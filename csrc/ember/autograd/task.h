#pragma once
// What the running backward asks for: read by backward formulas. See Note [Engine pruning].
#include <cstddef>

#include "ember/autograd/node.h"

namespace ember::autograd {

/// In a backward formula: true if the running backward wants the gradient of forward input `i`
/// of `node`, i.e. the input needs a gradient (`node.needs_input_grad(i)`) and, when the call
/// named `inputs` (backward(inputs=...), autograd.grad), leads to one of them.
bool task_should_compute_output(const Node& node, size_t i);

}  // namespace ember::autograd
