// Matrix products and einsum against naive loops; gradients against hand-derived formulas.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "ember/ember.h"

using namespace ember;

namespace {

// t's elements as doubles, row-major, whatever its strides and dtype.
std::vector<double> values(const Tensor& t) {
  Tensor c = contiguous(to_dtype(t.detach(), kDouble));
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

// Small integers, exact in every dtype, from a seeded generator.
Tensor ints(IntArrayRef shape, ScalarType dtype, uint64_t seed = 1) {
  int lo = dtype == kByte ? 0 : -2;
  return to_dtype(randint(lo, 3, shape, std::make_shared<Generator>(seed)), dtype);
}

Tensor reals(IntArrayRef shape, ScalarType dtype = kDouble, uint64_t seed = 7) {
  return randn(shape, std::make_shared<Generator>(seed), dtype);
}

struct Ref {
  std::vector<double> v;
  DimVector shape;
};

// numpy.matmul in double: 1-d operands promoted, batch dims broadcast, then naive loops.
Ref ref_matmul(const Tensor& a, const Tensor& b) {
  DimVector sa(a.sizes()), sb(b.sizes());
  bool va = sa.size() == 1, vb = sb.size() == 1;
  if (va) sa.insert(0, 1);
  if (vb) sb.push_back(1);
  int64_t n = sa[sa.size() - 2], k = sa.back(), m = sb.back();
  DimVector batch = broadcast_shapes(IntArrayRef(sa).slice(0, sa.size() - 2),
                                     IntArrayRef(sb).slice(0, sb.size() - 2));
  DimVector ea = batch, eb = batch;
  ea.push_back(n), ea.push_back(k), eb.push_back(k), eb.push_back(m);
  std::vector<double> x = values(expand(reshape(a, sa), ea)),
                      y = values(expand(reshape(b, sb), eb));
  int64_t B = numel_of(batch);
  Ref r;
  r.v.assign(size_t(B * n * m), 0.0);
  for (int64_t q = 0; q < B; ++q)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        double s = 0;
        for (int64_t l = 0; l < k; ++l)
          s += x[size_t((q * n + i) * k + l)] * y[size_t((q * k + l) * m + j)];
        r.v[size_t((q * n + i) * m + j)] = s;
      }
  r.shape = batch;
  if (!va) r.shape.push_back(n);
  if (!vb) r.shape.push_back(m);
  return r;
}

void expect_close(const Tensor& got, const std::vector<double>& want, IntArrayRef shape,
                  double tol = 1e-9) {
  ASSERT_EQ(got.sizes().vec(), shape.vec());
  std::vector<double> g = values(got);
  ASSERT_EQ(g.size(), want.size());
  for (size_t i = 0; i < g.size(); ++i)
    ASSERT_NEAR(g[i], want[i], tol * (1 + std::abs(want[i]))) << "at flat index " << i;
}
void expect_close(const Tensor& got, const Ref& want, double tol = 1e-9) {
  expect_close(got, want.v, want.shape, tol);
}
void expect_close(const Tensor& got, const Tensor& want, double tol = 1e-9) {
  expect_close(got, values(want), want.sizes(), tol);
}

double tol_for(ScalarType t) {
  return t == kFloat ? 1e-5 : t == kHalf ? 2e-3 : t == kBFloat16 ? 1e-2 : 1e-12;
}

template <class F>
ErrorKind error_kind(F f, std::string* msg = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (msg) *msg = e.what();
    return e.kind();
  }
  ADD_FAILURE() << "expected an ember::Error";
  return ErrorKind::NotImplemented;
}

void expect_error(const std::function<void()>& f, const std::string& part,
                  ErrorKind kind = ErrorKind::Runtime) {
  std::string msg;
  EXPECT_TRUE(is_a(error_kind(f, &msg), kind));
  EXPECT_NE(msg.find(part), std::string::npos) << "message: " << msg;
}

