#include "ember/autograd/node.h"

#include <atomic>

#include "ember/autograd/anomaly.h"
#include "ember/autograd/grad_mode.h"
#include "ember/autograd/saved_hooks.h"
#include "ember/core/memory_format.h"
#include "ember/core/profiler_session.h"
#include "ember/core/shape.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/dispatch/profile_range.h"

namespace ember::autograd {

namespace {
std::atomic<uint64_t> g_sequence_nr{0};
// The profiler, a layer below, reads the next node's number (Note [Profiler sequence numbers]).
const bool g_profiler_source = [] {
  profiler::set_sequence_source([] { return g_sequence_nr.load(std::memory_order_relaxed); });
  return true;
}();
}  // namespace

Node::Node() : sequence_nr_(g_sequence_nr.fetch_add(1, std::memory_order_relaxed)) {
  if (anomaly::enabled()) [[unlikely]]
    anomaly::record(sequence_nr_);
  if (profiler::enabled()) [[unlikely]]
    profiler::note_node(sequence_nr_);
}

void raise_freed(const std::string& node) {
  EMBER_ERROR(
      ErrorKind::Runtime,
      "Trying to backward through the graph a second time (or directly access saved "
      "tensors after they have already been freed). Saved intermediate values of the graph "
      "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
      "you need to backward through the graph a second time or if you need to access saved "
      "tensors after calling backward. (node: ",
      node, ")");
}

SavedTensor::SavedTensor(const Tensor& t, bool is_output, const Node* owner)
    : is_output_(is_output) {
  if (!t.defined()) return;
  EMBER_CHECK(!t.storage()->is_inference() || InferenceMode::is_enabled(),
              "Inference tensors cannot be saved for backward. To work around you can make a "
              "clone to get a normal tensor and use it in autograd.");
  was_defined_ = true;
  version_ = t._version();
  requires_grad_ = t.requires_grad();
  if (is_output) output_nr_ = t.output_nr();
  // Wrapped numbers (the 2 of x * 2) stay out of the hooks' sight, as in torch.
  SavedTensorHooks* hooks = saved_hooks::current();
  if (hooks && !t.impl()->is_wrapped_number) [[unlikely]] {
    if (!is_output && requires_grad_) edge_ = gradient_edge(t);
    AutoGradMode no_grad(false);
    packed_ = hooks->pack(is_output ? t.detach() : t, owner);
    EMBER_CHECK(t._version() == version_,
                "A saved tensor pack hook is modifying its input in place. Tensors provided as "
                "input to pack hook cannot be modified by in-place operations as this can lead "
                "to unexpected side-effects. Please open an issue if you need to perform "
                "in-place operations on the input to a pack hook.");
    return;
  }
  data_ = is_output ? t.detach() : t;
}

Tensor SavedTensor::unpack(const std::shared_ptr<Node>& owner) const {
  if (!was_defined_) return Tensor();
  if (packed_) return restore(packed_->unpack(), owner);
  if (!data_.defined()) raise_freed(owner ? owner->name() : "unknown");
  if (data_._version() != version_) {
    // torch's wording: the node is named without its "Backward<n>" suffix; a saved input names
    // the node it comes from now (after the in-place change), a saved output its own node.
    auto op_name = [](std::string n) {
      const size_t at = n.rfind("Backward");
      if (at != std::string::npos && n.find_first_not_of("0123456789", at + 8) == std::string::npos)
        n.resize(at);
      return n;
    };
    std::ostringstream os;
    os << "one of the variables needed for gradient computation has been modified by an inplace "
          "operation: [torch."
       << scalar_type_name(data_.dtype()) << "Tensor " << data_.sizes() << "]";
    if (is_output_ && owner) {
      os << ", which is output " << output_nr_ << " of " << op_name(owner->name());
    } else if (auto* m = meta_if(data_); !is_output_ && m && m->grad_fn) {
      os << ", which is output " << m->output_nr << " of " << op_name(m->grad_fn->name());
    }
    os << ", is at version " << data_._version() << "; expected version " << version_
       << " instead. Hint: "
       << (anomaly::enabled()
               ? "the backtrace further above shows the operation that failed to compute its "
                 "gradient. The variable in question was changed in there or anywhere later. "
                 "Good luck!"
               : "enable anomaly detection to find the operation that failed to compute its "
                 "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).");
    EMBER_ERROR(ErrorKind::Runtime, os.str());
  }
  if (!is_output_ || !requires_grad_) return data_;
  return restore(data_, owner);
}

// Gives an unpacked tensor the history the saved one had (Note [Saved tensor hooks]).
Tensor SavedTensor::restore(Tensor t, const std::shared_ptr<Node>& owner) const {
  EMBER_ASSERT(t.defined());
  if (is_output_ && requires_grad_) {
    // Re-attach the output to its node so double backward flows through it.
    Tensor r = t.detach();
    auto& m = meta(r);
    m.requires_grad = true;
    m.grad_fn = owner;
    m.output_nr = output_nr_;
    return r;
  }
  if (!edge_.valid()) return t.requires_grad() ? t.detach() : t;
  Tensor r = t.detach();
  auto& m = meta(r);
  m.requires_grad = true;
  if (dynamic_cast<AccumulateGrad*>(edge_.fn.get())) {
    m.grad_accumulator = edge_.fn;  // gradients reach the original leaf's .grad
  } else {
    m.grad_fn = edge_.fn;
    m.output_nr = edge_.input_nr;
  }
  return r;
}

void SavedTensor::reset() {
  data_ = Tensor();
  packed_.reset();
  edge_ = Edge();
}

AutogradMeta& meta(const Tensor& t) {
  auto& slot = t.impl()->autograd_meta;
  if (!slot) slot = std::make_unique<AutogradMeta>();
  return static_cast<AutogradMeta&>(*slot);
}

AutogradMeta* meta_if(const Tensor& t) {
  return static_cast<AutogradMeta*>(t.impl()->autograd_meta.get());
}

Edge gradient_edge(const Tensor& t) {
  auto* m = meta_if(t);
  if (!m) return {};
  if (m->grad_fn) return {m->grad_fn, m->output_nr};
  if (!m->requires_grad) return {};
  auto acc = m->grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t);
    m->grad_accumulator = acc;
  }
  return {acc, 0};
}

