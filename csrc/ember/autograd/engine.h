#pragma once
// Runs the backward graph. See Note [Engine].
#include <optional>

#include "ember/autograd/node.h"

namespace ember::autograd {

/// Accumulates d(roots)/d(leaves) into the leaves' `.grad`
/// (`grad_roots` may hold undefined entries for scalar roots, meaning ones).
/// With `inputs` non-empty, only those tensors receive gradients.
void backward(const variable_list& roots, const variable_list& grad_roots, bool keep_graph,
              bool create_graph, const variable_list& inputs = {});

/// Returns d(outputs)/d(inputs) without touching `.grad` (torch.autograd.grad).
variable_list grad(const variable_list& outputs, const variable_list& inputs,
                   const variable_list& grad_outputs, std::optional<bool> retain_graph,
                   bool create_graph, bool allow_unused);

}  // namespace ember::autograd