const ScalarType kAllNumeric[] = {kFloat, kDouble, kHalf, kBFloat16, kByte,
                                  kChar,  kShort,  kInt,  kLong};

}  // namespace

TEST(LinalgMm, MatchesNaiveLoopsInEveryDtype) {
  for (ScalarType t : kAllNumeric) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    Tensor a = ints({5, 7}, t, 1), b = ints({7, 3}, t, 2);
    Tensor c = mm(a, b);
    EXPECT_EQ(c.dtype(), t);
    expect_close(c, ref_matmul(a, b));
  }
}

TEST(LinalgMm, BlockedFallbackAcrossBlockEdges) {
  // 70 x 300 @ 300 x 260 crosses the fallback's row (64), depth (128) and column (256) blocks.
  for (ScalarType t : {kHalf, kInt, kFloat}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    Tensor a = ints({70, 300}, t, 3), b = ints({300, 260}, t, 4);
    expect_close(mm(a, b), ref_matmul(a, b));
  }
}

TEST(LinalgMm, IntegerOverflowWrapsLikeTorch) {
  Tensor a = full({1, 2}, 100, TensorOptions(kChar)), b = full({2, 1}, 100, TensorOptions(kChar));
  EXPECT_EQ(mm(a, b).item<int64_t>(), int64_t(int8_t(20000 & 0xff)));
}

TEST(LinalgMm, TransposedSlicedAndBroadcastOperands) {
  for (ScalarType t : {kFloat, kDouble, kHalf, kLong}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    Tensor big = ints({9, 11}, t, 5), big2 = ints({10, 6}, t, 6);
    Tensor a_sliced = slice(slice(big, 0, 1, 6, 1), 1, 2, 9, 1);   // (5, 7), offset, ld 11
    Tensor b_sliced = slice(slice(big2, 0, 1, 8, 1), 1, 1, 4, 1);  // (7, 3)
    Tensor a_t = matrix_transpose(ints({7, 5}, t, 7));             // unit row stride
    Tensor b_t = matrix_transpose(ints({3, 7}, t, 8));
    Tensor a_step = slice(slice(big, 1, 0, 11, 2), 0, 0, 5, 1);  // (5, 6): no unit stride
    Tensor b_step = slice(big2, 0, 0, 6, 1);                     // (6, 6)
    Tensor a_bcast = expand(ints({5, 1}, t, 9), {5, 7});         // stride 0 columns
    Tensor b_bcast = expand(ints({1, 3}, t, 10), {7, 3});        // stride 0 rows
    std::vector<std::pair<Tensor, Tensor>> cases = {
        {a_sliced, b_sliced}, {a_t, b_t},         {a_t, b_sliced}, {a_sliced, b_t},
        {a_step, b_step},     {a_bcast, b_bcast}, {a_t, b_bcast}};
    for (auto& [a, b] : cases) expect_close(mm(a, b), ref_matmul(a, b));
  }
}

TEST(LinalgMm, ZeroSizeOperands) {
  for (ScalarType t : {kFloat, kInt}) {
    Tensor c = mm(ints({0, 4}, t), ints({4, 3}, t));
    EXPECT_EQ(c.sizes().vec(), (std::vector<int64_t>{0, 3}));
    Tensor z = mm(ints({3, 0}, t), ints({0, 2}, t));  // empty inner dim: zeros
    expect_close(z, std::vector<double>(6, 0.0), {3, 2});
    EXPECT_EQ(mm(ints({3, 4}, t), ints({4, 0}, t)).sizes().vec(), (std::vector<int64_t>{3, 0}));
  }
}

