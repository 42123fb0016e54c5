// Random sampling: mt19937 known answers and torch's pinned values, reproducibility across seeds
// and thread counts, moments within loose bounds, ranges and PyTorch's errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "ember/cpu/random_draw.h"
#include "ember/ember.h"

using namespace ember;

namespace {

std::vector<double> values(const Tensor& t) {
  Tensor c = contiguous(to_dtype(t.detach(), kDouble));
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

double mean_of(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
}
double var_of(const std::vector<double>& v) {
  double m = mean_of(v), s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s / double(v.size() - 1);
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.sizes().equals(b.sizes()) && a.dtype() == b.dtype() &&
         std::memcmp(contiguous(a).data_ptr(), contiguous(b).data_ptr(), a.nbytes()) == 0;
}

GeneratorPtr gen(uint64_t seed) { return std::make_shared<Generator>(seed); }

void expect_error(const std::function<void()>& f, const std::string& part,
                  ErrorKind kind = ErrorKind::Runtime) {
  try {
    f();
    ADD_FAILURE() << "expected an error containing: " << part;
  } catch (const Error& e) {
    EXPECT_TRUE(is_a(e.kind(), kind));
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << "message: " << e.what();
  }
}

// Restores the thread count a test changes.
struct ThreadGuard {
  int saved = get_num_threads();
  ~ThreadGuard() { set_num_threads(saved); }
};

const ScalarType kFloats[] = {kHalf, kBFloat16, kFloat, kDouble};

}  // namespace

TEST(RandomMt19937, KnownAnswers) {
  // The C++ standard's check of mt19937 (the 10000th output for seed 5489), and torch's numbers.
  Generator g(5489);
  EXPECT_EQ(g.random(), 3499211612u);
  for (int i = 1; i < 9999; ++i) g.random();
  EXPECT_EQ(g.random(), 4123659995u);
  manual_seed(0);
  EXPECT_EQ(values(rand({3})),
            (std::vector<double>{0.49625658988952637, 0.7682217955589294, 0.08847743272781372}));
  manual_seed(0);
  EXPECT_EQ(values(randn({3})),
            (std::vector<double>{1.5409960746765137, -0.293428897857666, -2.1787893772125244}));
  EXPECT_EQ(Generator().initial_seed(), 67280421310721u);
}

TEST(RandomGenerator, SameSeedSameNumbers) {
  manual_seed(42);
  Tensor a = rand({1000}), n1 = randn({7, 3});
  manual_seed(42);
  Tensor b = rand({1000}), n2 = randn({7, 3});
  EXPECT_TRUE(same_bits(a, b));
  EXPECT_TRUE(same_bits(n1, n2));
  EXPECT_FALSE(same_bits(rand({1000}), a));  // the stream moves on
  EXPECT_FALSE(same_bits(rand({1000}, gen(1)), rand({1000}, gen(2))));
  EXPECT_EQ(default_generator()->initial_seed(), 42u);
}

TEST(RandomGenerator, StreamContinuesAcrossCallsAndStateRestores) {
  // Uniform samples take one draw each, so two calls equal one call of both sizes.
  auto g = gen(5);
  Tensor first = rand({300}, g), second = rand({200}, g);
  Tensor whole = rand({500}, gen(5));
  EXPECT_TRUE(same_bits(first, slice(whole, 0, 0, 300, 1)));
  EXPECT_TRUE(same_bits(second, slice(whole, 0, 300, 500, 1)));
  randn({3}, g);  // leaves a cached normal, which the state keeps
  std::vector<uint8_t> state = g->state();
  EXPECT_EQ(int64_t(state.size()), Generator::kStateBytes);
  Tensor next = randn({50}, g, kDouble);
  g->set_state(state.data(), int64_t(state.size()));
  EXPECT_TRUE(same_bits(next, randn({50}, g, kDouble)));
  expect_error([&] { g->set_state(state.data(), 16); },
               "Expected a CPUGeneratorImplState of size 5056 but found the input RNG state size "
               "to be 16");
  state[8] = state[9] = state[10] = state[11] = 0;  // left = 0
  expect_error([&] { g->set_state(state.data(), int64_t(state.size())); }, "Invalid mt19937 state");
}

TEST(RandomGenerator, DoubleUniformIsTheLow53BitsOfTwoDraws) {
  auto g = gen(77);
  rand({10}, g);  // ten float samples: ten draws
  const int64_t n = 100003;
  Tensor u = rand({n}, g, kDouble);
  const double* p = u.data_ptr<double>();
  std::mt19937 ref(77);  // the standard engine has torch's seeding
  ref.discard(10);
  for (int64_t i = 0; i < n; ++i) {
    uint64_t hi = ref(), lo = ref();
    ASSERT_EQ(p[i], double((hi << 32 | lo) & ((uint64_t(1) << 53) - 1)) * 0x1p-53) << i;
  }
}

TEST(RandomGenerator, SameNumbersForAnyThreadCount) {
  ThreadGuard guard;
  std::vector<std::vector<Tensor>> runs;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    auto g = gen(123);
    Tensor probs = rand({64, 50}, gen(9));
    runs.push_back({rand({100000}, g), randn({70000}, g, kDouble), randint(-5, 5, {50000}, g),
                    bernoulli(rand({40000}, gen(3)), g), multinomial(probs, 20, false, g),
                    multinomial(probs, 30, true, g), randperm(1000, g),
                    rand({300, 200}, g, kHalf)});
  }
  for (size_t r = 1; r < runs.size(); ++r)
    for (size_t k = 0; k < runs[0].size(); ++k) EXPECT_TRUE(same_bits(runs[0][k], runs[r][k])) << k;
}

