#pragma once
// Anomaly mode (torch.autograd.detect_anomaly). See Note [Anomaly mode].
#include <cstdint>
#include <string>

namespace ember::autograd::anomaly {

// Note [Anomaly mode]
// While anomaly mode is on, every node records, when it is constructed, the stack of the
// forward call that created it (a hook the Python bindings install captures the Python
// traceback; a C++ program without one records nothing). The engine then checks each node's
// output gradients for NaN (when check_nan is on) and, when a node's backward fails, emits the
// recorded stack as a warning before the error propagates, as torch does. Off, the cost is one
// relaxed load per node construction and per node run. The stacks live in a side table keyed by
// the node's sequence number (so Node needs no field); the table is cleared when anomaly mode is
// switched off and keeps at most kMaxRecorded entries (the oldest are dropped).

/// True while anomaly mode is on.
bool enabled();
/// True if anomaly mode also checks backward results for NaN.
bool check_nan();
/// Switches anomaly mode (process-wide, as torch's flag is).
void set_enabled(bool enabled, bool check_nan);

/// Captures the current forward stack as text (installed by the bindings).
using StackFn = std::string (*)();
/// Emits a warning text (installed by the bindings; without one it goes to stderr).
using WarnFn = void (*)(const std::string&);
void set_hooks(StackFn stack, WarnFn warn);

/// Records the forward stack of the node with this sequence number (called by Node()).
void record(uint64_t sequence_nr);
/// The recorded stack, or empty.
std::string stack_of(uint64_t sequence_nr);
/// Warns "Error detected in <name>. Traceback of forward call that caused the error: ...".
void warn_error_in(const std::string& node_name, uint64_t sequence_nr);

}  // namespace ember::autograd::anomaly