TEST(LinalgBmm, BatchesStridedAndBroadcast) {
  for (ScalarType t : {kFloat, kDouble, kBFloat16, kShort}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    Tensor a = ints({3, 4, 5}, t, 1), b = ints({3, 5, 2}, t, 2);
    expect_close(bmm(a, b), ref_matmul(a, b));
    Tensor ap = permute(ints({4, 3, 5}, t, 3), {1, 0, 2});  // batch stride 5, row stride 15
    Tensor bx = expand(ints({1, 5, 2}, t, 4), {3, 5, 2});   // batch stride 0
    expect_close(bmm(ap, bx), ref_matmul(ap, bx));
    Tensor bt = matrix_transpose(ints({3, 2, 5}, t, 5));
    expect_close(bmm(a, bt), ref_matmul(a, bt));
  }
  // Many small matrices run batch-parallel.
  Tensor a = reals({64, 8, 8}), b = reals({64, 8, 8}, kDouble, 8);
  expect_close(bmm(a, b), ref_matmul(a, b));
  EXPECT_EQ(bmm(reals({0, 3, 4}), reals({0, 4, 2})).sizes().vec(), (std::vector<int64_t>{0, 3, 2}));
}

TEST(LinalgMv, VectorsStridedAndExpanded) {
  for (ScalarType t : {kFloat, kDouble, kHalf, kInt}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    Tensor m = ints({3, 4}, t, 1), v = ints({4}, t, 2);
    expect_close(mv(m, v), ref_matmul(m, v));
    Tensor mt = matrix_transpose(ints({4, 3}, t, 3));
    Tensor vs = slice(ints({8}, t, 4), 0, 0, 8, 2);  // stride 2
    Tensor vx = expand(ints({1}, t, 5), {4});        // stride 0
    expect_close(mv(mt, vs), ref_matmul(mt, vs));
    expect_close(mv(m, vx), ref_matmul(m, vx));
    EXPECT_EQ(mv(ints({0, 4}, t), v).sizes().vec(), (std::vector<int64_t>{0}));
  }
}

TEST(LinalgDot, MatchesNaiveSum) {
  for (ScalarType t : {kFloat, kDouble, kHalf, kBFloat16, kByte, kLong}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    Tensor a = ints({6}, t, 1), b = slice(ints({12}, t, 2), 0, 0, 12, 2);
    Tensor d = dot(a, b);
    EXPECT_EQ(d.dim(), 0);
    EXPECT_EQ(d.dtype(), t);
    expect_close(d, ref_matmul(a, b));
  }
  EXPECT_EQ(dot(reals({0}), reals({0})).item<double>(), 0.0);
}

TEST(LinalgOuter, PromotesAndAcceptsBool) {
  Tensor x = ints({3}, kFloat), y = ints({4}, kLong);
  Tensor o = outer(x, y);
  EXPECT_EQ(o.dtype(), kFloat);
  expect_close(o, ref_matmul(reshape(x, {3, 1}), reshape(y, {1, 4})));
  Tensor b = outer(ones({2}, TensorOptions(kBool)), ones({3}, TensorOptions(kBool)));
  EXPECT_EQ(b.dtype(), kBool);
  EXPECT_EQ(b.sizes().vec(), (std::vector<int64_t>{2, 3}));
}

