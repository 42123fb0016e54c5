// Matrix products: argument checks, dispatch entry points and derivatives of mm, bmm, mv, dot,
// addmm, baddbmm; matmul and outer as composites over them. Kernels are in cpu/gemm.cpp.
#include "ember/ops/linalg.h"

#include "ember/core/profiler.h"
#include "ember/core/shape.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/dispatch/profile_range.h"
#include "ember/ops/autocast.h"
#include "ember/ops/derivative.h"
#include "ember/ops/ops.h"
#include "ember/schema/linalg.h"

namespace ember {
// A view named UnsafeViewBackward0 as torch's _unsafe_view (ops/view.cpp; declared here to keep
// the headers, which most files include, unchanged).
Tensor unsafe_view(const Tensor& self, IntArrayRef shape);

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

// The gradient a^T @ g of a product's right operand b, laid out like b: a transposed b (linear's
// t(weight)) gets (g^T @ a)^T, which reaches the weight through t() contiguous instead of being
// copied there (10% of an MLP step). The same products are summed in the same order.
// The layout is read at forward time (the formulas name b_sizes and b_strides): b itself is
// saved only if a needs a gradient.
bool transposed_layout(IntArrayRef sizes, IntArrayRef strides) {
  const size_t r = sizes.size() - 2;
  return strides[r] == 1 && strides[r + 1] != 1 && sizes[r] > 1;
}
// The last two dims swapped: t() for a matrix, as torch's formulas write it (its profiler shows
// aten::t there; Note [Profiler rows]).
Tensor mtr(const Tensor& x) { return x.dim() == 2 ? t(x) : matrix_transpose(x); }
Tensor right_grad(Tensor (*prod)(const Tensor&, const Tensor&), const Tensor& a, const Tensor& g,
                  bool b_transposed) {
  return b_transposed ? mtr(prod(mtr(g), a)) : prod(mtr(a), g);
}

// Under autocast the Autocast kernels of mm/bmm/addmm/baddbmm cast their floating arguments to
// one dtype before the backend kernel runs (Note [Autocast]), so mixed float32 / bfloat16 /
// float16 operands are no mismatch there, as in torch; float64 is never cast, so it still is.
bool same_dtype_after_autocast(const Tensor& a, const Tensor& b) {
  if (a.dtype() == b.dtype()) return true;
  auto castable = [](const Tensor& t) {
    return is_floating_point(t.dtype()) && t.dtype() != kDouble;
  };
  return autocast::is_active() && castable(a) && castable(b);
}

void check_mm(const Tensor& m1, const Tensor& m2, const char* first) {
  EMBER_CHECK(m1.dim() == 2, first, " must be a matrix, got ", m1.dim(), "-D tensor");
  EMBER_CHECK(m2.dim() == 2, "mat2 must be a matrix, got ", m2.dim(), "-D tensor");
  EMBER_CHECK(m1.size(1) == m2.size(0), "mat1 and mat2 shapes cannot be multiplied (", m1.size(0),
              "x", m1.size(1), " and ", m2.size(0), "x", m2.size(1), ")");
  EMBER_CHECK(same_dtype_after_autocast(m1, m2),
              "expected m1 and m2 to have the same dtype, but got: ", cpp_type_name(m1.dtype()),
              " != ", cpp_type_name(m2.dtype()));
}

void check_bmm(const Tensor& b1, const Tensor& b2) {
  EMBER_CHECK(b1.dim() == 3, "batch1 must be a 3D tensor");
  EMBER_CHECK(b2.dim() == 3, "batch2 must be a 3D tensor");
  EMBER_CHECK(b2.size(0) == b1.size(0) && b2.size(1) == b1.size(2),
              "Expected size for first two dimensions of batch2 tensor to be: [", b1.size(0), ", ",
              b1.size(2), "] but got: [", b2.size(0), ", ", b2.size(1), "].");
  EMBER_CHECK(same_dtype_after_autocast(b1, b2), "expected scalar type ",
              scalar_type_name(b1.dtype()), " but found ", scalar_type_name(b2.dtype()));
}

// `self` of addmm/baddbmm must broadcast to the product's shape and share its dtype.
void check_input(const Tensor& self, IntArrayRef shape, const Tensor& mat) {
  EMBER_CHECK(is_expandable_to(self.sizes(), shape), "The expanded size of the tensor (",
              shape.back(), ") must match the existing size (",
              self.sizes().empty() ? 1 : self.sizes().back(), ") at non-singleton dimension ",
              shape.size() - 1, ".  Target sizes: ", shape, ".  Tensor sizes: ", self.sizes());
  EMBER_CHECK(same_dtype_after_autocast(self, mat),
              "self and mat2 must have the same dtype, but got ", scalar_type_name(self.dtype()),
              " and ", scalar_type_name(mat.dtype()));
}

}  // namespace