void set_history(const Tensor& out, const std::shared_ptr<Node>& node, uint32_t output_nr) {
  auto& m = meta(out);
  m.grad_fn = node;
  m.output_nr = output_nr;
  m.requires_grad = true;
}

namespace {
// Note [Gradient layout]
// As PyTorch's AccumulateGrad: a leaf's first gradient has the leaf's strides when the leaf is
// dense and non-overlapping (a channels-last or transposed parameter gets a .grad laid out the
// same way, so an optimizer's update runs over both in one order), and is row-major otherwise.
// A gradient that already has that layout is kept (or stolen) as before; another is copied once.
// Later gradients are added into the first, which keeps its layout.
bool obeys_layout(const Tensor& g, const Tensor& v) {
  if (g.dim() != v.dim()) return true;  // a mismatch the engine reports elsewhere
  if (!is_non_overlapping_and_dense(v.sizes(), v.strides())) return g.is_contiguous();
  for (int64_t d = 0; d < g.dim(); ++d) {
    const int64_t gs = g.strides()[size_t(d)];
    if (g.sizes()[size_t(d)] != 1 ? gs != v.strides()[size_t(d)] : gs == 0) return false;
  }
  return true;
}

Tensor copy_in_layout(const Tensor& g, const Tensor& v) {
  const bool dense = is_non_overlapping_and_dense(v.sizes(), v.strides());
  Tensor out =
      empty_strided(v.sizes(), dense ? DimVector(v.strides()) : contiguous_strides(v.sizes()),
                    g.dtype(), g.device());
  out.copy_(g);
  return out;
}
}  // namespace

namespace {
// Whether nobody else can reach g's memory: g is held only here, and so is its storage, or g is
// a view (a formula's t(), the engine's sum_to) of a base that only g's view record holds.
bool stealable(const Tensor& g) {
  if (g.impl_ptr().use_count() != 1) return false;
  const int64_t holders = g.storage().use_count();
  if (holders == 1) return true;
  const AutogradMeta* m = meta_if(g);
  return holders == 2 && m && m->view_base.defined() && m->view_base.impl_ptr().use_count() == 1 &&
         m->view_base.storage() == g.storage();
}
}  // namespace

