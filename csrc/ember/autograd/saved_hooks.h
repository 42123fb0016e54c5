#pragma once
// Saved-tensor hooks (torch.autograd.graph.saved_tensors_hooks): while hooks are pushed on this
// thread, every tensor a node saves for backward is handed to `pack`, and the node keeps only
// what pack returned; backward gets the tensor back through `unpack`. See Note [Saved tensor
// hooks].
#include <memory>
#include <optional>
#include <string>

#include "ember/core/tensor.h"

namespace ember::autograd {

class Node;

/// What a pack hook returned, opaque to autograd: unpack() gives a tensor back.
class PackedTensor {
 public:
  virtual ~PackedTensor() = default;
  virtual Tensor unpack() = 0;
};

/// A pack/unpack pair. `owner` is the node that saves the tensor (it will own the result).
class SavedTensorHooks {
 public:
  virtual ~SavedTensorHooks() = default;
  virtual std::shared_ptr<PackedTensor> pack(const Tensor& t, const Node* owner) = 0;
};

namespace saved_hooks {

/// The innermost hooks pushed on this thread, or null (the one check a save pays without hooks).
SavedTensorHooks* current() noexcept;
/// Pushes hooks; raises RuntimeError with the message of disable() while hooks are disabled.
void push(std::shared_ptr<SavedTensorHooks> hooks);
/// Pops the innermost hooks.
void pop();
/// Forbids pushing hooks on this thread (raises `message` now if some are pushed).
void disable(const std::string& message);
/// Allows pushing hooks again.
void enable();
/// The message of disable() while hooks are disabled.
std::optional<std::string> disabled_message();

}  // namespace saved_hooks

// Note [Saved tensor hooks]
// A SavedTensor (node.h) built while hooks are pushed calls pack(tensor) under no_grad and keeps
// the PackedTensor instead of the tensor (an output of the node is passed detached, so a hook
// that returns it as is makes no cycle through the node). Unpacking restores the autograd
// identity the tensor had when saved: an output is re-attached to its node, an input that
// required grad gets the edge it had (its grad_fn, or its leaf's accumulator), so double
// backward through unpacked tensors reaches the same graph. As in torch, a tensor saved through
// hooks is not version-checked (the hooks own its lifetime: save_on_cpu copies it, checkpoint
// recomputes it), and the hook may not modify its input in place.

}  // namespace ember::autograd