// Derivatives: mm(a, b)' = (g @ b^T, a^T @ g), in public ops so double backward works. Each
// factor's gradient reads only the other factor, so a is kept only if b needs a gradient and vice
// versa (Note [Saving for needed grads]).
EMBER_DERIVATIVE(op::mm, "MmBackward0", (self, mat2), mm(grad, mtr(mat2)),
                 right_grad(&mm, self, grad, transposed_layout(mat2_sizes, mat2_strides)));
EMBER_DERIVATIVE(op::bmm, "BmmBackward0", (self, mat2), bmm(grad, matrix_transpose(mat2)),
                 right_grad(&bmm, self, grad, transposed_layout(mat2_sizes, mat2_strides)));
EMBER_DERIVATIVE(op::mv, "MvBackward0", (self, vec), outer(grad, vec),
                 mv(matrix_transpose(self), grad));
EMBER_DERIVATIVE(op::dot, "DotBackward0", (self, other), grad* other, grad* self);

// addmm(s, a, b) = beta * s + alpha * a @ b: s gets beta * g (the engine sums it to s's shape).
EMBER_DERIVATIVE(
    op::addmm, "AddmmBackward0", (self, mat1, mat2, beta, alpha), times_alpha(grad, beta),
    times_alpha(mm(grad, mtr(mat2)), alpha),
    times_alpha(right_grad(&mm, mat1, grad, transposed_layout(mat2_sizes, mat2_strides)), alpha));
EMBER_DERIVATIVE(op::baddbmm, "BaddbmmBackward0", (self, batch1, batch2, beta, alpha),
                 times_alpha(grad, beta), times_alpha(bmm(grad, matrix_transpose(batch2)), alpha),
                 times_alpha(right_grad(&bmm, batch1, grad,
                                        transposed_layout(batch2_sizes, batch2_strides)),
                             alpha));

namespace {

// Note [matmul folding]
// As in PyTorch, an N-d @ 1-d/2-d product (N >= 3) folds the batch into the rows and runs one
// mm/mv when that needs no copy (or when autograd is recording: one mm's backward beats summing
// a bmm's expanded gradient); 1-d/2-d @ N-d folds the transposed problem. Everything else
// broadcasts the batch dims, flattens them and runs bmm.
bool should_fold(const Tensor& t1, const Tensor& t2) {
  bool larger = t1.dim() >= t2.dim();
  const Tensor& big = larger ? t1 : t2;
  int64_t small_dim = larger ? t2.dim() : t1.dim();
  if (!(big.dim() >= 3 && small_dim <= 2)) return false;
  if (autograd::any_requires_grad({&t1, &t2})) return true;
  if (t1.dim() == 2) return false;  // the folded result would need a transposing copy
  if (big.numel() == 0) return true;
  Tensor b = larger ? t1 : matrix_transpose(t2);
  for (int64_t i = 0; i + 2 < b.dim(); ++i)
    if (b.stride(i) != b.stride(i + 1) * b.size(i + 1)) return false;
  return true;
}

Tensor fold_matmul(const Tensor& tensor1, const Tensor& tensor2) {
  bool transpose = tensor2.dim() > tensor1.dim();
  Tensor t1 = transpose ? matrix_transpose(tensor2) : tensor1;
  Tensor t2 = !transpose ? tensor2 : tensor1.dim() == 2 ? t(tensor1) : tensor1;
  DimVector out_shape(t1.sizes());
  int64_t k = out_shape.back();
  out_shape.resize(out_shape.size() - 1);
  int64_t rows = numel_of(out_shape);
  Tensor folded = reshape(t1, {rows, k});
  if (t2.dim() == 2) {
    out_shape.push_back(t2.size(1));
    Tensor out = unsafe_view(mm(folded, t2), out_shape);
    return transpose ? contiguous(matrix_transpose(out)) : out;
  }
  return unsafe_view(mv(folded, t2), out_shape);
}

Tensor batched_matmul(const Tensor& t1, const Tensor& t2) {
  int64_t d1 = t1.dim(), d2 = t2.dim();
  int64_t n = d1 > 1 ? t1.size(-2) : 1, m1 = t1.size(-1);
  int64_t m2 = d2 > 1 ? t2.size(-2) : t2.size(0), p = d2 > 1 ? t2.size(-1) : 1;
  IntArrayRef batch1 = t1.sizes().slice(0, size_t(std::max<int64_t>(d1 - 2, 0)));
  IntArrayRef batch2 = t2.sizes().slice(0, size_t(std::max<int64_t>(d2 - 2, 0)));
  DimVector out_shape = broadcast_shapes(batch1, batch2, "matmul");
  int64_t nbatch = numel_of(out_shape);
  DimVector s1 = out_shape, s2 = out_shape;
  s1.push_back(n);
  s1.push_back(m1);
  s2.push_back(m2);
  s2.push_back(p);
  Tensor a = reshape(expand(d1 == 1 ? unsqueeze(t1, 0) : t1, s1), {nbatch, n, m1});
  Tensor b = reshape(expand(d2 == 1 ? unsqueeze(t2, -1) : t2, s2), {nbatch, m2, p});
  if (d1 > 1) out_shape.push_back(n);
  if (d2 > 1) out_shape.push_back(p);
  return unsafe_view(bmm(a, b), out_shape);
}

}  // namespace