TEST(RandomMoments, UniformAndNormalInEveryFloatDtype) {
  for (ScalarType t : kFloats) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    std::vector<double> u = values(rand({100000}, gen(1), t));
    EXPECT_NEAR(mean_of(u), 0.5, 0.01);
    EXPECT_NEAR(var_of(u), 1.0 / 12, 0.005);
    EXPECT_GE(*std::min_element(u.begin(), u.end()), 0.0);
    EXPECT_LT(*std::max_element(u.begin(), u.end()), 1.0);
    std::vector<double> z = values(randn({100000}, gen(2), t));
    EXPECT_NEAR(mean_of(z), 0.0, 0.02);
    EXPECT_NEAR(var_of(z), 1.0, 0.03);
    Tensor x = empty({50000}, t);
    std::vector<double> y = values(normal_(x, 3.0, 2.0, gen(3)));
    EXPECT_NEAR(mean_of(y), 3.0, 0.05);
    EXPECT_NEAR(std::sqrt(var_of(y)), 2.0, 0.05);
    Tensor w = empty({50000}, t);
    std::vector<double> v = values(uniform_(w, -2.0, 5.0, gen(4)));
    EXPECT_NEAR(mean_of(v), 1.5, 0.05);
    EXPECT_GE(*std::min_element(v.begin(), v.end()), -2.0);
    EXPECT_LT(*std::max_element(v.begin(), v.end()), 5.0);
  }
}

TEST(RandomRanges, UniformNeverReachesUpperBound) {
  // Close bounds where rounding would carry a float16 value up to `to` (torch gives `from`).
  Tensor h = empty({100000}, kHalf);
  std::vector<double> v = values(uniform_(h, 1.0, 1.0078125, gen(1)));
  EXPECT_LT(*std::max_element(v.begin(), v.end()), 1.0078125);
  Tensor e = empty({10});
  EXPECT_EQ(values(uniform_(e, 2.0, 2.0))[0], 2.0);
}

