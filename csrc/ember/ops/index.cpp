// Indexing ops: argument checks, dispatch entry points and derivatives, side by side. The loops
// are in cpu/index.cpp; advanced-index normalization and getitem/setitem in ops/indexing.cpp.
#include "ember/schema/index.h"
#include "ember/autograd/node.h"
#include "ember/autograd/rename.h"
#include "ember/core/shape.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/ops/derivative.h"
#include "ember/ops/derivative_list.h"
#include "ember/ops/meta.h"
#include "ember/ops/ops.h"

namespace ember {

// Defined in copy.cpp: bumps self's version after an in-place write, raising PyTorch's error when
// self is an inference tensor and InferenceMode is off (declared here to keep headers unchanged).
void bump_inplace_version(const Tensor& self);

using autograd::variable_list;
using IndexList = std::vector<std::optional<Tensor>>;

namespace {

// Operator handles.

// ---- checks -------------------------------------------------------------------------------------

int64_t nonempty_dim(const Tensor& t) { return std::max<int64_t>(t.dim(), 1); }
int64_t nonempty_size(const Tensor& t, int64_t d) {
  return t.dim() == 0 ? 1 : t.sizes()[size_t(d)];
}

// A 1-d (or 0-d) index; `dim_error` is the class PyTorch raises for more dims (it varies by op).
void check_index_vector(const char* op, const Tensor& index, bool allow_int, ErrorKind dim_error) {
  EMBER_CHECK(index.dtype() == kLong || (allow_int && index.dtype() == kInt), op,
              "(): Expected dtype ", allow_int ? "int32 or int64" : "int64", " for index; got ",
              scalar_type_name(index.dtype()));
  EMBER_CHECK_KIND(index.dim() <= 1, dim_error, op,
                   "(): Index is supposed to be a vector; got shape ", index.sizes());
}

// gather and scatter take int32 or int64 indices; the kernels read int64 (see long_index).
void check_gather_index_dtype(const char* op, const Tensor& index) {
  EMBER_CHECK(index.dtype() == kLong || index.dtype() == kInt, op,
              "(): Expected dtype int32/int64 for index; got ", scalar_type_name(index.dtype()));
}

// An int32 index widened once, so that one int64 loop serves both index dtypes.
Tensor long_index(const Tensor& index) {
  return index.dtype() == kLong ? index : to_dtype(index, kLong);
}

// gather: index no larger than self off `dim`; returns dim wrapped.
int64_t check_gather(const Tensor& self, int64_t dim, const Tensor& index) {
  dim = maybe_wrap_dim(dim, self.dim());
  if (index.numel() == 0) return dim;  // PyTorch checks neither dtype nor shape of an empty index
  check_gather_index_dtype("gather", index);
  EMBER_CHECK(nonempty_dim(self) == nonempty_dim(index),
              "Index tensor must have the same number of dimensions as input tensor; got ",
              index.sizes(), " and ", self.sizes());
  for (int64_t d = 0; d < nonempty_dim(self); ++d)
    EMBER_CHECK(d == dim || nonempty_size(index, d) <= nonempty_size(self, d),
                "Size does not match at dimension ", d, " expected index ", index.sizes(),
                " to be smaller than self ", self.sizes(), " apart from dimension ", dim);
  return dim;
}

// scatter family: index no larger than src, nor than self off `dim`; returns dim wrapped.
int64_t check_scatter(const char* op, const Tensor& self, int64_t dim, const Tensor& index,
                      const Tensor& src) {
  dim = maybe_wrap_dim(dim, self.dim());
  if (index.numel() == 0) return dim;  // as gather
  check_gather_index_dtype(op, index);
  EMBER_CHECK(self.dtype() == src.dtype(), op,
              "(): Expected self.dtype to be equal to src.dtype; got ",
              scalar_type_name(self.dtype()), " and ", scalar_type_name(src.dtype()));
  // torch reads src's sizes along self's dims once index fits self, so a src with fewer dims
  // fails there first, with an IndexError (Dimension out of range)
  if (nonempty_dim(self) == nonempty_dim(index) && src.dim() > 0 && src.dim() < index.dim()) {
    bool fits_self = true;
    for (int64_t d = 0; d < nonempty_dim(self); ++d)
      fits_self = fits_self && (d == dim || nonempty_size(index, d) <= nonempty_size(self, d));
    if (fits_self) {
      for (int64_t d = 0; d < src.dim(); ++d)
        if (nonempty_size(index, d) > src.size(d)) fits_self = false;
      if (fits_self) maybe_wrap_dim(src.dim(), src.dim());  // raises torch's IndexError
    }
  }
  EMBER_CHECK(
      nonempty_dim(self) == nonempty_dim(index) && nonempty_dim(src) == nonempty_dim(index), op,
      "(): Index tensor must have the same number of dimensions as self and src; got index ",
      index.sizes(), ", self ", self.sizes(), ", src ", src.sizes());
  for (int64_t d = 0; d < nonempty_dim(self); ++d)
    EMBER_CHECK(nonempty_size(index, d) <= nonempty_size(src, d) &&
                    (d == dim || nonempty_size(index, d) <= nonempty_size(self, d)),
                op, "(): Expected index ", index.sizes(), " to be smaller than self ", self.sizes(),
                " apart from dimension ", dim, " and to be smaller size than src ", src.sizes());
  return dim;
}

int64_t check_index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                        const Scalar& alpha) {
  dim = maybe_wrap_dim(dim, self.dim());
  check_index_vector("index_add_", index, true, ErrorKind::Index);
  EMBER_CHECK(self.dtype() == source.dtype(), "index_add_(): self (",
              scalar_type_name(self.dtype()), ") and source (", scalar_type_name(source.dtype()),
              ") must have the same scalar type");
  EMBER_CHECK(nonempty_dim(self) == nonempty_dim(source),
              "index_add_(): source and self must have the same number of dimensions; got ",
              source.sizes(), " and ", self.sizes());
  EMBER_CHECK(index.numel() == nonempty_size(source, dim), "index_add_(): Number of indices (",
              index.numel(), ") should be equal to source.size(dim) (", nonempty_size(source, dim),
              ")");
  for (int64_t d = 0; d < nonempty_dim(self); ++d)
    EMBER_CHECK(d == dim || nonempty_size(self, d) == nonempty_size(source, d),
                "index_add_(): source tensor shape must match self tensor shape, excluding the "
                "specified dimension. Got self.shape = ",
                self.sizes(), " source.shape = ", source.sizes());
  EMBER_CHECK(is_floating_point(self.dtype()) || !alpha.is_floating_point(),
              "For integral input tensors, argument alpha must not be a floating point number.");
  // an empty vector has no valid index (the kernel reads none of an empty self): torch's
  // vector kernel raises for any index there
  EMBER_CHECK_KIND(!(self.dim() == 1 && self.size(0) == 0 && index.numel() > 0), ErrorKind::Index,
                   "index out of range in self");
  return dim;
}

void check_reduce(const std::string& reduce, const Tensor& self) {
  EMBER_CHECK(reduce == "sum" || reduce == "prod" || reduce == "mean" || reduce == "amax" ||
                  reduce == "amin",
              "reduce argument must be either sum, prod, mean, amax or amin, got ", reduce);
  EMBER_CHECK_KIND(!(reduce == "mean" && self.dtype() == kBool), ErrorKind::NotImplemented,
                   "\"scatter_reduce\" with reduce='mean' not implemented for 'Bool'");
}

void check_masked_fill(const Tensor& mask, const Tensor& value) {
  EMBER_CHECK(mask.dtype() == kBool,
              "masked_fill_ only supports boolean masks, but got mask with dtype ",
              cpp_type_name(mask.dtype()));
  EMBER_CHECK(value.dim() == 0,
              "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
}

void check_index_put(const Tensor& self, const Tensor& values) {
  EMBER_CHECK(self.dtype() == values.dtype(),
              "Index put requires the source and destination dtypes match, got ",
              scalar_type_name(self.dtype()), " for the destination and ",
              scalar_type_name(values.dtype()), " for the source.");
}

// ---- helpers for derivatives --------------------------------------------------------------------

// The gradient of src when only its index-sized corner was read: `g` there, zeros elsewhere.
Tensor pad_to(const Tensor& g, IntArrayRef shape) {
  if (g.sizes().equals(shape)) return g;
  IndexList corner;
  for (int64_t d = 0; d < g.dim(); ++d) {
    DimVector s(size_t(g.dim()), 1);
    s[size_t(d)] = g.size(d);
    corner.push_back(reshape(arange(g.size(d)), s));
  }
  return index_put(zeros(shape, TensorOptions(g.dtype()).device(g.device())), corner, g);
}

// src cut to the index's extent (the part a scatter reads).
Tensor narrow_to(const Tensor& src, const Tensor& index) {
  Tensor r = src;
  for (int64_t d = 0; d < index.dim(); ++d)
    if (r.size(d) != index.size(d)) r = narrow(r, d, 0, index.size(d));
  return r;
}

Tensor zero_like_dtype(const Tensor& g) { return zeros({}, TensorOptions(g.dtype())); }

// ---- autograd kernels ---------------------------------------------------------------------------

// PyTorch's formulas (FunctionsManual.cpp, scatter_reduce_backward), except that for amax/amin
// with include_self=false the excluded self no longer counts among the tied winners.
variable_list scatter_reduce_backward(const Tensor& grad, const Tensor& self, int64_t dim,
                                      const Tensor& index, const Tensor& src_full,
                                      const std::string& reduce, bool include_self,
                                      const Tensor& result, std::array<bool, 2> need) {
  Tensor src = narrow_to(src_full, index);
  Tensor zero = wrap_scalar(0), one = wrap_scalar(1);
  Tensor gs, gsrc;
  if (reduce == "sum") {
    gs = grad;
    gsrc = gather(grad, dim, index);
  } else if (reduce == "mean") {
    Tensor count =
        scatter_add(include_self ? ones_like(grad) : zeros_like(grad), dim, index, ones_like(src));
    count = masked_fill(count, eq(count, zero), Scalar(1));
    gs = grad / count;
    gsrc = gather(grad, dim, index) / gather(count, dim, index);
  } else if (reduce == "prod") {
    // Exclusive products, computed directly where a factor is zero.
    Tensor masked_self = masked_fill(self, eq(self, zero), Scalar(1));
    Tensor masked_self_result = scatter_reduce(masked_self, dim, index, src, reduce, include_self);
    gs = grad * masked_self_result / masked_self;
    Tensor src_zero = eq(src, zero);
    Tensor zeros_per_slot = gather(
        scatter_add(zeros_like(self), dim, index, to_dtype(src_zero, self.dtype())), dim, index);
    Tensor single_zero = logical_and(src_zero, eq(zeros_per_slot, one));
    Tensor masked_src_result = scatter_reduce(
        self, dim, index, masked_fill(src, single_zero, Scalar(1)), reduce, include_self);
    gsrc = where(single_zero, gather(grad * masked_src_result, dim, index),
                 gather(grad * result, dim, index) / masked_fill(src, src_zero, Scalar(1)));
  } else {  // amax, amin: ties share the gradient equally
    Tensor value = gather(result, dim, index);
    Tensor self_is_result = to_dtype(eq(self, result), grad.dtype());
    if (!include_self) self_is_result = scatter(self_is_result, dim, index, Scalar(0));
    Tensor src_is_result = to_dtype(eq(src, value), grad.dtype());
    Tensor share = grad / scatter_add(self_is_result, dim, index, src_is_result);
    gs = self_is_result * share;
    gsrc = src_is_result * gather(share, dim, index);
  }
  if (!include_self) gs = scatter(gs, dim, index, Scalar(0));
  return {need[0] ? gs : Tensor(), need[1] ? pad_to(gsrc, src_full.sizes()) : Tensor()};
}

}  // namespace

EMBER_DERIVATIVE_GROUPED(op::scatter_reduce, "ScatterReduceBackward0",
                         (self, dim, index, src, reduce, include_self), (result), (self, src),
                         scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self,
                                                 result, need));
