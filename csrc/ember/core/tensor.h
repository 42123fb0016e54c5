#pragma once
// ember::Tensor: a cheap ref-counted handle, the type every op takes and returns.
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ember/core/scalar.h"
#include "ember/core/tensor_impl.h"

// The unary Tensor methods of the C++ API (libtorch's), rows of schema/unary.h's table.
// clang-format off
#define EMBER_TENSOR_UNARY_METHODS(_)                                                    \
  _(exp) _(exp2) _(expm1) _(log) _(log2) _(log10) _(log1p)                               \
  _(sqrt) _(rsqrt) _(sin) _(cos) _(tan) _(asin) _(acos) _(atan) _(sinh) _(cosh) _(tanh)  \
  _(asinh) _(acosh) _(atanh) _(sigmoid) _(erf) _(erfc) _(erfinv) _(reciprocal) _(sinc)   \
  _(abs) _(neg) _(sign) _(floor) _(ceil) _(round) _(trunc) _(frac) _(relu)               \
  _(bitwise_not)
// clang-format on
namespace ember {

namespace autograd {
class Node;
}
struct TensorOptions;
struct TensorIndex;

/// A strided, typed view of storage with optional autograd history (libtorch's `at::Tensor`).
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(IntrusivePtr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return bool(impl_); }
  TensorImpl* impl() const { return impl_.get(); }
  const IntrusivePtr<TensorImpl>& impl_ptr() const { return impl_; }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }

  IntArrayRef sizes() const { return impl_->sizes(); }
  IntArrayRef shape() const { return impl_->sizes(); }
  IntArrayRef strides() const { return impl_->strides(); }
  /// Size of `dim` (negative counts from the end); out of range raises IndexError.
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return impl_->dim(); }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const { return impl_->numel(); }
  int64_t storage_offset() const { return impl_->storage_offset(); }
  ScalarType dtype() const { return impl_->dtype(); }
  ScalarType scalar_type() const { return impl_->dtype(); }
  Device device() const { return impl_->storage()->device(); }
  const Storage& storage() const { return impl_->storage(); }
  size_t element_size() const { return ember::element_size(dtype()); }
  size_t nbytes() const { return size_t(numel()) * element_size(); }
  bool is_contiguous() const { return impl_->is_contiguous(); }
  bool is_floating_point() const { return ember::is_floating_point(dtype()); }
  void* data_ptr() const { return impl_->data(); }
  template <class T>
  T* data_ptr() const {
    EMBER_CHECK(dtype_of<T> == dtype(), "data_ptr: expected dtype ", dtype_name(dtype_of<T>),
                " but tensor has ", dtype_name(dtype()));
    return reinterpret_cast<T*>(impl_->data());
  }
  /// The single value of a one-element tensor.
  Scalar item() const;
  template <class T>
  T item() const {
    return item().to<T>();
  }
  uint32_t _version() const { return storage()->version(); }
  void bump_version() const { storage()->bump_version(); }

  // Autograd (defined in autograd/variable.cpp).
  bool requires_grad() const;
  /// Marks a leaf as requiring grad; raises on non-leaves and non-float dtypes like PyTorch.
  const Tensor& requires_grad_(bool requires_grad = true) const;
  /// Accumulated gradient of a leaf (undefined until a backward reaches it).
  Tensor grad() const;
  void set_grad(const Tensor& grad) const;
  const std::shared_ptr<autograd::Node>& grad_fn() const;
  bool is_leaf() const;
  uint32_t output_nr() const;
  void retain_grad() const;
  bool retains_grad() const;
  /// Runs backward from this tensor; `gradient` may be omitted for scalars.
  void backward(const Tensor& gradient = {}, std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false) const;
  /// A view sharing storage with no autograd history.
  Tensor detach() const;
  const Tensor& detach_() const;
  /// The same data viewed with other geometry (no checks: callers validate).
  Tensor as_strided_view(IntArrayRef sizes, IntArrayRef strides, int64_t offset) const;

  // Note [Tensor methods]
  // libtorch code calls most ops as methods (`x.sum(1)`, `x.view({2, -1})`), so Tensor declares
  // them here with libtorch's signatures, and ops/tensor_methods.cpp defines each as a one-line
  // call of the free function in ops/. Core only declares: the definitions live in the ops layer,
  // out of line, so including tensor.h stays cheap and core never includes ops headers.
  // In-place methods are const and return Tensor&, as libtorch's: the handle is const, the data
  // it points to is not (so `for (const auto& p : params) p.add_(...)` works).
  // The unary methods are the C++ API's list below, not the op table (Note [Unary table] in
  // schema/unary.h): every file includes this header, so a new unary op gets its binding and
  // `ember::name` without rebuilding them; naming it here as well (a rebuild of everything)
  // adds `t.name()` and `t.name_()`.
