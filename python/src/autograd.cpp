// Autograd from Python: Tensor's grad attributes, graph nodes, hooks, grad modes, the engine,
// and nodes for Python-defined autograd.Function.
#include <unordered_map>

#include "common.h"
#include "ember/autograd/anomaly.h"
#include "ember/autograd/node.h"
#include "ember/autograd/rename.h"
#include "ember/dispatch/autocast.h"

// engine.cpp's graph-task queries and edge-input grad and backward, declared here rather than in
// engine.h (which every binding includes through ember.h).
namespace ember::autograd {
variable_list grad(const variable_list& outputs, const std::vector<Edge>& inputs,
                   const variable_list& grad_outputs, std::optional<bool> retain_graph,
                   bool create_graph, bool allow_unused);
void backward(const variable_list& roots, const variable_list& grad_roots, bool keep_graph,
              bool create_graph, const std::vector<Edge>& inputs);
int64_t current_graph_task_id();
bool will_engine_execute_node(const Node& node);
}  // namespace ember::autograd

namespace ember::py {

namespace {

// torch's refusal of detach_() on a view (its DDP remark included: programs search for it).
constexpr const char* kDetachViewMsg =
    "Can't detach views in-place. Use detach() instead. If you are using "
    "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as True, "
    "gradients are views of DDP buckets, and hence detach_() cannot be called on these "
    "gradients. To fix this error, please refer to the Optimizer.zero_grad() function in "
    "torch/optim/optimizer.py as the solution.";

using autograd::Node;
using autograd::variable_list;

// A removable hook: the registered closure checks `alive` before running.
struct HookHandle {
  std::shared_ptr<bool> alive;
  void remove() { *alive = false; }
};

Tensor call_tensor_hook(const nb::object& fn, const Tensor& g) {
  nb::object r = fn(g);
  if (r.is_none()) return Tensor();
  return nb::cast<Tensor>(r);
}

variable_list to_variables(nb::handle seq) {
  variable_list out;
  if (nb::isinstance<Tensor>(seq) || seq.is_none()) {
    out.push_back(seq.is_none() ? Tensor() : nb::cast<Tensor>(seq));
    return out;
  }
  for (nb::handle h : seq) out.push_back(h.is_none() ? Tensor() : nb::cast<Tensor>(h));
  return out;
}

// Tensors and (_Node, input_nr) pairs (GradientEdges) as graph edges; `retain`: a non-leaf
// tensor keeps its grad (backward(inputs=...), as torch calls retain_grad on it).
std::vector<autograd::Edge> to_edges(nb::handle inputs, bool retain) {
  std::vector<autograd::Edge> edges;
  for (nb::handle h : inputs) {
    if (nb::isinstance<Tensor>(h)) {
      const Tensor& t = nb::cast<const Tensor&>(h);
      EMBER_CHECK(t.requires_grad(), "One of the differentiated Tensors does not require grad");
      if (retain && !t.is_leaf()) t.retain_grad();
      edges.push_back(autograd::gradient_edge(t));
    } else {
      auto pair = nb::cast<nb::tuple>(h);
      edges.push_back({nb::cast<std::shared_ptr<Node>>(pair[0]), nb::cast<uint32_t>(pair[1])});
    }
  }
  return edges;
}

nb::tuple to_tuple(const variable_list& v) {
  nb::list l;
  for (const Tensor& t : v) l.append(t.defined() ? nb::cast(t) : nb::none());
  return nb::tuple(l);
}

// Anomaly mode's hooks (Note [Anomaly mode]): the Python stack of the forward call that creates
// a node, and warnings through Python's warnings module.
std::string anomaly_forward_stack() {
  nb::gil_scoped_acquire gil;
  try {
    nb::object frames = nb::module_::import_("traceback").attr("format_stack")();
    std::string out;
    for (nb::handle f : frames) out += nb::cast<std::string>(f);
    return out;
  } catch (nb::python_error& e) {
    e.discard_as_unraisable("ember anomaly mode: capturing the forward stack");
    return std::string();
  }
}

void anomaly_warn(const std::string& msg) {
  nb::gil_scoped_acquire gil;
  if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 1) < 0) PyErr_Clear();
}

