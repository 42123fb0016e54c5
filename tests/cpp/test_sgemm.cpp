// ember's float32 GEMM (Note [SGEMM]) against a naive double loop: odd shapes, every operand
// layout, alpha/beta, beta == 0 over NaN, and bitwise equality across thread counts.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "ember/core/parallel.h"
#include "ember/cpu/sgemm.h"

using ember::cpu::has_sgemm;
using ember::cpu::sgemm;

namespace {

// An operand of rows x cols stored in `data`, element (i, j) at i * rs + j * cs.
struct Operand {
  std::vector<float> data;
  int64_t rs, cs;
  float at(int64_t i, int64_t j) const { return data[size_t(i * rs + j * cs)]; }
};

enum class Layout { kRowMajor, kTransposed, kStrided, kBroadcastRows };

Operand make(int64_t rows, int64_t cols, Layout layout, std::mt19937& rng) {
  std::normal_distribution<float> dist;
  Operand o;
  switch (layout) {
    case Layout::kRowMajor:
      o.rs = cols + 3, o.cs = 1;
      break;  // sliced: padded rows
    case Layout::kTransposed:
      o.rs = 1, o.cs = rows + 2;
      break;  // the transpose of a slice
    case Layout::kStrided:
      o.rs = 2 * cols + 1, o.cs = 2;
      break;  // neither stride is 1
    case Layout::kBroadcastRows:
      o.rs = 0, o.cs = 1;
      break;  // every row the same
  }
  const int64_t extent = (rows - 1) * o.rs + (cols - 1) * o.cs + 1;
  o.data.resize(size_t(extent));
  for (float& v : o.data) v = dist(rng);
  return o;
}

// Runs sgemm into a fresh c (row stride n + 1) prefilled with `init`, checks it against the
// double reference within a bound proportional to sum |alpha a b| + |beta c|.
void check(int64_t m, int64_t n, int64_t k, Layout la, Layout lb, float alpha, float beta,
           float init, std::mt19937& rng) {
  const Operand a = make(m, k, la, rng), b = make(k, n, lb, rng);
  const int64_t ldc = n + 1;
  std::vector<float> c(size_t(m * ldc), init);
  sgemm(m, n, k, alpha, a.data.data(), a.rs, a.cs, b.data.data(), b.rs, b.cs, beta, c.data(), ldc);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double ref = beta == 0 ? 0.0 : double(beta) * init, mag = std::abs(ref);
      for (int64_t p = 0; p < k; ++p) {
        const double t = double(alpha) * a.at(i, p) * b.at(p, j);
        ref += t;
        mag += std::abs(t);
      }
      const float got = c[size_t(i * ldc + j)];
      ASSERT_NEAR(got, ref, 1e-5 * mag + 1e-6)
          << m << "x" << n << "x" << k << " layouts " << int(la) << "," << int(lb) << " alpha "
          << alpha << " beta " << beta << " at (" << i << ", " << j << ")";
    }
  for (int64_t i = 0; i < m; ++i)  // the padding column of c is never written
    ASSERT_TRUE(std::isnan(init) ? std::isnan(c[size_t(i * ldc + n)])
                                 : c[size_t(i * ldc + n)] == init);
}

class SgemmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!has_sgemm()) GTEST_SKIP() << "this CPU has neither AVX2 + FMA nor AVX-512F";
  }
};

TEST_F(SgemmTest, OddShapesAndLayouts) {
  std::mt19937 rng(42);
  const int64_t sizes[] = {1, 2, 5, 6, 7, 13, 16, 17, 31, 64, 65, 97, 131, 257, 300};
  const Layout layouts[] = {Layout::kRowMajor, Layout::kTransposed, Layout::kStrided};
  std::uniform_int_distribution<int> pick(0, std::size(sizes) - 1);
  for (int trial = 0; trial < 60; ++trial) {
    const int64_t m = sizes[pick(rng)], n = sizes[pick(rng)], k = sizes[pick(rng)];
    for (Layout la : layouts)
      for (Layout lb : layouts) check(m, n, k, la, lb, 1.0f, 0.0f, 0.0f, rng);
  }
}

TEST_F(SgemmTest, AlphaBetaAndBroadcast) {
  std::mt19937 rng(7);
  for (auto [m, n, k] : {std::tuple{7, 65, 300}, {300, 13, 257}, {61, 127, 2}, {6, 64, 256}}) {
    check(m, n, k, Layout::kRowMajor, Layout::kRowMajor, 0.5f, 2.0f, 1.5f, rng);
    check(m, n, k, Layout::kTransposed, Layout::kStrided, -1.25f, 1.0f, -3.0f, rng);
    check(m, n, k, Layout::kBroadcastRows, Layout::kTransposed, 1.0f, 0.25f, 2.0f, rng);
    check(m, n, k, Layout::kRowMajor, Layout::kBroadcastRows, 3.0f, -1.0f, 0.5f, rng);
  }
}

TEST_F(SgemmTest, BetaZeroNeverReadsC) {
  std::mt19937 rng(3);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (auto [m, n, k] : {std::tuple{1, 1, 1}, {17, 129, 300}, {300, 5, 3}})
    for (float alpha : {1.0f, 2.0f})
      check(m, n, k, Layout::kRowMajor, Layout::kTransposed, alpha, 0.0f, nan, rng);
  // An empty sum, or alpha == 0, is beta * c: zeros for beta == 0 even over NaN.
  std::vector<float> c(6, nan), a(6, 1.0f);
  sgemm(2, 3, 0, 1.0f, a.data(), 1, 1, a.data(), 1, 1, 0.0f, c.data(), 3);
  for (float v : c) EXPECT_EQ(v, 0.0f);
  std::fill(c.begin(), c.end(), nan);
  sgemm(2, 3, 2, 0.0f, a.data(), 2, 1, a.data(), 3, 1, 0.0f, c.data(), 3);
  for (float v : c) EXPECT_EQ(v, 0.0f);
}

TEST_F(SgemmTest, BitwiseEqualForAnyThreadCount) {
  std::mt19937 rng(11);
  const int saved = ember::get_num_threads();
  // Shapes above the serial threshold that split by columns, by rows, and unevenly.
  for (auto [m, n, k] :
       {std::tuple{300, 517, 129}, {1000, 70, 200}, {64, 2000, 100}, {97, 193, 1031}}) {
    for (Layout lb : {Layout::kRowMajor, Layout::kTransposed}) {
      const Operand a = make(m, k, Layout::kRowMajor, rng), b = make(k, n, lb, rng);
      std::vector<float> first;
      for (int threads : {1, 2, 3, 4}) {
        ember::set_num_threads(threads);
        std::vector<float> c(size_t(m * n));
        sgemm(m, n, k, 1.0f, a.data.data(), a.rs, a.cs, b.data.data(), b.rs, b.cs, 0.0f, c.data(),
              n);
        if (first.empty()) first = c;
        else
          EXPECT_EQ(std::memcmp(first.data(), c.data(), c.size() * sizeof(float)), 0)
              << m << "x" << n << "x" << k << " on " << threads << " threads";
      }
    }
  }
  ember::set_num_threads(saved);
}

}  // namespace
