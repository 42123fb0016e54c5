// Runs a program exported from Python (ember.export.save) without Python:
//
//   export_run MODEL.ember                 runs it on random inputs and prints the output shapes
//   export_run MODEL.ember IO.ckpt         runs it on the checkpoint's "inputs" (a list of
//                                          tensors) and, when the checkpoint has "expected",
//                                          compares the outputs with them (exit 1 on mismatch);
//                                          with "expected_state" (a dict), also the program's
//                                          buffers after the run (a program that updates them)
//
// examples/cpp/export_model.py writes such a pair; CTest runs the two (example.export_run_cpp).
#include <ember/ember.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  using namespace ember;
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: export_run MODEL.ember [IO.ckpt]\n";
    return 2;
  }
  try {
    export_::ExportedProgram program = export_::load(argv[1]);
    std::cout << "loaded " << argv[1] << ": " << program.num_nodes() << " nodes, "
              << program.state_dict().size() << " state tensors\n";
    std::vector<Tensor> inputs, expected;
    std::vector<std::pair<std::string, Tensor>> expected_state;
    if (argc == 3) {
      serialize::Value io = load(argv[2]);
      for (const auto& v : io.at("inputs").items) inputs.push_back(v.to_tensor());
      for (const auto& [k, v] : io.entries) {
        if (k.kind == serialize::Value::Kind::String && k.s == "expected")
          for (const auto& e : v.items) expected.push_back(e.to_tensor());
        if (k.kind == serialize::Value::Kind::String && k.s == "expected_state")
          for (const auto& [name, t] : v.entries)
            expected_state.emplace_back(name.s, t.to_tensor());
      }
    } else {
      for (const auto& in : program.user_inputs()) {
        std::vector<int64_t> shape;
        for (int64_t s : in.shape) shape.push_back(s < 0 ? 2 : s);
        inputs.push_back(randn(shape).to(in.dtype));
      }
    }
    std::vector<Tensor> outputs = program.run(inputs);
    for (size_t k = 0; k < outputs.size(); ++k) {
      std::cout << "output " << k << ": shape [";
      for (int64_t d = 0; d < outputs[k].dim(); ++d)
        std::cout << (d ? ", " : "") << outputs[k].size(d);
      std::cout << "]\n";
    }
    if (!expected.empty()) {
      if (expected.size() != outputs.size()) {
        std::cerr << "expected " << expected.size() << " outputs, got " << outputs.size() << "\n";
        return 1;
      }
      for (size_t k = 0; k < outputs.size(); ++k) {
        if (!outputs[k].allclose(expected[k], 1e-4, 1e-5)) {
          std::cerr << "output " << k << " differs from the expected values\n";
          return 1;
        }
      }
      std::cout << "outputs match the expected values\n";
    }
    for (const auto& [name, want] : expected_state) {
      auto it = program.state_dict().find(name);
      if (it == program.state_dict().end() ||
          !it->second.to(want.dtype()).allclose(want, 1e-4, 1e-5)) {
        std::cerr << "state '" << name << "' differs from the expected value after the run\n";
        return 1;
      }
    }
    if (!expected_state.empty())
      std::cout << "buffers match the expected values (" << program.mutated_buffers().size()
                << " updated by the program)\n";
  } catch (const std::exception& e) {
    std::cerr << "export_run: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