TEST(LinalgMatmul, EveryBroadcastingCase) {
  struct Case {
    std::vector<int64_t> a, b, out;
  };
  std::vector<Case> cases = {{{4}, {4}, {}},                           // dot
                             {{3, 4}, {4}, {3}},                       // mv
                             {{4}, {4, 2}, {2}},                       // 1-d @ 2-d
                             {{3, 4}, {4, 2}, {3, 2}},                 // mm
                             {{2, 1, 3, 4}, {5, 4, 2}, {2, 5, 3, 2}},  // broadcast batch
                             {{2, 3, 4}, {4}, {2, 3}},                 // folded mv
                             {{2, 3, 4}, {4, 5}, {2, 3, 5}},           // folded mm
                             {{4}, {2, 4, 3}, {2, 3}},                 // 1-d @ batch
                             {{3, 4}, {2, 4, 5}, {2, 3, 5}},           // 2-d @ batch
                             {{2, 3, 4}, {2, 4, 5}, {2, 3, 5}},        // bmm
                             {{1, 3, 4}, {6, 4, 2}, {6, 3, 2}},        // batch of 1 broadcast
                             {{2, 2, 3, 4}, {4}, {2, 2, 3}},
                             {{0, 3, 4}, {4, 2}, {0, 3, 2}},
                             {{3, 0}, {0, 2}, {3, 2}}};
  for (bool grad : {false, true}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(::testing::Message() << IntArrayRef(c.a) << " @ " << IntArrayRef(c.b));
      Tensor a = reals(c.a, kDouble, 1), b = reals(c.b, kDouble, 2);
      if (grad) a.requires_grad_(), b.requires_grad_();
      Tensor r = matmul(a, b);
      EXPECT_EQ(r.sizes().vec(), c.out);
      expect_close(r, ref_matmul(a, b));
    }
  }
  // A non-foldable (transposed) batch operand goes through bmm.
  Tensor at = transpose(reals({3, 2, 4}), 0, 1);
  expect_close(matmul(at, reals({4, 5})), ref_matmul(at, reals({4, 5})));
  // Integer and float16 matmul go through the fallback kernel.
  Tensor ai = ints({2, 1, 3, 4}, kInt), bi = ints({5, 4, 2}, kInt);
  expect_close(matmul(ai, bi), ref_matmul(ai, bi));
}