TEST(RandomRanges, RandintRandomAndBool) {
  std::vector<double> v = values(randint(-3, 4, {20000}, gen(1)));
  EXPECT_EQ(*std::min_element(v.begin(), v.end()), -3);
  EXPECT_EQ(*std::max_element(v.begin(), v.end()), 3);
  EXPECT_NEAR(mean_of(v), 0.0, 0.05);
  EXPECT_EQ(randint(0, 10, {3}).dtype(), kLong);
  EXPECT_EQ(randint(0, 10, {3}, nullptr, kFloat).dtype(), kFloat);
  Tensor big = randint(0, int64_t(1) << 40, {10000}, gen(2));
  EXPECT_GT(values(big)[0] + values(big)[1], double(1u << 31));  // 64-bit draws for wide ranges
  Tensor i8 = empty({20000}, kChar);
  std::vector<double> r = values(random_(i8, 0, std::nullopt, gen(3)));
  EXPECT_EQ(*std::min_element(r.begin(), r.end()), 0);
  EXPECT_EQ(*std::max_element(r.begin(), r.end()), 127);
  Tensor f = empty({20000});
  std::vector<double> rf = values(random_(f, 0, std::nullopt, gen(4)));
  EXPECT_LE(*std::max_element(rf.begin(), rf.end()), double(1 << 24));
  EXPECT_GT(*std::max_element(rf.begin(), rf.end()), double(1 << 23));
  Tensor b = empty({1000}, kBool);
  std::vector<double> rb = values(random_(b, 0, std::nullopt, gen(5)));
  EXPECT_NEAR(mean_of(rb), 0.5, 0.1);
  EXPECT_EQ(std::set<double>(rb.begin(), rb.end()).size(), 2u);
}

TEST(RandomRanges, StridedOutputsAreFilledEverywhere) {
  Tensor base = zeros({40, 30});
  Tensor view = matrix_transpose(base);
  uniform_(view, 1.0, 2.0, gen(1));
  std::vector<double> v = values(base);
  EXPECT_GE(*std::min_element(v.begin(), v.end()), 1.0);
  Tensor part = slice(zeros({10, 10}, TensorOptions(kDouble)), 1, 0, 10, 2);
  normal_(part, 5.0, 0.0);
  EXPECT_EQ(values(part), std::vector<double>(50, 5.0));
  EXPECT_EQ(rand({0, 3}).numel(), 0);
  EXPECT_EQ(randn({}).dim(), 0);
}

TEST(RandomPerm, IsAPermutationInEveryDtype) {
  for (ScalarType t : {kLong, kInt, kFloat, kHalf}) {
    std::vector<double> v = values(randperm(500, gen(1), t));
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < 500; ++i) EXPECT_EQ(sorted[size_t(i)], double(i));
    EXPECT_NE(v, sorted);  // not the identity
  }
  EXPECT_FALSE(same_bits(randperm(100, gen(1)), randperm(100, gen(2))));
  EXPECT_EQ(randperm(0).numel(), 0);
  EXPECT_EQ(values(randperm(1)), std::vector<double>{0});
  expect_error([] { randperm(-1); }, "Trying to create tensor with negative dimension -1");
  expect_error([] { randperm(300, nullptr, kChar); }, "n is too large for result tensor type");
}

TEST(RandomBernoulli, ScalarAndTensorProbabilities) {
  Tensor x = empty({50000});
  EXPECT_NEAR(mean_of(values(bernoulli_(x, 0.3, gen(1)))), 0.3, 0.01);
  EXPECT_EQ(mean_of(values(bernoulli_(x, 0.0))), 0.0);
  EXPECT_EQ(mean_of(values(bernoulli_(x, 1.0))), 1.0);
  Tensor i = empty({1000}, kInt);
  std::vector<double> iv = values(bernoulli_(i, 0.5, gen(2)));
  EXPECT_EQ(std::set<double>(iv.begin(), iv.end()), (std::set<double>{0, 1}));
  Tensor p = full({2, 20000}, 0.25, TensorOptions(kDouble));
  Tensor s = bernoulli(p, gen(3));
  EXPECT_EQ(s.dtype(), kDouble);
  EXPECT_NEAR(mean_of(values(s)), 0.25, 0.01);
  Tensor edge = ember::where(gt(arange(0, 10, 1, TensorOptions(kLong)), wrap_scalar(4)), ones({10}),
                             zeros({10}));
  EXPECT_EQ(values(bernoulli(edge, gen(4))), values(edge));
  expect_error([&] { bernoulli_(x, 1.5); }, "bernoulli_ expects p to be in [0, 1], but got p=1.5");
  expect_error([] { bernoulli(full({3}, 2.0)); }, "Expected p_in >= 0 && p_in <= 1");
  expect_error([] { bernoulli(ones({3}, TensorOptions(kLong))); }, "not implemented for 'Long'");
}

