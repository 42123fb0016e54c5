// Saved-tensor hooks from Python (behind ember.autograd.graph.saved_tensors_hooks): Python pack
// and unpack callables behind autograd's SavedTensorHooks (Note [Saved tensor hooks]).
#include "ember/autograd/saved_hooks.h"
#include "common.h"

namespace ember::py {

namespace {

namespace sh = autograd::saved_hooks;

// What pack returned, with the unpack hook to call on it; owned by the saving node.
class PyPacked : public autograd::PackedTensor {
 public:
  PyPacked(PyRef packed, PyRef unpack) : packed_(std::move(packed)), unpack_(std::move(unpack)) {}
  Tensor unpack() override {
    nb::gil_scoped_acquire gil;
    nb::object r = unpack_.get()(packed_.get());
    if (!nb::isinstance<Tensor>(r))
      EMBER_ERROR(ErrorKind::Type,
                  "Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                  "type ",
                  Py_TYPE(r.ptr())->tp_name);
    return nb::cast<Tensor>(r);
  }

 private:
  PyRef packed_;
  PyRef unpack_;
};

class PyHooks : public autograd::SavedTensorHooks {
 public:
  PyHooks(nb::object pack, nb::object unpack)
      : pack_fn(std::move(pack)), unpack_fn(std::move(unpack)) {}
  ~PyHooks() override {
    // The stack may be dropped at thread exit: release the callables under the GIL, if any.
    if (!Py_IsInitialized()) {
      pack_fn.release();
      unpack_fn.release();
      return;
    }
    nb::gil_scoped_acquire gil;
    pack_fn.reset();
    unpack_fn.reset();
  }
  std::shared_ptr<autograd::PackedTensor> pack(const Tensor& t,
                                               const autograd::Node* owner) override {
    nb::gil_scoped_acquire gil;
    nb::object packed = pack_fn(t);
    // Registered under the node (Note [Python objects held by the graph]): a packed object that
    // refers back to the node's tensors is then visible to the garbage collector.
    return std::make_shared<PyPacked>(PyRef(std::move(packed), owner), PyRef(unpack_fn, owner));
  }
  nb::object pack_fn;
  nb::object unpack_fn;
};

}  // namespace

void bind_saved_hooks(nb::module_& m) {
  m.def(
      "_push_saved_tensors_hooks",
      [](nb::object pack, nb::object unpack) {
        EMBER_CHECK_TYPE(PyCallable_Check(pack.ptr()) && PyCallable_Check(unpack.ptr()),
                         "saved_tensors_hooks: expected callable pack_hook and unpack_hook; got ",
                         Py_TYPE(pack.ptr())->tp_name, " and ", Py_TYPE(unpack.ptr())->tp_name);
        sh::push(std::make_shared<PyHooks>(std::move(pack), std::move(unpack)));
      },
      nb::arg("pack_hook"), nb::arg("unpack_hook"),
      doc("_push_saved_tensors_hooks(pack_hook, unpack_hook) -> None",
          "Makes the pair the innermost saved-tensor hooks of this thread."));
  m.def("_pop_saved_tensors_hooks", &sh::pop,
        doc("_pop_saved_tensors_hooks() -> None",
            "Removes the innermost saved-tensor hooks of this thread."));
  m.def(
      "_top_saved_tensors_hooks",
      []() -> nb::object {
        auto* h = dynamic_cast<PyHooks*>(sh::current());
        if (!h) return nb::none();
        return nb::make_tuple(h->pack_fn, h->unpack_fn);
      },
      doc("_top_saved_tensors_hooks() -> Optional[Tuple[Callable, Callable]]",
          "The innermost (pack_hook, unpack_hook) of this thread, or None."));
  m.def("_saved_tensors_hooks_disable", &sh::disable, nb::arg("error_message"),
        doc("_saved_tensors_hooks_disable(error_message) -> None",
            "Makes pushing saved-tensor hooks raise RuntimeError(error_message) on this thread."));
  m.def("_saved_tensors_hooks_enable", &sh::enable,
        doc("_saved_tensors_hooks_enable() -> None",
            "Allows saved-tensor hooks on this thread again."));
  m.def("_saved_tensors_hooks_get_disabled_error_message", &sh::disabled_message,
        doc("_saved_tensors_hooks_get_disabled_error_message() -> Optional[str]",
            "The message given to _saved_tensors_hooks_disable while hooks are disabled."));
}

}  // namespace ember::py
