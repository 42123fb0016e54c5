#include "ember/autograd/rename.h"

#include <memory>

#include "ember/autograd/node.h"

namespace ember::autograd {

void rename_history(const Tensor& out, const std::string& name) {
  if (!out.grad_fn()) return;
  auto node = std::make_shared<FunctionNode>(
      name, [](FunctionNode&, const variable_list& grads) { return grads; });
  collect_next_edges(*node, {out});
  set_history(out, node, 0);
}

}  // namespace ember::autograd