AccumulateGrad::AccumulateGrad(Tensor v) : variable(std::move(v)) {
  input_meta.emplace_back(variable);
  if (profiler::enabled()) [[unlikely]]
    profiler::note_accumulator(sequence_nr());
}

variable_list AccumulateGrad::apply(variable_list&& grads) {
  Tensor g = std::move(grads[0]);
  if (!g.defined()) return {};
  auto& m = meta(variable);
  for (auto& hook : m.leaf_hooks) {
    Tensor r = hook(g);
    if (r.defined()) g = r;
  }
  std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
  {
    KernelRegion waiting;  // the holder may be inside a kernel, waiting for the GIL back
    lock.lock();
  }
  if (!m.grad.defined() && !obeys_layout(g, variable)) {
    m.grad = copy_in_layout(GradMode::is_enabled() ? g : g.detach(), variable);
  } else if (!m.grad.defined()) {
    // Steal the buffer when nobody else holds it; otherwise keep the caller's tensor intact.
    bool exclusive = stealable(g);
    if (GradMode::is_enabled()) {
      m.grad = g;
    } else if (exclusive) {
      // torch's rows for the stolen buffer: aten::detach > detach (Note [Profiler rows]).
      profiler::OpRange range("detach", g);
      profiler::Range inner(profiler::RangeKind::Autograd, "detach");
      if (inner.handle() >= 0 && profiler::records_shapes())
        ::ember::detail::profile_inputs(inner.handle(), g);
      m.grad = g.detach();
    } else {
      m.grad = g.detach().clone();
    }
  } else if (GradMode::is_enabled()) {
    m.grad = m.grad.add(g);
  } else {
    m.grad.add_(g);
  }
  // A copy: a hook may register further hooks on this leaf.
  auto post = m.post_accumulate_hooks;
  for (auto& hook : post) hook();
  return {};
}

variable_list FunctionNode::apply(variable_list&& grads) {
  // A node that saved nothing (sum, a view, an add) can run again after its graph was freed:
  // PyTorch allows y.backward() twice on y = x.sum().
  if (released_ && had_saved_) raise_freed(name_);
  return fn_(*this, grads);
}

void FunctionNode::release_variables() {
  for (auto& s : saved_) had_saved_ = had_saved_ || s.defined();  // placeholders don't count
  for (auto& s : saved_) s.reset();
  released_ = true;
}

size_t FunctionNode::save(const Tensor& t, bool is_output) {
  saved_.emplace_back(t, is_output, this);
  return saved_.size() - 1;
}

Tensor FunctionNode::saved(size_t i) { return saved_[i].unpack(shared_from_this()); }

bool any_requires_grad(std::initializer_list<const Tensor*> ts) {
  if (!GradMode::is_enabled()) return false;
  for (const Tensor* t : ts)
    if (t->defined() && t->requires_grad()) return true;
  return false;
}

bool any_requires_grad(TensorList ts) {
  if (!GradMode::is_enabled()) return false;
  for (const Tensor& t : ts)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}

void collect_next_edges(Node& node, TensorList inputs) {
  node.next_edges.reserve(inputs.size());
  node.input_meta.reserve(inputs.size());
  for (const Tensor& t : inputs) {
    if (t.defined()) {
      node.next_edges.push_back(gradient_edge(t));
      node.input_meta.emplace_back(t);
    } else {
      node.next_edges.emplace_back();
      node.input_meta.emplace_back();
    }
  }
}

std::shared_ptr<FunctionNode> record(const char* name, TensorList inputs, TensorList outputs,
                                     FunctionNode::Backward backward) {
  if (!any_requires_grad(inputs)) return nullptr;
  auto node = std::make_shared<FunctionNode>(name, std::move(backward));
  collect_next_edges(*node, inputs);
  // Nodes for in-place writes get their output attached by the caller (set_history).
  node->num_outputs = std::max<uint32_t>(1, uint32_t(outputs.size()));
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    // Integer and bool outputs (indices, comparisons) never carry gradients.
    if (out.defined() && is_differentiable_type(out.dtype())) set_history(out, node, uint32_t(i));
  }
  return node;
}

}  // namespace ember::autograd