// A number as the value (a wrapped 0-d tensor) names the node as torch's Scalar overload.
namespace {
// masked_fill's meta step (Note [Meta step] in ops/meta.h): self's dtype over the broadcast of
// self and mask; the result is self's copy that the in-place kernel then fills.
template <DispatchKey K>
Tensor masked_fill_structured(const Tensor& self, const Tensor& mask, const Tensor& value) {
  if constexpr (K == DispatchKey::Meta)
    meta::check_meta_devices("masked_fill", {&self, &mask, &value});
  Tensor out = empty(broadcast_shapes(self.sizes(), mask.sizes(), "masked_fill"), self.dtype(),
                     meta::device_of(K));
  if constexpr (K != DispatchKey::Meta) {
    meta::copy(out, self, K);
    meta::kernel(op::masked_fill_, K)(out, mask, value);
  }
  return out;
}
EMBER_REGISTER_KERNEL(op::masked_fill, CPU, masked_fill_structured<DispatchKey::CPU>);
EMBER_REGISTER_KERNEL(op::masked_fill, Meta, masked_fill_structured<DispatchKey::Meta>);
}  // namespace

EMBER_DERIVATIVE(op::masked_fill,
                 value.impl()->is_wrapped_number ? "MaskedFillBackward0" : "MaskedFillBackward1",
                 (self, mask, value), masked_fill(grad, mask, Scalar(0)), not_differentiable(),
                 sum(masked_fill(grad, logical_not(mask), Scalar(0))));