TEST(RandomBernoulli, MklStreamKnownAnswers) {
  // MKL 2024.2's viRngBernoulli (ICDF) on VSL_BRNG_MCG31 gave these (Note [MKL Bernoulli]).
  using V = std::vector<int32_t>;
  V out(24), skip(8), zero(8);
  cpu::mcg31_bernoulli(out.data(), 24, 123456789u, 0.3);
  EXPECT_EQ(out, (V{1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0}));
  cpu::mcg31_bernoulli(skip.data(), 8, 123456789u, 0.7, 1000);  // vslSkipAheadStream(1000)
  EXPECT_EQ(skip, (V{1, 1, 0, 1, 1, 1, 1, 1}));
  cpu::mcg31_bernoulli(zero.data(), 8, 0u, 0.5);
  EXPECT_EQ(zero, (V{1, 0, 1, 1, 1, 0, 0, 0}));
}

TEST(RandomMultinomial, WithReplacementFollowsProbabilities) {
  Tensor p = ember::where(eq(arange(0, 4, 1, TensorOptions(kLong)), wrap_scalar(2)), zeros({4}),
                          arange(1, 5, 1, TensorOptions(kFloat)));  // weights 1, 2, 0, 4
  std::vector<double> s = values(multinomial(p, 70000, true, gen(1)));
  std::vector<double> freq(4, 0.0);
  for (double k : s) freq[size_t(k)] += 1.0 / double(s.size());
  EXPECT_NEAR(freq[0], 1.0 / 7, 0.01);
  EXPECT_NEAR(freq[1], 2.0 / 7, 0.01);
  EXPECT_EQ(freq[2], 0.0);  // zero weight is never drawn
  EXPECT_NEAR(freq[3], 4.0 / 7, 0.01);
  Tensor rows = multinomial(ones({3, 5}), 8, true, gen(2));
  EXPECT_EQ(rows.sizes().vec(), (std::vector<int64_t>{3, 8}));
  EXPECT_EQ(rows.dtype(), kLong);
}

TEST(RandomMultinomial, WithoutReplacementDrawsDistinct) {
  Tensor probs = rand({50, 10}, gen(1));
  std::vector<double> s = values(multinomial(probs, 10, false, gen(2)));
  for (int r = 0; r < 50; ++r) {
    std::set<double> row(s.begin() + r * 10, s.begin() + r * 10 + 10);
    EXPECT_EQ(row.size(), 10u);
  }
  // Zero-weight categories come only after every positive one.
  Tensor p = ember::where(lt(arange(0, 6, 1, TensorOptions(kLong)), wrap_scalar(2)), ones({6}),
                          zeros({6}));
  std::vector<double> z = values(multinomial(p, 4, false, gen(3)));
  EXPECT_EQ(std::set<double>(z.begin(), z.begin() + 2), (std::set<double>{0, 1}));
  // The heavier category is drawn first more often.
  Tensor w = ember::where(eq(arange(0, 2, 1, TensorOptions(kLong)), wrap_scalar(0)), full({2}, 9.0),
                          ones({2}));
  std::vector<double> first =
      values(multinomial(expand(unsqueeze(w, 0), {20000, 2}), 1, false, gen(4)));
  EXPECT_NEAR(1.0 - mean_of(first), 0.9, 0.01);
}