TEST(LinalgErrors, MessagesAndKindsLikePyTorch) {
  expect_error(
      [] {
        mm(ones({2, 3}), ones({4, 5}));
      },
      "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  expect_error(
      [] {
        matmul(ones({2, 3}), ones({4, 5}));
      },
      "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  expect_error([] { mm(ones({4}), ones({4, 2})); }, "self must be a matrix");
  expect_error(
      [] {
        mm(ones({3, 4}), ones({4, 2}, TensorOptions(kDouble)));
      },
      "expected m1 and m2 to have the same dtype, but got: float != double");
  expect_error(
      [] {
        dot(ones({2, 2}), ones({2, 2}));
      },
      "1D tensors expected, but got 2D and 2D tensors");
  expect_error([] { dot(ones({4}), ones({3})); }, "inconsistent tensor size");
  expect_error([] { matmul(ones({4}), ones({3})); }, "inconsistent tensor size");
  expect_error([] { dot(ones({4}), ones({4}, TensorOptions(kLong))); },
               "dot : expected both vectors to have same dtype, but found Float and Long");
  expect_error(
      [] {
        mv(ones({3, 4}), ones({3}));
      },
      "size mismatch, got input (3), mat (3x4), vec (3)");
  expect_error([] { matmul(ones({2, 4}), ones({3})); }, "size mismatch");
  expect_error([] { bmm(ones({3, 4}), ones({4, 3})); }, "batch1 must be a 3D tensor");
  expect_error(
      [] {
        bmm(ones({2, 3, 4}), ones({3, 4, 2}));
      },
      "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [3, 4].");
  expect_error(
      [] {
        matmul(ones({}), ones({3, 4}));
      },
      "both arguments to matmul need to be at least 1D, but they are 0D and 2D");
  expect_error([] { matmul(ones({2, 3, 4}), ones({3, 4, 2})); }, "must match the size");
  Tensor b = ones({3, 3}, TensorOptions(kBool));
  expect_error([&] { matmul(b, b); }, "\"addmm_impl_cpu_\" not implemented for 'Bool'");
  expect_error([&] { bmm(unsqueeze(b, 0), unsqueeze(b, 0)); },
               "\"bmm\" not implemented for 'Bool'");
  expect_error([&] { dot(select(b, 0, 0), select(b, 0, 0)); },
               "\"dot\" not implemented for 'Bool'");
  expect_error([] { addmm(ones({2, 3}), ones({3, 4}), ones({4, 3})); }, "The expanded size");
  expect_error([] { outer(ones({2, 2}), ones({2})); }, "outer: Expected 1-D argument self");
}

TEST(LinalgAddmm, BetaAlphaBroadcastAndNanIgnoredAtBetaZero) {
  Tensor s = reals({3, 2}, kDouble, 1), a = reals({3, 4}, kDouble, 2),
         b = reals({4, 2}, kDouble, 3);
  Ref p = ref_matmul(a, b);
  std::vector<double> sv = values(s), want(6);
  for (size_t i = 0; i < 6; ++i) want[i] = 0.5 * sv[i] + 2.0 * p.v[i];
  expect_close(addmm(s, a, b, 0.5, 2.0), want, {3, 2});
  Tensor row = reals({2}, kDouble, 4);  // broadcasts over rows
  std::vector<double> rv = values(row);
  for (size_t i = 0; i < 6; ++i) want[i] = rv[i % 2] + p.v[i];
  expect_close(addmm(row, a, b), want, {3, 2});
  Tensor nan = full({3, 2}, std::numeric_limits<double>::quiet_NaN(), TensorOptions(kDouble));
  for (size_t i = 0; i < 6; ++i) want[i] = 3.0 * p.v[i];
  expect_close(addmm(nan, a, b, 0, 3.0), want, {3, 2});
  // A vector of the product (N == 1) goes through gemv: beta = 0 must not read NaN either.
  expect_close(
      addmm(full({3, 1}, std::nan(""), TensorOptions(kDouble)), a, slice(b, 1, 0, 1, 1), 0),
      ref_matmul(a, slice(b, 1, 0, 1, 1)));
  Tensor si = ints({3, 2}, kLong, 5), ai = ints({3, 4}, kLong, 6), bi = ints({4, 2}, kLong, 7);
  Ref pi = ref_matmul(ai, bi);
  std::vector<double> siv = values(si);
  for (size_t i = 0; i < 6; ++i) want[i] = 2 * siv[i] + 3 * pi.v[i];
  expect_close(addmm(si, ai, bi, 2, 3), want, {3, 2});
  // Empty inner dim: beta * self.
  for (size_t i = 0; i < 6; ++i) want[i] = 0.5 * sv[i];
  expect_close(addmm(s, reals({3, 0}), reals({0, 2}), 0.5), want, {3, 2});
}

TEST(LinalgAddmm, BaddbmmBatches) {
  Tensor s = reals({2, 3, 2}, kDouble, 1), a = reals({2, 3, 4}, kDouble, 2),
         b = reals({2, 4, 2}, kDouble, 3);
  Ref p = ref_matmul(a, b);
  std::vector<double> sv = values(s), want(12);
  for (size_t i = 0; i < 12; ++i) want[i] = 0.5 * sv[i] + 2.0 * p.v[i];
  expect_close(baddbmm(s, a, b, 0.5, 2.0), want, {2, 3, 2});
  Tensor nan = full({2}, std::nan(""), TensorOptions(kDouble));
  expect_close(baddbmm(nan, a, b, 0), p);
}

// ---------------------------------------------------------------------------- gradients

namespace {
Tensor leaf(IntArrayRef shape, uint64_t seed) {
  return reals(shape, kDouble, seed).requires_grad_();
}
std::vector<double> scale(std::vector<double> v, double s) {
  for (double& x : v) x *= s;
  return v;
}
}  // namespace

TEST(LinalgGrad, MmAndBmmMatchHandFormulas) {
  Tensor a = leaf({3, 4}, 1), b = leaf({4, 2}, 2), w = reals({3, 2}, kDouble, 3);
  sum(mm(a, b) * w).backward();
  expect_close(a.grad(), ref_matmul(w, matrix_transpose(b)));  // dL/da = w b^T
  expect_close(b.grad(), ref_matmul(matrix_transpose(a), w));  // dL/db = a^T w
  EXPECT_EQ(mm(a, b).grad_fn()->name(), "MmBackward0");

  Tensor x = leaf({2, 3, 4}, 4), y = leaf({2, 4, 5}, 5), v = reals({2, 3, 5}, kDouble, 6);
  sum(bmm(x, y) * v).backward();
  expect_close(x.grad(), ref_matmul(v, matrix_transpose(y)));
  expect_close(y.grad(), ref_matmul(matrix_transpose(x), v));
}

TEST(LinalgGrad, MvDotOuter) {
  Tensor m = leaf({3, 4}, 1), v = leaf({4}, 2), w = reals({3}, kDouble, 3);
  sum(mv(m, v) * w).backward();
  expect_close(m.grad(), ref_matmul(reshape(w, {3, 1}), reshape(v, {1, 4})));  // outer(w, v)
  expect_close(v.grad(), ref_matmul(matrix_transpose(m), w));                  // m^T w

  Tensor x = leaf({5}, 4), y = leaf({5}, 5);
  (dot(x, y) * 3.0).backward();
  expect_close(x.grad(), scale(values(y), 3.0), {5});
  expect_close(y.grad(), scale(values(x), 3.0), {5});

  Tensor p = leaf({3}, 6), q = leaf({4}, 7), u = reals({3, 4}, kDouble, 8);
  sum(outer(p, q) * u).backward();
  expect_close(p.grad(), ref_matmul(u, q));                    // u q
  expect_close(q.grad(), ref_matmul(matrix_transpose(u), p));  // u^T p
}

TEST(LinalgGrad, AddmmScalesByBetaAndAlpha) {
  Tensor s = leaf({2}, 1), a = leaf({3, 4}, 2), b = leaf({4, 2}, 3), w = reals({3, 2}, kDouble, 4);
  sum(addmm(s, a, b, 0.5, 2.0) * w).backward();
  std::vector<double> wv = values(w), gs(2, 0.0);
  for (size_t i = 0; i < 6; ++i) gs[i % 2] += 0.5 * wv[i];  // beta * w summed over broadcast rows
  expect_close(s.grad(), gs, {2});
  expect_close(a.grad(), scale(ref_matmul(w, matrix_transpose(b)).v, 2.0), {3, 4});
  expect_close(b.grad(), scale(ref_matmul(matrix_transpose(a), w).v, 2.0), {4, 2});

  Tensor s3 = leaf({2, 3, 2}, 5), a3 = leaf({2, 3, 4}, 6), b3 = leaf({2, 4, 2}, 7);
  Tensor w3 = reals({2, 3, 2}, kDouble, 8);
  sum(baddbmm(s3, a3, b3, 0.25, -1.0) * w3).backward();
  expect_close(s3.grad(), scale(values(w3), 0.25), {2, 3, 2});
  expect_close(a3.grad(), scale(ref_matmul(w3, matrix_transpose(b3)).v, -1.0), {2, 3, 4});
}

TEST(LinalgGrad, MatmulBroadcastMatchesFiniteDifferences) {
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{2, 1, 3, 4}, {5, 4, 2}},
      {{4}, {2, 4, 3}},
      {{2, 3, 4}, {4}},
      {{3, 4}, {2, 4, 5}},
      {{4}, {4, 2}}};
  for (auto& [sa, sb] : shapes) {
    SCOPED_TRACE(::testing::Message() << IntArrayRef(sa) << " @ " << IntArrayRef(sb));
    Tensor a = leaf(sa, 1), b = leaf(sb, 2);
    Tensor out = matmul(a, b);
    Tensor w = reals(out.sizes(), kDouble, 3);
    sum(out * w).backward();
    for (int which = 0; which < 2; ++which) {
      Tensor x = clone((which ? b : a).detach());
      double* p = x.data_ptr<double>();
      std::vector<double> num(size_t(x.numel()));
      for (int64_t i = 0; i < x.numel(); ++i) {
        double old = p[i], h = 1e-6;
        auto f = [&] {
          return sum((which ? matmul(a.detach(), x) : matmul(x, b.detach())) * w).item<double>();
        };
        p[i] = old + h;
        double fp = f();
        p[i] = old - h;
        double fm = f();
        p[i] = old;
        num[size_t(i)] = (fp - fm) / (2 * h);
      }
      expect_close((which ? b : a).grad(), num, x.sizes(), 1e-6);
    }
  }
}

