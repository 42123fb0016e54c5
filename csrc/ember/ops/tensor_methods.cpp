// Tensor's libtorch-style methods, each a call of the free op. See Note [Tensor methods].
#include "ember/ops/ops.h"

namespace ember {
namespace {
// In-place methods are const (Note [Tensor methods]); the free in-place ops take Tensor&.
Tensor& mut(const Tensor& t) { return const_cast<Tensor&>(t); }
}  // namespace

#define EMBER_DEFINE_UNARY_METHOD(name)                      \
  Tensor Tensor::name() const { return ember::name(*this); } \
  Tensor& Tensor::name##_() const { return ember::name##_(mut(*this)); }
EMBER_TENSOR_UNARY_METHODS(EMBER_DEFINE_UNARY_METHOD)
#undef EMBER_DEFINE_UNARY_METHOD

Tensor Tensor::round(int64_t decimals) const { return ember::round(*this, decimals); }
Tensor Tensor::square() const { return ember::square(*this); }
Tensor Tensor::isnan() const { return ember::isnan(*this); }
Tensor Tensor::isinf() const { return ember::isinf(*this); }
Tensor Tensor::isfinite() const { return ember::isfinite(*this); }
Tensor Tensor::logical_not() const { return ember::logical_not(*this); }
Tensor Tensor::clamp(const std::optional<Scalar>& min, const std::optional<Scalar>& max) const {
  return ember::clamp(*this, min, max);
}
Tensor Tensor::clamp(const std::optional<Tensor>& min, const std::optional<Tensor>& max) const {
  return ember::clamp(*this, min, max);
}
Tensor& Tensor::clamp_(const std::optional<Scalar>& min, const std::optional<Scalar>& max) const {
  auto bound = [](const std::optional<Scalar>& s) {
    return s ? std::optional<Tensor>(wrap_scalar(*s)) : std::nullopt;
  };
  return ember::clamp_(mut(*this), bound(min), bound(max));
}
Tensor Tensor::clamp_min(const Scalar& min) const { return ember::clamp_min(*this, min); }
Tensor Tensor::clamp_max(const Scalar& max) const { return ember::clamp_max(*this, max); }
Tensor& Tensor::clamp_min_(const Scalar& min) const { return clamp_(min, std::nullopt); }
Tensor& Tensor::clamp_max_(const Scalar& max) const { return clamp_(std::nullopt, max); }

Tensor Tensor::add(const Tensor& o, const Scalar& alpha) const {
  return ember::add(*this, o, alpha);
}
Tensor Tensor::add(const Scalar& o, const Scalar& alpha) const {
  return ember::add(*this, wrap_scalar(o), alpha);
}
Tensor& Tensor::add_(const Tensor& o, const Scalar& alpha) const {
  return ember::add_(mut(*this), o, alpha);
}
Tensor& Tensor::add_(const Scalar& o, const Scalar& alpha) const {
  return ember::add_(mut(*this), wrap_scalar(o), alpha);
}
Tensor Tensor::sub(const Tensor& o, const Scalar& alpha) const {
  return ember::sub(*this, o, alpha);
}
Tensor Tensor::sub(const Scalar& o, const Scalar& alpha) const {
  return ember::sub(*this, wrap_scalar(o), alpha);
}
Tensor& Tensor::sub_(const Tensor& o, const Scalar& alpha) const {
  return ember::sub_(mut(*this), o, alpha);
}
Tensor& Tensor::sub_(const Scalar& o, const Scalar& alpha) const {
  return ember::sub_(mut(*this), wrap_scalar(o), alpha);
}
Tensor Tensor::mul(const Tensor& o) const { return ember::mul(*this, o); }
Tensor Tensor::mul(const Scalar& o) const { return ember::mul(*this, wrap_scalar(o)); }
Tensor& Tensor::mul_(const Tensor& o) const { return ember::mul_(mut(*this), o); }
Tensor& Tensor::mul_(const Scalar& o) const { return ember::mul_(mut(*this), wrap_scalar(o)); }
Tensor Tensor::div(const Tensor& o, std::optional<std::string> mode) const {
  return ember::div(*this, o, std::move(mode));
}
Tensor Tensor::div(const Scalar& o) const { return ember::div(*this, wrap_scalar(o)); }
Tensor& Tensor::div_(const Tensor& o, std::optional<std::string> mode) const {
  return ember::div_(mut(*this), o, std::move(mode));
}
Tensor& Tensor::div_(const Scalar& o) const { return ember::div_(mut(*this), wrap_scalar(o)); }
Tensor Tensor::pow(const Tensor& e) const { return ember::pow(*this, e); }
Tensor Tensor::pow(const Scalar& e) const { return ember::pow(*this, wrap_scalar(e)); }
Tensor& Tensor::pow_(const Scalar& e) const { return ember::pow_(mut(*this), wrap_scalar(e)); }
Tensor Tensor::remainder(const Scalar& o) const { return ember::remainder(*this, wrap_scalar(o)); }
Tensor Tensor::maximum(const Tensor& o) const { return ember::maximum(*this, o); }
Tensor Tensor::minimum(const Tensor& o) const { return ember::minimum(*this, o); }
Tensor& Tensor::operator+=(const Tensor& o) const { return add_(o); }
Tensor& Tensor::operator+=(const Scalar& o) const { return add_(o); }
Tensor& Tensor::operator-=(const Tensor& o) const { return sub_(o); }
Tensor& Tensor::operator-=(const Scalar& o) const { return sub_(o); }
Tensor& Tensor::operator*=(const Tensor& o) const { return mul_(o); }
Tensor& Tensor::operator*=(const Scalar& o) const { return mul_(o); }
Tensor& Tensor::operator/=(const Tensor& o) const { return div_(o); }
Tensor& Tensor::operator/=(const Scalar& o) const { return div_(o); }

#define EMBER_DEFINE_COMPARE_METHOD(name)                                      \
  Tensor Tensor::name(const Tensor& o) const { return ember::name(*this, o); } \
  Tensor Tensor::name(const Scalar& o) const { return ember::name(*this, wrap_scalar(o)); }
EMBER_DEFINE_COMPARE_METHOD(eq)
EMBER_DEFINE_COMPARE_METHOD(ne)
EMBER_DEFINE_COMPARE_METHOD(lt)
EMBER_DEFINE_COMPARE_METHOD(le)
EMBER_DEFINE_COMPARE_METHOD(gt)
EMBER_DEFINE_COMPARE_METHOD(ge)
#undef EMBER_DEFINE_COMPARE_METHOD
bool Tensor::allclose(const Tensor& o, double rtol, double atol, bool equal_nan) const {
  return ember::allclose(*this, o, rtol, atol, equal_nan);
}
Tensor Tensor::isclose(const Tensor& o, double rtol, double atol, bool equal_nan) const {
  return ember::isclose(*this, o, rtol, atol, equal_nan);
}
bool Tensor::equal(const Tensor& o) const { return ember::equal(*this, o); }

Tensor Tensor::sum(std::optional<ScalarType> dtype) const { return ember::sum(*this, dtype); }
Tensor Tensor::sum(IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return ember::sum(*this, dim, keepdim, dtype);
}
Tensor Tensor::mean(std::optional<ScalarType> dtype) const { return ember::mean(*this, dtype); }
Tensor Tensor::mean(IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return ember::mean(*this, dim, keepdim, dtype);
}
Tensor Tensor::prod(std::optional<ScalarType> dtype) const { return ember::prod(*this, dtype); }
Tensor Tensor::prod(int64_t dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return ember::prod(*this, dim, keepdim, dtype);
}
Tensor Tensor::max() const { return ember::max(*this); }
Tensor Tensor::min() const { return ember::min(*this); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const {
  return ember::max(*this, dim, keepdim);
}
std::tuple<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const {
  return ember::min(*this, dim, keepdim);
}
Tensor Tensor::max(const Tensor& o) const { return ember::maximum(*this, o); }
Tensor Tensor::min(const Tensor& o) const { return ember::minimum(*this, o); }
Tensor Tensor::amax(IntArrayRef dim, bool keepdim) const {
  return ember::amax(*this, dim, keepdim);
}
Tensor Tensor::amin(IntArrayRef dim, bool keepdim) const {
  return ember::amin(*this, dim, keepdim);
}
Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim) const {
  return ember::argmax(*this, dim, keepdim);
}
Tensor Tensor::argmin(std::optional<int64_t> dim, bool keepdim) const {
  return ember::argmin(*this, dim, keepdim);
}
Tensor Tensor::var(bool unbiased) const {
  return ember::var(*this, std::nullopt, unbiased ? 1.0 : 0.0);
}
Tensor Tensor::var(IntArrayRef dim, bool unbiased, bool keepdim) const {
  return ember::var(*this, dim.vec(), unbiased ? 1.0 : 0.0, keepdim);
}
Tensor Tensor::std(bool unbiased) const {
  return ember::std(*this, std::nullopt, unbiased ? 1.0 : 0.0);
}
Tensor Tensor::std(IntArrayRef dim, bool unbiased, bool keepdim) const {
  return ember::std(*this, dim.vec(), unbiased ? 1.0 : 0.0, keepdim);
}
Tensor Tensor::norm(const Scalar& p) const { return ember::norm(*this, p); }
Tensor Tensor::norm(const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim) const {
  return ember::norm(*this, p, dim, keepdim);
}
Tensor Tensor::logsumexp(IntArrayRef dim, bool keepdim) const {
  return ember::logsumexp(*this, dim, keepdim);
}
Tensor Tensor::all() const { return ember::all(*this); }
Tensor Tensor::all(int64_t dim, bool keepdim) const { return ember::all(*this, {dim}, keepdim); }
Tensor Tensor::any() const { return ember::any(*this); }
Tensor Tensor::any(int64_t dim, bool keepdim) const { return ember::any(*this, {dim}, keepdim); }
Tensor Tensor::cumsum(int64_t dim, std::optional<ScalarType> dtype) const {
  return ember::cumsum(*this, dim, dtype);
}
std::tuple<Tensor, Tensor> Tensor::sort(int64_t dim, bool descending) const {
  return ember::sort(*this, dim, descending);
}
std::tuple<Tensor, Tensor> Tensor::topk(int64_t k, int64_t dim, bool largest, bool sorted) const {
  return ember::topk(*this, k, dim, largest, sorted);
}

Tensor Tensor::view(IntArrayRef shape) const { return ember::view(*this, shape); }
Tensor Tensor::view(ScalarType dtype) const { return ember::view_dtype(*this, dtype); }
Tensor Tensor::view_as(const Tensor& o) const { return ember::view(*this, o.sizes()); }
Tensor Tensor::reshape(IntArrayRef shape) const { return ember::reshape(*this, shape); }
Tensor Tensor::reshape_as(const Tensor& o) const { return ember::reshape(*this, o.sizes()); }
Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  return ember::flatten(*this, start_dim, end_dim);
}
Tensor Tensor::unflatten(int64_t dim, IntArrayRef sizes) const {
  return ember::unflatten(*this, dim, sizes);
}
Tensor Tensor::squeeze() const { return ember::squeeze(*this); }
Tensor Tensor::squeeze(int64_t dim) const { return ember::squeeze(*this, {dim}); }
Tensor Tensor::squeeze(IntArrayRef dims) const { return ember::squeeze(*this, dims); }
Tensor Tensor::unsqueeze(int64_t dim) const { return ember::unsqueeze(*this, dim); }
Tensor Tensor::permute(IntArrayRef dims) const { return ember::permute(*this, dims); }
Tensor Tensor::transpose(int64_t d0, int64_t d1) const { return ember::transpose(*this, d0, d1); }
Tensor Tensor::t() const { return ember::t(*this); }
Tensor Tensor::contiguous() const { return ember::contiguous(*this); }
Tensor Tensor::expand(IntArrayRef sizes) const { return ember::expand(*this, sizes); }
Tensor Tensor::expand_as(const Tensor& o) const { return ember::expand(*this, o.sizes()); }
Tensor Tensor::repeat(IntArrayRef repeats) const { return ember::repeat(*this, repeats); }
Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const {
  return ember::narrow(*this, dim, start, length);
}
Tensor Tensor::select(int64_t dim, int64_t index) const { return ember::select(*this, dim, index); }
Tensor Tensor::slice(int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
                     int64_t step) const {
  return ember::slice(*this, dim, start, end, step);
}
std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim) const {
  return ember::chunk(*this, chunks, dim);
}
std::vector<Tensor> Tensor::split(int64_t split_size, int64_t dim) const {
  return ember::split(*this, split_size, dim);
}
std::vector<Tensor> Tensor::split(IntArrayRef split_sizes, int64_t dim) const {
  return ember::split_with_sizes(*this, split_sizes, dim);
}
std::vector<Tensor> Tensor::unbind(int64_t dim) const { return ember::unbind(*this, dim); }
Tensor Tensor::flip(IntArrayRef dims) const { return ember::flip(*this, dims); }
Tensor Tensor::tril(int64_t diagonal) const { return ember::tril(*this, diagonal); }
Tensor Tensor::triu(int64_t diagonal) const { return ember::triu(*this, diagonal); }

