// Memory formats (csrc/ember/ops/memory_format.h): Tensor.is_contiguous/contiguous/clone with
// memory_format=, and the helpers behind the Python factories' and `to`'s memory_format=.
#include "ember/ops/memory_format.h"
#include "common.h"

namespace ember::py {

namespace {

// An ember.memory_format object (python/ember/_process.py) as the C++ enum; None is `dflt`.
MemoryFormat format_arg(nb::handle h, MemoryFormat dflt, const char* fn) {
  if (h.is_none()) return dflt;
  nb::object code = nb::getattr(h, "_ember_format", nb::none());
  if (code.is_none() || !nb::isinstance<nb::int_>(code))
    throw nb::type_error((std::string(fn) + "(): argument 'memory_format' must be " +
                          "torch.memory_format, not " + type_name_of(h))
                             .c_str());
  return MemoryFormat(nb::cast<int>(code));
}

}  // namespace

void bind_memory_format(nb::module_& m) {
  auto cls = tensor_class();
  cls.def(
      "is_contiguous",
      [](const Tensor& t, nb::handle f) {
        return is_contiguous(t, format_arg(f, MemoryFormat::Contiguous, "is_contiguous"));
      },
      nb::arg("memory_format") = nb::none(),
      doc("is_contiguous(memory_format=torch.contiguous_format) -> bool",
          "Whether the elements lie in memory densely in the order of memory_format (row-major "
          "by default; size-1 dims may have any stride)."));
  cls.def(
      "contiguous",
      [](nb::handle self, nb::handle f) -> nb::object {
        Tensor& t = nb::cast<Tensor&>(self);
        MemoryFormat fmt = format_arg(f, MemoryFormat::Contiguous, "contiguous");
        if (is_contiguous(t, fmt)) return nb::borrow(self);
        return nb::cast(contiguous(t, fmt));
      },
      nb::arg("memory_format") = nb::none(),
      doc("contiguous(memory_format=torch.contiguous_format) -> Tensor",
          "Self if already laid out densely in memory_format's order, else a copy that is."));
  both(
      m, cls, "clone",
      [](const Tensor& t, nb::handle f) {
        return clone(t, format_arg(f, MemoryFormat::Preserve, "clone"));
      },
      {"clone(input, *, memory_format=torch.preserve_format) -> Tensor",
       "A copy with its own storage (laid out as input unless memory_format says otherwise); "
       "gradients flow back to input."},
      nb::kw_only(), nb::arg("memory_format") = nb::none());
  m.def(
      "_suggest_memory_format", [](const Tensor& t) { return int(suggest_memory_format(t)); },
      nb::arg("input"),
      doc("_suggest_memory_format(input) -> int",
          "The memory format input's strides follow, as ember.memory_format's code."));
  m.def(
      "_strides_for",
      [](std::vector<int64_t> sizes, nb::handle f) {
        DimVector s = strides_for(sizes, format_arg(f, MemoryFormat::Contiguous, "empty"));
        return std::vector<int64_t>(s.begin(), s.end());
      },
      nb::arg("size"), nb::arg("memory_format"),
      doc("_strides_for(size, memory_format) -> list",
          "The strides of a fresh tensor of size in memory_format."));
  m.def(
      "_empty_format",
      [](std::vector<int64_t> sizes, Dt dtype, nb::handle f) {
        MemoryFormat fmt = format_arg(f, MemoryFormat::Contiguous, "empty");
        return empty(sizes, dtype.value_or(default_dtype()), fmt);
      },
      nb::arg("size"), nb::arg("dtype").none(), nb::arg("memory_format").none(),
      doc("_empty_format(size, dtype, memory_format) -> Tensor",
          "An uninitialised tensor of size laid out in memory_format."));
  m.def(
      "_empty_like_format",
      [](const Tensor& t, Dt dtype, nb::handle f) {
        MemoryFormat fmt = format_arg(f, MemoryFormat::Preserve, "empty_like");
        return empty_like(t, dtype.value_or(t.dtype()), fmt);
      },
      nb::arg("input"), nb::arg("dtype").none(), nb::arg("memory_format").none(),
      doc("_empty_like_format(input, dtype, memory_format) -> Tensor",
          "An uninitialised tensor shaped like input, laid out as memory_format asks "
          "(preserve_format keeps input's layout)."));
  m.def(
      "_to_format",
      [](nb::handle self, Dt dtype, nb::handle f, bool copy) -> nb::object {
        const Tensor& t = nb::cast<const Tensor&>(self);
        Tensor r = to_format(t, dtype, format_arg(f, MemoryFormat::Preserve, "to"), copy);
        if (r.impl_ptr().get() == t.impl_ptr().get()) return nb::borrow(self);  // self itself
        return nb::cast(std::move(r));
      },
      nb::arg("input"), nb::arg("dtype").none(), nb::arg("memory_format").none(), nb::arg("copy"),
      doc("_to_format(input, dtype, memory_format, copy) -> Tensor",
          "input converted to dtype and memory_format; input itself when nothing changes and "
          "copy is False."));
}

}  // namespace ember::py