EMBER_DERIVATIVE(op::index_select, "IndexSelectBackward0", (self, dim, index),
                 index_add(zeros(self_sizes, TensorOptions(grad.dtype()).device(grad.device())),
                           dim, index, grad),
                 not_differentiable());
EMBER_DERIVATIVE(op::gather, "GatherBackward0", (self, dim, index),
                 scatter_add(zeros(self_sizes, TensorOptions(grad.dtype()).device(grad.device())),
                             dim, index, grad),
                 not_differentiable());
// scatter: the overwritten slots of self get no gradient; src gets the grad it was written to.
EMBER_DERIVATIVE(op::scatter, "ScatterBackward0", (self, dim, index, src),
                 scatter(grad, dim, index, Scalar(0)), not_differentiable(),
                 pad_to(gather(grad, dim, index), src_sizes));
EMBER_DERIVATIVE(op::scatter_add, "ScatterAddBackward0", (self, dim, index, src), grad,
                 not_differentiable(), pad_to(gather(grad, dim, index), src_sizes));
EMBER_DERIVATIVE(op::index_add, "IndexAddBackward0", (self, dim, index, source, alpha), grad,
                 not_differentiable(), times_alpha(index_select(grad, dim, index), alpha));
// In-place forms under autograd run their out-of-place twin (Note [In-place under autograd]).
EMBER_INPLACE_DERIVATIVE(op::scatter_, op::scatter);
EMBER_INPLACE_DERIVATIVE(op::scatter_add_, op::scatter_add);
EMBER_INPLACE_DERIVATIVE(op::scatter_reduce_, op::scatter_reduce);
EMBER_INPLACE_DERIVATIVE(op::index_add_, op::index_add);
EMBER_INPLACE_DERIVATIVE(op::masked_fill_, op::masked_fill);
EMBER_INPLACE_DERIVATIVE(op::index_put_, op::index_put);
EMBER_DERIVATIVE_LIST(op::index, "IndexBackward0", (self, indices),
                      index_put(zeros(self_sizes,
                                      TensorOptions(grad.dtype()).device(grad.device())),
                                indices, grad, true),
                      not_differentiable());