TEST(LinalgGrad, DoubleBackwardThroughMm) {
  Tensor a = leaf({3, 4}, 1), b = leaf({4, 2}, 2), w = reals({3, 2}, kDouble, 3),
         v = reals({3, 4}, kDouble, 4);
  Tensor ga = autograd::grad({sum(mm(a, b) * w)}, {a}, {}, std::nullopt, true, false)[0];
  // ga = w b^T, so d(sum(ga * v))/db = v^T w.
  Tensor gb = autograd::grad({sum(ga * v)}, {b}, {}, std::nullopt, false, false)[0];
  expect_close(gb, ref_matmul(matrix_transpose(v), w));
}

// ---------------------------------------------------------------------------- einsum

TEST(LinalgEinsum, MatchesExplicitComposites) {
  Tensor a = reals({3, 4}, kDouble, 1), b = reals({4, 2}, kDouble, 2),
         sq = reals({3, 3}, kDouble, 3);
  Tensor x = reals({2, 3, 4}, kDouble, 4), y = reals({2, 4, 5}, kDouble, 5);
  Tensor u = reals({4}, kDouble, 6), v = reals({4}, kDouble, 7), c = reals({2, 6}, kDouble, 8);
  expect_close(einsum("ij,jk->ik", {a, b}), mm(a, b));
  expect_close(einsum("ij,jk", {a, b}), mm(a, b));            // implicit output
  expect_close(einsum(" ij , jk -> ik ", {a, b}), mm(a, b));  // spaces
  expect_close(einsum("bij,bjk->bik", {x, y}), bmm(x, y));
  expect_close(einsum("bij,bkj->bik", {x, matrix_transpose(y)}), bmm(x, y));
  expect_close(einsum("ii->i", {sq}), diagonal(sq));
  expect_close(einsum("ii", {sq}), sum(diagonal(sq)));  // trace
  expect_close(einsum("ij->ji", {a}), t(a));
  expect_close(einsum("ba", {a}), t(a));  // implicit: sorted labels
  expect_close(einsum("i,i->", {u, v}), dot(u, v));
  expect_close(einsum("i,j->ij", {u, v}), outer(u, v));
  expect_close(einsum("ij->", {a}), sum(a));
  expect_close(einsum("ij->i", {a}), sum(a, {1}));
  expect_close(einsum("ij,ij->ij", {a, a}), a * a);
  expect_close(einsum("...ij->...ji", {x}), matrix_transpose(x));
  expect_close(einsum("ij,jk,kl->il", {a, b, c}), mm(mm(a, b), c));
  expect_close(einsum("ij,j->", {a, u}), sum(mv(a, u)));  // i summed within operand 0
  expect_close(einsum("iij->j", {reals({3, 3, 2})}), sum(diagonal(reals({3, 3, 2}), 0, 0, 1), {1}));
  expect_close(einsum("Ab,bA", {a, t(a)}), sum(a * a));  // upper-case labels
}

