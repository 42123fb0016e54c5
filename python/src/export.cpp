// Bindings of the exported-program runtime (csrc/ember/export): the op list ember.export.save
// checks against, and a runner that tests the C++ interpreter from Python.
#include "common.h"
#include "ember/export/program.h"

namespace ember::py {

void bind_export(nb::module_& m) {
  m.def("_export_runtime_ops", &export_::runtime_ops,
        doc("_export_runtime_ops() -> List[str]",
            "The ops the C++ runtime of exported programs runs (what ember.export.save accepts)."));
  m.def(
      "_export_check",
      [](const std::string& path) {
        export_::ExportedProgram program = export_::load(path);
        return program.num_nodes();
      },
      nb::arg("path"),
      doc("_export_check(path) -> int",
          "Loads an exported program with the C++ loader, validating every part of it; returns "
          "its number of op nodes."));
  m.def(
      "_export_run",
      [](const std::string& path, const std::vector<Tensor>& inputs) {
        export_::ExportedProgram program = export_::load(path);
        nb::gil_scoped_release release;
        return program.run(inputs);
      },
      nb::arg("path"), nb::arg("inputs"),
      doc("_export_run(path, inputs) -> List[Tensor]",
          "Loads an exported program with the C++ loader and runs it on inputs, as a C++ program "
          "would."));
}

}  // namespace ember::py
