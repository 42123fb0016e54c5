// Shape ops (csrc/ember/ops/shape_ops.cpp): cat/stack, split/chunk/unbind, flip/roll, repeat/tile,
// meshgrid, broadcast_to.
#include "common.h"

namespace ember::py {

std::vector<Tensor> tensor_seq(nb::handle seq, const char* op) {
  if (nb::isinstance<Tensor>(seq))
    throw nb::type_error(
        (std::string(op) + "(): argument 'tensors' must be tuple of Tensors, not Tensor").c_str());
  std::vector<Tensor> out;
  for (nb::handle h : seq) {
    Tensor* t = nullptr;
    if (!nb::try_cast<Tensor*>(h, t) || !t)  // TypeError, as PyTorch raises, not a bad cast
      throw nb::type_error((std::string(op) + ": expected Tensor as element " +
                            std::to_string(out.size()) + "; got " + nb::type_name(h.type()).c_str())
                               .c_str());
    out.push_back(*t);
  }
  return out;
}

namespace {
// split, chunk, unbind and meshgrid give a tuple of views, as torch's (a list is not a tuple:
// `x.chunk(2) + (y,)` must work)
nb::tuple pieces(std::vector<Tensor> v) { return nb::tuple(nb::cast(std::move(v))); }
}  // namespace

void bind_shape(nb::module_& m) {
  auto cls = tensor_class();
  m.def(
      "cat", [](nb::handle ts, int64_t dim) { return cat(tensor_seq(ts, "cat"), dim); },
      nb::arg("tensors"), nb::arg("dim") = 0,
      doc("cat(tensors, dim=0) -> Tensor",
          "Joins the tensors end to end along an existing dim; the other dims must agree."));
  for (const char* name : {"concat", "concatenate"})
    m.def(
        name, [](nb::handle ts, int64_t dim) { return cat(tensor_seq(ts, "cat"), dim); },
        nb::arg("tensors"), nb::arg("dim") = 0,
        doc(std::string(name) + "(tensors, dim=0) -> Tensor", "Another name for cat()."));
  m.def(
      "stack", [](nb::handle ts, int64_t dim) { return stack(tensor_seq(ts, "stack"), dim); },
      nb::arg("tensors"), nb::arg("dim") = 0,
      doc("stack(tensors, dim=0) -> Tensor",
          "Joins tensors of one shape along a new dim inserted at dim."));
  m.def(
      "hstack", [](nb::handle ts) { return hstack(tensor_seq(ts, "hstack")); }, nb::arg("tensors"),
      doc("hstack(tensors) -> Tensor",
          "Joins the tensors column-wise: along dim 1, or dim 0 for 1-D tensors."));
  m.def(
      "vstack", [](nb::handle ts) { return vstack(tensor_seq(ts, "vstack")); }, nb::arg("tensors"),
      doc("vstack(tensors) -> Tensor",
          "Joins the tensors row-wise along dim 0, making 1-D tensors rows first."));
  m.def(
      "row_stack", [](nb::handle ts) { return vstack(tensor_seq(ts, "row_stack")); },
      nb::arg("tensors"), doc("row_stack(tensors) -> Tensor", "Another name for vstack()."));
  auto split_fn = [](const Tensor& t, nb::handle size, int64_t dim) {
    if (PyLong_Check(size.ptr())) return pieces(split(t, nb::cast<int64_t>(size), dim));
    return pieces(split_with_sizes(t, int_list(size, "split_size_or_sections"), dim));
  };
  const char* split_text =
      "Cuts the tensor along dim into views of the given size (the last may be smaller), or of "
      "the listed sizes.";
  m.def("split", split_fn, nb::arg("tensor"), nb::arg("split_size_or_sections"), nb::arg("dim") = 0,
        doc("split(tensor, split_size_or_sections, dim=0) -> List of Tensors", split_text));
  cls.def("split", split_fn, nb::arg("split_size"), nb::arg("dim") = 0,
          doc("split(split_size, dim=0) -> List of Tensors", split_text));
  both(
      m, cls, "split_with_sizes",
      [](const Tensor& t, nb::handle sizes, int64_t dim) {
        return pieces(split_with_sizes(t, int_list(sizes, "split_sizes"), dim));
      },
      {"split_with_sizes(input, split_sizes, dim=0) -> List of Tensors",
       "Cuts the tensor along dim into views of the listed sizes, which must add up to its size."},
      nb::arg("split_sizes"), nb::arg("dim") = 0);
  both(
      m, cls, "chunk", [](const Tensor& t, int64_t c, int64_t d) { return pieces(chunk(t, c, d)); },
      {"chunk(input, chunks, dim=0) -> List of Tensors",
       "Cuts the tensor along dim into at most chunks views of equal size (the last may be "
       "smaller)."},
      nb::arg("chunks"), nb::arg("dim") = 0);
  both(
      m, cls, "unbind", [](const Tensor& t, int64_t d) { return pieces(unbind(t, d)); },
      {"unbind(input, dim=0) -> seq", "The slices along dim, each without that dim."},
      nb::arg("dim") = 0);
  Doc flip_doc{"flip(input, dims) -> Tensor",
               "A copy with the order of elements reversed along the given dims."};
  m.def(
      "flip",
      [](const Tensor& t, nb::handle dims) {
        require_int_sequence(dims, "flip", 2);
        return flip(t, int_list(dims, "dims"));
      },
      nb::arg("input"), nb::arg("dims"), doc(flip_doc));
  cls.def(
      "flip", [](const Tensor& t, nb::args dims) { return flip(t, int_varargs(dims, "dims")); },
      nb::arg("dims"), doc("flip(*dims) -> Tensor", flip_doc.text));
  // torch checks the rank first (RuntimeError), before flip's dim check (IndexError)
  both(m, cls, "fliplr",
       [](const Tensor& t) {
         EMBER_CHECK(t.dim() >= 2, "Input must be >= 2-d.");
         return flip(t, {1});
       },
       {"fliplr(input) -> Tensor", "A copy with the columns (dim 1) in reverse order."});
  both(m, cls, "flipud",
       [](const Tensor& t) {
         EMBER_CHECK(t.dim() >= 1, "Input must be >= 1-d.");
         return flip(t, {0});
       },
       {"flipud(input) -> Tensor", "A copy with the rows (dim 0) in reverse order."});
  both(
      m, cls, "roll",
      [](const Tensor& t, nb::handle shifts, nb::handle dims) {
        return roll(t, int_list(shifts, "shifts"), dims_arg(dims));
      },
      {"roll(input, shifts, dims=None) -> Tensor",
       "Shifts the elements along dims, wrapping around the end (the flattened tensor for None)."},
      nb::arg("shifts"), nb::arg("dims") = nb::none());
  cls.def(
      "repeat",
      [](const Tensor& t, nb::args sizes) { return repeat(t, int_varargs(sizes, "repeats")); },
      nb::arg("repeats"),
      doc("repeat(*repeats) -> Tensor",
          "Tiles the tensor: a copy repeated the given number of times along each dim."));
  auto ri = [](const Tensor& t, nb::handle repeats, std::optional<int64_t> dim, nb::handle) {
    if (PyLong_Check(repeats.ptr())) return repeat_interleave(t, nb::cast<int64_t>(repeats), dim);
    return repeat_interleave(t, nb::cast<Tensor>(repeats), dim);
  };
  Doc ri_doc{"repeat_interleave(input, repeats, dim=None, *, output_size=None) -> Tensor",
             "Repeats each element (each slice along dim) repeats times, keeping the copies "
             "next to each other."};
  m.def(
      "repeat_interleave",
      [ri](const Tensor& t, nb::handle repeats, std::optional<int64_t> dim, nb::handle out_size) {
        if (repeats.is_none()) return repeat_interleave(t);
        return ri(t, repeats, dim, out_size);
      },
      nb::arg("input"), nb::arg("repeats") = nb::none(), nb::arg("dim") = nb::none(), nb::kw_only(),
      nb::arg("output_size") = nb::none(), doc(ri_doc));
  cls.def("repeat_interleave", ri, nb::arg("repeats"), nb::arg("dim") = nb::none(), nb::kw_only(),
          nb::arg("output_size") = nb::none(), method_doc(ri_doc));
  Doc tile_doc{
      "tile(input, dims) -> Tensor",
      "Repeats the tensor the given number of times along each dim (padding dims with 1)."};
  m.def(
      "tile", [](const Tensor& t, nb::handle dims) { return tile(t, int_list(dims, "dims")); },
      nb::arg("input"), nb::arg("dims"), doc(tile_doc));
  cls.def(
      "tile", [](const Tensor& t, nb::args dims) { return tile(t, int_varargs(dims, "dims")); },
      nb::arg("dims"), doc("tile(*dims) -> Tensor", tile_doc.text));
  m.def(
      "meshgrid",
      [](nb::args ts, std::optional<std::string> indexing) {
        std::vector<Tensor> v = ts.size() == 1 && !nb::isinstance<Tensor>(ts[0])
                                    ? tensor_seq(ts[0], "meshgrid")
                                    : tensor_seq(ts, "meshgrid");
        return pieces(meshgrid(v, indexing.value_or("ij")));
      },
      nb::arg("tensors"), nb::kw_only(), nb::arg("indexing") = nb::none(),
      doc("meshgrid(*tensors, indexing=None) -> seq",
          "Coordinate grids from 1-D tensors: one N-D tensor per input, indexed 'ij' (default) or "
          "'xy'."));
  // the method takes a bare int as the size (x.broadcast_to(4)), the function does not
  Doc broadcast_doc{"broadcast_to(input, size) -> Tensor",
                    "A view of input expanded to the given shape."};
  m.def(
      "broadcast_to",
      [](const Tensor& t, nb::handle shape) {
        if (PyLong_Check(shape.ptr()))
          throw nb::type_error(("broadcast_to(): argument 'size' (position 2) must be tuple of "
                                "ints, not " +
                                type_name_of(shape))
                                   .c_str());
        return broadcast_to(t, int_list(shape, "size"));
      },
      nb::arg("input"), nb::arg("size"), doc(broadcast_doc));
  cls.def(
      "broadcast_to",
      [](const Tensor& t, nb::handle shape) { return broadcast_to(t, int_list(shape, "size")); },
      nb::arg("size"), method_doc(broadcast_doc));
}

}  // namespace ember::py
