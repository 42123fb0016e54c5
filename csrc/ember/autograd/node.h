#pragma once
// The backward graph: nodes, edges, saved tensors and per-tensor autograd state.
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "ember/core/tensor.h"

namespace ember::autograd {

using variable_list = std::vector<Tensor>;
class Node;

/// Where a gradient goes: input `input_nr` of node `fn`.
struct Edge {
  std::shared_ptr<Node> fn;
  uint32_t input_nr = 0;
  bool valid() const { return bool(fn); }
};

/// Shape and dtype of a tensor a gradient must match.
struct TensorMeta {
  DimVector shape;
  ScalarType dtype = kFloat;
  Device device;
  TensorMeta() = default;
  explicit TensorMeta(const Tensor& t) : shape(t.sizes()), dtype(t.dtype()), device(t.device()) {}
};

using TensorHook = std::function<Tensor(const Tensor&)>;

/// A backward function: gradients of its forward outputs in, gradients of its inputs out.
class Node : public std::enable_shared_from_this<Node> {
 public:
  Node();
  virtual ~Node() = default;
  /// PyTorch's class name, e.g. "MulBackward0".
  virtual std::string name() const = 0;
  /// One gradient per forward output (undefined if none flowed) -> one per next edge.
  virtual variable_list apply(variable_list&& grads) = 0;
  /// Frees saved tensors after a backward without retain_graph.
  virtual void release_variables() {}

  uint64_t sequence_nr() const { return sequence_nr_; }
  /// Edges to the nodes of the forward inputs, one per input (invalid if it needs no grad).
  std::vector<Edge> next_edges;
  /// True if forward input `i` wants a gradient: backward formulas compute only those, and
  /// forwards save only the tensors those formulas read (see Note [Saving for needed grads]).
  bool needs_input_grad(size_t i) const { return i < next_edges.size() && next_edges[i].valid(); }
  /// Metadata of each forward input, to reduce a broadcast gradient back to its shape.
  std::vector<TensorMeta> input_meta;
  /// Number of forward outputs (gradients this node receives).
  uint32_t num_outputs = 1;
  /// Hooks on the gradient of one forward output (Tensor.register_hook on non-leaves).
  std::vector<std::pair<uint32_t, TensorHook>> tensor_pre_hooks;
  /// Hooks on the whole node (grad_fn.register_prehook / register_hook).
  std::vector<std::function<variable_list(const variable_list&)>> pre_hooks;
  std::vector<std::function<variable_list(const variable_list&, const variable_list&)>> post_hooks;

 private:
  uint64_t sequence_nr_;
};

/// Marks a graph freed by backward without retain_graph.
[[noreturn]] void raise_freed(const std::string& node);

class PackedTensor;  // saved_hooks.h

/// A tensor saved for backward, checked against in-place changes when unpacked. While
/// saved-tensor hooks are pushed it keeps what the pack hook returned instead (Note [Saved tensor
/// hooks] in saved_hooks.h).
class SavedTensor {
 public:
  SavedTensor() = default;
  /// `is_output`: the tensor is an output of `node` (saved without a strong ref to avoid a cycle).
  /// `owner`: the node that saves it (given to pack hooks).
  SavedTensor(const Tensor& t, bool is_output, const Node* owner = nullptr);
  /// The saved tensor; raises if it was freed or modified in place since it was saved.
  Tensor unpack(const std::shared_ptr<Node>& owner) const;
  void reset();
  bool defined() const { return data_.defined() || was_defined_; }
  /// True if a pack hook holds the tensor.
  bool is_packed() const { return packed_ != nullptr; }

