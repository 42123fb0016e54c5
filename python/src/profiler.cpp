// The profiler's recording side (Note [Profiler] in core/profiler.h) as ember.autograd.profiler
// uses it: start and stop a profile, open and close user ranges, read the records.
#include <bit>

#include "common.h"
#include "ember/core/profiler_session.h"

namespace ember::py {

namespace {

// One argument's entry (see ThreadRecords::shapes) as its sizes ([] for a non-tensor, a list of
// sizes for a tensor list) and what the rest of torch's record needs: ("t", strides, dtype) for a
// tensor, ("l", entries) for a tensor list, ("v", kind, value) for a number, ("s", kind, values)
// for a number list, None otherwise (Note [Profiler inputs]).
std::pair<nb::object, nb::object> decode_input(const std::vector<int64_t>& s, size_t& i) {
  int64_t tag = s[i++];
  nb::list sizes;
  if (tag == 0) {
    int64_t n = s[i++];
    nb::list strides;
    for (int64_t k = 0; k < n; ++k) sizes.append(s[i++]);
    for (int64_t k = 0; k < n; ++k) strides.append(s[i++]);
    return {sizes, nb::make_tuple("t", strides, s[i++])};
  }
  if (tag == 2) {
    int64_t n = s[i++];
    nb::list entries;
    for (int64_t k = 0; k < n; ++k) {
      auto [sz, entry] = decode_input(s, i);
      sizes.append(sz);
      entries.append(entry);
    }
    return {sizes, nb::make_tuple("l", entries)};
  }
  auto value = [](int64_t kind, int64_t bits) -> nb::object {
    switch (profiler::ValueKind(kind)) {
      case profiler::ValueKind::Double:
        return nb::float_(std::bit_cast<double>(bits));
      case profiler::ValueKind::Bool:
        return nb::bool_(bits != 0);
      default:
        return nb::int_(bits);
    }
  };
  if (tag == 3) {
    int64_t kind = s[i++];
    int64_t bits = s[i++];
    return {sizes, nb::make_tuple("v", kind, value(kind, bits))};
  }
  if (tag == 4) {
    int64_t kind = s[i++];
    int64_t n = s[i++];
    nb::list values;
    for (int64_t k = 0; k < n; ++k) values.append(value(kind, s[i++]));
    return {sizes, nb::make_tuple("s", kind, values)};
  }
  return {sizes, nb::none()};
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
            nb::object shapes = nb::none(), inputs = nb::none();
            if (r.shapes_end > r.shapes_begin) {
              nb::list args, entries;
              size_t i = size_t(r.shapes_begin);
              while (i < size_t(r.shapes_end)) {
                auto [sizes, entry] = decode_input(tr.shapes, i);
                args.append(sizes);
                entries.append(entry);
              }
              shapes = args;
              inputs = entries;
            }
            int kind = r.memory ? 4 : int(r.kind);
            recs.append(
                nb::make_tuple(r.name.empty() ? nb::str("") : nb::str(r.name.data(), r.name.size()),
                               kind, r.start_ns, r.end_ns, r.parent, shapes, r.bytes, r.addr,
                               r.total_allocated, r.sequence_nr, r.fwd_thread, inputs));
          }
          out.append(nb::make_tuple(tr.tid, recs));
        }
        return nb::make_tuple(profiler::now_ns(), out);
      },
      doc("_profiler_stop() -> Tuple[int, List[Tuple[int, list]]]",
          "Stops recording; returns the stop time and, per thread, (thread id, records), each "
          "record (name, kind, start_ns, end_ns, parent index, input shapes or None, bytes, "
          "address, total allocated, sequence number or -1, forward thread, inputs or None); kind "
          "0 op, 1 user range, 2 autograd node, 3 pool worker, 4 memory; inputs: per argument "
          "('t', strides, dtype code), ('l', entries), ('v', value kind, value), "
          "('s', value kind, values) or None (Note [Profiler inputs])."));
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