#define EMBER_DECLARE_UNARY_METHOD(name) \
  Tensor name() const;                   \
  Tensor& name##_() const;
  EMBER_TENSOR_UNARY_METHODS(EMBER_DECLARE_UNARY_METHOD)
#undef EMBER_DECLARE_UNARY_METHOD
  Tensor round(int64_t decimals) const;
  Tensor square() const;
  Tensor isnan() const;
  Tensor isinf() const;
  Tensor isfinite() const;
  Tensor logical_not() const;
  Tensor clamp(const std::optional<Scalar>& min,
               const std::optional<Scalar>& max = std::nullopt) const;
  Tensor clamp(const std::optional<Tensor>& min, const std::optional<Tensor>& max = {}) const;
  Tensor& clamp_(const std::optional<Scalar>& min,
                 const std::optional<Scalar>& max = std::nullopt) const;
  Tensor clamp_min(const Scalar& min) const;
  Tensor clamp_max(const Scalar& max) const;
  Tensor& clamp_min_(const Scalar& min) const;
  Tensor& clamp_max_(const Scalar& max) const;

  // Arithmetic and comparison (see also the operators in ops/binary.h and ops/compare.h).
  Tensor add(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor add(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor& add_(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor& add_(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor sub(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor sub(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor& sub_(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor& sub_(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor mul(const Tensor& other) const;
  Tensor mul(const Scalar& other) const;
  Tensor& mul_(const Tensor& other) const;
  Tensor& mul_(const Scalar& other) const;
  Tensor div(const Tensor& other, std::optional<std::string> rounding_mode = std::nullopt) const;
  Tensor div(const Scalar& other) const;
  Tensor& div_(const Tensor& other, std::optional<std::string> rounding_mode = std::nullopt) const;
  Tensor& div_(const Scalar& other) const;
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(const Scalar& exponent) const;
  Tensor& pow_(const Scalar& exponent) const;
  Tensor remainder(const Scalar& other) const;
  Tensor maximum(const Tensor& other) const;
  Tensor minimum(const Tensor& other) const;
  Tensor& operator+=(const Tensor& other) const;
  Tensor& operator+=(const Scalar& other) const;
  Tensor& operator-=(const Tensor& other) const;
  Tensor& operator-=(const Scalar& other) const;
  Tensor& operator*=(const Tensor& other) const;
  Tensor& operator*=(const Scalar& other) const;
  Tensor& operator/=(const Tensor& other) const;
  Tensor& operator/=(const Scalar& other) const;
#define EMBER_DECLARE_COMPARE_METHOD(name) \
  Tensor name(const Tensor& other) const;  \
  Tensor name(const Scalar& other) const;
  EMBER_DECLARE_COMPARE_METHOD(eq)
  EMBER_DECLARE_COMPARE_METHOD(ne)
  EMBER_DECLARE_COMPARE_METHOD(lt)
  EMBER_DECLARE_COMPARE_METHOD(le)
  EMBER_DECLARE_COMPARE_METHOD(gt)
  EMBER_DECLARE_COMPARE_METHOD(ge)
#undef EMBER_DECLARE_COMPARE_METHOD
  /// Whether every element is close: |self - other| <= atol + rtol * |other|.
  bool allclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8,
                bool equal_nan = false) const;
  Tensor isclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8,
                 bool equal_nan = false) const;
  /// Same sizes and the same values.
  bool equal(const Tensor& other) const;

  // Reductions.
  Tensor sum(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor sum(IntArrayRef dim, bool keepdim = false,
             std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(IntArrayRef dim, bool keepdim = false,
              std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor prod(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor prod(int64_t dim, bool keepdim = false,
              std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor max() const;
  Tensor min() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor max(const Tensor& other) const;
  Tensor min(const Tensor& other) const;
  Tensor amax(IntArrayRef dim = {}, bool keepdim = false) const;
  Tensor amin(IntArrayRef dim = {}, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  /// As libtorch's overloads: `x.var(1)` and `x.var({1})` pick this one (an int converts to
  /// bool before an IntArrayRef), so dims go in an IntArrayRef or vector: `x.var(IntArrayRef{1})`.
  Tensor var(bool unbiased = true) const;
  Tensor var(IntArrayRef dim, bool unbiased = true, bool keepdim = false) const;
  Tensor std(bool unbiased = true) const;
  Tensor std(IntArrayRef dim, bool unbiased = true, bool keepdim = false) const;
  Tensor norm(const Scalar& p = 2) const;
  Tensor norm(const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim = false) const;
  Tensor logsumexp(IntArrayRef dim, bool keepdim = false) const;
  Tensor all() const;
  Tensor all(int64_t dim, bool keepdim = false) const;
  Tensor any() const;
  Tensor any(int64_t dim, bool keepdim = false) const;
  Tensor cumsum(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  std::tuple<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false) const;
  std::tuple<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true,
                                  bool sorted = true) const;

  // Shape and views.
  Tensor view(IntArrayRef shape) const;
  Tensor view(ScalarType dtype) const;
  Tensor view_as(const Tensor& other) const;
  Tensor reshape(IntArrayRef shape) const;
  Tensor reshape_as(const Tensor& other) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor unflatten(int64_t dim, IntArrayRef sizes) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor squeeze(IntArrayRef dims) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor permute(IntArrayRef dims) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;
  Tensor contiguous() const;
  Tensor expand(IntArrayRef sizes) const;
  Tensor expand_as(const Tensor& other) const;
  Tensor repeat(IntArrayRef repeats) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor slice(int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
               std::optional<int64_t> end = std::nullopt, int64_t step = 1) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> split(IntArrayRef split_sizes, int64_t dim = 0) const;
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  Tensor flip(IntArrayRef dims) const;
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;

  // Indexing: `x.index({Slice(), 0})` is Python's x[:, 0] (ops/index.h defines TensorIndex).
  Tensor index(ArrayRef<TensorIndex> indices) const;
  Tensor& index_put_(ArrayRef<TensorIndex> indices, const Tensor& value) const;
  Tensor& index_put_(ArrayRef<TensorIndex> indices, const Scalar& value) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Scalar& value) const;
  Tensor& scatter_(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor& scatter_(int64_t dim, const Tensor& index, const Scalar& value) const;
  Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor masked_fill(const Tensor& mask, const Scalar& value) const;
  Tensor masked_fill(const Tensor& mask, const Tensor& value) const;
  Tensor& masked_fill_(const Tensor& mask, const Scalar& value) const;
  Tensor& masked_fill_(const Tensor& mask, const Tensor& value) const;
  Tensor masked_select(const Tensor& mask) const;
  Tensor nonzero() const;

  // Conversion, copies and fills. A dtype argument matches to(ScalarType) exactly; a Device or
  // DeviceType converts to TensorOptions (ember has no second to(Device) to be ambiguous with).
  Tensor to(ScalarType dtype, bool non_blocking = false, bool copy = false) const;
  Tensor to(const TensorOptions& options, bool non_blocking = false, bool copy = false) const;
  Tensor to(const Tensor& other, bool non_blocking = false, bool copy = false) const;
  Tensor toType(ScalarType dtype) const;
  Tensor cpu() const;
  bool is_cpu() const { return device().is_cpu(); }
  bool is_cuda() const { return device().type == DeviceType::CUDA; }
  /// libtorch's older spelling of detach().
  Tensor data() const { return detach(); }
  /// The dtype and device of this tensor (and its requires_grad), for factories.
  TensorOptions options() const;
  Tensor clone() const;
  Tensor& copy_(const Tensor& src, bool non_blocking = false) const;
  Tensor& fill_(const Scalar& value) const;
  Tensor& zero_() const;
  Tensor& uniform_(double from = 0, double to = 1) const;
  Tensor& normal_(double mean = 0, double stddev = 1) const;

  // Linear algebra and softmax.
  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& mat2) const;
  Tensor bmm(const Tensor& mat2) const;
  Tensor mv(const Tensor& vec) const;
  Tensor dot(const Tensor& other) const;
  Tensor softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor log_softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  /// libtorch's spelling of requires_grad_.
  const Tensor& set_requires_grad(bool requires_grad) const {
    return requires_grad_(requires_grad);
  }

 private:
  IntrusivePtr<TensorImpl> impl_;
};

using TensorList = ArrayRef<Tensor>;

/// Allocates an uninitialized contiguous tensor.
Tensor empty(IntArrayRef sizes, ScalarType dtype = default_dtype(), Device device = Device());
/// Allocates with the given strides (storage large enough for them).
Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype = default_dtype(),
                     Device device = Device());
/// Wraps external memory without copying; `deleter` frees it when the tensor dies.
Tensor from_blob(
    void* data, IntArrayRef sizes, IntArrayRef strides, ScalarType dtype,
    Deleter deleter = [](void*) {});
/// A 0-d tensor of the scalar's dtype; `wrapped` marks it as a Python number for promotion.
Tensor scalar_tensor(const Scalar& s, ScalarType dtype, bool wrapped = false);

/// Prints values, then `[ CPUFloatType{3,4} ]`, as libtorch does (defined in ops/print.cpp).
std::ostream& operator<<(std::ostream& os, const Tensor& t);
/// libtorch's name of a dtype: Float, Long, ...
std::ostream& operator<<(std::ostream& os, ScalarType t);

}  // namespace ember
