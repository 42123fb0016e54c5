#include "ember/autograd/engine.h"

#include <atomic>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "ember/autograd/anomaly.h"
#include "ember/autograd/grad_mode.h"
#include "ember/autograd/task.h"
#include "ember/core/profiler.h"
#include "ember/core/profiler_session.h"
#include "ember/core/shape.h"
#include "ember/dispatch/profile_range.h"

namespace ember::autograd {

// Note [Engine]
// Backward runs in two passes. The first walks the graph from the roots and counts, per node,
// how many edges point at it (restricted to nodes that lead to the requested inputs, if any).
// The second runs a node once all its incoming gradients have arrived, highest sequence number
// first among ready nodes (so the most recent forward op runs first, as in PyTorch). Gradients
// for one node are summed in its input buffer. Every gradient is reduced to the shape and dtype of
// the forward input it belongs to, which is how broadcasting and type promotion are undone.
//
// Note [Engine pruning]
// As torch's engine (its exec_info): a call with `inputs` (backward(inputs=...), autograd.grad)
// runs only what lies on a path from the roots to those inputs. Each node reached gets two
// marks: `captured` (autograd.grad reads the gradient arriving at it: the node of a requested
// tensor) and `needed` (it runs: a node of backward's `inputs`, whose run accumulates into .grad
// or fills a retained grad, or a node with a successor that is needed or captured). A node with
// neither mark is not visited at all: its hooks do not fire, its formula does not run, a leaf's
// .grad behind it is untouched. A captured node that is not needed runs its tensor hooks (for a
// leaf, its hooks on .grad; a retained grad is filled) before its gradient is read, and stops
// there. A needed node runs whole, and its formula computes only the gradients of inputs whose
// node is marked (`task_should_compute_output` in autograd/task.h, read by the derivative helper);
// the gradients a formula computes anyway (a Python Function's) go nowhere. Without `inputs`
// nothing is marked and every node runs. As torch, a needed node's captured gradient is read
// before its hooks run, and `ctx.needs_input_grad` of a Python Function keeps what it was at
// forward time.

namespace {
struct ExecInfo {
  bool needed = false;
  bool captured = false;
  bool should_execute() const { return needed || captured; }
};
using ExecMap = std::unordered_map<const Node*, ExecInfo>;
// The marks of the backward running on this thread; null: no pruning (every node runs).
thread_local const ExecMap* t_exec_info = nullptr;

struct ExecInfoGuard {
  const ExecMap* saved = t_exec_info;
  explicit ExecInfoGuard(const ExecMap* m) { t_exec_info = m; }
  ~ExecInfoGuard() { t_exec_info = saved; }
  ExecInfoGuard(const ExecInfoGuard&) = delete;
  ExecInfoGuard& operator=(const ExecInfoGuard&) = delete;
};

// The backward running on this thread, for hooks that ask about it (torch's graph task):
// its id, the nodes reached from its roots and, with `inputs`, its marks.
struct GraphTask {
  int64_t id;
  const std::unordered_set<Node*>* reached;
  const ExecMap* exec;
};
thread_local const GraphTask* t_task = nullptr;
std::atomic<int64_t> g_next_task_id{0};

struct GraphTaskGuard {
  const GraphTask* saved = t_task;
  explicit GraphTaskGuard(const GraphTask* t) { t_task = t; }
  ~GraphTaskGuard() { t_task = saved; }
  GraphTaskGuard(const GraphTaskGuard&) = delete;
  GraphTaskGuard& operator=(const GraphTaskGuard&) = delete;
};
}  // namespace

int64_t current_graph_task_id() { return t_task ? t_task->id : -1; }

bool will_engine_execute_node(const Node& node) {
  EMBER_CHECK(t_task, "_will_engine_execute_node should only be called during the backward pass");
  Node* n = const_cast<Node*>(&node);
  if (!t_task->exec) return t_task->reached->count(n) > 0;
  auto it = t_task->exec->find(n);
  return it != t_task->exec->end() && it->second.should_execute();
}

bool task_should_compute_output(const Node& node, size_t i) {
  if (!node.needs_input_grad(i)) return false;
  if (!t_exec_info) return true;
  auto it = t_exec_info->find(node.next_edges[i].fn.get());
  return it != t_exec_info->end() && it->second.should_execute();
}

namespace {

// Runs a node's backward under anomaly mode (Note [Anomaly mode]): NaN in its results raises,
// and any error is preceded by the warning that shows the forward call that created the node.
template <class F>
void apply_with_anomaly_checks(Node& n, F&& apply_node, const variable_list& outs) {
  try {
    apply_node();
    if (anomaly::check_nan()) {
      AutoGradMode no_grad(false);
      for (size_t i = 0; i < outs.size(); ++i) {
        const Tensor& o = outs[i];
        if (!o.defined() || !is_floating_point(o.dtype())) continue;
        if (o.isnan().any().item<bool>())
          EMBER_ERROR(ErrorKind::Runtime, "Function '", n.name(), "' returned nan values in its ",
                      i, "th output.");
      }
    }
  } catch (...) {
    anomaly::warn_error_in(n.name(), n.sequence_nr());
    throw;
  }
}

struct Buffer {
  variable_list grads;
};

Tensor make_ones_like_root(const Tensor& root) {
  EMBER_CHECK(root.numel() == 1, "grad can be implicitly created only for scalar outputs");
  EMBER_CHECK(is_floating_point(root.dtype()),
              "grad can be implicitly created only for real scalar outputs but got ",
              dtype_name(root.dtype()));
  // torch's rows: aten::ones_like > (aten::empty_like > aten::empty_strided, aten::fill_).
  const std::nullopt_t none = std::nullopt;
  profiler::OpRange range("ones_like", root, none, none, none, none, none);
  Tensor ones;
  {
    profiler::OpRange el("empty_like", root, none, none, none, none, none);
    profiler::OpRange es("empty_strided", none, none, none, none, none, none);
    ones = empty(root.sizes(), root.dtype(), root.device());
  }
  ones.fill_(1);
  return ones;
}

// Sums g over the dims it was broadcast along, to `shape` (ops' sum_to, in Tensor methods:
// autograd sits below ops and reaches them only through the methods core/tensor.h declares).
Tensor sum_to_shape(const Tensor& g, IntArrayRef shape) {
  int64_t lead = g.dim() - int64_t(shape.size());
  DimVector dims;
  for (int64_t d = 0; d < g.dim(); ++d)
    if (d < lead || (shape[size_t(d - lead)] == 1 && g.sizes()[size_t(d)] != 1)) dims.push_back(d);
  Tensor r = dims.empty() ? g : g.sum(dims, true);
  // torch's sum_to views the sum (a fresh sum always has a view; profile rows as torch's)
  if (lead > 0 || !r.sizes().equals(shape))
    r = view_strides(r.sizes(), r.strides(), shape) ? r.view(shape) : r.reshape(shape);
  return r;
}

// Brings a gradient to its input's shape (sum over broadcast dims) and dtype.
// The engine's ranges of a node carry its sequence number, except AccumulateGrad's, as torch's
// (Note [Profiler sequence numbers] in core/profiler_session.h).
void mark_node(int64_t handle, const Node& n) {
  if (handle >= 0 && !dynamic_cast<const AccumulateGrad*>(&n))
    profiler::set_range_node(handle, n.sequence_nr());
}

Tensor conform(Tensor g, const TensorMeta& m, const Node& node, size_t i) {
  if (!g.defined()) return g;
  if (!g.sizes().equals(m.shape)) {
    EMBER_CHECK(numel_of(m.shape) == g.numel() || is_expandable_to(m.shape, g.sizes()), "Function ",
                node.name(), " returned an invalid gradient at index ", i, " - got ", g.sizes(),
                " but expected shape compatible with ", IntArrayRef(m.shape));
    g = is_expandable_to(m.shape, g.sizes()) ? sum_to_shape(g, m.shape) : g.reshape(m.shape);
  }
  if (g.dtype() != m.dtype && is_differentiable_type(m.dtype)) g = g.to(m.dtype);
  return g;
}

void accumulate(variable_list& slot_grads, size_t idx, Tensor g) {
  if (!g.defined()) return;
  EMBER_ASSERT(idx < slot_grads.size());
  Tensor& slot = slot_grads[idx];
  if (!slot.defined()) slot = std::move(g);
  else slot = slot.add(g);
}

struct Task {
  uint64_t seq;
  Node* node;
  bool operator<(const Task& o) const { return seq < o.seq; }
};

// Runs the tensor hooks of a node's incoming gradients: hooks on a non-leaf's gradient (and
// retain_grad's), and for a leaf's accumulator, the hooks on the leaf's gradient when it is
// `leaf_too` (a needed accumulator runs those itself, in apply).
void run_tensor_pre_hooks(Node& n, variable_list& grads, bool leaf_too) {
  for (auto& [nr, hook] : n.tensor_pre_hooks) {
    if (!grads[nr].defined()) continue;
    Tensor r = hook(grads[nr]);
    if (r.defined()) grads[nr] = r;
  }
  if (!leaf_too) return;
  if (auto* acc = dynamic_cast<AccumulateGrad*>(&n); acc && grads[0].defined()) {
    if (auto* m = meta_if(acc->variable))
      for (auto& hook : m->leaf_hooks) {
        Tensor r = hook(grads[0]);
        if (r.defined()) grads[0] = r;
      }
  }
}

// Runs the graph. `targets` (with `captured`) are the edges of the requested inputs: with
// `accumulate_grad`, their nodes run (backward(inputs=...)); without, the gradients arriving there
// are captured into `captured` (autograd.grad). No targets: every node runs.
void run(const variable_list& roots, const variable_list& grad_roots, bool keep_graph,
         bool create_graph, const std::vector<Edge>& targets, variable_list* captured,
         bool accumulate_grad) {
  AutoGradMode mode(create_graph);
  std::vector<Edge> root_edges;
  for (size_t i = 0; i < roots.size(); ++i) {
    const Tensor& r = roots[i];
    EMBER_CHECK(r.requires_grad(), "element ", i,
                " of tensors does not require grad and does not have a grad_fn");
    root_edges.push_back(gradient_edge(r));
  }

  // Pass 1: every node reachable from the roots, successors before predecessors (post-order).
  std::vector<Node*> order;
  std::unordered_set<Node*> seen;
  {
    std::vector<std::pair<Node*, size_t>> stack;  // node, next edge to look at
    for (auto& e : root_edges) {
      if (!seen.insert(e.fn.get()).second) continue;
      stack.push_back({e.fn.get(), 0});
      while (!stack.empty()) {
        auto& [n, i] = stack.back();
        if (i < n->next_edges.size()) {
          Node* next = n->next_edges[i++].fn.get();
          if (next && seen.insert(next).second) stack.push_back({next, 0});
          continue;
        }
        order.push_back(n);
        stack.pop_back();
      }
    }
  }
  // Marks (Note [Engine pruning]): one pass, as successors come first in `order`.
  ExecMap exec;
  std::unordered_map<Node*, std::vector<std::pair<uint32_t, size_t>>> capture_at;
  const bool prune = !targets.empty();
  if (prune) {
    for (size_t i = 0; i < targets.size(); ++i) {
      if (!targets[i].valid()) continue;
      ExecInfo& info = exec[targets[i].fn.get()];
      if (accumulate_grad) {
        info.needed = true;
      } else {
        info.captured = true;
        capture_at[targets[i].fn.get()].push_back({targets[i].input_nr, i});
      }
    }
    for (Node* n : order) {
      auto it = exec.find(n);
      if (it != exec.end() && it->second.needed) continue;
      for (auto& e : n->next_edges) {
        if (!e.valid()) continue;
        auto c = exec.find(e.fn.get());
        if (c != exec.end() && c->second.should_execute()) {
          exec[n].needed = true;
          break;
        }
      }
    }
  }
  auto should_execute = [&](const Node* n) {
    if (!prune) return true;
    auto it = exec.find(n);
    return it != exec.end() && it->second.should_execute();
  };
  // Dependencies: edges between nodes that run.
  std::unordered_map<Node*, int> deps;
  for (Node* n : order) {
    if (!should_execute(n)) continue;
    for (auto& e : n->next_edges)
      if (e.valid() && should_execute(e.fn.get())) deps[e.fn.get()] += 1;
  }
  ExecInfoGuard marks(prune ? &exec : nullptr);
  const GraphTask task{g_next_task_id++, &seen, prune ? &exec : nullptr};
  GraphTaskGuard task_guard(&task);

  std::unordered_map<Node*, Buffer> buffers;
  std::priority_queue<Task> ready;
  auto buffer_of = [&](Node* n) -> Buffer& {
    auto& b = buffers[n];
    if (b.grads.empty()) b.grads.resize(n->num_outputs);
    return b;
  };
  for (size_t i = 0; i < roots.size(); ++i) {
    Tensor g = grad_roots.size() > i && grad_roots[i].defined() ? grad_roots[i]
                                                                : make_ones_like_root(roots[i]);
    EMBER_CHECK(g.sizes().equals(roots[i].sizes()), "Mismatch in shape: grad_output[", i,
                "] has a shape of ", g.sizes(), " and output[", i, "] has a shape of ",
                roots[i].sizes(), ".");
    Node* n = root_edges[i].fn.get();
    if (should_execute(n)) accumulate(buffer_of(n).grads, root_edges[i].input_nr, g);
  }
  for (auto& e : root_edges) {
    Node* n = e.fn.get();
    if (!should_execute(n)) continue;
    int& d = deps[n];
    if (d == 0) {
      ready.push({n->sequence_nr(), n});
      d = -1;  // queued
    }
  }

  while (!ready.empty()) {
    Node* n = ready.top().node;
    ready.pop();
    // torch's two ranges per node (Note [Profiler]): the engine's work on it, and its apply.
    profiler::Range evaluate;
    if (profiler::enabled()) [[unlikely]] {
      evaluate.begin(profiler::RangeKind::Autograd,
                     "autograd::engine::evaluate_function: " + n->name());
      mark_node(evaluate.handle(), *n);
    }
    variable_list grads = std::move(buffer_of(n).grads);
    buffers.erase(n);
    const bool needed = !prune || exec[n].needed;
    auto cap = capture_at.find(n);
    if (!needed) {
      // Captured only: its tensor hooks, then the gradient is read; nothing runs past it.
      run_tensor_pre_hooks(*n, grads, true);
      if (cap != capture_at.end())
        for (auto [nr, slot] : cap->second) accumulate(*captured, slot, grads[nr]);
      continue;
    }
    if (cap != capture_at.end())
      for (auto [nr, slot] : cap->second) accumulate(*captured, slot, grads[nr]);
    run_tensor_pre_hooks(*n, grads, false);
    for (auto& hook : n->pre_hooks) {
      variable_list r = hook(grads);
      if (!r.empty()) grads = std::move(r);
    }

    bool any_grad = false;
    for (auto& g : grads) any_grad = any_grad || g.defined();
    variable_list outs;
    if (any_grad) {
      // The inputs again for the post hooks only: an extra reference would keep AccumulateGrad
      // from stealing the gradient's buffer.
      variable_list grads_in;
      if (!n->post_hooks.empty()) grads_in = grads;
      auto apply_node = [&] {
        {
          profiler::Range apply;
          if (profiler::enabled()) [[unlikely]] {
            apply.begin(profiler::RangeKind::Autograd, n->name());
            mark_node(apply.handle(), *n);
            if (apply.handle() >= 0 && profiler::records_shapes())  // the node's inputs, as torch
              for (const Tensor& g : grads) ::ember::detail::profile_inputs(apply.handle(), g);
          }
          outs = n->apply(std::move(grads));
        }
        for (auto& hook : n->post_hooks) {
          variable_list r = hook(outs, grads_in);
          if (!r.empty()) outs = std::move(r);
        }
      };
      if (anomaly::enabled()) [[unlikely]]
        apply_with_anomaly_checks(*n, apply_node, outs);
      else apply_node();
      if (!keep_graph) n->release_variables();
    }
    for (size_t i = 0; i < n->next_edges.size(); ++i) {
      const Edge& e = n->next_edges[i];
      if (!e.valid()) continue;
      Node* next = e.fn.get();
      if (!should_execute(next)) continue;  // a gradient that leads nowhere requested
      if (i < outs.size() && outs[i].defined()) {
        Tensor g = conform(outs[i], n->input_meta[i], *n, i);
        accumulate(buffer_of(next).grads, e.input_nr, std::move(g));
      }
      // Every node is visited once its last producer ran, even without a gradient, so that
      // its successors' counts still reach zero.
      if (--deps[next] == 0) ready.push({next->sequence_nr(), next});
    }
  }
}

std::vector<Edge> edges_of(const variable_list& inputs) {
  std::vector<Edge> edges;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    EMBER_CHECK(t.requires_grad(), "One of the differentiated Tensors does not require grad");
    edges.push_back(gradient_edge(t));
  }
  return edges;
}

}  // namespace

