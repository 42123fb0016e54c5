// Python objects held by the autograd graph, and Tensor's garbage-collector support.
// See Note [Python objects held by the graph] in common.h.
#include <unordered_map>

#include "common.h"

namespace ember::py {

namespace {

// Owner (a TensorImpl or a Node) -> the Python objects it holds. Changed only with the GIL held.
std::unordered_multimap<const void*, Held*>& registry() {
  static auto* r = new std::unordered_multimap<const void*, Held*>();  // outlives the interpreter
  return *r;
}

void unregister(Held* h, const void* owner) {
  auto [lo, hi] = registry().equal_range(owner);
  for (auto it = lo; it != hi; ++it) {
    if (it->second == h) {
      registry().erase(it);
      return;
    }
  }
}

}  // namespace

struct Held {
  PyObject* obj;
  const void* owner;
  ~Held() {
    // At interpreter exit the object is gone with the interpreter; touching it would crash.
    if (!Py_IsInitialized()) return;
    nb::gil_scoped_acquire gil;
    if (owner) unregister(this, owner);
    Py_DECREF(obj);
  }
};

PyRef::PyRef(nb::object obj, const void* owner) : held_(std::make_shared<Held>()) {
  held_->obj = obj.release().ptr();
  held_->owner = nullptr;
  set_owner(owner);
}

void PyRef::set_owner(const void* owner) {
  if (held_->owner) unregister(held_.get(), held_->owner);
  held_->owner = owner;
  if (owner) registry().emplace(owner, held_.get());
}

nb::handle PyRef::get() const { return held_->obj; }

namespace {

int visit_owned(const void* owner, visitproc visit, void* arg) {
  auto [lo, hi] = registry().equal_range(owner);
  for (auto it = lo; it != hi; ++it) Py_VISIT(it->second->obj);
  return 0;
}

// The GC may only count references that this object alone keeps alive: the C++ owners are
// visited while this wrapper holds the only reference to the TensorImpl, and the impl the only
// reference to its grad_fn. (Another thread cannot add a reference to either without the GIL.)
int tensor_traverse(PyObject* self, visitproc visit, void* arg) {
  if (PyObject** dict = _PyObject_GetDictPtr(self)) Py_VISIT(*dict);
  Py_VISIT(Py_TYPE(self));
  if (!nb::inst_ready(self)) return 0;
  const Tensor& t = *nb::inst_ptr<Tensor>(self);
  if (!t.defined() || t.impl_ptr().use_count() != 1) return 0;
  if (int r = visit_owned(t.impl(), visit, arg)) return r;
  auto* m = autograd::meta_if(t);
  if (m && m->grad_fn && m->grad_fn.use_count() == 1)
    return visit_owned(m->grad_fn.get(), visit, arg);
  return 0;
}

int tensor_clear(PyObject* self) {
  if (PyObject** dict = _PyObject_GetDictPtr(self)) Py_CLEAR(*dict);
  return 0;
}

}  // namespace

PyType_Slot tensor_gc_slots[] = {
    {Py_tp_traverse, (void*)tensor_traverse}, {Py_tp_clear, (void*)tensor_clear}, {0, nullptr}};

}  // namespace ember::py
