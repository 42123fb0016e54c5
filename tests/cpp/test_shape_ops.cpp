// Joining, splitting, reordering, scans, sorting and counting: values, gradients and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "ember/ember.h"

using namespace ember;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// A tensor of `dtype` from values (1-d unless a shape is given).
Tensor make(std::vector<double> v, std::vector<int64_t> shape = {-1}, ScalarType dtype = kFloat) {
  Tensor t = empty({int64_t(v.size())}, kDouble);
  if (!v.empty()) std::memcpy(t.data_ptr(), v.data(), v.size() * sizeof(double));
  return contiguous(to_dtype(reshape(t, shape), dtype));
}
Tensor scalar(double v, ScalarType dtype = kFloat) { return make({v}, {}, dtype); }

// Values in row-major order as doubles, whatever the layout and dtype.
std::vector<double> vals(const Tensor& t) {
  Tensor c = contiguous(to_dtype(t.detach(), kDouble, /*copy=*/true));
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}
std::vector<int64_t> shape(const Tensor& t) { return t.sizes().vec(); }
using D = std::vector<double>;
using S = std::vector<int64_t>;

// NaN-aware equality for value lists.
void expect_vals(const Tensor& t, const D& want) {
  D got = vals(t);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(got[i])) << "at " << i;
    else EXPECT_DOUBLE_EQ(got[i], want[i]) << "at " << i;
  }
}

// Equality up to float32 rounding, for gradients computed through divisions.
void expect_close(const Tensor& t, const D& want) {
  D got = vals(t);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-6 * (1 + std::abs(want[i])));
}

// The error kind `f` raises (and its message), failing the test if it raises nothing.
template <class F>
std::pair<ErrorKind, std::string> error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return {e.kind(), e.what()};
  }
  ADD_FAILURE() << "expected an ember::Error";
  return {ErrorKind::NotImplemented, ""};
}
#define EXPECT_ERROR(expr, kind, substr)                                   \
  do {                                                                     \
    auto err_ = error_of([&] { (void)(expr); });                           \
    EXPECT_TRUE(is_a(err_.first, kind));                                   \
    EXPECT_NE(err_.second.find(substr), std::string::npos) << err_.second; \
  } while (0)

Tensor leaf(D v, S s = {-1}) {
  Tensor t = make(std::move(v), std::move(s));
  t.requires_grad_(true);
  return t;
}
// sum(out * w) backward, with w = 1, 2, 3, ... so each position's gradient is distinct.
void backward_weighted(const Tensor& out) {
  Tensor w = reshape(arange(1, out.numel() + 1, 1, TensorOptions(out.dtype())), out.sizes());
  sum(out * w).backward();
}

}  // namespace

// ---------------------------------------------------------------------------------------- cat

TEST(ShapeCat, ValuesAlongDims) {
  Tensor a = make({1, 2, 3, 4}, {2, 2}), b = make({5, 6}, {1, 2});
  Tensor r = cat({a, b}, 0);
  EXPECT_EQ(shape(r), (S{3, 2}));
  expect_vals(r, {1, 2, 3, 4, 5, 6});
  Tensor c = make({7, 8, 9, 10, 11, 12}, {2, 3});
  expect_vals(cat({a, c}, -1), {1, 2, 7, 8, 9, 3, 4, 10, 11, 12});
}

TEST(ShapeCat, StridedInputsAndDtypePromotion) {
  Tensor base = make({0, 1, 2, 3, 4, 5, 6, 7, 8}, {3, 3});
  Tensor tr = transpose(narrow(base, 0, 0, 2), 0, 1);  // [[0,3],[1,4],[2,5]]
  Tensor sl = narrow(narrow(base, 0, 1, 2), 1, 1, 2);  // offset view [[4,5],[7,8]]
  Tensor i = make({9, 10, 11}, {3, 1}, kInt);
  Tensor r = cat({tr, i}, 1);
  EXPECT_EQ(r.dtype(), kFloat);
  expect_vals(r, {0, 3, 9, 1, 4, 10, 2, 5, 11});
  Tensor s = cat({sl, make({1, 2}, {1, 2}, kDouble)}, 0);
  EXPECT_EQ(s.dtype(), kDouble);
  expect_vals(s, {4, 5, 7, 8, 1, 2});
  EXPECT_EQ(cat({make({1}, {1}, kInt), make({1}, {1}, kBool)}).dtype(), kInt);
}