TEST(LinalgEinsum, EllipsisBroadcastAndBilinear) {
  Tensor p = reals({2, 3}, kDouble, 1), q = reals({5, 1, 3}, kDouble, 2);
  expect_close(einsum("...i,...i->...", {p, q}), sum(p * q, {-1}));
  expect_close(einsum("...i,...i", {p, q}), sum(p * q, {-1}));  // implicit: ellipsis first
  Tensor r = reals({3}, kDouble, 3), one = reals({1}, kDouble, 4);
  expect_close(einsum("i,i->i", {r, one}), r * one);  // size-1 subscript broadcasts
  // Bilinear form out[b, a] = sum_{n, m} x1[b, n] A[a, n, m] x2[b, m] against loops.
  Tensor x1 = reals({2, 3}, kDouble, 5), A = reals({4, 3, 5}, kDouble, 6),
         x2 = reals({2, 5}, kDouble, 7);
  std::vector<double> xv = values(x1), av = values(A), yv = values(x2), want(8, 0.0);
  for (int bi = 0; bi < 2; ++bi)
    for (int ai = 0; ai < 4; ++ai)
      for (int n = 0; n < 3; ++n)
        for (int m = 0; m < 5; ++m)
          want[size_t(bi * 4 + ai)] +=
              xv[size_t(bi * 3 + n)] * av[size_t((ai * 3 + n) * 5 + m)] * yv[size_t(bi * 5 + m)];
  expect_close(einsum("bn,anm,bm->ba", {x1, A, x2}), want, {2, 4});
  EXPECT_EQ(einsum("...,...", {reals({}), reals({})}).dim(), 0);
}