void backward(const variable_list& roots, const variable_list& grad_roots, bool keep_graph,
              bool create_graph, const variable_list& inputs) {
  if (inputs.empty()) {
    run(roots, grad_roots, keep_graph, create_graph, {}, nullptr, true);
    return;
  }
  // backward(inputs=...) runs the inputs' nodes: a leaf's accumulator fills its .grad, a
  // non-leaf's node fills the grad it now retains (as torch, which calls retain_grad on it).
  std::vector<Edge> targets = edges_of(inputs);
  for (const Tensor& t : inputs)
    if (!t.is_leaf()) t.retain_grad();
  run(roots, grad_roots, keep_graph, create_graph, targets, nullptr, true);
}

// backward(inputs=GradientEdges): the edges' nodes run (a leaf's accumulator fills its .grad;
// a non-leaf edge has no tensor to retain a grad in, so only the nodes past it are pruned).
void backward(const variable_list& roots, const variable_list& grad_roots, bool keep_graph,
              bool create_graph, const std::vector<Edge>& inputs) {
  EMBER_CHECK(!inputs.empty(), "backward: inputs must not be empty");
  run(roots, grad_roots, keep_graph, create_graph, inputs, nullptr, true);
}

variable_list grad(const variable_list& outputs, const std::vector<Edge>& inputs,
                   const variable_list& grad_outputs, std::optional<bool> retain_graph,
                   bool create_graph, bool allow_unused) {
  EMBER_CHECK(!inputs.empty(), "grad requires at least one input tensor");
  variable_list captured(inputs.size());
  run(outputs, grad_outputs, retain_graph.value_or(create_graph), create_graph, inputs, &captured,
      false);
  for (size_t i = 0; i < inputs.size(); ++i) {
    EMBER_CHECK(allow_unused || captured[i].defined(), "The differentiated Tensor at index ", i,
                " appears to not have been used in the graph. Set allow_unused=True if this is "
                "the desired behavior.");
    if (captured[i].defined() && !create_graph) captured[i] = captured[i].detach();
  }
  return captured;
}

variable_list grad(const variable_list& outputs, const variable_list& inputs,
                   const variable_list& grad_outputs, std::optional<bool> retain_graph,
                   bool create_graph, bool allow_unused) {
  EMBER_CHECK(!inputs.empty(), "grad requires at least one input tensor");
  return grad(outputs, edges_of(inputs), grad_outputs, retain_graph, create_graph, allow_unused);
}

}  // namespace ember::autograd
