#pragma once
// Running programs exported from Python (ember.export.save) without Python: a loader that
// validates the file and an interpreter that calls ember's ops node by node.
//
// Note [Exported program format]
// An exported program is one file in ember's checkpoint format (docs/FORMAT.md: magic
// `EMBERCKP`, version, a JSON header, 64-byte aligned raw tensor bytes; data only, written
// atomically). Its root is a dict:
//
//   format    "ember.export" (anything else is "not an exported program")
//   version   1, or 2 when the file has `mutations` (which a version-1 reader would skip)
//   inputs    [{name, kind, target, dtype, shape}]  one per graph input, in order; kind is
//             "parameter", "buffer", "constant" (lifted from the module: `target` is its
//             qualified name in `state`) or "user_input" (target null). `shape` lists ints and,
//             for dims exported as dynamic, the Dim's name (a string).
//   state     {qualified name: tensor}: the parameters, buffers and constants.
//   nodes     [{name, op, args}] in execution order; `op` is a runtime op (runtime_ops()) and
//             `args` its positional arguments (every one present: defaults are filled in by
//             the exporter).
//   outputs   [arg]: the graph's outputs (references to tensors).
//   output_structure  how Python nests the outputs: null (one tensor) or
//             ["tuple" | "list", [child structure, ...]] or ["dict", [[key, child], ...]]
//             (C++ returns them flat)
//   dims      {name: [min, max]}: the dynamic dims (max -1: unbounded).
//   mutations [{target, value}] (optional): buffers_to_mutate, the buffer's state name and a
//             reference to its new value, copied into the buffer after the outputs are computed.
//
// An argument is null, a bool, an int, a float, a string, a list/tuple of arguments, or a
// one-key dict: {"ref": name} (an input's or an earlier node's value), {"slice": [start, stop,
// step]}, {"ellipsis": null}, {"dtype": "float32"}, {"graph": {inputs, input_shapes, nodes,
// outputs}} (a cond branch: `inputs` lists its names, `input_shapes` its static sizes per input
// (a string for a free dim, null for a non-tensor); its names are its own and it sees only its
// inputs, so the exporter passes every lifted tensor a branch reads as an operand, as torch's
// cond does). Every op has a fixed signature (a string of
// argument kinds, see program.cpp) that loading checks for each node: a wrong count, a literal
// of the wrong kind, a reference to an unknown or later value, or an unknown op is a
// RuntimeError naming the node, as is anything the checkpoint reader rejects (truncation, a
// foreign file, a bad tensor table).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ember/core/tensor.h"

namespace ember::export_ {

struct Graph;  // the validated graph (program.cpp)

/// One input of the exported graph.
struct InputSpec {
  std::string name;
  std::string kind;    // "parameter", "buffer", "constant" or "user_input"
  std::string target;  // the state entry for lifted inputs; empty for user inputs
  ScalarType dtype = ScalarType::Float;
  std::vector<int64_t> shape;     // -1 where the dim is dynamic
  std::vector<std::string> dims;  // the dynamic dim's name, or empty
};

/// A loaded program (torch's ExportedProgram run from C++): thread-compatible.
class ExportedProgram {
 public:
  ExportedProgram();
  ~ExportedProgram();
  ExportedProgram(ExportedProgram&&) noexcept;
  ExportedProgram& operator=(ExportedProgram&&) noexcept;

  /// Runs the graph on the user inputs (in the order the Python function took them), without
  /// recording autograd; checks their count, dtypes and static sizes. A program that updates
  /// buffers (buffers_to_mutate: a train-mode BatchNorm's running statistics) copies the new
  /// values into its state after each run, as torch's ExportedProgram.module() does: such
  /// runs must not overlap in several threads.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) const;
  /// The graph's inputs, lifted ones first.
  const std::vector<InputSpec>& inputs() const;
  /// The user inputs only.
  std::vector<InputSpec> user_inputs() const;
  /// The parameters, buffers and constants by qualified name.
  const std::map<std::string, Tensor>& state_dict() const;
  /// How many op nodes the graph has (cond branches not counted).
  size_t num_nodes() const;
  /// The buffers each run updates (their state names), in the file's order.
  std::vector<std::string> mutated_buffers() const;

 private:
  friend ExportedProgram load(const std::string& path);
  std::unique_ptr<Graph> graph_;
};

/// Loads and validates an exported program (ember.export.save's file).
ExportedProgram load(const std::string& path);

/// The names of the ops the runtime runs (what ember.export.save accepts).
std::vector<std::string> runtime_ops();

}  // namespace ember::export_