EMBER_DERIVATIVE_LIST(op::index_put, "IndexPutBackward0", (self, indices, values, accumulate),
                      accumulate ? grad : index_put(grad, indices, zero_like_dtype(grad)),
                      not_differentiable(), index(grad, indices));

namespace {
bool is_multiply(const std::string& reduce) {
  EMBER_CHECK(reduce == "add" || reduce == "multiply",
              "reduce argument must be either add or multiply; got ", reduce);
  return reduce == "multiply";
}

// A scalar as a src tensor of index's shape (stride 0, no copy).
Tensor scalar_src(const Tensor& self, const Tensor& index, const Scalar& value) {
  return expand(scalar_tensor(value, self.dtype()), index.sizes());
}

}  // namespace

// ---- public functions ---------------------------------------------------------------------------

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  dim = maybe_wrap_dim(dim, self.dim());
  check_index_vector("index_select", index, true, ErrorKind::Index);
  EMBER_CHECK(self.dim() > 0 || index.numel() == 1,  // a RuntimeError in torch
              "index_select(): Index to scalar can have only 1 value, got ", index.numel(),
              " value(s)");
  return op::index_select.call(self, dim, index);
}

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index) {
  dim = check_gather(self, dim, index);
  return op::gather.call(self, dim, long_index(index));
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
               std::optional<std::string> reduce) {
  if (reduce)
    return is_multiply(*reduce) ? scatter_reduce(self, dim, index, src, "prod", true)
                                : scatter_add(self, dim, index, src);
  dim = check_scatter("scatter", self, dim, index, src);
  return op::scatter.call(self, dim, long_index(index), src);
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
               std::optional<std::string> reduce) {
  Tensor out = scatter(self, dim, index, scalar_src(self, index, value), std::move(reduce));
  if (!reduce) autograd::rename_history(out, "ScatterBackward1");  // torch's value overload
  return out;
}

Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                 std::optional<std::string> reduce) {
  if (reduce)
    return is_multiply(*reduce) ? scatter_reduce_(self, dim, index, src, "prod", true)
                                : scatter_add_(self, dim, index, src);
  dim = check_scatter("scatter", self, dim, index, src);
  op::scatter_.call(self, dim, long_index(index), src);
  bump_inplace_version(self);
  return self;
}

Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
                 std::optional<std::string> reduce) {
  return scatter_(self, dim, index, scalar_src(self, index, value), std::move(reduce));
}

Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  dim = check_scatter("scatter_add", self, dim, index, src);
  return op::scatter_add.call(self, dim, long_index(index), src);
}