Tensor mm(const Tensor& self, const Tensor& mat2) {
  check_mm(self, mat2, "self");
  return op::mm.call(self, mat2);
}

Tensor bmm(const Tensor& self, const Tensor& mat2) {
  check_bmm(self, mat2);
  return op::bmm.call(self, mat2);
}

Tensor mv(const Tensor& self, const Tensor& vec) {
  EMBER_CHECK(self.dim() == 2 && vec.dim() == 1, "vector + matrix @ vector expected, got 1, ",
              self.dim(), ", ", vec.dim());
  EMBER_CHECK(self.size(1) == vec.size(0), "size mismatch, got input (", self.size(0), "), mat (",
              self.size(0), "x", self.size(1), "), vec (", vec.size(0), ")");
  EMBER_CHECK(self.dtype() == vec.dtype(), "addmv input tensors must have the same dtype, but got ",
              scalar_type_name(vec.dtype()), ", ", scalar_type_name(self.dtype()), ", and ",
              scalar_type_name(vec.dtype()));
  return op::mv.call(self, vec);
}

Tensor dot(const Tensor& self, const Tensor& other) {
  EMBER_CHECK(self.dim() == 1 && other.dim() == 1, "1D tensors expected, but got ", self.dim(),
              "D and ", other.dim(), "D tensors");
  EMBER_CHECK(self.dtype() == other.dtype(),
              "dot : expected both vectors to have same dtype, but "
              "found ",
              scalar_type_name(self.dtype()), " and ", scalar_type_name(other.dtype()));
  EMBER_CHECK(self.numel() == other.numel(), "inconsistent tensor size, expected tensor [",
              self.numel(), "] and src [", other.numel(),
              "] to have the same number of elements, "
              "but got ",
              self.numel(), " and ", other.numel(), " elements respectively");
  return op::dot.call(self, other);
}

Tensor outer(const Tensor& self, const Tensor& vec2) {
  EMBER_CHECK(self.dim() == 1, "outer: Expected 1-D argument self, but got ", self.dim(), "-D");
  EMBER_CHECK(vec2.dim() == 1, "outer: Expected 1-D argument vec2, but got ", vec2.dim(), "-D");
  return unsqueeze(self, 1) * vec2;
}

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
             const Scalar& alpha) {
  check_mm(mat1, mat2, "mat1");
  check_input(self, {mat1.size(0), mat2.size(1)}, mat1);
  return op::addmm.call(self, mat1, mat2, beta, alpha);
}

Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
               const Scalar& alpha) {
  // PyTorch reads batch1's dims 0, 1 and batch2's dim 2 before checking the ranks: too few
  // dims there are an IndexError, as any dim out of range
  auto dim_out_of_range = [](const Tensor& t, int64_t d) {
    const int64_t n = std::max<int64_t>(t.dim(), 1);
    EMBER_CHECK_INDEX(false, "Dimension out of range (expected to be in range of [", -n, ", ",
                      n - 1, "], but got ", d, ")");
  };
  if (batch1.dim() < 2) dim_out_of_range(batch1, 1);
  if (batch2.dim() < 3) dim_out_of_range(batch2, 2);
  check_bmm(batch1, batch2);
  check_input(self, {batch1.size(0), batch1.size(1), batch2.size(2)}, batch1);
  return op::baddbmm.call(self, batch1, batch2, beta, alpha);
}

Tensor matmul(const Tensor& t1, const Tensor& t2) {
  if (autocast::is_active()) [[unlikely]]  // Note [Autocast]
    return autocast::run(
        autocast::CastPolicy::lower_precision_fp,
        [](const Tensor& a, const Tensor& b) { return matmul(a, b); }, t1, t2);
  profiler::OpRange prof_range("matmul", t1, t2);
  int64_t d1 = t1.dim(), d2 = t2.dim();
  EMBER_CHECK(d1 > 0 && d2 > 0, "both arguments to matmul need to be at least 1D, but they are ",
              d1, "D and ", d2, "D");
  if (d1 == 1 && d2 == 1) return dot(t1, t2);
  if (d1 == 2 && d2 == 1) return mv(t1, t2);
  if (d1 == 1 && d2 == 2) return squeeze(mm(unsqueeze(t1, 0), t2), {0});
  if (d1 == 2 && d2 == 2) return mm(t1, t2);
  if (should_fold(t1, t2)) return fold_matmul(t1, t2);
  return batched_matmul(t1, t2);
}

}  // namespace ember
