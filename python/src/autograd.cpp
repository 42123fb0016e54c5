// Autograd from Python: Tensor's grad attributes, graph nodes, hooks, grad modes, the engine,
// and nodes for Python-defined autograd.Function.
#include "common.h"

namespace ember::py {

namespace {

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

nb::tuple to_tuple(const variable_list& v) {
  nb::list l;
  for (const Tensor& t : v) l.append(t.defined() ? nb::cast(t) : nb::none());
  return nb::tuple(l);
}

}  // namespace

void bind_autograd(nb::module_& m) {
  auto cls = nb::borrow<nb::class_<Tensor>>(nb::type<Tensor>());
  cls.def_prop_rw("requires_grad", [](const Tensor& t) { return t.requires_grad(); },
                  [](Tensor& t, bool r) { t.requires_grad_(r); });
  cls.def("requires_grad_", [](nb::handle self, bool r) {
    nb::cast<Tensor&>(self).requires_grad_(r);
    return nb::borrow(self);
  }, nb::arg("requires_grad") = true);
  cls.def_prop_rw("grad", [](const Tensor& t) -> nb::object {
    Tensor g = t.grad();
    return g.defined() ? nb::cast(g) : nb::none();
  }, [](Tensor& t, nb::handle g) { t.set_grad(g.is_none() ? Tensor() : nb::cast<Tensor>(g)); },
     nb::arg("value").none());
  cls.def_prop_ro("_grad_fn", [](const Tensor& t) { return t.grad_fn(); });
  cls.def_prop_ro("is_leaf", &Tensor::is_leaf);
  cls.def("is_inference", [](const Tensor& t) { return t.storage()->is_inference(); },
          "Whether the tensor was allocated under inference_mode.");
  cls.def_prop_ro("output_nr", &Tensor::output_nr);
  cls.def("retain_grad", [](const Tensor& t) { t.retain_grad(); });
  cls.def_prop_ro("retains_grad", &Tensor::retains_grad);
  cls.def("detach", [](const Tensor& t) { return t.detach(); });
  cls.def("detach_", [](nb::handle self) {
    nb::cast<Tensor&>(self).detach_();
    return nb::borrow(self);
  });
  cls.def_prop_rw("data", [](const Tensor& t) { return t.detach(); }, [](Tensor& t, const Tensor& src) {
    t.impl()->set_storage(src.storage(), src.dtype());
    t.impl()->set_geometry(src.sizes(), src.strides(), src.storage_offset());
  });
  cls.def("_register_hook", [](const Tensor& t, nb::object fn) {
    EMBER_CHECK(t.requires_grad(), "cannot register a hook on a tensor that doesn't require gradient");
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
  });

  nb::class_<HookHandle>(m, "_HookHandle").def("remove", &HookHandle::remove);

  nb::class_<Node>(m, "_Node")
      .def("name", &Node::name)
      .def_prop_ro("_id", [](const Node& n) { return reinterpret_cast<uintptr_t>(&n); })
      .def_prop_ro("next_functions", [](const Node& n) {
        nb::list l;
        for (auto& e : n.next_edges)
          l.append(nb::make_tuple(e.fn ? nb::cast(e.fn) : nb::none(), e.input_nr));
        return nb::tuple(l);
      })
      .def_prop_ro("variable", [](Node& n) -> nb::object {
        auto* acc = dynamic_cast<autograd::AccumulateGrad*>(&n);
        if (!acc) throw nb::attribute_error("'Node' object has no attribute 'variable'");
        return nb::cast(acc->variable);
      })
      .def("_register_hook", [](Node& n, nb::object fn) {
        auto alive = std::make_shared<bool>(true);
        n.post_hooks.push_back([fn = PyRef(std::move(fn), &n), alive](const variable_list& gin,
                                                                      const variable_list& gout) {
          if (!*alive) return variable_list{};
          nb::gil_scoped_acquire gil;
          nb::object r = fn.get()(to_tuple(gin), to_tuple(gout));
          return r.is_none() ? variable_list{} : to_variables(r);
        });
        return HookHandle{alive};
      })
      .def("_register_prehook", [](Node& n, nb::object fn) {
        auto alive = std::make_shared<bool>(true);
        n.pre_hooks.push_back([fn = PyRef(std::move(fn), &n), alive](const variable_list& gout) {
          if (!*alive) return variable_list{};
          nb::gil_scoped_acquire gil;
          nb::object r = fn.get()(to_tuple(gout));
          return r.is_none() ? variable_list{} : to_variables(r);
        });
        return HookHandle{alive};
      })
      .def("__call__", [](Node& n, nb::args grads) {
        variable_list g = to_variables(grads);
        return to_tuple(n.apply(std::move(g)));
      });

  m.def("is_grad_enabled", &GradMode::is_enabled);
  m.def("_set_grad_enabled", &GradMode::set_enabled);
  m.def("is_inference_mode_enabled", &InferenceMode::is_enabled);
  m.def("_set_inference_mode", &InferenceMode::set_enabled);

  m.def("_backward", [](nb::handle tensors, nb::handle grads, bool keep_graph, bool create_graph,
                        nb::handle inputs) {
    autograd::backward(to_variables(tensors), to_variables(grads), keep_graph, create_graph,
                       inputs.is_none() ? variable_list{} : to_variables(inputs));
  }, nb::arg("tensors"), nb::arg("grads").none(), nb::arg("keep_graph"), nb::arg("create_graph"),
     nb::arg("inputs").none());
  m.def("_grad", [](nb::handle outputs, nb::handle inputs, nb::handle grad_outputs,
                    std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
    variable_list go = grad_outputs.is_none() ? variable_list{} : to_variables(grad_outputs);
    return to_tuple(autograd::grad(to_variables(outputs), to_variables(inputs), go, retain_graph,
                                   create_graph, allow_unused));
  }, nb::arg("outputs"), nb::arg("inputs"), nb::arg("grad_outputs").none(),
     nb::arg("retain_graph").none(), nb::arg("create_graph"), nb::arg("allow_unused"));

  // autograd.Function: the forward ran under no_grad in Python; this attaches the node whose
  // backward calls back into Python.
  m.def("_attach_function", [](const std::string& name, nb::object backward, nb::handle inputs,
                               nb::handle outputs, nb::handle non_differentiable) {
    variable_list ins = to_variables(inputs);
    variable_list outs = to_variables(outputs);
    variable_list nd = to_variables(non_differentiable);
    size_t n_in = ins.size();
    PyRef fn(std::move(backward), nullptr);
    auto node = std::make_shared<autograd::FunctionNode>(
        name, [fn, n_in](autograd::FunctionNode&, const variable_list& g) {
          nb::gil_scoped_acquire gil;
          nb::object r = fn.get()(to_tuple(g));
          variable_list out = to_variables(r);
          EMBER_CHECK(out.size() >= n_in, "function backward returned an incorrect number of "
                      "gradients (expected ", n_in, ", got ", out.size(), ")");
          out.resize(n_in);
          return out;
        });
    fn.set_owner(node.get());
    autograd::collect_next_edges(*node, ins);
    node->num_outputs = uint32_t(outs.size());
    for (size_t i = 0; i < outs.size(); ++i) {
      const Tensor& o = outs[i];
      if (!o.defined() || !is_floating_point(o.dtype())) continue;
      bool skip = false;
      for (const Tensor& x : nd) skip = skip || x.is_same(o);
      if (!skip) autograd::set_history(o, node, uint32_t(i));
    }
    return std::static_pointer_cast<Node>(node);
  });
}

}  // namespace ember::py