Tensor& scatter_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  dim = check_scatter("scatter_add", self, dim, index, src);
  op::scatter_add_.call(self, dim, long_index(index), src);
  bump_inplace_version(self);
  return self;
}

Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce, bool include_self) {
  dim = check_scatter("scatter_reduce", self, dim, index, src);
  check_reduce(reduce, self);
  return op::scatter_reduce.call(self, dim, long_index(index), src, reduce, include_self);
}

Tensor& scatter_reduce_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                        const std::string& reduce, bool include_self) {
  dim = check_scatter("scatter_reduce", self, dim, index, src);
  check_reduce(reduce, self);
  op::scatter_reduce_.call(self, dim, long_index(index), src, reduce, include_self);
  bump_inplace_version(self);
  return self;
}

Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                 const Scalar& alpha) {
  dim = check_index_add(self, dim, index, source, alpha);
  return op::index_add.call(self, dim, index, source, alpha);
}

Tensor& index_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                   const Scalar& alpha) {
  dim = check_index_add(self, dim, index, source, alpha);
  op::index_add_.call(self, dim, index, source, alpha);
  bump_inplace_version(self);
  return self;
}

// index_fill is index_put along one dim: negative indices wrap, out of range raises IndexError.
namespace {
IndexList fill_indices(const Tensor& self, int64_t& dim, const Tensor& index) {
  dim = maybe_wrap_dim(dim, self.dim());
  EMBER_CHECK_INDEX(index.dtype() == kLong, "index_fill_(): Expected dtype int64 for index; got ",
                    scalar_type_name(index.dtype()));
  check_index_vector("index_fill_", index, false, ErrorKind::Runtime);
  IndexList idx(size_t(self.dim() == 0 ? 0 : dim));
  idx.push_back(reshape(index, {-1}));
  return idx;
}

// torch fills through a view of self with index.numel() entries of stride 0 along dim, checking
// the indices as it fills: an empty self takes any index when that view is empty too, and refuses
// the view past its (empty) storage otherwise. True when there is nothing to fill.
bool empty_fill(const Tensor& self, int64_t dim, const Tensor& index) {
  if (self.numel() != 0) return false;
  DimVector sizes(self.sizes());
  sizes[size_t(dim)] = index.numel();
  EMBER_CHECK(numel_of(sizes) == 0, "index_fill_(): a view of sizes ", IntArrayRef(sizes),
              " is out of bounds for the empty storage of self");
  return true;
}
}  // namespace

Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  IndexList idx = fill_indices(self, dim, index);
  bool empty = empty_fill(self, dim, index);
  check_scalar_fits(value, self.dtype());  // torch's kernel converts it checked, even for no index
  if (empty) return clone(self);
  Tensor v = scalar_tensor(value, self.dtype());
  if (self.dim() == 0) return reshape(index_put(reshape(self, {1}), idx, v), {});
  return index_put(self, idx, v);
}