TEST(LinalgEinsum, DtypesFollowTorch) {
  Tensor i8 = ints({4}, kChar);
  EXPECT_EQ(einsum("i,i->", {i8, i8}).dtype(), kChar);              // contraction keeps the dtype
  EXPECT_EQ(einsum("ij->", {ints({3, 4}, kChar)}).dtype(), kLong);  // a lone sum widens
  EXPECT_EQ(einsum("ii->i", {ints({3, 3}, kChar)}).dtype(), kChar);
  Tensor m = ints({3, 4}, kInt), n = ints({4, 2}, kInt);
  expect_close(einsum("ij,jk->ik", {m, n}), ref_matmul(m, n));
}

TEST(LinalgEinsum, GradientsMatchComposites) {
  Tensor a = leaf({3, 4}, 1), b = leaf({4, 2}, 2), w = reals({3, 2}, kDouble, 3);
  sum(einsum("ij,jk->ik", {a, b}) * w).backward();
  expect_close(a.grad(), ref_matmul(w, matrix_transpose(b)));
  expect_close(b.grad(), ref_matmul(matrix_transpose(a), w));
  Tensor s = leaf({3, 3}, 4), d = reals({3}, kDouble, 5);
  sum(einsum("ii->i", {s}) * d).backward();
  std::vector<double> dv = values(d), want(9, 0.0);
  for (int i = 0; i < 3; ++i) want[size_t(i * 4)] = dv[size_t(i)];
  expect_close(s.grad(), want, {3, 3});
}

TEST(LinalgEinsum, ErrorsLikeTorch) {
  Tensor m = ones({3, 4});
  expect_error(
      [&] {
        einsum("ij,jk->ik", {m, m});
      },
      "einsum(): subscript j has size 3 for operand 1 which does not broadcast with "
      "previously seen size 4");
  expect_error([&] { einsum("ij,jk->ik", {m}); },
               "einsum(): fewer operands were provided than specified in the equation");
  expect_error([&] { einsum("ij->ij", {m, m}); }, "more operands were provided");
  expect_error([&] { einsum("ij->kj", {m}); }, "output subscript k does not appear");
  expect_error([&] { einsum("ij->jj", {m}); }, "output subscript j appears more than once");
  expect_error([&] { einsum("ijk->ij", {m}); }, "does not match the number of dimensions (2)");
  expect_error([&] { einsum("ii->i", {m}); },
               "subscript i is repeated for operand 0 but the sizes don't match, 3 != 4");
  expect_error([&] { einsum("i$->i", {m}); }, "invalid subscript given at index 1");
  expect_error([&] { einsum("b..i->i", {m}); }, "not part of any ellipsis");
  expect_error([&] { einsum("ij", {}); }, "must provide at least one operand");
  expect_error(
      [&] {
        einsum("ij,jk", {m, ones({4, 2}, TensorOptions(kDouble))});
      },
      "expected scalar type");
}