 private:
  Tensor restore(Tensor t, const std::shared_ptr<Node>& owner) const;
  Tensor data_;  // the tensor (inputs) or an alias without history (outputs)
  std::shared_ptr<PackedTensor> packed_;  // what a pack hook returned, instead of data_
  Edge edge_;                             // packed inputs requiring grad: where they lead
  uint32_t version_ = 0;
  uint32_t output_nr_ = 0;
  bool is_output_ = false;
  bool requires_grad_ = false;
  bool was_defined_ = false;
};

/// Per-tensor autograd state (requires_grad, grad, grad_fn, hooks).
struct AutogradMeta : AutogradMetaInterface {
  bool requires_grad = false;
  Tensor grad;
  std::shared_ptr<Node> grad_fn;
  uint32_t output_nr = 0;
  std::weak_ptr<Node> grad_accumulator;
  /// Set by retain_grad(): the slot a hook on grad_fn fills with this tensor's gradient.
  std::shared_ptr<Tensor> retained_grad;
  /// Hooks on a leaf's gradient, run before accumulation.
  std::vector<TensorHook> leaf_hooks;
  /// Hooks run after a leaf's .grad was accumulated (register_post_accumulate_grad_hook).
  std::vector<std::function<void()>> post_accumulate_hooks;
  /// For views: the tensor they view (in-place checks on views of leaves).
  Tensor view_base;
  bool is_view = false;
};

/// The autograd state of `t`, created on demand.
AutogradMeta& meta(const Tensor& t);
/// The state if it exists.
AutogradMeta* meta_if(const Tensor& t);

/// The edge gradients of `t` flow into: its grad_fn, or its leaf accumulator, or none.
Edge gradient_edge(const Tensor& t);

/// Sets history: `out` becomes output `output_nr` of `node`.
void set_history(const Tensor& out, const std::shared_ptr<Node>& node, uint32_t output_nr = 0);

/// Accumulates into a leaf's `.grad`.
class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(Tensor variable);
  std::string name() const override { return "AccumulateGrad"; }
  variable_list apply(variable_list&& grads) override;
  Tensor variable;

 private:
  // Backward passes in several threads may reach the same leaf at once.
  std::mutex mutex_;
};

/// The backward of a function given as a closure over its saved tensors.
class FunctionNode : public Node {
 public:
  using Backward = std::function<variable_list(FunctionNode& self, const variable_list& grads)>;
  FunctionNode(std::string name, Backward fn) : name_(std::move(name)), fn_(std::move(fn)) {}
  std::string name() const override { return name_; }
  variable_list apply(variable_list&& grads) override;
  void release_variables() override;

  /// Saves a tensor; returns its index for `saved(i)`.
  size_t save(const Tensor& t, bool is_output = false);
  /// Unpacks saved tensor `i` (version-checked).
  Tensor saved(size_t i);
  size_t num_saved() const { return saved_.size(); }
  /// True once release_variables ran (a second backward needs retain_graph).
  bool released() const { return released_; }

 private:
  std::string name_;
  Backward fn_;
  std::vector<SavedTensor> saved_;
  bool released_ = false;
  bool had_saved_ = false;  // saved tensors when released: a second apply must raise
};

// Note [Saving for needed grads]
// A forward saves an input only when a gradient that will be computed reads it: x * 0.5 or
// x @ w with a constant w keep no reference to x. Besides memory, this is what lets a program
// modify x in place after using it there, as PyTorch allows (its derivatives.yaml formulas are
// guarded the same way); saving x anyway would make backward fail its version check.
// Formulas written with EMBER_DERIVATIVE (ops/derivative.h) get this from their text.

/// True if grad mode is on and any tensor requires grad.
bool any_requires_grad(std::initializer_list<const Tensor*> ts);
bool any_requires_grad(TensorList ts);

/// Connects `node` to the forward inputs (edges and input metadata).
void collect_next_edges(Node& node, TensorList inputs);

/// Builds a FunctionNode over `inputs`, attaches it to `outputs` and returns it for saving.
std::shared_ptr<FunctionNode> record(const char* name, TensorList inputs, TensorList outputs,
                                     FunctionNode::Backward backward);

}  // namespace ember::autograd