Tensor& index_fill_(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  IndexList idx = fill_indices(self, dim, index);
  bool empty = empty_fill(self, dim, index);
  check_scalar_fits(value, self.dtype());
  if (empty) return self;
  Tensor v = scalar_tensor(value, self.dtype());
  if (self.dim() == 0) {
    Tensor flat = reshape(self, {1});
    index_put_(flat, idx, v);
    return self;
  }
  return index_put_(self, idx, v);
}

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value) {
  check_masked_fill(mask, value);
  return op::masked_fill.call(self, mask, value);
}

Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Tensor& value) {
  check_masked_fill(mask, value);
  // torch's checks: the shapes broadcast, then to self's own
  const DimVector shape = broadcast_shapes(self.sizes(), mask.sizes(), "masked_fill_");
  EMBER_CHECK(IntArrayRef(shape).equals(self.sizes()), "masked_fill_: output with shape ",
              self.sizes(), " doesn't match the broadcast shape ", shape);
  op::masked_fill_.call(self, mask, value);
  bump_inplace_version(self);
  return self;
}

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value) {
  return masked_fill(self, mask, scalar_tensor(value, value.dtype(), true));
}

Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Scalar& value) {
  return masked_fill_(self, mask, scalar_tensor(value, value.dtype(), true));
}

Tensor masked_select(const Tensor& self, const Tensor& mask) {
  EMBER_CHECK(mask.dtype() == kBool, "masked_select: expected BoolTensor for mask; got ",
              scalar_type_name(mask.dtype()));
  auto b = broadcast_tensors({self, mask});
  Tensor out = index(b[0], {b[1]});
  autograd::rename_history(out,
                           "MaskedSelectBackward0");  // torch's node (Note [Composite node names])
  return out;
}

Tensor take(const Tensor& self, const Tensor& index) {
  EMBER_CHECK(index.dtype() == kLong, "take(): Expected a long tensor for index, but got ",
              scalar_type_name(index.dtype()));
  Tensor out = ember::index(reshape(self, {-1}), {index});
  autograd::rename_history(out, "TakeBackward0");
  return out;
}

Tensor nonzero(const Tensor& self) { return op::nonzero.call(self); }

std::vector<Tensor> nonzero_tuple(const Tensor& self) {
  Tensor nz = nonzero(self.dim() == 0 ? reshape(self, {1}) : self);
  std::vector<Tensor> out;
  for (int64_t d = 0; d < nz.size(1); ++d) out.push_back(contiguous(select(nz, 1, d)));
  return out;
}

Tensor index(const Tensor& self, const IndexList& indices) { return op::index.call(self, indices); }

Tensor index_put(const Tensor& self, const IndexList& indices, const Tensor& values,
                 bool accumulate) {
  check_index_put(self, values);
  return op::index_put.call(self, indices, values, accumulate);
}

Tensor& index_put_(Tensor& self, const IndexList& indices, const Tensor& values, bool accumulate) {
  check_index_put(self, values);
  // self[mask] = number (x[x < 0] = 0) is a masked_fill: no nonzero(), no offsets.
  const Tensor* mask = indices.size() == 1 && indices[0] ? &*indices[0] : nullptr;
  if (mask && mask->dtype() == kBool && !accumulate && values.numel() == 1 && values.dim() <= 1 &&
      mask->dim() <= self.dim() &&
      mask->sizes().equals(self.sizes().slice(0, size_t(mask->dim()))) &&
      !autograd::any_requires_grad({&self, &values})) {
    DimVector trailing(mask->sizes());
    trailing.resize(size_t(self.dim()), 1);
    return masked_fill_(self, reshape(*mask, trailing), reshape(values, {}));
  }
  op::index_put_.call(self, indices, values, accumulate);
  bump_inplace_version(self);
  return self;
}

}  // namespace ember