// Note [grad's Python object]: torch keeps one Python object per TensorImpl, so `p.grad is
// p.grad` holds and programs key dicts on gradients or set attributes on them. ember's handles
// get a fresh wrapper per cast, so .grad remembers the wrapper it gave out for each gradient
// (holding it, as torch's TensorImpl holds its PyObject). An entry is dropped when its gradient
// is orphaned: only the remembered wrapper holds the impl and only this table holds the wrapper
// (the tensor's grad was replaced or cleared, or the tensor died). `p.grad = None` drops its
// entry at once; others are swept when the table has doubled since the last sweep.
std::unordered_map<const TensorImpl*, PyObject*> grad_wrappers;  // impl -> wrapper (owned)
size_t grad_wrappers_sweep_at = 16;

void sweep_grad_wrappers() {
  for (auto it = grad_wrappers.begin(); it != grad_wrappers.end();) {
    if (it->first->use_count() == 1 && Py_REFCNT(it->second) == 1) {
      Py_DECREF(it->second);
      it = grad_wrappers.erase(it);
    } else {
      ++it;
    }
  }
  grad_wrappers_sweep_at = std::max<size_t>(16, 2 * grad_wrappers.size());
}

void remember_grad_wrapper(nb::handle obj, const TensorImpl* key) {
  auto [it, fresh] = grad_wrappers.try_emplace(key, nullptr);
  PyObject* old = it->second;
  it->second = Py_NewRef(obj.ptr());
  Py_XDECREF(old);
  if (fresh && grad_wrappers.size() >= grad_wrappers_sweep_at) sweep_grad_wrappers();
}

// After `p.grad = ...` replaced g: drop g's entry unless another tensor's grad is g too (the
// caller's handle and the wrapper's are then g's only holders).
void forget_grad_wrapper(const Tensor& g) {
  if (!g.defined() || g.impl()->use_count() > 2) return;
  auto it = grad_wrappers.find(g.impl());
  if (it == grad_wrappers.end()) return;
  PyObject* obj = it->second;
  grad_wrappers.erase(it);
  Py_DECREF(obj);
}

nb::object grad_wrapper(const Tensor& g) {
  auto it = grad_wrappers.find(g.impl());
  if (it != grad_wrappers.end()) return nb::borrow(it->second);
  nb::object obj = nb::cast(g);
  remember_grad_wrapper(obj, g.impl());
  return obj;
}

}  // namespace

// Autocast's thread-local state (Note [Autocast]); ember.amp.autocast drives it.
static DeviceType autocast_device(std::string_view type) {
  if (type == "cpu") return DeviceType::CPU;
  if (type == "cuda") return DeviceType::CUDA;
  if (type == "meta") return DeviceType::Meta;
  return DeviceType::PrivateUse1;
}

static void bind_autocast(nb::module_& m) {
  namespace ac = autocast;
  m.def(
      "_autocast_is_enabled",
      [](const std::string& t) { return ac::is_autocast_enabled(autocast_device(t)); },
      nb::arg("device_type"),
      doc("_autocast_is_enabled(device_type) -> bool", "Whether autocast is on for the type."));
  m.def(
      "_autocast_set_enabled",
      [](const std::string& t, bool on) { ac::set_autocast_enabled(autocast_device(t), on); },
      nb::arg("device_type"), nb::arg("enabled"),
      doc("_autocast_set_enabled(device_type, enabled) -> None",
          "Turns autocast on or off for the type on this thread."));
  m.def(
      "_autocast_get_dtype",
      [](const std::string& t) { return ac::get_autocast_dtype(autocast_device(t)); },
      nb::arg("device_type"),
      doc("_autocast_get_dtype(device_type) -> dtype", "The type's lower-precision dtype."));
  m.def(
      "_autocast_set_dtype",
      [](const std::string& t, ScalarType d) { ac::set_autocast_dtype(autocast_device(t), d); },
      nb::arg("device_type"), nb::arg("dtype"),
      doc("_autocast_set_dtype(device_type, dtype) -> None",
          "Sets the type's lower-precision dtype."));
  m.def("_autocast_is_cache_enabled", &ac::is_autocast_cache_enabled,
        doc("_autocast_is_cache_enabled() -> bool", "Whether parameter casts are cached."));
  m.def("_autocast_set_cache_enabled", &ac::set_autocast_cache_enabled, nb::arg("enabled"),
        doc("_autocast_set_cache_enabled(enabled) -> None", "Turns the cast cache on or off."));
  m.def("_autocast_increment_nesting", &ac::increment_nesting,
        doc("_autocast_increment_nesting() -> int", "Counts a region's entry."));
  m.def("_autocast_decrement_nesting", &ac::decrement_nesting,
        doc("_autocast_decrement_nesting() -> int",
            "Counts a region's exit; the outermost exit clears the cache."));
  m.def("_autocast_clear_cache", &ac::clear_cache,
        doc("_autocast_clear_cache() -> None", "Drops the cached casts."));
  m.def("_autocast_is_active", &ac::is_active,
        doc("_autocast_is_active() -> bool",
            "Whether listed ops cast now (enabled on CPU and not excluded)."));
  m.def(
      "_autocast_set_excluded",
      [](bool excluded) {
        bool prev = ac::is_excluded();
        ac::set_excluded(excluded);
        return prev;
      },
      nb::arg("excluded"),
      doc("_autocast_set_excluded(excluded) -> bool",
          "Excludes (or readmits) autocast on this thread; returns the previous setting."));
  m.def("_autocast_cast", &ac::cached_cast, nb::arg("dtype"), nb::arg("tensor"),
        doc("_autocast_cast(dtype, tensor) -> Tensor",
            "The tensor cast as autocast casts an argument (cached for parameters)."));
}