Tensor Tensor::index(ArrayRef<TensorIndex> indices) const {
  return getitem(*this, std::vector<TensorIndex>(indices.begin(), indices.end()));
}
Tensor& Tensor::index_put_(ArrayRef<TensorIndex> indices, const Tensor& value) const {
  setitem(mut(*this), std::vector<TensorIndex>(indices.begin(), indices.end()), value);
  return mut(*this);
}
Tensor& Tensor::index_put_(ArrayRef<TensorIndex> indices, const Scalar& value) const {
  setitem(mut(*this), std::vector<TensorIndex>(indices.begin(), indices.end()), value);
  return mut(*this);
}
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const {
  return ember::index_select(*this, dim, index);
}
Tensor Tensor::gather(int64_t dim, const Tensor& index) const {
  return ember::gather(*this, dim, index);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src) const {
  return ember::scatter(*this, dim, index, src);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Scalar& value) const {
  return ember::scatter(*this, dim, index, value);
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src) const {
  return ember::scatter_(mut(*this), dim, index, src);
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Scalar& value) const {
  return ember::scatter_(mut(*this), dim, index, value);
}
Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) const {
  return ember::scatter_add_(mut(*this), dim, index, src);
}
Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& value) const {
  return ember::masked_fill(*this, mask, value);
}
Tensor Tensor::masked_fill(const Tensor& mask, const Tensor& value) const {
  return ember::masked_fill(*this, mask, value);
}
Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& value) const {
  return ember::masked_fill_(mut(*this), mask, value);
}
Tensor& Tensor::masked_fill_(const Tensor& mask, const Tensor& value) const {
  return ember::masked_fill_(mut(*this), mask, value);
}
Tensor Tensor::masked_select(const Tensor& mask) const { return ember::masked_select(*this, mask); }
Tensor Tensor::nonzero() const { return ember::nonzero(*this); }

