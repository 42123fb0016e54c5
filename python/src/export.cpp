// Bindings of the exported-program runtime (csrc/ember/export): the op list ember.export.save
// checks against, and a runner that tests the C++ interpreter from Python.
#include <nanobind/stl/map.h>

#include <map>

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
  m.def(
      "_export_run_steps",
      [](const std::string& path, const std::vector<std::vector<Tensor>>& steps) {
        export_::ExportedProgram program = export_::load(path);
        std::vector<std::vector<Tensor>> outputs;
        {
          nb::gil_scoped_release release;
          for (const auto& inputs : steps) outputs.push_back(program.run(inputs));
        }
        std::map<std::string, Tensor> state = program.state_dict();
        return std::make_pair(outputs, state);
      },
      nb::arg("path"), nb::arg("steps"),
      doc("_export_run_steps(path, steps) -> Tuple[List[List[Tensor]], Dict[str, Tensor]]",
          "Loads an exported program with the C++ loader, runs it once per list of inputs in "
          "steps (one program, so buffer updates carry over) and returns each run's outputs and "
          "the final state."));
}

}  // namespace ember::py