TEST(RandomMultinomial, ErrorsLikeTorch) {
  Tensor neg = ember::where(eq(arange(0, 2, 1, TensorOptions(kLong)), wrap_scalar(0)), ones({2}),
                            full({2}, -1.0));
  expect_error([&] { multinomial(neg, 1); },
               "probability tensor contains either `inf`, `nan` or element < 0");
  expect_error([] { multinomial(full({2}, std::nan("")), 1); },
               "probability tensor contains either `inf`, `nan` or element < 0");
  expect_error([] { multinomial(ones({2}), 3); },
               "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  expect_error([] { multinomial(zeros({2}), 1); },
               "invalid multinomial distribution (sum of probabilities <= 0)");
  expect_error([] { multinomial(ones({2}), 0); }, "cannot sample n_sample <= 0 samples");
  expect_error([] { multinomial(ones({2}, TensorOptions(kLong)), 1); },
               "multinomial only supports floating-point dtypes for input, got: Long");
  expect_error([] { multinomial(ones({2, 2, 2}), 1); }, "prob_dist must be 1 or 2 dim");
  EXPECT_EQ(multinomial(ones({0, 2}), 1).sizes().vec(), (std::vector<int64_t>{0, 1}));
}

TEST(RandomNormal, TensorMeanAndStdBroadcast) {
  Tensor mean = reshape(arange(0, 2, 1, TensorOptions(kDouble)), {2, 1});
  Tensor std = full({30000}, 0.5, TensorOptions(kDouble));
  Tensor s = normal(mean * 10.0, std, gen(1));
  EXPECT_EQ(s.sizes().vec(), (std::vector<int64_t>{2, 30000}));
  std::vector<double> r0 = values(select(s, 0, 0)), r1 = values(select(s, 0, 1));
  EXPECT_NEAR(mean_of(r0), 0.0, 0.02);
  EXPECT_NEAR(mean_of(r1), 10.0, 0.02);
  EXPECT_NEAR(std::sqrt(var_of(r1)), 0.5, 0.02);
  EXPECT_EQ(normal(1.0, 2.0, {3, 4}).sizes().vec(), (std::vector<int64_t>{3, 4}));
  expect_error([] { normal(zeros({2}), full({2}, -1.0)); },
               "normal expects all elements of std >= 0.0");
}

TEST(RandomErrors, ArgumentChecksLikeTorch) {
  Tensor x = empty({3});
  expect_error([&] { uniform_(x, 1, 0); },
               "uniform_ expects to return a [from, to) range, but found from=1 > to=0");
  expect_error([&] { normal_(x, 0, -1); }, "normal expects std >= 0.0, but found std -1");
  expect_error([] { rand({3}, nullptr, kLong); },
               "\"check_uniform_bounds\" not implemented for 'Long'");
  expect_error([] { randn({3}, nullptr, kLong); },
               "\"normal_kernel_cpu\" not implemented for 'Long'");
  expect_error([] { randint(5, 5, {3}); },
               "random_ expects 'from' to be less than 'to', but got from=5 >= to=5");
  Tensor i8 = empty({3}, kChar);
  expect_error([&] { random_(i8, 0, 1000); }, "to - 1 is out of bounds for signed char");
  expect_error([&] { random_(i8, -1000, 10); }, "from is out of bounds for signed char");
}

TEST(RandomAutograd, SamplingHasZeroGradients) {
  Tensor leaf = ones({3}).requires_grad_();
  expect_error([&] { uniform_(leaf); },
               "a leaf Variable that requires grad is being used in an in-place operation.");
  Tensor y = leaf + 2.0;  // add saves nothing, so overwriting its output is allowed
  uniform_(y);
  EXPECT_EQ(y.grad_fn()->name(), "UniformBackward0");
  sum(y).backward();
  EXPECT_EQ(values(leaf.grad()), std::vector<double>(3, 0.0));
  Tensor m = zeros({3}).requires_grad_();
  Tensor s = normal(m, ones({3}));
  EXPECT_EQ(s.grad_fn()->name(), "NormalBackward3");
  sum(s).backward();
  EXPECT_EQ(values(m.grad()), std::vector<double>(3, 0.0));
}
