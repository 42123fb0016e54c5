// The profiler's recording side (Note [Profiler] in core/profiler.h) as ember.autograd.profiler
// uses it: start and stop a profile, open and close user ranges, read the records.
#include "common.h"
#include "ember/core/profiler_session.h"

namespace ember::py {

namespace {

// One argument's shape entry (see ThreadRecords::shapes): sizes, [] or a list of entries.
nb::object decode_shape(const std::vector<int64_t>& s, size_t& i) {
  int64_t tag = s[i++];
  nb::list out;
  if (tag == 0) {
    int64_t n = s[i++];
    for (int64_t k = 0; k < n; ++k) out.append(s[i++]);
  } else if (tag == 2) {
    int64_t n = s[i++];
    for (int64_t k = 0; k < n; ++k) out.append(decode_shape(s, i));
  }
  return out;
}

}  // namespace

void bind_profiler(nb::module_& m) {
  m.def(
      "_profiler_start",
      [](bool record_shapes, bool profile_memory) {
        profiler::start(record_shapes, profile_memory);
        return profiler::now_ns();
      },
      nb::arg("record_shapes") = false, nb::arg("profile_memory") = false,
      doc("_profiler_start(record_shapes=False, profile_memory=False) -> int",
          "Starts recording every op, user range and (optionally) allocation; returns the "
          "profiler clock's time in ns."));
  m.def(
      "_profiler_stop",
      [] {
        std::vector<profiler::ThreadRecords> threads = profiler::stop();
        nb::list out;
        for (const auto& tr : threads) {
          nb::list recs;
          for (const profiler::Record& r : tr.records) {
            nb::object shapes = nb::none();
            if (r.shapes_end > r.shapes_begin) {
              nb::list args;
              size_t i = size_t(r.shapes_begin);
              while (i < size_t(r.shapes_end)) args.append(decode_shape(tr.shapes, i));
              shapes = args;
            }
            int kind = r.memory ? 4 : int(r.kind);
            recs.append(
                nb::make_tuple(r.name.empty() ? nb::str("") : nb::str(r.name.data(), r.name.size()),
                               kind, r.start_ns, r.end_ns, r.parent, shapes, r.bytes, r.addr,
                               r.total_allocated, r.sequence_nr, r.fwd_thread));
          }
          out.append(nb::make_tuple(tr.tid, recs));
        }
        return nb::make_tuple(profiler::now_ns(), out);
      },
      doc("_profiler_stop() -> Tuple[int, List[Tuple[int, list]]]",
          "Stops recording; returns the stop time and, per thread, (thread id, records), each "
          "record (name, kind, start_ns, end_ns, parent index, input shapes or None, bytes, "
          "address, total allocated, sequence number or -1, forward thread); kind 0 op, 1 user "
          "range, 2 autograd node, 3 pool worker, 4 memory."));
  m.def(
      "_profiler_enabled", [] { return profiler::enabled(); },
      doc("_profiler_enabled() -> bool", "Whether a profile is recording."));
  m.def(
      "_profiler_now_ns", [] { return profiler::now_ns(); },
      doc("_profiler_now_ns() -> int", "The profiler clock (steady, ns)."));
  m.def(
      "_record_function_enter",
      [](const std::string& name, bool op) {
        int64_t handle = profiler::begin_range(profiler::RangeKind::User, name);
        if (op) profiler::mark_op_range(handle);
        return handle;
      },
      nb::arg("name"), nb::arg("op") = false,
      doc("_record_function_enter(name, op=False) -> int",
          "Opens a user range on this thread; returns its handle (-1 when nothing records). "
          "`op`: the range is an op written in Python, which records the sequence number of "
          "the next autograd node (Note [Profiler sequence numbers])."));
  m.def(
      "_record_function_exit", [](int64_t handle) { profiler::end_range(handle); },
      nb::arg("handle"),
      doc("_record_function_exit(handle) -> None",
          "Closes the user range `handle` of this thread."));
}

}  // namespace ember::py