void bind_saved_hooks(nb::module_& m);  // saved_hooks.cpp

void bind_autograd(nb::module_& m) {
  bind_saved_hooks(m);
  autograd::anomaly::set_hooks(&anomaly_forward_stack, &anomaly_warn);
  m.def("_set_anomaly_enabled", &autograd::anomaly::set_enabled, nb::arg("enabled"),
        nb::arg("check_nan") = true,
        doc("_set_anomaly_enabled(enabled, check_nan=True) -> None",
            "Switches the engine's anomaly checks (behind ember.autograd.set_detect_anomaly)."));
  m.def("_is_anomaly_enabled", &autograd::anomaly::enabled,
        doc("_is_anomaly_enabled() -> bool", "Whether the engine's anomaly checks are on."));
  auto cls = nb::borrow<nb::class_<Tensor>>(nb::type<Tensor>());
  cls.def_prop_rw(
      "requires_grad", [](const Tensor& t) { return t.requires_grad(); },
      [](Tensor& t, bool r) {
        EMBER_CHECK(!r || is_differentiable_type(t.dtype()),
                    "only Tensors of floating point and complex dtype can require gradients");
        t.requires_grad_(r);
      },
      doc("requires_grad -> bool",
          "Whether autograd records operations on the tensor; settable on leaves."));
  cls.def(
      "requires_grad_",
      [](nb::handle self, bool r) {
        Tensor& t = nb::cast<Tensor&>(self);
        // torch words the refusal three ways: this method's, the setter's above, and the
        // factories' and Parameter's (Tensor::requires_grad_, reached by _set_requires_grad).
        EMBER_CHECK(!r || is_differentiable_type(t.dtype()),
                    "only Tensors of floating point dtype can require gradients");
        t.requires_grad_(r);
        return nb::borrow(self);
      },
      nb::arg("requires_grad") = true,
      doc("requires_grad_(requires_grad=True) -> Tensor",
          "Sets requires_grad in place and returns self."));
  m.def(
      "_set_requires_grad", [](Tensor& t, bool r) { t.requires_grad_(r); }, nb::arg("tensor"),
      nb::arg("requires_grad"),
      doc("_set_requires_grad(tensor, requires_grad) -> None",
          "requires_grad_ as torch's factories and Parameter refuse it (their error wording)."));
  cls.def_prop_rw(
      "grad",
      [](const Tensor& t) -> nb::object {
        Tensor g = t.grad();
        return g.defined() ? grad_wrapper(g) : nb::none();
      },
      [](Tensor& t, nb::handle g) {
        Tensor old = t.grad();
        if (g.is_none()) {
          t.set_grad(Tensor());
          return forget_grad_wrapper(old);
        }
        const Tensor& v = nb::cast<const Tensor&>(g);
        t.set_grad(v);
        if (!old.is_same(v)) forget_grad_wrapper(old);
        remember_grad_wrapper(g, v.impl());  // `p.grad = g` then `p.grad is g`, as torch
      },
      nb::arg("value").none(),
      doc("grad -> Tensor or None",
          "The gradient accumulated by backward() for a leaf (or a tensor that retains it)."));
  cls.def_prop_ro(
      "_grad_fn", [](const Tensor& t) { return t.grad_fn(); },
      doc("_grad_fn -> Node or None", "The graph node that produced the tensor (behind grad_fn)."));
  cls.def_prop_ro("is_leaf", &Tensor::is_leaf,
                  doc("is_leaf -> bool",
                      "Whether the tensor was made by the user rather than by a recorded op."));
  cls.def(
      "is_inference", [](const Tensor& t) { return t.storage()->is_inference(); },
      doc("is_inference() -> bool", "Whether the tensor was allocated under inference_mode."));
  cls.def_prop_ro("output_nr", &Tensor::output_nr,
                  doc("output_nr -> int", "Which output of its grad_fn the tensor is."));
  cls.def(
      "retain_grad", [](const Tensor& t) { t.retain_grad(); },
      doc("retain_grad() -> None", "Makes backward() fill .grad for this non-leaf tensor too."));
  cls.def_prop_ro(
      "retains_grad", &Tensor::retains_grad,
      doc("retains_grad -> bool", "Whether retain_grad() was called on this non-leaf tensor."));
  cls.def(
      "detach", [](const Tensor& t) { return t.detach(); },
      doc("detach() -> Tensor",
          "A tensor sharing the storage but cut off from the autograd graph."));
  cls.def(
      "detach_",
      [](nb::handle self) {
        Tensor& t = nb::cast<Tensor&>(self);
        auto* m = autograd::meta_if(t);
        EMBER_CHECK(!(m && m->is_view), kDetachViewMsg);
        t.detach_();
        return nb::borrow(self);
      },
      doc("detach_() -> Tensor", "Cuts self off from the autograd graph in place."));
  cls.def_prop_rw(
      "data", [](const Tensor& t) { return t.detach(); },
      [](Tensor& t, const Tensor& src) {
        t.impl()->set_storage(src.storage(), src.dtype());
        t.impl()->set_geometry(src.sizes(), src.strides(), src.storage_offset());
      },
      doc("data -> Tensor",
          "The tensor outside autograd; assigning swaps in another tensor's storage and shape."));
  cls.def(
      "_register_hook",
      [](const Tensor& t, nb::object fn) {
        EMBER_CHECK(t.requires_grad(),
                    "cannot register a hook on a tensor that doesn't require gradient");
        auto alive = std::make_shared<bool>(true);
        // Owned by the leaf's impl or by the node whose output the tensor is (Note [Python objects
        // held by the graph]).
        const void* owner = t.is_leaf() ? static_cast<const void*>(t.impl()) : t.grad_fn().get();
        autograd::TensorHook hook = [fn = PyRef(std::move(fn), owner), alive](const Tensor& g) {
          if (!*alive) return Tensor();
          nb::gil_scoped_acquire gil;
          return call_tensor_hook(nb::borrow(fn.get()), g);
        };
        if (t.is_leaf()) autograd::meta(t).leaf_hooks.push_back(hook);
        else t.grad_fn()->tensor_pre_hooks.push_back({t.output_nr(), hook});
        return HookHandle{alive};
      },
      nb::arg("hook"),
      doc("_register_hook(hook) -> _HookHandle",
          "Calls hook(grad) when the gradient of this tensor is computed; a returned tensor "
          "replaces it (behind Tensor.register_hook)."));

  nb::class_<HookHandle>(m, "_HookHandle", "A registered hook, removable with remove().")
      .def("remove", &HookHandle::remove, doc("remove() -> None", "Stops the hook from running."));

  nb::class_<Node>(m, "_Node", "A node of the autograd graph: the backward of one recorded op.")
      .def("name", &Node::name, doc("name() -> str", "The node's name, e.g. 'MulBackward0'."))
      .def_prop_ro(
          "_id", [](const Node& n) { return reinterpret_cast<uintptr_t>(&n); },
          doc("_id -> int", "The node's address, an identity for graph walks."))
      .def_prop_ro(
          "next_functions",
          [](const Node& n) {
            nb::list l;
            for (auto& e : n.next_edges)
              l.append(nb::make_tuple(e.fn ? nb::cast(e.fn) : nb::none(), e.input_nr));
            return nb::tuple(l);
          },
          doc("next_functions -> Tuple[Tuple[Node, int], ...]",
              "The (node, input number) pairs that this node sends gradients to."))
      .def_prop_ro(
          "variable",
          [](Node& n) -> nb::object {
            auto* acc = dynamic_cast<autograd::AccumulateGrad*>(&n);
            if (!acc) throw nb::attribute_error("'Node' object has no attribute 'variable'");
            return nb::cast(acc->variable);
          },
          doc("variable -> Tensor", "The leaf that an AccumulateGrad node accumulates into."))
      .def(
          "_register_hook",
          [](Node& n, nb::object fn) {
            auto alive = std::make_shared<bool>(true);
            n.post_hooks.push_back([fn = PyRef(std::move(fn), &n), alive](
                                       const variable_list& gin, const variable_list& gout) {
              if (!*alive) return variable_list{};
              nb::gil_scoped_acquire gil;
              nb::object r = fn.get()(to_tuple(gin), to_tuple(gout));
              return r.is_none() ? variable_list{} : to_variables(r);
            });
            return HookHandle{alive};
          },
          nb::arg("hook"),
          doc("_register_hook(hook) -> _HookHandle",
              "Calls hook(grad_inputs, grad_outputs) after the node runs; a returned tuple "
              "replaces "
              "grad_inputs."))
      .def(
          "_register_prehook",
          [](Node& n, nb::object fn) {
            auto alive = std::make_shared<bool>(true);
            n.pre_hooks.push_back(
                [fn = PyRef(std::move(fn), &n), alive](const variable_list& gout) {
                  if (!*alive) return variable_list{};
                  nb::gil_scoped_acquire gil;
                  nb::object r = fn.get()(to_tuple(gout));
                  return r.is_none() ? variable_list{} : to_variables(r);
                });
            return HookHandle{alive};
          },
          nb::arg("hook"),
          doc("_register_prehook(hook) -> _HookHandle",
              "Calls hook(grad_outputs) before the node runs; a returned tuple replaces them."))
      .def(
          "_saved_tensors",
          [](Node& n) {
            auto* f = dynamic_cast<autograd::FunctionNode*>(&n);
            variable_list v;
            if (f)
              for (size_t i = 0; i < f->num_saved(); ++i) v.push_back(f->saved(i));
            return to_tuple(v);
          },
          doc("_saved_tensors() -> Tuple[Optional[Tensor], ...]",
              "Unpacks the tensors the node saved for backward (through the unpack hooks of "
              "saved-tensor hooks for those packed by them)."))
      .def(
          "__call__",
          [](Node& n, nb::args grads) {
            variable_list g = to_variables(grads);
            return to_tuple(n.apply(std::move(g)));
          },
          nb::arg("grads"),
          doc("__call__(*grads) -> Tuple",
              "Runs the node's backward on the given output gradients."));

  m.def("is_grad_enabled", &GradMode::is_enabled,
        doc("is_grad_enabled() -> bool", "Whether autograd records ops on this thread now."));
  m.def("_set_grad_enabled", &GradMode::set_enabled, nb::arg("mode"),
        doc("_set_grad_enabled(mode) -> None", "Turns recording on or off for this thread."));
  m.def("is_inference_mode_enabled", &InferenceMode::is_enabled,
        doc("is_inference_mode_enabled() -> bool",
            "Whether inference_mode is active on this thread."));
  m.def(
      "_set_inference_mode", &InferenceMode::set_enabled, nb::arg("mode"),
      doc("_set_inference_mode(mode) -> None", "Turns inference mode on or off for this thread."));

  bind_autocast(m);

  m.def(
      "_backward",
      [](nb::handle tensors, nb::handle grads, bool keep_graph, bool create_graph,
         nb::handle inputs) {
        autograd::backward(to_variables(tensors), to_variables(grads), keep_graph, create_graph,
                           inputs.is_none() ? variable_list{} : to_variables(inputs));
      },
      nb::arg("tensors"), nb::arg("grads").none(), nb::arg("keep_graph"), nb::arg("create_graph"),
      nb::arg("inputs").none(),
      doc("_backward(tensors, grads, keep_graph, create_graph, inputs) -> None",
          "Runs the engine from tensors, accumulating into the leaves' .grad (behind "
          "ember.autograd.backward)."));
  m.def(
      "_grad",
      [](nb::handle outputs, nb::handle inputs, nb::handle grad_outputs,
         std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
        variable_list go = grad_outputs.is_none() ? variable_list{} : to_variables(grad_outputs);
        return to_tuple(autograd::grad(to_variables(outputs), to_variables(inputs), go,
                                       retain_graph, create_graph, allow_unused));
      },
      nb::arg("outputs"), nb::arg("inputs"), nb::arg("grad_outputs").none(),
      nb::arg("retain_graph").none(), nb::arg("create_graph"), nb::arg("allow_unused"),
      doc("_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused) -> Tuple",
          "The gradients of outputs with respect to inputs, without touching .grad (behind "
          "ember.autograd.grad)."));

  // autograd.grad(outputs, inputs=GradientEdges): an input is a tensor or a (node, input_nr)
  // pair, the edge the gradient arrives at (get_gradient_edge).
  m.def(
      "_grad_edges",
      [](nb::handle outputs, nb::handle inputs, nb::handle grad_outputs,
         std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
        std::vector<autograd::Edge> edges = to_edges(inputs, false);
        variable_list go = grad_outputs.is_none() ? variable_list{} : to_variables(grad_outputs);
        return to_tuple(autograd::grad(to_variables(outputs), edges, go, retain_graph, create_graph,
                                       allow_unused));
      },
      nb::arg("outputs"), nb::arg("inputs"), nb::arg("grad_outputs").none(),
      nb::arg("retain_graph").none(), nb::arg("create_graph"), nb::arg("allow_unused"),
      doc("_grad_edges(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused) "
          "-> Tuple",
          "_grad with each input a tensor or a (_Node, input_nr) edge of the graph."));
  m.def(
      "_backward_edges",
      [](nb::handle tensors, nb::handle grads, bool keep_graph, bool create_graph,
         nb::handle inputs) {
        autograd::backward(to_variables(tensors), to_variables(grads), keep_graph, create_graph,
                           to_edges(inputs, true));
      },
      nb::arg("tensors"), nb::arg("grads").none(), nb::arg("keep_graph"), nb::arg("create_graph"),
      nb::arg("inputs"),
      doc("_backward_edges(tensors, grads, keep_graph, create_graph, inputs) -> None",
          "_backward with each input a tensor or a (_Node, input_nr) edge of the graph."));
  // autograd.grad/backward(outputs=GradientEdges): the engine starts from root tensors, so each
  // edge becomes an alias of its grad_output whose history is that edge.
  m.def(
      "_edge_root",
      [](const Tensor& grad, std::shared_ptr<Node> node, uint32_t input_nr) {
        Tensor root = grad.detach();
        autograd::set_history(root, node, input_nr);
        return root;
      },
      nb::arg("grad"), nb::arg("node"), nb::arg("input_nr"),
      doc("_edge_root(grad, node, input_nr) -> Tensor",
          "An alias of grad whose gradient flows into input `input_nr` of `node`."));
  m.def("_current_graph_task_id", &autograd::current_graph_task_id,
        doc("_current_graph_task_id() -> int",
            "The id of the backward running on this thread, -1 outside one."));
  m.def(
      "_will_engine_execute_node",
      [](const Node& n) { return autograd::will_engine_execute_node(n); }, nb::arg("node"),
      doc("_will_engine_execute_node(node) -> bool",
          "Whether the running backward will run node (raises outside a backward)."));

  // A Python composite (F.mse_loss built from sub, pow and mean) names its result's node as
  // torch's fused op does: a pass-through node with that name takes over the result's history.
  m.def(
      "_rename_grad_fn",
      [](const Tensor& out, const std::string& name) { autograd::rename_history(out, name); },
      nb::arg("out"), nb::arg("name"),
      doc("_rename_grad_fn(out, name) -> None",
          "Gives `out` (a result with history) a pass-through grad_fn named `name`."));

  // autograd.Function: the forward ran under no_grad in Python; this attaches the node whose
  // backward calls back into Python.
  m.def(
      "_attach_function",
      [](const std::string& name, nb::object backward, nb::handle inputs, nb::handle outputs,
         nb::handle non_differentiable, nb::handle saved) {
        variable_list ins = to_variables(inputs);
        variable_list outs = to_variables(outputs);
        variable_list nd = to_variables(non_differentiable);
        size_t n_in = ins.size();
        bool with_saved = !saved.is_none();
        PyRef fn(std::move(backward), nullptr);
        auto node = std::make_shared<autograd::FunctionNode>(
            name, [fn, n_in, with_saved](autograd::FunctionNode& self, const variable_list& g) {
              nb::gil_scoped_acquire gil;
              nb::object r;
              if (with_saved) {
                // ctx.saved_tensors unpacks on demand, only while this backward runs.
                autograd::FunctionNode* node = &self;
                auto alive = std::make_shared<bool>(true);
                nb::object unpack = nb::cpp_function([node, alive]() {
                  EMBER_CHECK(*alive,
                              "saved tensors of a custom Function are read during its "
                              "backward only");
                  variable_list v;
                  for (size_t i = 0; i < node->num_saved(); ++i) v.push_back(node->saved(i));
                  return to_tuple(v);
                });
                struct Expire {
                  std::shared_ptr<bool> a;
                  ~Expire() { *a = false; }
                } expire{alive};
                r = fn.get()(to_tuple(g), unpack);
              } else {
                r = fn.get()(to_tuple(g));
              }
              variable_list out = to_variables(r);
              EMBER_CHECK(out.size() >= n_in,
                          "function backward returned an incorrect number of "
                          "gradients (expected ",
                          n_in, ", got ", out.size(), ")");
              out.resize(n_in);
              return out;
            });
        fn.set_owner(node.get());
        autograd::collect_next_edges(*node, ins);
        node->num_outputs = uint32_t(outs.size());
        for (size_t i = 0; i < outs.size(); ++i) {
          const Tensor& o = outs[i];
          if (!o.defined() || !is_differentiable_type(o.dtype())) continue;
          bool skip = false;
          for (const Tensor& x : nd) skip = skip || x.is_same(o);
          if (!skip) autograd::set_history(o, node, uint32_t(i));
        }
        // ctx.save_for_backward's tensors, saved as built-in ops save (through saved-tensor
        // hooks); an output is saved as one, without a reference cycle through the node.
        if (with_saved) {
          for (const Tensor& t : to_variables(saved)) {
            bool is_output = false;
            for (const Tensor& o : outs) is_output = is_output || (t.defined() && o.is_same(t));
            node->save(t, is_output && t.grad_fn() == node);
          }
        }
        return std::static_pointer_cast<Node>(node);
      },
      nb::arg("name"), nb::arg("backward"), nb::arg("inputs").none(), nb::arg("outputs").none(),
      nb::arg("non_differentiable").none(), nb::arg("saved").none() = nb::none(),
      doc("_attach_function(name, backward, inputs, outputs, non_differentiable, saved=None) -> "
          "_Node",
          "Makes a graph node for a Python autograd.Function whose backward calls back into "
          "Python, and attaches it to the outputs. With `saved` (tensors or None), the node saves "
          "them and backward is called as backward(grads, unpack), unpack() returning them."));

  // fn() runs after every accumulation into the leaf's .grad; python/ember/_tensor_extra.py
  // wraps the user's hook(tensor) and makes it removable.
  m.def(
      "_register_post_accumulate_grad_hook",
      [](const Tensor& t, nb::object fn) {
        EMBER_CHECK(t.requires_grad(),
                    "cannot register a hook on a tensor that doesn't require gradient");
        EMBER_CHECK(t.is_leaf(),
                    "post accumulate grad hooks cannot be registered on non-leaf tensors");
        // The callable may outlive the GIL holder that registered it: drop it under the GIL.
        std::shared_ptr<nb::object> held(new nb::object(std::move(fn)), [](nb::object* o) {
          if (Py_IsInitialized()) {
            nb::gil_scoped_acquire gil;
            delete o;
          } else {
            o->release();  // the interpreter is gone: nothing left to decrement
            delete o;
          }
        });
        autograd::meta(t).post_accumulate_hooks.push_back([held] {
          nb::gil_scoped_acquire gil;
          (*held)();
        });
      },
      nb::arg("tensor"), nb::arg("fn"),
      doc("_register_post_accumulate_grad_hook(tensor, fn) -> None",
          "Calls fn() after each accumulation into the leaf's .grad (behind "
          "Tensor.register_post_accumulate_grad_hook)."));
}

}  // namespace ember::py
