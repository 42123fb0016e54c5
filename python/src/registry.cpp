// The operator registry (Note [Op schemas]) as Python sees it.
#include "common.h"

namespace ember::py {

void bind_registry(nb::module_& m) {
  m.def(
      "_registered_ops",
      [] {
        std::vector<std::string> names;
        for (const OperatorEntry* e : Dispatcher::singleton().entries()) names.push_back(e->name());
        return names;
      },
      doc("_registered_ops() -> List[str]",
          "The names of every operator in the dispatcher, sorted."));
  m.def(
      "_op_schemas",
      [] {
        nb::list out;
        for (const OperatorEntry* e : Dispatcher::singleton().entries()) {
          nb::list keys;
          for (size_t k = 0; k < kNumDispatchKeys; ++k)
            if (e->kernel(DispatchKey(k))) keys.append(key_name(DispatchKey(k)));
          nb::dict d;
          d["name"] = e->name();
          d["schema"] = e->schema();
          d["kernels"] = keys;
          d["has_autograd"] = e->kernel(DispatchKey::Autograd) != nullptr;
          out.append(d);
        }
        return out;
      },
      doc("_op_schemas() -> List[dict]",
          "Every operator with its schema (torch's grammar), the dispatch keys it has kernels "
          "for and whether it has an Autograd kernel."));
}

}  // namespace ember::py