TEST(ShapeCat, LegacyEmptyAndZeroSize) {
  Tensor a = make({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor r = cat({make({}, {0}), a, zeros({2, 0})}, 1);
  EXPECT_EQ(shape(r), (S{2, 3}));
  expect_vals(r, {1, 2, 3, 4, 5, 6});
  // All skipped: the dim is not even checked.
  EXPECT_EQ(shape(cat({make({}, {0}), make({}, {0})}, 5)), (S{0}));
  EXPECT_EQ(shape(cat({zeros({0, 3}), zeros({0, 3})}, 0)), (S{0, 3}));
  // The skipped tensor still takes part in dtype promotion.
  EXPECT_EQ(cat({zeros({0}, TensorOptions(kDouble)), a}, 1).dtype(), kDouble);
}

TEST(ShapeCat, Errors) {
  EXPECT_ERROR(cat({}), ErrorKind::Value, "expected a non-empty list of Tensors");
  EXPECT_ERROR(cat({scalar(1)}), ErrorKind::Runtime,
               "zero-dimensional tensor (at position 0) cannot be concatenated");
  EXPECT_ERROR(cat({ones({2, 2}), ones({2, 2, 2})}), ErrorKind::Runtime,
               "Tensors must have same number of dimensions: got 2 and 3");
  EXPECT_ERROR(cat({ones({2, 2}), ones({3, 2})}, 1), ErrorKind::Runtime,
               "Sizes of tensors must match except in dimension 1. Expected size 2 but got size 3 "
               "for tensor number 1 in the list.");
  EXPECT_ERROR(cat({ones({2, 2}), ones({3, 2})}, 2), ErrorKind::Index, "Dimension out of range");
}

TEST(ShapeCat, Gradient) {
  Tensor a = leaf({1, 2, 3, 4}, {2, 2}), b = leaf({5, 6}, {2, 1});
  backward_weighted(cat({a, b}, 1));  // weights [[1,2,3],[4,5,6]]
  expect_vals(a.grad(), {1, 2, 4, 5});
  expect_vals(b.grad(), {3, 6});
  // Mixed dtypes: each input gets the gradient in its own dtype.
  Tensor d = make({1}, {1}, kDouble);
  d.requires_grad_(true);
  Tensor f = leaf({2}, {1});
  sum(cat({d, f}) * 3.0).backward();
  EXPECT_EQ(d.grad().dtype(), kDouble);
  EXPECT_EQ(f.grad().dtype(), kFloat);
  expect_vals(f.grad(), {3});
}

// ------------------------------------------------------------------------ stack / hstack / vstack

TEST(ShapeStack, Values) {
  Tensor a = make({1, 2}), b = make({3, 4});
  Tensor s0 = stack({a, b}), s1 = stack({a, b}, 1), sm = stack({a, b}, -1);
  EXPECT_EQ(shape(s0), (S{2, 2}));
  expect_vals(s0, {1, 2, 3, 4});
  expect_vals(s1, {1, 3, 2, 4});
  expect_vals(sm, {1, 3, 2, 4});
  expect_vals(stack({scalar(1), scalar(2)}), {1, 2});
  EXPECT_EQ(shape(stack({zeros({0}), zeros({0})})), (S{2, 0}));
  expect_vals(hstack({scalar(1), make({2, 3})}), {1, 2, 3});
  expect_vals(hstack({make({1, 2}, {2, 1}), make({3, 4, 5, 6}, {2, 2})}), {1, 3, 4, 2, 5, 6});
  Tensor v = vstack({make({1, 2}), make({3, 4})});
  EXPECT_EQ(shape(v), (S{2, 2}));
  EXPECT_EQ(shape(vstack({scalar(1), make({2})})), (S{2, 1}));
}

TEST(ShapeStack, ErrorsAndGradient) {
  EXPECT_ERROR(stack({}), ErrorKind::Runtime, "stack expects a non-empty TensorList");
  EXPECT_ERROR(
      stack({ones({2}), ones({3})}), ErrorKind::Runtime,
      "stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 1");
  EXPECT_ERROR(stack({ones({2}), ones({2})}, 2), ErrorKind::Index, "Dimension out of range");
  EXPECT_ERROR(hstack({}), ErrorKind::Runtime, "hstack expects a non-empty TensorList");
  Tensor a = leaf({1, 2}), b = leaf({3, 4});
  backward_weighted(stack({a, b}, 1));  // [[a0,b0],[a1,b1]] * [[1,2],[3,4]]
  expect_vals(a.grad(), {1, 3});
  expect_vals(b.grad(), {2, 4});
}

// ---------------------------------------------------------------------- split / chunk / unbind

TEST(ShapeSplit, SplitAndSizes) {
  Tensor x = make({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {5, 2});
  auto p = split(x, 2);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(shape(p[2]), (S{1, 2}));
  expect_vals(p[1], {4, 5, 6, 7});
  EXPECT_TRUE(p[1].storage().get() == x.storage().get());  // views
  auto q = split_with_sizes(x, {1, 4}, 0);
  expect_vals(q[0], {0, 1});
  EXPECT_EQ(shape(q[1]), (S{4, 2}));
  auto c = split(transpose(x, 0, 1), 3, 1);  // columns of a transposed view
  ASSERT_EQ(c.size(), 2u);
  expect_vals(c[1], {6, 8, 7, 9});
  EXPECT_EQ(split(zeros({0}), 0).size(), 1u);
  EXPECT_EQ(split(zeros({0}), 3).size(), 1u);
}

TEST(ShapeSplit, Chunk) {
  auto sizes = [](const std::vector<Tensor>& ts) {
    S s;
    for (const auto& t : ts) s.push_back(t.size(0));
    return s;
  };
  EXPECT_EQ(sizes(chunk(ones({5}), 3)), (S{2, 2, 1}));
  EXPECT_EQ(sizes(chunk(ones({6}), 4)), (S{2, 2, 2}));  // fewer chunks than asked
  EXPECT_EQ(sizes(chunk(ones({0}), 3)), (S{0, 0, 0}));
  expect_vals(chunk(narrow(make({0, 1, 2, 3, 4, 5}), 0, 1, 5), 2)[1], {4, 5});
  auto u = unbind(make({1, 2, 3, 4, 5, 6}, {2, 3}), 1);
  ASSERT_EQ(u.size(), 3u);
  expect_vals(u[2], {3, 6});
  EXPECT_EQ(unbind(zeros({0, 2})).size(), 0u);
}

TEST(ShapeSplit, ErrorsAndGradient) {
  EXPECT_ERROR(split(ones({4}), 0), ErrorKind::Runtime,
               "split_size can only be 0 if dimension size is 0, but got dimension size of 4");
  EXPECT_ERROR(split(ones({4}), -1), ErrorKind::Runtime,
               "split expects split_size be non-negative");
  EXPECT_ERROR(split(scalar(1), 1), ErrorKind::Runtime,
               "split expects at least a 1-dimensional tensor");
  EXPECT_ERROR(split_with_sizes(ones({4}), {1, 2}), ErrorKind::Runtime,
               "split_with_sizes expects split_sizes to sum exactly to 4 (input tensor's size at "
               "dimension 0), but got split_sizes=[1, 2]");
  EXPECT_ERROR(split_with_sizes(ones({4}), {2, -1, 3}), ErrorKind::Runtime, "non-negative entries");
  EXPECT_ERROR(chunk(ones({4}), 0), ErrorKind::Runtime,
               "chunk expects `chunks` to be greater than 0, got: 0");
  EXPECT_ERROR(chunk(scalar(1), 2), ErrorKind::Runtime,
               "chunk expects at least a 1-dimensional tensor");
  EXPECT_ERROR(unbind(scalar(1)), ErrorKind::Index, "tensor has no dimensions");
  EXPECT_ERROR(split(ones({4}), 1, 1), ErrorKind::Index, "Dimension out of range");
  Tensor x = leaf({1, 2, 3, 4, 5});
  auto p = chunk(x, 2);
  sum(p[1] * 2.0).backward();
  expect_vals(x.grad(), {0, 0, 0, 2, 2});
}

// ----------------------------------------------------------------------------- flip / roll

TEST(ShapeFlip, Values) {
  Tensor x = make({0, 1, 2, 3, 4, 5}, {2, 3});
  expect_vals(flip(x, {0}), {3, 4, 5, 0, 1, 2});
  expect_vals(flip(x, {-1}), {2, 1, 0, 5, 4, 3});
  expect_vals(flip(x, {0, 1}), {5, 4, 3, 2, 1, 0});
  expect_vals(flip(transpose(x, 0, 1), {0}), {2, 5, 1, 4, 0, 3});
  expect_vals(flip(narrow(x, 1, 1, 2), {1}), {2, 1, 5, 4});
  Tensor i = flip(make({1, 2, 3}, {-1}, kLong), {0});
  EXPECT_EQ(i.dtype(), kLong);
  expect_vals(i, {3, 2, 1});
  expect_vals(flip(scalar(7), {0}), {7});
  EXPECT_EQ(shape(flip(zeros({0, 2}), {0, 1})), (S{0, 2}));
  Tensor same = flip(x, {});
  EXPECT_FALSE(same.is_same(x));  // always a copy
  expect_vals(same, vals(x));
}

TEST(ShapeFlip, ErrorsAndGradient) {
  EXPECT_ERROR(flip(ones({2, 2}), {0, 0}), ErrorKind::Runtime, "dim 0 appears multiple times");
  EXPECT_ERROR(flip(ones({2, 2}), {2}), ErrorKind::Index, "Dimension out of range");
  Tensor x = leaf({1, 2, 3});
  backward_weighted(flip(x, {0}));
  expect_vals(x.grad(), {3, 2, 1});
}

TEST(ShapeRoll, Values) {
  Tensor x = make({0, 1, 2, 3, 4, 5}, {2, 3});
  expect_vals(roll(x, {1}), {5, 0, 1, 2, 3, 4});
  expect_vals(roll(x, {-1}), {1, 2, 3, 4, 5, 0});
  expect_vals(roll(x, {1}, {1}), {2, 0, 1, 5, 3, 4});
  expect_vals(roll(x, {1, -4}, {0, 1}), {4, 5, 3, 1, 2, 0});
  expect_vals(roll(x, {1, 1}, {1, 1}), {1, 2, 0, 4, 5, 3});  // repeated dims add up
  expect_vals(roll(transpose(x, 0, 1), {1}, {0}), {2, 5, 0, 3, 1, 4});
  expect_vals(roll(narrow(x, 1, 1, 2), {1}, {1}), {2, 1, 5, 4});
  expect_vals(roll(scalar(3), {2}), {3});
  EXPECT_EQ(shape(roll(zeros({0, 3}), {1}, {0})), (S{0, 3}));
  expect_vals(roll(x, {3}, {1}), vals(x));
}

TEST(ShapeRoll, ErrorsAndGradient) {
  EXPECT_ERROR(roll(ones({2, 2}), {1, 2}, {0}), ErrorKind::Runtime,
               "shifts and dimensions must align. shifts: 2, dims:1");
  EXPECT_ERROR(roll(ones({2, 2}), {}, {}), ErrorKind::Runtime, "`shifts` required");
  EXPECT_ERROR(roll(scalar(1), {1}, {0}), ErrorKind::Index, "tensor has no dimensions");
  EXPECT_ERROR(roll(ones({2}), {1}, {1}), ErrorKind::Index, "Dimension out of range");
  Tensor x = leaf({1, 2, 3, 4}, {2, 2});
  backward_weighted(roll(x, {1}, {1}));  // out = [[x1,x0],[x3,x2]]
  expect_vals(x.grad(), {2, 1, 4, 3});
  Tensor y = leaf({1, 2, 3});
  backward_weighted(roll(y, {-1}));  // out = [y1, y2, y0]
  expect_vals(y.grad(), {3, 1, 2});
  Tensor z = leaf({1, 2});
  backward_weighted(roll(z, {2}, {0}));  // a full turn moves nothing
  expect_vals(z.grad(), {1, 2});
}

// ------------------------------------------------------------ repeat / tile / repeat_interleave

TEST(ShapeRepeat, RepeatAndTile) {
  Tensor x = make({1, 2, 3, 4}, {2, 2});
  Tensor r = repeat(x, {2, 1, 2});
  EXPECT_EQ(shape(r), (S{2, 2, 4}));
  expect_vals(r, {1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4});
  expect_vals(repeat(transpose(x, 0, 1), {1, 2}), {1, 3, 1, 3, 2, 4, 2, 4});
  EXPECT_EQ(shape(repeat(scalar(5), {2, 3})), (S{2, 3}));
  expect_vals(repeat(scalar(5), {}), {5});
  EXPECT_EQ(shape(repeat(x, {0, 1})), (S{0, 2}));
  Tensor same = repeat(x, {1, 1});
  EXPECT_FALSE(same.storage().get() == x.storage().get());
  EXPECT_EQ(shape(tile(x, {2})), (S{2, 4}));
  expect_vals(tile(make({1, 2}), {}), {1, 2});
  EXPECT_EQ(shape(tile(make({1, 2}), {3, 1})), (S{3, 2}));
  EXPECT_ERROR(repeat(x, {2}), ErrorKind::Runtime,
               "Number of dimensions of repeat dims can not be smaller than number of dimensions");
  EXPECT_ERROR(repeat(x, {2, -1}), ErrorKind::Runtime,
               "Trying to create tensor with negative dimension -2: [4, -2]");
}

TEST(ShapeRepeat, RepeatGradient) {
  Tensor x = leaf({1, 2});
  backward_weighted(repeat(x, {2, 2}));  // weights [[1,2,3,4],[5,6,7,8]]
  expect_vals(x.grad(), {1 + 3 + 5 + 7, 2 + 4 + 6 + 8});
}

TEST(ShapeRepeat, RepeatInterleave) {
  Tensor x = make({1, 2, 3, 4}, {2, 2}, kLong);
  expect_vals(repeat_interleave(x, 2), {1, 1, 2, 2, 3, 3, 4, 4});
  Tensor r0 = repeat_interleave(x, 2, 0);
  EXPECT_EQ(shape(r0), (S{4, 2}));
  expect_vals(r0, {1, 2, 1, 2, 3, 4, 3, 4});
  Tensor rt = repeat_interleave(x, make({1, 2}, {-1}, kLong), 0);
  expect_vals(rt, {1, 2, 3, 4, 3, 4});
  expect_vals(repeat_interleave(x, make({2}, {-1}, kLong), 1), {1, 1, 2, 2, 3, 3, 4, 4});
  expect_vals(repeat_interleave(transpose(x, 0, 1), make({0, 3}, {-1}, kInt), 1),
              {3, 3, 3, 4, 4, 4});
  expect_vals(repeat_interleave(make({2, 0, 1}, {-1}, kLong)), {0, 0, 2});
  expect_vals(repeat_interleave(scalar(5), 3), {5, 5, 5});
  EXPECT_EQ(shape(repeat_interleave(zeros({0, 2}), 3, 0)), (S{0, 2}));
  EXPECT_ERROR(repeat_interleave(x, -1), ErrorKind::Runtime, "Repeats must be non-negative");
  EXPECT_ERROR(repeat_interleave(make({1, 2, 3}), make({1, 2}, {-1}, kLong)), ErrorKind::Runtime,
               "repeats must have the same size as input along dim, but got repeats.size(0) = 2 "
               "and input.size(0) = 3");
  EXPECT_ERROR(repeat_interleave(make({1, 2, 3}), make({1, -2, 1}, {-1}, kLong)),
               ErrorKind::Runtime, "repeats can not be negative");
  EXPECT_ERROR(repeat_interleave(make({1, 2, 3}), make({1, 2, 1}, {1, 3}, kLong)),
               ErrorKind::Runtime, "repeats must be 0-dim or 1-dim tensor");
  EXPECT_ERROR(repeat_interleave(scalar(2, kLong)), ErrorKind::Runtime,
               "repeat_interleave only accept 1D vector as repeat");
  EXPECT_ERROR(repeat_interleave(scalar(5), 3, 0), ErrorKind::Index, "Dimension out of range");
}

TEST(ShapeRepeat, RepeatInterleaveGradient) {
  Tensor x = leaf({1, 2, 3});
  backward_weighted(repeat_interleave(x, make({2, 0, 1}, {-1}, kLong)));  // [x0, x0, x2]
  expect_vals(x.grad(), {1 + 2, 0, 3});
  Tensor y = leaf({1, 2});
  backward_weighted(repeat_interleave(y, 2));
  expect_vals(y.grad(), {3, 7});
}

// ------------------------------------------------------------------- meshgrid / broadcast_to

TEST(ShapeMeshgrid, IjAndXy) {
  Tensor a = make({1, 2}), b = make({3, 4, 5});
  auto ij = meshgrid({a, b}, "ij");
  EXPECT_EQ(shape(ij[0]), (S{2, 3}));
  expect_vals(ij[0], {1, 1, 1, 2, 2, 2});
  expect_vals(ij[1], {3, 4, 5, 3, 4, 5});
  auto xy = meshgrid({a, b, make({6, 7, 8, 9})}, "xy");
  EXPECT_EQ(shape(xy[0]), (S{3, 2, 4}));
  EXPECT_EQ(shape(xy[2]), (S{3, 2, 4}));
  expect_vals(select(select(xy[0], 2, 0), 0, 0), {1, 2});
  expect_vals(select(select(xy[1], 2, 0), 1, 0), {3, 4, 5});
  auto s = meshgrid({scalar(1), b});
  EXPECT_EQ(shape(s[0]), (S{1, 3}));
  EXPECT_ERROR(meshgrid({}), ErrorKind::Runtime, "meshgrid expects a non-empty TensorList");
  EXPECT_ERROR(meshgrid({a, b}, "foo"), ErrorKind::Runtime,
               "indexing must be one of \"xy\" or \"ij\", but received: foo");
  EXPECT_ERROR(meshgrid({ones({2, 2}), b}), ErrorKind::Runtime, "Expected 0D or 1D tensor");
  EXPECT_ERROR(meshgrid({a, make({1}, {-1}, kInt)}), ErrorKind::Runtime,
               "meshgrid expects all tensors to have the same dtype");
  Tensor g = leaf({1, 2});
  backward_weighted(meshgrid({g, b})[0]);  // weights [[1,2,3],[4,5,6]]
  expect_vals(g.grad(), {6, 15});
}

TEST(ShapeMeshgrid, BroadcastTo) {
  Tensor x = make({1, 2, 3}, {3, 1});
  Tensor b = broadcast_to(x, {2, 3, 2});
  EXPECT_EQ(shape(b), (S{2, 3, 2}));
  expect_vals(b, {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
  EXPECT_EQ(shape(broadcast_to(x, {-1, 4})), (S{3, 4}));
  EXPECT_ERROR(broadcast_to(ones({2, 3}), {3, 3}), ErrorKind::Runtime,
               "The expanded size of the tensor (3) must match the existing size (2)");
}

// ------------------------------------------------------------------------------------ scans

TEST(ShapeScan, CumsumCumprodValues) {
  Tensor x = make({1, 2, 3, 4, 5, 6}, {2, 3});
  expect_vals(cumsum(x, 1), {1, 3, 6, 4, 9, 15});
  expect_vals(cumsum(x, 0), {1, 2, 3, 5, 7, 9});
  expect_vals(cumsum(x, -1), {1, 3, 6, 4, 9, 15});
  expect_vals(cumprod(x, 1), {1, 2, 6, 4, 20, 120});
  expect_vals(cumsum(transpose(x, 0, 1), 1), {1, 5, 2, 7, 3, 9});
  expect_vals(cumsum(narrow(x, 1, 1, 2), 1), {2, 5, 5, 11});
  expect_vals(cumsum(scalar(2), 0), {2});
  EXPECT_EQ(shape(cumsum(zeros({0, 3}), 1)), (S{0, 3}));
  // Ints and bools accumulate to int64; dtype picks the result.
  Tensor b = cumsum(make({1, 1, 0, 1}, {-1}, kBool), 0);
  EXPECT_EQ(b.dtype(), kLong);
  expect_vals(b, {1, 2, 2, 3});
  EXPECT_EQ(cumprod(make({1, 2}, {-1}, kByte), 0).dtype(), kLong);
  Tensor s = cumsum(make({100, 100}, {-1}, kChar), 0, kChar);
  EXPECT_EQ(s.dtype(), kChar);
  expect_vals(s, {100, -56});
  Tensor f = cumsum(make({1.5, 2.5}), 0, kLong);
  expect_vals(f, {1, 3});
  // float32 accumulates in double on CPU, as PyTorch: the 1 survives.
  expect_vals(cumsum(make({1e8, 1, -1e8}), 0), {1e8, 1e8, 1});
  EXPECT_ERROR(cumsum(x, 2), ErrorKind::Index, "Dimension out of range");
}

TEST(ShapeScan, CumsumLongRowsAndInnerBlocks) {
  // More inner positions than one block and more rows than one chunk.
  Tensor x = ones({3, 200, 70});
  Tensor c = cumsum(x, 1);
  expect_vals(select(select(c, 2, 69), 0, 2), vals(arange(1, 201, 1, TensorOptions(kFloat))));
  Tensor y = ones({100000});
  EXPECT_DOUBLE_EQ(vals(cumsum(y, 0)).back(), 100000);
}

TEST(ShapeScan, CumsumGradient) {
  Tensor x = leaf({1, 2, 3});
  backward_weighted(cumsum(x, 0));  // grad_i = sum_{j >= i} w_j
  expect_vals(x.grad(), {6, 5, 3});
  Tensor y = leaf({1, 2, 3, 4}, {2, 2});
  backward_weighted(cumsum(y, 0));  // w = [[1,2],[3,4]]
  expect_vals(y.grad(), {4, 6, 3, 4});
  Tensor z = leaf({5});
  Tensor z0 = reshape(z, {});
  sum(cumsum(z0, 0) * 3.0).backward();
  expect_vals(z.grad(), {3});
}

TEST(ShapeScan, CumprodGradientWithZeros) {
  Tensor x = leaf({2, 3, 4});
  backward_weighted(cumprod(x, 0));  // out = [2, 6, 24]
  // grad_0 = 1*1 + 2*3 + 3*12 = 43; grad_1 = 2*2 + 3*8 = 28; grad_2 = 3*6 = 18.
  expect_vals(x.grad(), {43, 28, 18});
  Tensor y = leaf({2, 0, 3, 0, 5});
  backward_weighted(cumprod(y, 0));
  expect_vals(y.grad(), {1, 22, 0, 0, 0});
  Tensor z = leaf({2, 3, 0, 5});
  backward_weighted(cumprod(z, 0));
  expect_vals(z.grad(), {7, 4, 138, 0});
  Tensor w = leaf({0, 2, 1, 3}, {2, 2});
  backward_weighted(cumprod(w, 1));  // rows [0,2] -> [0,0]; [1,3] -> [1,3]
  expect_vals(w.grad(), {1 + 2 * 2, 0, 3 + 4 * 3, 4});
}

TEST(ShapeScan, CummaxCummin) {
  auto [v, i] = cummax(make({1, kNaN, 3, kNaN, 0}), 0);
  expect_vals(v, {1, kNaN, kNaN, kNaN, kNaN});
  expect_vals(i, {0, 1, 1, 3, 3});
  auto [v2, i2] = cummin(make({1, 1, 0, 0, 2}, {-1}, kLong), 0);
  EXPECT_EQ(v2.dtype(), kLong);
  expect_vals(v2, {1, 1, 0, 0, 0});
  expect_vals(i2, {0, 1, 2, 3, 3});
  auto [v3, i3] =
      cummax(transpose(make({3, 1, 2, 5, 0, 4}, {2, 3}), 0, 1), 0);  // [[3,5],[1,0],[2,4]]
  expect_vals(v3, {3, 5, 3, 5, 3, 5});
  expect_vals(i3, {0, 0, 0, 0, 0, 0});
  auto [v4, i4] = cummax(make({1, 0}, {-1}, kBool), 0);
  expect_vals(v4, {1, 1});
  expect_vals(i4, {0, 0});
  auto [v5, i5] = cummax(scalar(3), 0);
  EXPECT_EQ(shape(v5), S{});
  expect_vals(i5, {0});
  EXPECT_EQ(shape(std::get<0>(cummin(zeros({0}), 0))), (S{0}));
  Tensor x = leaf({1, 3, 2, 5});
  backward_weighted(std::get<0>(cummax(x, 0)));  // indices [0, 1, 1, 3]
  expect_vals(x.grad(), {1, 5, 0, 4});
}

// ---------------------------------------------------------------------------------- sorting

TEST(ShapeSort, ValuesIndicesAndNaN) {
  auto [v, i] = sort(make({3, kNaN, 1, kNaN, -1}));
  expect_vals(v, {-1, 1, 3, kNaN, kNaN});
  expect_vals(i, {4, 2, 0, 1, 3});
  auto [vd, id] = sort(make({3, kNaN, 1, kNaN, -1}), -1, /*descending=*/true);
  expect_vals(vd, {kNaN, kNaN, 3, 1, -1});
  expect_vals(id, {1, 3, 0, 2, 4});
  // Stable: equal keys keep their order, ascending and descending.
  auto [vs, is] = sort(make({2, 1, 2, 1}, {-1}, kLong), 0, false, true);
  expect_vals(is, {1, 3, 0, 2});
  auto [vt, it] = sort(make({2, 1, 2, 1}, {-1}, kLong), 0, true, true);
  expect_vals(it, {0, 2, 1, 3});
  auto [vb, ib] = sort(make({1, 0, 1}, {-1}, kBool));
  expect_vals(vb, {0, 1, 1});
  expect_vals(ib, {1, 0, 2});
  auto [vh, ih] = sort(make({0.5, -2, 1}, {-1}, kHalf));
  EXPECT_EQ(vh.dtype(), kHalf);
  expect_vals(vh, {-2, 0.5, 1});
}

TEST(ShapeSort, LayoutsAndEdgeShapes) {
  Tensor x = make({3, 1, 2, 0, 5, 4}, {2, 3});
  expect_vals(std::get<0>(sort(x, 0)), {0, 1, 2, 3, 5, 4});
  expect_vals(std::get<1>(sort(x, 0)), {1, 0, 0, 0, 1, 1});
  expect_vals(std::get<0>(sort(transpose(x, 0, 1), 1)), {0, 3, 1, 5, 2, 4});
  expect_vals(std::get<0>(sort(narrow(x, 1, 1, 2), 1, true)), {2, 1, 5, 4});
  auto [v0, i0] = sort(scalar(3));
  EXPECT_EQ(shape(v0), S{});
  expect_vals(i0, {0});
  EXPECT_EQ(shape(std::get<0>(sort(zeros({2, 0})))), (S{2, 0}));
  expect_vals(argsort(make({3, 1, 2}, {-1}, kLong), -1, true), {0, 2, 1});
  EXPECT_ERROR(sort(scalar(3), 1), ErrorKind::Index, "Dimension out of range");
}

TEST(ShapeSort, ManyRowsInParallel) {
  Tensor x =
      reshape(remainder(arange(0, 60000, 1, TensorOptions(kFloat)) * 7919.0, wrap_scalar(1009.0)),
              {300, 200});
  auto [v, i] = sort(x, 1, true);
  D sorted = vals(v);
  for (size_t r = 0; r < 300; ++r)
    for (size_t c = 1; c < 200; ++c) ASSERT_GE(sorted[r * 200 + c - 1], sorted[r * 200 + c]);
  expect_vals(_take_along_dim(x, 1, i), sorted);
  auto [tv, ti] = topk(transpose(x, 0, 1), 3, 0);
  expect_vals(tv, vals(transpose(narrow(v, 1, 0, 3), 0, 1)));
}

TEST(ShapeSort, Gradient) {
  Tensor x = leaf({3, 1, 2, 6, 4, 5}, {2, 3});
  backward_weighted(std::get<0>(sort(x, 1)));  // both rows take positions [1, 2, 0]
  expect_vals(x.grad(), {3, 1, 2, 6, 4, 5});
  Tensor y = leaf({1, 3, 2});
  backward_weighted(std::get<0>(sort(y, 0, true)));  // [3,2,1] from [1,2,0]
  expect_vals(y.grad(), {3, 1, 2});
}

TEST(ShapeTopk, ValuesAndGradient) {
  auto [v, i] = topk(make({1, 3, 3, 2}), 2);
  expect_vals(v, {3, 3});
  expect_vals(i, {1, 2});
  auto [vs, is] = topk(make({1, kNaN, 3}), 2, -1, /*largest=*/false);
  expect_vals(vs, {1, 3});
  expect_vals(is, {0, 2});
  auto [vn, in] = topk(make({1, kNaN, 3}), 2);
  expect_vals(vn, {kNaN, 3});
  expect_vals(in, {1, 2});
  Tensor x = make({3, 1, 2, 0, 5, 4}, {2, 3});
  auto [v0, i0] = topk(x, 1, 0);
  EXPECT_EQ(shape(v0), (S{1, 3}));
  expect_vals(v0, {3, 5, 4});
  expect_vals(i0, {0, 1, 1});
  expect_vals(std::get<0>(topk(transpose(x, 0, 1), 2, 0, true)), {3, 5, 2, 4});
  auto [vu, iu] = topk(make({5, 1, 4, 2}, {-1}, kInt), 2, 0, true, /*sorted=*/false);
  D got = vals(vu);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (D{4, 5}));
  expect_vals(std::get<0>(topk(scalar(2), 1)), {2});
  expect_vals(std::get<0>(topk(scalar(2), 0)), {2});  // a 0-d input yields itself
  EXPECT_EQ(shape(std::get<0>(topk(zeros({2, 0}), 0))), (S{2, 0}));
  EXPECT_EQ(shape(std::get<0>(topk(zeros({2, 3}), 0))), (S{2, 0}));
  EXPECT_ERROR(topk(ones({3}), 4), ErrorKind::Runtime, "selected index k out of range");
  EXPECT_ERROR(topk(ones({3}), -1), ErrorKind::Runtime, "selected index k out of range");
  EXPECT_ERROR(topk(make({1, 0}, {-1}, kBool), 1), ErrorKind::Runtime,
               "topk does not support bool");
  Tensor g = leaf({1, 5, 3, 4});
  backward_weighted(std::get<0>(topk(g, 2)));  // [5, 4] at [1, 3]
  expect_vals(g.grad(), {0, 1, 0, 2});
}

TEST(ShapeKthvalue, ValuesAndGradient) {
  Tensor x = make({3, 1, 2, 0, 5, 4}, {2, 3});
  auto [v, i] = kthvalue(x, 2, 1, true);
  EXPECT_EQ(shape(v), (S{2, 1}));
  expect_vals(v, {2, 4});
  expect_vals(i, {2, 2});
  auto [v0, i0] = kthvalue(x, 1, 0);
  EXPECT_EQ(shape(v0), (S{3}));
  expect_vals(v0, {0, 1, 2});
  expect_vals(i0, {1, 0, 0});
  expect_vals(std::get<0>(kthvalue(transpose(x, 0, 1), 2, 1)), {3, 5, 4});
  auto [vn, in] = kthvalue(make({1, kNaN, 3}), 3);
  expect_vals(vn, {kNaN});
  expect_vals(in, {1});
  expect_vals(std::get<0>(kthvalue(scalar(2), 1)), {2});
  EXPECT_ERROR(kthvalue(ones({3}), 4), ErrorKind::Runtime,
               "kthvalue(): selected number k out of range for dimension 0");
  EXPECT_ERROR(kthvalue(ones({3}), 0), ErrorKind::Runtime, "selected number k out of range");
  Tensor g = leaf({3, 1, 2, 0, 5, 4}, {2, 3});
  sum(std::get<0>(kthvalue(g, 2, 1)) * make({10, 20})).backward();
  expect_vals(g.grad(), {0, 0, 10, 0, 0, 20});
}

TEST(ShapeMedian, AllElements) {
  expect_vals(median(make({4, 1, 3, 2})), {2});
  expect_vals(median(make({4, 1, 3})), {3});
  expect_vals(median(make({1, kNaN, 3, kNaN})), {kNaN});
  expect_vals(median(transpose(make({5, 1, 2, 9, 7, 3}, {2, 3}), 0, 1)), {3});
  expect_vals(median(scalar(4)), {4});
  expect_vals(median(zeros({0})), {kNaN});
  EXPECT_EQ(median(make({}, {0}, kInt)).item<int64_t>(), std::numeric_limits<int32_t>::lowest());
  Tensor x = leaf({1, 3, 3, 2, 3});
  median(x).backward();  // ties share the gradient evenly
  expect_close(x.grad(), {0, 1.0 / 3, 1.0 / 3, 0, 1.0 / 3});
  Tensor y = leaf({1, kNaN, 3, kNaN, 3});
  median(y).backward();
  expect_vals(y.grad(), {0, 0.5, 0, 0.5, 0});
}

TEST(ShapeMedian, AlongDim) {
  Tensor x = make({3, 1, 2, 0, 5, 4, 6, 7}, {2, 4});
  auto [v, i] = median(x, 1);
  expect_vals(v, {1, 5});  // lower medians
  expect_vals(i, {1, 0});
  auto [vn, in] = median(make({1, kNaN, 3, kNaN}), 0);
  expect_vals(vn, {kNaN});
  expect_vals(in, {1});  // the first NaN
  auto [vk, ik] = median(transpose(x, 0, 1), 0, true);
  EXPECT_EQ(shape(vk), (S{1, 2}));
  expect_vals(vk, {1, 5});
  auto [v0, i0] = median(scalar(2), 0);
  expect_vals(v0, {2});
  expect_vals(i0, {0});
  EXPECT_EQ(shape(std::get<0>(median(zeros({2, 0}), 0))), (S{0}));
  EXPECT_ERROR(median(zeros({2, 0}), 1), ErrorKind::Index,
               "median(): Expected reduction dim 1 to have non-zero size.");
  EXPECT_ERROR(median(make({1, 0}, {-1}, kBool), 0), ErrorKind::Runtime, "median_cpu");
  Tensor g = leaf({3, 1, 2, 0, 5, 4}, {2, 3});
  backward_weighted(std::get<0>(median(g, 1)));
  expect_vals(g.grad(), {0, 0, 1, 0, 0, 2});
}

TEST(ShapeMode, ValuesAndGradient) {
  auto [v, i] = mode(make({1, 2, 2, 1, 3}, {-1}, kLong), 0);
  expect_vals(v, {1});  // ties go to the smallest value
  expect_vals(i, {3});  // at its last position
  auto [vk, ik] = mode(make({1, 2, 2, 3, 3, 1}, {2, 3}, kLong), 1, true);
  EXPECT_EQ(shape(vk), (S{2, 1}));
  expect_vals(vk, {2, 3});
  expect_vals(ik, {2, 1});
  auto [vn, in] = mode(make({1, kNaN, kNaN}), 0);
  expect_vals(vn, {1});
  expect_vals(in, {0});
  auto [vb, ib] = mode(make({1, 0, 1}, {-1}, kBool));
  expect_vals(vb, {1});
  expect_vals(ib, {2});
  expect_vals(std::get<0>(mode(transpose(make({1, 2, 1, 2}, {2, 2}), 0, 1), 1)), {1, 2});
  expect_vals(std::get<0>(mode(scalar(3))), {3});
  EXPECT_ERROR(mode(zeros({0}), 0), ErrorKind::Index,
               "mode(): Expected reduction dim 0 to have non-zero size.");
  Tensor g = leaf({4, 7, 4});
  sum(std::get<0>(mode(g)) * 5.0).backward();
  expect_vals(g.grad(), {0, 0, 5});
}

// -------------------------------------------------------------------------------- counting

TEST(ShapeUnique, Flat) {
  auto [v, inv, cnt] = unique(make({3, 1, 2, 1}, {-1}, kLong), true, true, true);
  expect_vals(v, {1, 2, 3});
  expect_vals(inv, {2, 0, 1, 0});
  expect_vals(cnt, {2, 1, 1});
  auto [v2, inv2, cnt2] = unique(make({3, 1, 2, 1}, {2, 2}, kLong), true, true, false);
  EXPECT_EQ(shape(inv2), (S{2, 2}));
  expect_vals(inv2, {2, 0, 1, 0});
  EXPECT_FALSE(cnt2.defined());
  auto [vn, in, cn] = unique(make({1, kNaN, kNaN}), true, false, true);
  expect_vals(vn, {1, kNaN, kNaN});
  expect_vals(cn, {1, 1, 1});
  EXPECT_FALSE(in.defined());
  auto [vs, is, cs] = unique(scalar(3), true, true, true);
  EXPECT_EQ(shape(vs), (S{1}));
  EXPECT_EQ(shape(is), S{});
  expect_vals(cs, {1});
  expect_vals(std::get<0>(unique(transpose(make({2, 1, 2, 3}, {2, 2}), 0, 1))), {1, 2, 3});
  expect_vals(std::get<2>(unique(make({1, 0, 1}, {-1}, kBool), true, false, true)), {1, 2});
  EXPECT_EQ(shape(std::get<0>(unique(zeros({0})))), (S{0}));
}

TEST(ShapeUnique, AlongDim) {
  Tensor x = make({1, 2, 1, 2, 0, 5}, {3, 2}, kLong);
  auto [v, inv, cnt] = unique(x, true, true, true, 0);
  EXPECT_EQ(shape(v), (S{2, 2}));
  expect_vals(v, {0, 5, 1, 2});
  expect_vals(inv, {1, 1, 0});
  expect_vals(cnt, {1, 2});
  auto [vc, ic, cc] = unique(transpose(x, 0, 1), true, true, true, 1);  // columns [1,2],[1,2],[0,5]
  EXPECT_EQ(shape(vc), (S{2, 2}));
  expect_vals(vc, {0, 1, 5, 2});
  expect_vals(ic, {1, 1, 0});
  EXPECT_EQ(shape(std::get<0>(unique(zeros({0, 2}), true, true, true, 0))), (S{0, 2}));
  EXPECT_ERROR(unique(zeros({0, 2}), true, false, false, 1), ErrorKind::Runtime,
               "There are 0 sized dimensions, and they aren't selected");
  EXPECT_ERROR(unique(scalar(3), true, false, false, 0), ErrorKind::Index,
               "tensor has no dimensions");
}

TEST(ShapeBincount, Values) {
  Tensor x = make({0, 1, 1, 4}, {-1}, kLong);
  Tensor c = bincount(x);
  EXPECT_EQ(c.dtype(), kLong);
  expect_vals(c, {1, 2, 0, 0, 1});
  expect_vals(bincount(x, std::nullopt, 7), {1, 2, 0, 0, 1, 0, 0});
  Tensor wf = bincount(make({0, 1, 1}, {-1}, kInt), make({0.5, 0.5, 1.0}));
  EXPECT_EQ(wf.dtype(), kFloat);
  expect_vals(wf, {0.5, 1.5});
  Tensor wi = bincount(make({0, 1, 1}, {-1}, kLong), make({1, 2, 3}, {-1}, kLong));
  EXPECT_EQ(wi.dtype(), kDouble);
  expect_vals(wi, {1, 5});
  expect_vals(bincount(narrow(make({9, 2, 2, 0}, {-1}, kLong), 0, 1, 3)), {1, 0, 2});
  expect_vals(bincount(make({}, {0}, kLong), std::nullopt, 3), {0, 0, 0});
  EXPECT_EQ(shape(bincount(make({}, {0}, kLong))), (S{0}));
  EXPECT_ERROR(bincount(make({0, -1}, {-1}, kLong)), ErrorKind::Runtime,
               "bincount only supports 1-d non-negative integral inputs.");
  EXPECT_ERROR(bincount(make({0}, {1, 1}, kLong)), ErrorKind::Runtime, "1-d non-negative");
  EXPECT_ERROR(bincount(make({0})), ErrorKind::Runtime, "bincount_cpu");
  EXPECT_ERROR(bincount(x, std::nullopt, -1), ErrorKind::Runtime, "minlength should be >= 0");
  EXPECT_ERROR(bincount(x, make({1})), ErrorKind::Runtime,
               "weights should be 1-d and have the same length as input");
}

TEST(ShapeHistc, Values) {
  expect_vals(histc(make({1, 2, 1}), 4, 0, 3), {0, 2, 1, 0});
  expect_vals(histc(make({0, 1, 2, 3, 4}), 4, 0, 4), {1, 1, 1, 2});  // max lands in the last bin
  expect_vals(histc(make({1, 1}), 4), {0, 0, 2, 0});                 // range [0, 2]
  expect_vals(histc(make({-5, 0.5, 9, kNaN}), 2, 0, 1), {0, 1});     // outside and NaN ignored
  Tensor d = histc(make({1, 2, 3, 4}, {2, 2}, kDouble), 3);          // data range [1, 4]
  EXPECT_EQ(d.dtype(), kDouble);
  expect_vals(d, {1, 1, 2});
  expect_vals(histc(transpose(make({0, 3, 1, 2}, {2, 2}), 0, 1), 2, 0, 4), {2, 2});
  expect_vals(histc(zeros({0}), 4), {0, 0, 0, 0});
  Tensor big = histc(arange(0, 200000, 1, TensorOptions(kFloat)), 4, 0, 200000);
  expect_vals(big, {50000, 50000, 50000, 50000});
  EXPECT_ERROR(histc(make({1}), 0), ErrorKind::Runtime, "bins must be > 0");
  EXPECT_ERROR(histc(make({1}), 3, 3, 1), ErrorKind::Runtime,
               "torch.histc: max must be larger than min");
  EXPECT_ERROR(histc(make({1, INFINITY}), 4), ErrorKind::Runtime, "is not finite");
  EXPECT_ERROR(histc(make({1, kNaN}), 4), ErrorKind::Runtime, "is not finite");
  EXPECT_ERROR(histc(make({1, 2}, {-1}, kLong), 4), ErrorKind::Runtime, "histogram_cpu");
}

// --------------------------------------------------------------------- take/place internals

TEST(ShapeInternal, TakePlaceAreAdjoint) {
  Tensor x = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor idx = make({2, 2, 0, 1}, {2, 2}, kLong);
  Tensor t = _take_along_dim(x, 1, idx);
  expect_vals(t, {3, 3, 4, 5});
  backward_weighted(t);
  expect_vals(x.grad(), {0, 0, 3, 3, 4, 0});
  Tensor p = _place_along_dim(make({1, 2, 3, 4}, {2, 2}), 1, idx, 3);
  expect_vals(p, {0, 0, 3, 3, 4, 0});
  // The gradient of a placement is the take at the same indices.
  Tensor gy = leaf({1, 2, 3});
  backward_weighted(_place_along_dim(gy, 0, make({1, 2, 0}, {-1}, kLong), 3));
  expect_vals(gy.grad(), {2, 3, 1});
  EXPECT_ERROR(_take_along_dim(make({1, 2}), 0, make({2}, {-1}, kLong)), ErrorKind::Index,
               "out of bounds");
}

TEST(ShapeInternal, DoubleBackward) {
  // cumprod of [x0, x1]: sum(out) = x0 + x0 x1, so the gradient is [1 + x1, x0] and the
  // gradient of its sum is [1, 1].
  Tensor x = leaf({2, 3});
  auto g = autograd::grad({sum(cumprod(x, 0))}, {x}, {}, std::nullopt, true, false);
  expect_vals(g[0], {4, 2});
  auto gg = autograd::grad({sum(g[0])}, {x}, {}, std::nullopt, false, false);
  expect_close(gg[0], {1, 1});
  // Through a sort: grad of sum(sort(x)^2 * w) is 2 x w[rank]; its own gradient is 2 w[rank].
  Tensor y = leaf({3, 1, 2});
  Tensor v = std::get<0>(sort(y));
  auto gy = autograd::grad({sum(v * v * make({1, 2, 3}))}, {y}, {}, std::nullopt, true, false);
  expect_vals(gy[0], {18, 2, 8});
  auto ggy = autograd::grad({sum(gy[0])}, {y}, {}, std::nullopt, false, false);
  expect_vals(ggy[0], {6, 2, 4});
}