Tensor Tensor::to(ScalarType dtype, bool, bool copy) const {
  return ember::to_dtype(*this, dtype, copy);
}
Tensor Tensor::to(const TensorOptions& options, bool, bool copy) const {
  EMBER_CHECK(options.device_.is_cpu(),
              "to: expected a cpu device (ember has no other backend); got ",
              options.device_.str());
  Tensor out = ember::to_dtype(*this, options.dtype_.value_or(dtype()), copy);
  if (options.requires_grad_) out.requires_grad_();
  return out;
}
Tensor Tensor::to(const Tensor& other, bool, bool copy) const {
  return ember::to_dtype(*this, other.dtype(), copy);
}
Tensor Tensor::toType(ScalarType dtype) const { return ember::to_dtype(*this, dtype); }
Tensor Tensor::cpu() const { return *this; }
TensorOptions Tensor::options() const {
  return TensorOptions(dtype()).device(device()).requires_grad(requires_grad());
}
Tensor Tensor::clone() const { return ember::clone(*this); }
Tensor& Tensor::copy_(const Tensor& src, bool) const { return ember::copy_(mut(*this), src); }
Tensor& Tensor::fill_(const Scalar& value) const { return ember::fill_(mut(*this), value); }
Tensor& Tensor::zero_() const { return ember::zero_(mut(*this)); }
Tensor& Tensor::uniform_(double from, double to) const {
  return ember::uniform_(mut(*this), from, to);
}
Tensor& Tensor::normal_(double mean, double stddev) const {
  return ember::normal_(mut(*this), mean, stddev);
}

Tensor Tensor::matmul(const Tensor& o) const { return ember::matmul(*this, o); }
Tensor Tensor::mm(const Tensor& mat2) const { return ember::mm(*this, mat2); }
Tensor Tensor::bmm(const Tensor& mat2) const { return ember::bmm(*this, mat2); }
Tensor Tensor::mv(const Tensor& vec) const { return ember::mv(*this, vec); }
Tensor Tensor::dot(const Tensor& o) const { return ember::dot(*this, o); }
Tensor Tensor::softmax(int64_t dim, std::optional<ScalarType> dtype) const {
  return ember::softmax(*this, dim, dtype);
}
Tensor Tensor::log_softmax(int64_t dim, std::optional<ScalarType> dtype) const {
  return ember::log_softmax(*this, dim, dtype);
}

}  // namespace ember
