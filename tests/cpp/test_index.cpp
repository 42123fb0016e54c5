// Indexing: gather/scatter family, index_select/index_add, masks, take, nonzero, advanced
// indexing, getitem/setitem. Expected values are computed by hand (or by numpy's rules).
#include <gtest/gtest.h>

#include "ember/ember.h"

using namespace ember;
using V = std::vector<double>;
using S = std::vector<int64_t>;

namespace {

// A contiguous tensor of `shape` holding `vals` (row-major), converted to `dt`.
Tensor make(const V& vals, IntArrayRef shape, ScalarType dt = kFloat) {
  V copy = vals;
  Tensor t = from_blob(copy.data(), shape, contiguous_strides(shape), kDouble);
  return to_dtype(t, dt, /*copy=*/true);
}
Tensor make(const V& vals) { return make(vals, {int64_t(vals.size())}); }
Tensor idx(const S& vals, IntArrayRef shape) {
  V d(vals.begin(), vals.end());
  return make(d, shape, kLong);
}
Tensor idx(const S& vals) { return idx(vals, {int64_t(vals.size())}); }
Tensor mask(const std::vector<int>& vals, IntArrayRef shape) {
  V d(vals.begin(), vals.end());
  return make(d, shape, kBool);
}
// 0..n-1 as float in `shape`.
Tensor iota(IntArrayRef shape, ScalarType dt = kFloat) {
  return reshape(arange(0, numel_of(shape), 1, TensorOptions(dt)), shape);
}
V values(const Tensor& t) {
  Tensor c = contiguous(to_dtype(t.detach(), kDouble));
  const double* p = c.data_ptr<double>();
  return V(p, p + c.numel());
}
S shape(const Tensor& t) { return t.sizes().vec(); }
Tensor leaf(const Tensor& t) {
  Tensor l = t.detach();
  l.requires_grad_(true);
  return l;
}

// Runs f and returns the kind of ember::Error it threw (fails if it threw none).
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

}  // namespace

// ---- index_select -------------------------------------------------------------------------------

TEST(IndexSelect, AlongEachDim) {
  Tensor t = iota({3, 4});
  EXPECT_EQ(values(index_select(t, 0, idx({2, 0, 2}))),
            (V{8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(values(index_select(t, 1, idx({3, 1}))), (V{3, 1, 7, 5, 11, 9}));
  EXPECT_EQ(shape(index_select(t, -1, idx({0}))), (S{3, 1}));
  // int32 index; 0-d index keeps the dim with size 1
  EXPECT_EQ(values(index_select(t, 0, to_dtype(idx({1}), kInt))), (V{4, 5, 6, 7}));
  EXPECT_EQ(shape(index_select(t, 0, idx({1}, {}))), (S{1, 4}));
}

TEST(IndexSelect, StridedInputsAndDtypes) {
  Tensor t = iota({3, 4});
  // transposed: rows of t.T are columns of t
  EXPECT_EQ(values(index_select(transpose(t, 0, 1), 0, idx({2, 0}))), (V{2, 6, 10, 0, 4, 8}));
  // sliced with an offset and a step
  Tensor s = slice(t, 1, 1, 4, 2);  // columns 1 and 3
  EXPECT_EQ(values(index_select(s, 1, idx({1, 1, 0}))), (V{3, 3, 1, 7, 7, 5, 11, 11, 9}));
  for (ScalarType dt :
       {kBool, kByte, kChar, kShort, kInt, kLong, kHalf, kBFloat16, kFloat, kDouble}) {
    Tensor u = to_dtype(make({0, 1, 2, 3}), dt);
    Tensor r = index_select(u, 0, idx({3, 0}));
    EXPECT_EQ(r.dtype(), dt);
    EXPECT_EQ(values(r), (V{dt == kBool ? 1.0 : 3.0, 0}));
  }
}

TEST(IndexSelect, ZeroSizeAndZeroDim) {
  EXPECT_EQ(shape(index_select(iota({3, 4}), 0, idx({}))), (S{0, 4}));
  EXPECT_EQ(shape(index_select(iota({3, 0}), 0, idx({1, 2}))), (S{2, 0}));
  Tensor z = make({5}, {});
  Tensor r = index_select(z, 0, idx({0}));
  EXPECT_EQ(shape(r), S{});
  EXPECT_EQ(values(r), V{5});
}

TEST(IndexSelect, Errors) {
  Tensor t = iota({3, 4});
  std::string msg;
  EXPECT_EQ(error_kind([&] { index_select(t, 0, idx({3})); }, &msg), ErrorKind::Index);
  EXPECT_NE(msg.find("index out of range in self"), std::string::npos);  // torch's wording
  EXPECT_EQ(error_kind([&] { index_select(t, 1, idx({4})); }, &msg), ErrorKind::Runtime);
  EXPECT_NE(msg.find("INDICES element is out of DATA bounds, id=4 axis_dim=4"), std::string::npos);
  EXPECT_EQ(error_kind([&] { index_select(t, 0, idx({-1})); }), ErrorKind::Index);
  EXPECT_EQ(error_kind([&] { index_select(t, 0, make({0})); }), ErrorKind::Runtime);
  EXPECT_EQ(error_kind([&] { index_select(t, 0, idx({0, 1}, {1, 2})); }), ErrorKind::Index);
  EXPECT_EQ(error_kind([&] { index_select(t, 2, idx({0})); }), ErrorKind::Index);
}

TEST(IndexSelect, Backward) {
  Tensor x = leaf(iota({3, 2}));
  Tensor y = index_select(x, 0, idx({2, 0, 2}));
  EXPECT_EQ(y.grad_fn()->name(), "IndexSelectBackward0");
  sum(y * make({1, 2, 3, 4, 5, 6}, {3, 2})).backward();
  EXPECT_EQ(values(x.grad()), (V{3, 4, 0, 0, 6, 8}));
}

// ---- gather / scatter ---------------------------------------------------------------------------

TEST(IndexGather, Values) {
  Tensor t = make({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(values(gather(t, 1, idx({2, 0, 1, 1}, {2, 2}))), (V{3, 1, 5, 5}));
  EXPECT_EQ(values(gather(t, 0, idx({1, 0, 1}, {1, 3}))), (V{4, 2, 6}));
  EXPECT_EQ(values(gather(t, 1, idx({0}, {1, 1}))), V{1});  // index smaller than self
  // transposed self: t.T is [[1,4],[2,5],[3,6]]
  EXPECT_EQ(values(gather(transpose(t, 0, 1), 1, idx({1, 0, 1}, {3, 1}))), (V{4, 2, 6}));
  // sliced self with an offset
  EXPECT_EQ(values(gather(slice(t, 1, 1, 3, 1), 1, idx({1, 0}, {2, 1}))), (V{3, 5}));
  EXPECT_EQ(shape(gather(t, 1, idx({}, {2, 0}))), (S{2, 0}));
  EXPECT_EQ(values(gather(make({7}, {}), 0, idx({0}, {}))), V{7});
}

TEST(IndexGather, ErrorsAndBackward) {
  Tensor t = make({1, 2, 3, 4, 5, 6}, {2, 3});
  std::string msg;
  EXPECT_EQ(error_kind([&] { gather(t, 1, idx({3}, {1, 1})); }, &msg), ErrorKind::Runtime);
  EXPECT_NE(msg.find("index 3 is out of bounds for dimension 1 with size 3"), std::string::npos);
  EXPECT_EQ(error_kind([&] { gather(t, 1, idx({-1}, {1, 1})); }), ErrorKind::Runtime);
  EXPECT_EQ(error_kind([&] {
              gather(t, 1, idx({0, 0, 0, 0, 0, 0}, {3, 2}));
            }),
            ErrorKind::Runtime);  // larger than self off dim
  EXPECT_EQ(error_kind([&] { gather(t, 1, idx({0})); }), ErrorKind::Runtime);  // ndim differs

  Tensor x = leaf(t);
  Tensor y = gather(x, 1, idx({2, 2, 0, 1}, {2, 2}));
  EXPECT_EQ(y.grad_fn()->name(), "GatherBackward0");
  sum(y * make({1, 2, 3, 4}, {2, 2})).backward();
  EXPECT_EQ(values(x.grad()), (V{0, 0, 3, 3, 4, 0}));
}

TEST(IndexScatter, SrcAndValue) {
  Tensor src = make({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor i = idx({0, 1, 2, 2, 0, 1}, {2, 3});
  EXPECT_EQ(values(scatter(zeros({3, 3}), 0, i, src)), (V{1, 5, 0, 0, 2, 6, 4, 0, 3}));
  // only the index's extent of src is used
  EXPECT_EQ(values(scatter(zeros({2, 4}), 1, idx({3, 0}, {2, 1}), src)),
            (V{0, 0, 0, 1, 4, 0, 0, 0}));
  EXPECT_EQ(values(scatter(zeros({2, 3}), 1, idx({1, 2}, {2, 1}), Scalar(9.0))),
            (V{0, 9, 0, 0, 0, 9}));
  Tensor z = zeros({2, 3});
  EXPECT_TRUE(scatter_(z, 1, idx({0, 0}, {2, 1}), Scalar(1.0)).is_same(z));
  EXPECT_EQ(values(z), (V{1, 0, 0, 1, 0, 0}));
  // repeated indices: the last write wins
  EXPECT_EQ(values(scatter(zeros({2}), 0, idx({1, 1, 1}), make({1, 2, 3}))), (V{0, 3}));
}

TEST(IndexScatter, InPlaceOnStridedSelf) {
  Tensor base = zeros({3, 3});
  Tensor t = transpose(base, 0, 1);
  scatter_(t, 1, idx({2, 0, 1}, {3, 1}), make({1, 2, 3}, {3, 1}));
  // t[0][2] = 1, t[1][0] = 2, t[2][1] = 3  ->  base[2][0] = 1, base[0][1] = 2, base[1][2] = 3
  EXPECT_EQ(values(base), (V{0, 2, 0, 0, 0, 3, 1, 0, 0}));
  Tensor big = zeros({2, 5});
  Tensor s = slice(big, 1, 1, 5, 2);  // columns 1 and 3
  scatter_(s, 1, idx({1, 0}, {2, 1}), Scalar(7));
  EXPECT_EQ(values(big), (V{0, 0, 0, 7, 0, 0, 7, 0, 0, 0}));
  // 0-d
  Tensor z = make({1}, {});
  scatter_(z, 0, idx({0}, {}), make({4}, {}));
  EXPECT_EQ(values(z), V{4});
}

TEST(IndexScatter, ReduceArgument) {
  Tensor i = idx({0, 0}, {1, 2});
  EXPECT_EQ(values(scatter(ones({1, 3}), 1, i, make({2, 2}, {1, 2}), "add")), (V{5, 1, 1}));
  EXPECT_EQ(values(scatter(ones({1, 3}), 1, i, make({2, 2}, {1, 2}), "multiply")), (V{4, 1, 1}));
  EXPECT_EQ(values(scatter(ones({1, 3}), 1, i, Scalar(2.0), "add")), (V{5, 1, 1}));
  EXPECT_EQ(values(scatter(ones({1, 3}), 1, i, Scalar(2.0), "multiply")), (V{4, 1, 1}));
  EXPECT_EQ(error_kind([&] {
              scatter(ones({1, 3}), 1, i, Scalar(2.0), "max");
            }),
            ErrorKind::Runtime);
}

TEST(IndexScatter, Errors) {
  Tensor z = zeros({2, 3});
  std::string msg;
  EXPECT_EQ(error_kind(
                [&] {
                  scatter(z, 1, idx({3}, {1, 1}), Scalar(1.0));
                },
                &msg),
            ErrorKind::Runtime);
  EXPECT_NE(msg.find("index 3 is out of bounds for dimension 1 with size 3"), std::string::npos);
  // in place, a bad index raises instead of writing out of bounds
  EXPECT_EQ(error_kind([&] {
              scatter_(z, 0, idx({0, 5}, {1, 2}), Scalar(1.0));
            }),
            ErrorKind::Runtime);
  EXPECT_EQ(error_kind([&] {
              scatter(z, 1, to_dtype(idx({0}, {1, 1}), kShort), Scalar(1));
            }),
            ErrorKind::Runtime);
  EXPECT_EQ(values(scatter(zeros({2, 3}), 1, to_dtype(idx({2}, {1, 1}), kInt), Scalar(1))),
            (V{0, 0, 1, 0, 0, 0}));  // int32 indices work as int64 ones
  EXPECT_EQ(error_kind([&] {
              scatter(z, 1, idx({0}, {1, 1}), make({1}, {1, 1}, kDouble));
            }),
            ErrorKind::Runtime);
}

TEST(IndexScatter, Backward) {
  Tensor x = leaf(iota({2, 3}));
  Tensor src = leaf(make({10, 20, 30, 40}, {2, 2}));
  Tensor i = idx({2, 0}, {2, 1});
  Tensor y = scatter(x, 1, i, src);  // src is bigger than index: only src[:, 0] is read
  EXPECT_EQ(y.grad_fn()->name(), "ScatterBackward0");
  sum(y * make({1, 2, 3, 4, 5, 6}, {2, 3})).backward();
  EXPECT_EQ(values(x.grad()), (V{1, 2, 0, 0, 5, 6}));
  EXPECT_EQ(values(src.grad()), (V{3, 0, 4, 0}));

  Tensor a = leaf(zeros({3}));
  Tensor b = leaf(make({1, 2, 3}));
  Tensor w = scatter_add(a, 0, idx({0, 0, 2}), b);
  EXPECT_EQ(values(w), (V{3, 0, 3}));
  EXPECT_EQ(w.grad_fn()->name(), "ScatterAddBackward0");
  sum(w * make({1, 2, 3})).backward();
  EXPECT_EQ(values(a.grad()), (V{1, 2, 3}));
  EXPECT_EQ(values(b.grad()), (V{1, 1, 3}));
}

TEST(IndexScatter, AddValuesAndDtypes) {
  EXPECT_EQ(values(scatter_add(zeros({4}), 0, idx({0, 1, 0, 3, 0}), ones({5}))), (V{3, 1, 0, 1}));
  Tensor a = zeros({2, 3});
  scatter_add_(a, 1, idx({2, 2, 0, 1}, {2, 2}), make({1, 2, 3, 4}, {2, 2}));
  EXPECT_EQ(values(a), (V{0, 0, 3, 3, 4, 0}));
  for (ScalarType dt : {kByte, kChar, kShort, kInt, kLong, kHalf, kBFloat16, kFloat, kDouble}) {
    Tensor r = scatter_add(zeros({2}, dt), 0, idx({1, 1}), to_dtype(make({2, 3}), dt));
    EXPECT_EQ(values(r), (V{0, 5})) << dtype_name(dt);
  }
  Tensor b = scatter_add(zeros({2}, kBool), 0, idx({1, 1}), make({1, 0}, {2}, kBool));
  EXPECT_EQ(values(b), (V{0, 1}));
}

TEST(IndexScatterReduce, Table) {
  // self = [1, 2, 3, 4], src = [5, 6, 7, 8] scattered into [0, 0, 2, 2]; slots 1 and 3 untouched
  struct Case {
    const char* reduce;
    bool include_self;
    V expected;
  };
  std::vector<Case> cases = {
      {"sum", true, {12, 2, 18, 4}},   {"sum", false, {11, 2, 15, 4}},
      {"prod", true, {30, 2, 168, 4}}, {"prod", false, {30, 2, 56, 4}},
      {"mean", true, {4, 2, 6, 4}},    {"mean", false, {5.5, 2, 7.5, 4}},
      {"amax", true, {6, 2, 8, 4}},    {"amax", false, {6, 2, 8, 4}},
      {"amin", true, {1, 2, 3, 4}},    {"amin", false, {5, 2, 7, 4}},
  };
  Tensor self = make({1, 2, 3, 4}), src = make({5, 6, 7, 8}), i = idx({0, 0, 2, 2});
  for (const auto& c : cases) {
    EXPECT_EQ(values(scatter_reduce(self, 0, i, src, c.reduce, c.include_self)), c.expected)
        << c.reduce << " include_self=" << c.include_self;
    Tensor t = clone(self);
    scatter_reduce_(t, 0, i, src, c.reduce, c.include_self);
    EXPECT_EQ(values(t), c.expected);
  }
  EXPECT_EQ(values(self), (V{1, 2, 3, 4}));
  // integer mean floors: (0 + 1 + 2) // 3 and (-1 + -2) // 2
  EXPECT_EQ(values(scatter_reduce(idx({0, 0}), 0, idx({0, 0}), idx({1, 2}), "mean")), (V{1, 0}));
  EXPECT_EQ(values(scatter_reduce(idx({0, 0}), 0, idx({1, 1}), idx({-1, -2}), "mean", false)),
            (V{0, -2}));
  // NaN wins amax
  V r = values(scatter_reduce(make({0}), 0, idx({0, 0}), make({NAN, 1}), "amax"));
  EXPECT_TRUE(std::isnan(r[0]));
  EXPECT_EQ(error_kind([&] { scatter_reduce(self, 0, i, src, "max"); }), ErrorKind::Runtime);
  Tensor b = make({1}, {1}, kBool);
  EXPECT_EQ(error_kind([&] { scatter_reduce(b, 0, idx({0}), b, "mean"); }),
            ErrorKind::NotImplemented);
}

TEST(IndexScatterReduce, Backward) {
  Tensor i = idx({0, 0, 2, 2});
  Tensor gy = make({1, 10, 100, 1000});
  auto run = [&](const char* reduce, bool include_self, V self_v, V src_v) {
    Tensor s = leaf(make(self_v, {4}, kDouble)), x = leaf(make(src_v, {4}, kDouble));
    sum(scatter_reduce(s, 0, i, x, reduce, include_self) * gy).backward();
    return std::make_pair(values(s.grad()), values(x.grad()));
  };
  auto [gs, gx] = run("sum", true, {1, 2, 3, 4}, {5, 6, 7, 8});
  EXPECT_EQ(gs, (V{1, 10, 100, 1000}));
  EXPECT_EQ(gx, (V{1, 1, 100, 100}));
  std::tie(gs, gx) = run("sum", false, {1, 2, 3, 4}, {5, 6, 7, 8});
  EXPECT_EQ(gs, (V{0, 10, 0, 1000}));
  std::tie(gs, gx) = run("mean", true, {1, 2, 3, 4}, {5, 6, 7, 8});
  EXPECT_EQ(gs, (V{1.0 / 3, 10, 100.0 / 3, 1000}));
  EXPECT_EQ(gx, (V{1.0 / 3, 1.0 / 3, 100.0 / 3, 100.0 / 3}));
  // prod: d(s0*x0*x1)/dx0 = s0*x1; a single zero factor still gets its exclusive product
  std::tie(gs, gx) = run("prod", true, {2, 2, 3, 4}, {5, 0, 7, 8});
  EXPECT_EQ(gs, (V{0, 10, 5600, 1000}));
  EXPECT_EQ(gx, (V{0, 10, 2400, 2100}));
  // amax: the winner takes the gradient, ties share it
  std::tie(gs, gx) = run("amax", true, {6, 2, 3, 4}, {5, 6, 7, 7});
  EXPECT_EQ(gs, (V{0.5, 10, 0, 1000}));
  EXPECT_EQ(gx, (V{0, 0.5, 50, 50}));
  // include_self=false: an excluded self equal to the max takes no share (PyTorch gives 0.5)
  std::tie(gs, gx) = run("amax", false, {3, 2, 3, 4}, {3, 1, 7, 8});
  EXPECT_EQ(gs, (V{0, 10, 0, 1000}));
  EXPECT_EQ(gx, (V{1, 0, 0, 100}));
}

// ---- index_add / index_fill ---------------------------------------------------------------------

TEST(IndexAdd, Values) {
  Tensor t = ones({3, 2});
  EXPECT_EQ(values(index_add(t, 0, idx({0, 2, 0}), make({1, 2, 3, 4, 5, 6}, {3, 2}))),
            (V{7, 9, 1, 1, 4, 5}));
  EXPECT_EQ(values(index_add(t, 1, idx({1}), full({3, 1}, 2.0), 3)), (V{1, 7, 1, 7, 1, 7}));
  index_add_(t, 0, to_dtype(idx({1}), kInt), ones({1, 2}));
  EXPECT_EQ(values(t), (V{1, 1, 2, 2, 1, 1}));
  // transposed self and sliced source
  Tensor base = zeros({2, 3});
  Tensor tt = transpose(base, 0, 1);             // (3, 2)
  Tensor src = slice(iota({2, 4}), 1, 1, 3, 1);  // [[1, 2], [5, 6]]
  index_add_(tt, 0, idx({2, 0}), src);
  EXPECT_EQ(values(base), (V{5, 0, 1, 6, 0, 2}));
  // integer dtypes, bool, zero-size, 0-d
  EXPECT_EQ(values(index_add(idx({1, 1}), 0, idx({1, 1}), idx({2, 3}), -1)), (V{1, -4}));
  EXPECT_EQ(values(index_add(make({0, 0}, {2}, kBool), 0, idx({1}), make({1}, {1}, kBool))),
            (V{0, 1}));
  EXPECT_EQ(values(index_add(ones({2}), 0, idx({}), zeros({0}))), (V{1, 1}));
  EXPECT_EQ(values(index_add(make({1}, {}), 0, idx({0}, {}), make({2}, {}))), V{3});
}

TEST(IndexAdd, ErrorsAndBackward) {
  Tensor t = zeros({3, 2});
  // out-of-bounds indices are RuntimeError in PyTorch's index_add (IndexError in index_select)
  EXPECT_EQ(error_kind([&] { index_add(t, 0, idx({3}), ones({1, 2})); }), ErrorKind::Runtime);
  EXPECT_EQ(error_kind([&] { index_add_(t, 0, idx({-1}), ones({1, 2})); }), ErrorKind::Runtime);
  EXPECT_EQ(values(t), (V{0, 0, 0, 0, 0, 0}));  // checked before any write
  EXPECT_EQ(error_kind([&] { index_add(t, 0, idx({0, 1}), ones({1, 2})); }), ErrorKind::Runtime);
  EXPECT_EQ(error_kind([&] { index_add(t, 0, idx({0}), ones({1, 3})); }), ErrorKind::Runtime);
  EXPECT_EQ(error_kind([&] { index_add(t, 0, idx({0}, {1, 1}), ones({1, 2})); }), ErrorKind::Index);
  EXPECT_EQ(error_kind([&] { index_add(idx({0}), 0, idx({0}), idx({1}), 0.5); }),
            ErrorKind::Runtime);

  Tensor x = leaf(zeros({3})), s = leaf(make({1, 2}));
  Tensor y = index_add(x, 0, idx({2, 2}), s, 2);
  EXPECT_EQ(y.grad_fn()->name(), "IndexAddBackward0");
  sum(y * make({1, 2, 3})).backward();
  EXPECT_EQ(values(x.grad()), (V{1, 2, 3}));
  EXPECT_EQ(values(s.grad()), (V{6, 6}));
}

TEST(IndexFill, ValuesAndBackward) {
  Tensor t = iota({2, 3});
  EXPECT_EQ(values(index_fill(t, 1, idx({0, -1}), -1)), (V{-1, 1, -1, -1, 4, -1}));
  EXPECT_EQ(values(index_fill(transpose(t, 0, 1), 0, idx({1}), 9)), (V{0, 3, 9, 9, 2, 5}));
  Tensor u = clone(t);
  index_fill_(u, 0, idx({1}, {}), 0);
  EXPECT_EQ(values(u), (V{0, 1, 2, 0, 0, 0}));
  EXPECT_EQ(values(index_fill(make({3}, {}), 0, idx({0}), 1)), V{1});
  EXPECT_EQ(error_kind([&] { index_fill(t, 0, idx({2}), 1); }), ErrorKind::Index);
  EXPECT_EQ(error_kind([&] { index_fill(t, 0, to_dtype(idx({0}), kInt), 1); }), ErrorKind::Index);
  EXPECT_EQ(error_kind([&] { index_fill(t, 0, idx({0}, {1, 1}), 1); }), ErrorKind::Runtime);

  Tensor x = leaf(ones({3}));
  sum(index_fill(x, 0, idx({1}), 5.0) * make({1, 2, 3})).backward();
  EXPECT_EQ(values(x.grad()), (V{1, 0, 3}));
}

// ---- masks --------------------------------------------------------------------------------------

TEST(IndexMasked, Fill) {
  Tensor t = make({1, 2, 3, 4}, {2, 2});
  Tensor m = mask({1, 0, 0, 1}, {2, 2});
  EXPECT_EQ(values(masked_fill(t, m, 0)), (V{0, 2, 3, 0}));
  EXPECT_EQ(values(masked_fill(t, mask({1, 0}, {2}), -1.0)), (V{-1, 2, -1, 4}));  // broadcast
  EXPECT_EQ(values(masked_fill(t, m, make({9}, {}))), (V{9, 2, 3, 9}));
  // self broadcast against a bigger mask
  EXPECT_EQ(shape(masked_fill(make({1, 2}), mask({1, 0, 0, 0}, {2, 2}), 0)), (S{2, 2}));
  Tensor c = clone(t);
  masked_fill_(c, gt(c, wrap_scalar(2)), 0);
  EXPECT_EQ(values(c), (V{1, 2, 0, 0}));
  // transposed self, in place; float value into an int tensor truncates
  Tensor base = iota({2, 2}, kLong);
  Tensor tt = transpose(base, 0, 1);
  masked_fill_(tt, mask({0, 1, 0, 0}, {2, 2}), 5.9);
  EXPECT_EQ(values(base), (V{0, 1, 5, 3}));  // tt[0][1] is base[1][0]
  EXPECT_EQ(values(tt), (V{0, 5, 1, 3}));
  for (ScalarType dt : {kBool, kByte, kHalf, kBFloat16, kDouble})
    EXPECT_EQ(values(masked_fill(zeros({2}, dt), mask({0, 1}, {2}), 1)), (V{0, 1}));
  EXPECT_EQ(shape(masked_fill(zeros({0, 2}), mask({1, 1}, {2}), 1)), (S{0, 2}));
  EXPECT_EQ(values(masked_fill(make({1}, {}), mask({1}, {}), 3)), V{3});

  EXPECT_EQ(error_kind([&] { masked_fill(t, idx({1, 0, 0, 1}, {2, 2}), 0); }), ErrorKind::Runtime);
  EXPECT_EQ(error_kind([&] { masked_fill(t, m, make({1, 2})); }), ErrorKind::Runtime);
  EXPECT_EQ(error_kind([&] { masked_fill_(t, mask({1, 0, 1}, {3}), 0); }), ErrorKind::Runtime);
}

TEST(IndexMasked, FillBackward) {
  Tensor x = leaf(make({1, 2, 3, 4}, {2, 2}));
  Tensor v = leaf(make({7}, {}));
  Tensor y = masked_fill(x, mask({1, 0}, {2}), v);
  EXPECT_EQ(y.grad_fn()->name(), "MaskedFillBackward1");
  sum(y * make({1, 2, 3, 4}, {2, 2})).backward();
  EXPECT_EQ(values(x.grad()), (V{0, 2, 0, 4}));
  EXPECT_EQ(values(v.grad()), V{4});
  Tensor a = leaf(make({1, 2}));
  EXPECT_EQ(masked_fill(a, mask({1, 0}, {2}), 0).grad_fn()->name(), "MaskedFillBackward0");
}

TEST(IndexMasked, Select) {
  Tensor t = make({1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(values(masked_select(t, mask({1, 0, 0, 1}, {2, 2}))), (V{1, 4}));
  EXPECT_EQ(values(masked_select(t, mask({0, 1}, {2}))), (V{2, 4}));  // broadcast, row-major
  EXPECT_EQ(values(masked_select(transpose(t, 0, 1), mask({0, 1}, {2}))), (V{3, 4}));
  EXPECT_EQ(shape(masked_select(t, mask({0, 0}, {2}))), (S{0}));
  EXPECT_EQ(values(masked_select(make({5}, {}), mask({1}, {}))), V{5});
  EXPECT_EQ(error_kind([&] { masked_select(t, idx({1, 0})); }), ErrorKind::Runtime);
  Tensor x = leaf(t);
  sum(masked_select(x, mask({0, 1}, {2})) * make({10, 20})).backward();
  EXPECT_EQ(values(x.grad()), (V{0, 10, 0, 20}));
}

// ---- take / nonzero -----------------------------------------------------------------------------

TEST(IndexTake, ValuesErrorsBackward) {
  Tensor t = make({4, 3, 5, 6, 7, 8}, {2, 3});
  EXPECT_EQ(values(take(t, idx({0, 2, 5}))), (V{4, 5, 8}));
  Tensor r = take(t, idx({-1, 1}, {1, 2}));
  EXPECT_EQ(shape(r), (S{1, 2}));
  EXPECT_EQ(values(r), (V{8, 3}));
  EXPECT_EQ(values(take(transpose(t, 0, 1), idx({1}))), V{6});  // logical order
  EXPECT_EQ(values(take(make({2}, {}), idx({0}, {}))), V{2});
  EXPECT_EQ(shape(take(t, idx({}))), (S{0}));
  EXPECT_EQ(error_kind([&] { take(t, idx({6})); }), ErrorKind::Index);
  EXPECT_EQ(error_kind([&] { take(t, idx({-7})); }), ErrorKind::Index);
  EXPECT_EQ(error_kind([&] { take(t, to_dtype(idx({0}), kInt)); }), ErrorKind::Runtime);
  Tensor x = leaf(t);
  sum(take(x, idx({5, 0, 5})) * make({1, 2, 3})).backward();
  EXPECT_EQ(values(x.grad()), (V{2, 0, 0, 0, 0, 4}));
}

TEST(IndexNonzero, Values) {
  Tensor t = make({0, 1, 0, 2, 0, 3}, {2, 3}, kLong);
  Tensor nz = nonzero(t);
  EXPECT_EQ(nz.dtype(), kLong);
  EXPECT_EQ(shape(nz), (S{3, 2}));
  EXPECT_EQ(values(nz), (V{0, 1, 1, 0, 1, 2}));
  auto cols = nonzero_tuple(t);
  ASSERT_EQ(cols.size(), 2u);
  EXPECT_EQ(values(cols[0]), (V{0, 1, 1}));
  EXPECT_EQ(values(cols[1]), (V{1, 0, 2}));
  EXPECT_EQ(values(nonzero(transpose(t, 0, 1))), (V{0, 1, 1, 0, 2, 1}));
  EXPECT_EQ(shape(nonzero(zeros({2, 3}))), (S{0, 2}));
  EXPECT_EQ(shape(nonzero(zeros({0}))), (S{0, 1}));
  EXPECT_EQ(shape(nonzero(make({5}, {}))), (S{1, 0}));
  EXPECT_EQ(shape(nonzero(make({0}, {}))), (S{0, 0}));
  EXPECT_EQ(values(nonzero_tuple(make({5}, {}))[0]), V{0});
  EXPECT_EQ(values(nonzero(make({0, 0.5, -1, -0.0, NAN}, {5}, kHalf))), (V{1, 2, 4}));
  EXPECT_EQ(values(nonzero(mask({1, 0, 1}, {3}))), (V{0, 2}));
}

TEST(IndexNonzero, ManyChunks) {
  // 3 x 50000: every 7th element nonzero; spans several parallel chunks.
  int64_t n = 150000;
  Tensor flat = eq(remainder(arange(n), wrap_scalar(7)), wrap_scalar(0));
  Tensor t = reshape(flat, {3, 50000});
  Tensor nz = nonzero(t);
  int64_t expected = (n + 6) / 7;
  ASSERT_EQ(shape(nz), (S{expected, 2}));
  V v = values(nz);
  for (int64_t k = 0; k < expected; k += 997) {
    int64_t f = 7 * k;
    EXPECT_EQ(v[size_t(2 * k)], double(f / 50000));
    EXPECT_EQ(v[size_t(2 * k + 1)], double(f % 50000));
  }
}

// ---- advanced indexing --------------------------------------------------------------------------

TEST(IndexAdvanced, ResultShapes) {
  Tensor t = zeros({5, 6, 7, 8});
  Tensor i = idx({0, 1, 2});
  auto at = [&](std::vector<std::optional<Tensor>> ix) { return shape(index(t, ix)); };
  EXPECT_EQ(at({i}), (S{3, 6, 7, 8}));
  EXPECT_EQ(at({std::nullopt, i, i}), (S{5, 3, 8}));  // adjacent: in place
  EXPECT_EQ(at({i, std::nullopt, i}), (S{3, 6, 8}));  // separated: to the front
  EXPECT_EQ(at({std::nullopt, i, std::nullopt, i}), (S{3, 5, 7}));
  EXPECT_EQ(at({reshape(i, {3, 1}), std::nullopt, std::nullopt, reshape(i, {1, 3})}),
            (S{3, 3, 6, 7}));
  EXPECT_EQ(at({std::nullopt, idx({0, 1}, {2, 1}), idx({2, 3})}), (S{5, 2, 2, 8}));
  EXPECT_EQ(at({idx({}, {0})}), (S{0, 6, 7, 8}));
}

TEST(IndexAdvanced, Values) {
  Tensor a = iota({3, 4, 5});
  // a[[0, 2], :, [1, 3]] -> (2, 4): a[0, :, 1] and a[2, :, 3]
  EXPECT_EQ(values(index(a, {idx({0, 2}), std::nullopt, idx({1, 3})})),
            (V{1, 6, 11, 16, 43, 48, 53, 58}));
  // a[:, [3, 0], -1]-like with negatives: a[:, [-1, -4]] rows 3 and 0 of each block
  EXPECT_EQ(values(index(iota({2, 4}), {std::nullopt, idx({-1, -4})})), (V{3, 0, 7, 4}));
  // int32 indices
  EXPECT_EQ(values(index(iota({3}), {to_dtype(idx({2, 0}), kInt)})), (V{2, 0}));
  // transposed and offset-sliced self
  Tensor m = iota({3, 4});
  EXPECT_EQ(values(index(transpose(m, 0, 1), {idx({3, 0}), idx({1, 2})})), (V{7, 8}));
  EXPECT_EQ(values(index(slice(m, 0, 1, 3, 1), {std::nullopt, idx({0, 3})})), (V{4, 7, 8, 11}));
  // 0-d self with a 0-d mask; every dtype moves
  EXPECT_EQ(shape(index(make({5}, {}), {mask({1}, {})})), (S{1}));
  EXPECT_EQ(shape(index(make({5}, {}), {mask({0}, {})})), (S{0}));
  for (ScalarType dt : {kBool, kChar, kShort, kInt, kLong, kHalf, kBFloat16, kDouble})
    EXPECT_EQ(values(index(to_dtype(make({0, 1, 2}), dt), {idx({2, 1})})),
              (V{dt == kBool ? 1.0 : 2.0, 1}));
}

TEST(IndexAdvanced, Masks) {
  Tensor a = iota({3, 4});
  Tensor full_mask = gt(a, wrap_scalar(8));
  EXPECT_EQ(values(index(a, {full_mask})), (V{9, 10, 11}));
  EXPECT_EQ(values(index(a, {mask({1, 0, 1}, {3})})), (V{0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(values(index(a, {std::nullopt, mask({0, 1, 0, 1}, {4})})), (V{1, 3, 5, 7, 9, 11}));
  EXPECT_EQ(values(index(a, {mask({1, 0, 1}, {3}), idx({0, 3})})), (V{0, 11}));
  EXPECT_EQ(values(index(a, {to_dtype(mask({0, 1, 0}, {3}), kByte)})), (V{4, 5, 6, 7}));
}

TEST(IndexAdvanced, Errors) {
  Tensor a = iota({3});
  std::string msg;
  EXPECT_EQ(error_kind([&] { index(a, {idx({0, 5})}); }, &msg), ErrorKind::Index);
  EXPECT_EQ(msg, "index 5 is out of bounds for dimension 0 with size 3");
  EXPECT_EQ(error_kind([&] { index(a, {idx({-4})}); }), ErrorKind::Index);
  EXPECT_EQ(error_kind(
                [&] {
                  index(iota({2, 2}), {idx({0}), idx({0}), idx({0})});
                },
                &msg),
            ErrorKind::Index);
  EXPECT_EQ(msg, "too many indices for tensor of dimension 2");
  EXPECT_EQ(error_kind([&] { index(iota({4}), {mask({1, 0, 1}, {3})}); }, &msg), ErrorKind::Index);
  EXPECT_EQ(msg,
            "The shape of the mask [3] at index 0 does not match the shape of the indexed "
            "tensor [4] at index 0");
  // PyTorch raises IndexError for a float index tensor too
  EXPECT_EQ(error_kind([&] { index(a, {make({0})}); }, &msg), ErrorKind::Index);
  EXPECT_EQ(msg, "tensors used as indices must be long, int, byte or bool tensors");
  EXPECT_EQ(error_kind([&] {
              index(iota({3, 3}), {idx({0, 1}), idx({0, 1, 2})});
            }),
            ErrorKind::Index);  // shapes don't broadcast
}

TEST(IndexAdvanced, Backward) {
  Tensor x = leaf(make({1, 2, 3}));
  Tensor y = index(x, {idx({0, 0, 2})});
  EXPECT_EQ(y.grad_fn()->name(), "IndexBackward0");
  sum(y).backward();
  EXPECT_EQ(values(x.grad()), (V{2, 0, 1}));
  Tensor m = leaf(iota({2, 3}));
  sum(index(m, {gt(m.detach(), wrap_scalar(2))})).backward();
  EXPECT_EQ(values(m.grad()), (V{0, 0, 0, 1, 1, 1}));
}

TEST(IndexAdvanced, DoubleBackward) {
  // y = sum(x[[0, 0, 2]]^2): dy/dx = 2 x c with counts c = [2, 0, 1]; d(sum dy/dx)/dx = 2 c
  Tensor x = leaf(make({1, 2, 3}));
  Tensor y = sum(square(index(x, {idx({0, 0, 2})})));
  auto g = autograd::grad({y}, {x}, {}, true, true, false);
  EXPECT_EQ(values(g[0]), (V{4, 0, 6}));
  sum(g[0]).backward();
  EXPECT_EQ(values(x.grad()), (V{4, 0, 2}));
  // through gather/scatter_add the same way
  Tensor w = leaf(make({1, 2, 3}));
  Tensor z = sum(square(gather(w, 0, idx({2, 2, 1}))));
  auto gw = autograd::grad({z}, {w}, {}, true, true, false);
  EXPECT_EQ(values(gw[0]), (V{0, 4, 12}));
  sum(gw[0]).backward();
  EXPECT_EQ(values(w.grad()), (V{0, 2, 4}));
}

TEST(IndexPut, ValuesAndAccumulate) {
  Tensor t = zeros({3, 3});
  EXPECT_TRUE(index_put_(t, {idx({0, 2}), idx({1, 1})}, make({5}, {})).is_same(t));
  EXPECT_EQ(values(t), (V{0, 5, 0, 0, 0, 0, 0, 5, 0}));
  Tensor u = zeros({4});
  index_put_(u, {idx({0, 0, 3})}, make({1, 2, 3}), true);
  EXPECT_EQ(values(u), (V{3, 0, 0, 3}));
  EXPECT_EQ(values(index_put(zeros({2, 2}), {mask({1, 0}, {2})}, make({1}, {}))), (V{1, 1, 0, 0}));
  // values broadcast over the indexed shape (2, 3): rows 0 and 2 get [1, 2, 3]
  EXPECT_EQ(values(index_put(zeros({3, 3}), {idx({0, 2})}, make({1, 2, 3}))),
            (V{1, 2, 3, 0, 0, 0, 1, 2, 3}));
  // into a transposed and into an offset view (writes through)
  Tensor base = zeros({2, 3});
  Tensor tt = transpose(base, 0, 1);
  index_put_(tt, {idx({2}), idx({0})}, make({4}, {}));
  EXPECT_EQ(values(base), (V{0, 0, 4, 0, 0, 0}));
  Tensor row = select(base, 0, 1);
  index_put_(row, {idx({-1, 0})}, make({7, 8}));
  EXPECT_EQ(values(base), (V{0, 0, 4, 8, 0, 7}));
  // accumulate on ints and bool
  EXPECT_EQ(values(index_put(idx({1, 1}), {idx({1, 1})}, idx({2, 3}), true)), (V{1, 6}));
  EXPECT_EQ(
      values(index_put(make({0, 0}, {2}, kBool), {idx({1, 1})}, make({1, 1}, {2}, kBool), true)),
      (V{0, 1}));
  EXPECT_EQ(shape(index_put(zeros({2}), {idx({})}, zeros({0}))), (S{2}));
  // in place with one bool mask and one value (the masked_fill path): full and leading masks
  Tensor f = iota({2, 3});
  index_put_(f, {gt(f, wrap_scalar(3))}, make({-1}));
  EXPECT_EQ(values(f), (V{0, 1, 2, 3, -1, -1}));
  index_put_(f, {mask({1, 0}, {2})}, make({7}, {}));
  EXPECT_EQ(values(f), (V{7, 7, 7, 3, -1, -1}));
}

TEST(IndexPut, ErrorsAndBackward) {
  Tensor t = zeros({3});
  std::string msg;
  EXPECT_EQ(error_kind(
                [&] {
                  index_put_(t, {idx({0, 3})}, make({1, 1}));
                },
                &msg),
            ErrorKind::Index);
  EXPECT_EQ(msg, "index 3 is out of bounds for dimension 0 with size 3");
  EXPECT_EQ(values(t), (V{0, 0, 0}));  // every index is checked before the first write
  EXPECT_EQ(error_kind([&] { index_put_(t, {idx({0})}, make({1}, {1}, kDouble)); }),
            ErrorKind::Runtime);
  EXPECT_EQ(error_kind([&] { index_put_(t, {idx({0, 1})}, make({1, 2, 3})); }), ErrorKind::Runtime);

  Tensor x = leaf(make({1, 2, 3})), v = leaf(make({10, 20}));
  Tensor y = index_put(x, {idx({2, 0})}, v);
  EXPECT_EQ(y.grad_fn()->name(), "IndexPutBackward0");
  sum(y * make({1, 2, 3})).backward();
  EXPECT_EQ(values(x.grad()), (V{0, 2, 0}));
  EXPECT_EQ(values(v.grad()), (V{3, 1}));
  Tensor x2 = leaf(make({1, 2, 3})), v2 = leaf(make({5}, {}));
  sum(index_put(x2, {idx({1, 1})}, v2, true) * make({1, 2, 3})).backward();
  EXPECT_EQ(values(x2.grad()), (V{1, 2, 3}));
  EXPECT_EQ(values(v2.grad()), V{4});
  // in place on a non-leaf (add saves nothing that the write would invalidate)
  Tensor x3 = leaf(make({1, 2, 3}));
  Tensor y3 = add(x3, x3);
  index_put_(y3, {idx({1})}, make({0}, {}));
  sum(y3).backward();
  EXPECT_EQ(values(x3.grad()), (V{2, 0, 2}));
}

// ---- getitem / setitem --------------------------------------------------------------------------

TEST(IndexGetitem, BasicIsAView) {
  Tensor t = iota({3, 4, 5});
  Tensor v = getitem(t, {1, Slice{}, Slice{std::nullopt, std::nullopt, 2}});
  EXPECT_EQ(shape(v), (S{4, 3}));
  EXPECT_EQ(v.strides().vec(), (S{5, 2}));
  EXPECT_EQ(v.storage_offset(), 20);
  EXPECT_TRUE(v.storage() == t.storage());
  EXPECT_EQ(shape(getitem(t, {Ellipsis, 0})), (S{3, 4}));
  EXPECT_EQ(shape(getitem(t, {1, Ellipsis, 2})), (S{4}));
  EXPECT_EQ(shape(getitem(t, {None, 0})), (S{1, 4, 5}));
  EXPECT_EQ(shape(getitem(t, {Slice{}, None, Slice{1, 2}, None})), (S{3, 1, 1, 1, 5}));
  EXPECT_EQ(shape(getitem(t, {None, Ellipsis, None})), (S{1, 3, 4, 5, 1}));
  EXPECT_EQ(shape(getitem(t, {Slice{10, 20}})), (S{0, 4, 5}));
  EXPECT_EQ(shape(getitem(t, {Slice{-100, 100}})), (S{3, 4, 5}));
  EXPECT_EQ(values(getitem(t, {-1, -2, -3})), V{52});
  EXPECT_EQ(shape(getitem(t, {2, 3, 4})), S{});
  EXPECT_EQ(shape(getitem(t, {idx({1}, {})})), (S{4, 5}));  // 0-d int tensor acts as an int
  Tensor alias = getitem(t, {});
  EXPECT_FALSE(alias.is_same(t));
  EXPECT_TRUE(alias.storage() == t.storage());
}

TEST(IndexGetitem, ZeroDimAndBools) {
  Tensor z = make({5}, {});
  EXPECT_EQ(shape(getitem(z, {})), S{});
  EXPECT_EQ(shape(getitem(z, {Ellipsis})), S{});
  EXPECT_EQ(shape(getitem(z, {None})), (S{1}));
  EXPECT_EQ(shape(getitem(z, {true})), (S{1}));
  EXPECT_EQ(shape(getitem(z, {false})), (S{0}));
  EXPECT_EQ(shape(getitem(z, {mask({1}, {})})), (S{1}));
  EXPECT_EQ(shape(getitem(iota({2, 3}), {Slice{}, true})), (S{2, 1, 3}));
}

TEST(IndexGetitem, Errors) {
  Tensor t = iota({3, 4, 5});
  std::string msg;
  for (auto ix : std::vector<std::vector<TensorIndex>>{{3}, {-4}, {0, 4}, {0, 0, 5}, {0, -5}})
    EXPECT_EQ(error_kind([&] { getitem(t, ix); }), ErrorKind::Index);
  EXPECT_EQ(error_kind([&] { getitem(t, {0, 0, 0, 0}); }, &msg), ErrorKind::Index);
  EXPECT_EQ(msg, "too many indices for tensor of dimension 3");
  EXPECT_EQ(error_kind([&] { getitem(make({5}, {}), {0}); }), ErrorKind::Index);
  EXPECT_EQ(shape(getitem(t, {Ellipsis, 0, Ellipsis})), (S{3, 4}));  // PyTorch allows two
  EXPECT_EQ(error_kind([&] {
              getitem(t, {Slice{std::nullopt, std::nullopt, -1}});
            }),
            ErrorKind::Value);
  EXPECT_EQ(error_kind([&] {
              getitem(t, {Slice{std::nullopt, std::nullopt, 0}});
            }),
            ErrorKind::Value);
  EXPECT_EQ(error_kind([&] { getitem(t, {make({0})}); }), ErrorKind::Index);
  EXPECT_EQ(error_kind([&] { getitem(t, {mask({1, 0}, {2})}); }), ErrorKind::Index);
}

TEST(IndexGetitem, Advanced) {
  Tensor t = zeros({5, 6, 7, 8});
  Tensor i = idx({0, 1, 2});
  // ints apply first (a select), so they never separate advanced indices
  EXPECT_EQ(shape(getitem(t, {0, Slice{}, i})), (S{6, 3, 8}));
  EXPECT_EQ(shape(getitem(t, {0, Slice{}, i, 0})), (S{6, 3}));
  EXPECT_EQ(shape(getitem(t, {i, Slice{}, 0, i})), (S{3, 6}));
  EXPECT_EQ(shape(getitem(t, {i, 0})), (S{3, 7, 8}));
  EXPECT_EQ(shape(getitem(t, {Ellipsis, i})), (S{5, 6, 7, 3}));
  EXPECT_EQ(shape(getitem(t, {None, i})), (S{1, 3, 6, 7, 8}));
  Tensor a = iota({3, 4, 5});
  EXPECT_EQ(values(getitem(a, {0, Slice{}, idx({1, 3})})), (V{1, 3, 6, 8, 11, 13, 16, 18}));
  // a 2-d mask followed by an int claims two dims
  Tensor m = mask({1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, {3, 4});
  EXPECT_EQ(values(getitem(a, {m, 2})), (V{2, 57}));
  EXPECT_EQ(values(getitem(a, {mask({1, 0, 1}, {3}), Slice{}, 2})),
            (V{2, 7, 12, 17, 42, 47, 52, 57}));
  // a copy, not a view
  Tensor src = iota({5});
  Tensor cc = getitem(src, {idx({1, 2})});
  fill_(cc, 100);
  EXPECT_EQ(values(src), (V{0, 1, 2, 3, 4}));
}

TEST(IndexSetitem, Basic) {
  Tensor t = iota({3, 4});
  void* ptr = t.data_ptr();
  setitem(t, {0}, 1.5);
  EXPECT_EQ(values(getitem(t, {0})), (V{1.5, 1.5, 1.5, 1.5}));
  setitem(t, {Slice{std::nullopt, std::nullopt, 2}, 1}, make({-1, -2}));
  EXPECT_EQ(values(getitem(t, {Slice{}, 1})), (V{-1, 5, -2}));
  setitem(t, {Ellipsis, Slice{2, 4}}, make({10, 20, 30}, {3, 1}));  // broadcast
  EXPECT_EQ(values(t), (V{1.5, -1, 10, 10, 4, 5, 20, 20, 8, -2, 30, 30}));
  setitem(t, {None, 1}, make({0, 0, 0, 0}, {1, 1, 4}));  // leading ones are dropped
  EXPECT_EQ(values(getitem(t, {1})), (V{0, 0, 0, 0}));
  EXPECT_EQ(t.data_ptr(), ptr);
  // dtype conversion
  Tensor l = zeros({3}, kLong);
  setitem(l, {0}, 2.7);
  setitem(l, {Slice{1}}, make({1.9, -1.9}));
  EXPECT_EQ(values(l), (V{2, 1, -1}));
  Tensor b = zeros({2}, kBool);
  setitem(b, {1}, 1);
  EXPECT_EQ(values(b), (V{0, 1}));
  // through a view
  Tensor base = zeros({4, 4});
  Tensor v = getitem(base, {Slice{1, 3}});
  setitem(v, {Slice{}, Slice{std::nullopt, std::nullopt, 3}}, make({1, 2, 3, 4}, {2, 2}));
  EXPECT_EQ(values(getitem(base, {1})), (V{1, 0, 0, 2}));
  EXPECT_EQ(values(getitem(base, {2})), (V{3, 0, 0, 4}));
  EXPECT_EQ(error_kind([&] { setitem(t, {0}, ones({3})); }), ErrorKind::Runtime);
}

TEST(IndexSetitem, Advanced) {
  Tensor a = iota({3, 4, 5});
  setitem(a, {idx({0, 2}), Slice{}, idx({1, 1})}, 9.0);
  EXPECT_EQ(values(getitem(a, {Slice{}, Slice{}, 1})), (V{9, 9, 9, 9, 21, 26, 31, 36, 9, 9, 9, 9}));
  Tensor b = iota({3, 4});
  setitem(b, {gt(b, wrap_scalar(9))}, -3.0);
  EXPECT_EQ(values(b), (V{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -3, -3}));
  Tensor c = zeros({3, 4});
  setitem(c, {Slice{}, idx({0, 3})}, ones({3, 2}));
  EXPECT_EQ(values(c), (V{1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1}));
  Tensor d = zeros({2, 3});
  setitem(d, {mask({0, 1}, {2})}, make({1, 2, 3}));  // partial mask, value broadcasts
  EXPECT_EQ(values(d), (V{0, 0, 0, 1, 2, 3}));
  Tensor e = zeros({2, 3});
  setitem(e, {1, idx({2, 0})}, make({5, 6}));  // basic then advanced
  EXPECT_EQ(values(e), (V{0, 0, 0, 6, 0, 5}));
  setitem(e, {idx({0})}, wrap_scalar(2));  // a Python number converts
  EXPECT_EQ(values(e), (V{2, 2, 2, 6, 0, 5}));
  // a tensor of another dtype does not, as in PyTorch
  EXPECT_EQ(error_kind([&] {
              setitem(e, {1, idx({0})}, make({1}, {1}, kDouble));
            }),
            ErrorKind::Runtime);
  Tensor z = make({1}, {});
  setitem(z, {true}, 4.0);
  EXPECT_EQ(values(z), V{4});
  setitem(z, {false}, 8.0);
  EXPECT_EQ(values(z), V{4});
}

TEST(IndexSetitem, Backward) {
  // y[1] = v * 3 on a non-leaf: the overwritten slot no longer depends on x
  Tensor x = leaf(make({1, 2, 3})), v = leaf(make({5}));
  Tensor y = add(x, x);
  setitem(y, {1}, mul(v, wrap_scalar(3)));
  EXPECT_EQ(y.grad_fn()->name(), "CopySlices");
  EXPECT_EQ(values(y), (V{2, 15, 6}));
  sum(y * make({1, 10, 100}, {3}, kDouble)).backward();
  EXPECT_EQ(values(x.grad()), (V{2, 0, 200}));
  EXPECT_EQ(values(v.grad()), V{30});
  // advanced setitem records IndexPutBackward0
  Tensor x2 = leaf(make({1, 2, 3}));
  Tensor y2 = add(x2, wrap_scalar(0));
  setitem(y2, {idx({0, 2})}, 0.0);
  EXPECT_EQ(y2.grad_fn()->name(), "IndexPutBackward0");
  sum(y2).backward();
  EXPECT_EQ(values(x2.grad()), (V{0, 1, 0}));
  // basic slices and advanced together, value from a leaf
  Tensor w = leaf(make({7, 8}));
  Tensor y3 = zeros({2, 3});
  setitem(y3, {Slice{}, idx({2})}, reshape(w, {2, 1}));
  sum(y3 * make({1, 2, 3, 4, 5, 6}, {2, 3})).backward();
  EXPECT_EQ(values(w.grad()), (V{3, 6}));
  // writing through a view of a view still reaches the base's history
  Tensor x4 = leaf(make({1, 2, 3})), w4 = leaf(make({5}));
  Tensor base = add(x4, x4);
  Tensor part = getitem(base, {Slice{0, 2}});
  setitem(part, {1}, w4);
  EXPECT_EQ(values(base), (V{2, 5, 6}));
  sum(base * make({1, 10, 100})).backward();
  EXPECT_EQ(values(x4.grad()), (V{2, 0, 200}));
  EXPECT_EQ(values(w4.grad()), V{10});
  // a leaf that requires grad can't be written in place
  Tensor l = leaf(make({1, 2}));
  EXPECT_EQ(error_kind([&] { setitem(l, {0}, 1.0); }), ErrorKind::Runtime);
}

// ---- broadcast (stride 0) inputs ----------------------------------------------------------------

TEST(IndexBroadcastInputs, StrideZeroOperands) {
  Tensor row = expand(make({1, 2, 3}), {2, 3});  // stride 0 along dim 0
  EXPECT_EQ(values(gather(row, 1, idx({2, 0, 1, 1}, {2, 2}))), (V{3, 1, 2, 2}));
  // a stride-0 index: every row gathers column 2
  EXPECT_EQ(values(gather(iota({2, 3}), 1, expand(idx({2}, {1, 1}), {2, 3}))),
            (V{2, 2, 2, 5, 5, 5}));
  EXPECT_EQ(values(index_select(row, 1, idx({2, 2}))), (V{3, 3, 3, 3}));
  EXPECT_EQ(values(index(row, {idx({1, 0}), idx({0, 2})})), (V{1, 3}));
  EXPECT_EQ(values(index(iota({3}), {expand(idx({1}, {}), {2})})), (V{1, 1}));
  EXPECT_EQ(values(take(row, idx({3, 5}))), (V{1, 3}));
  EXPECT_EQ(values(masked_select(row, mask({1, 0, 1}, {3}))), (V{1, 3, 1, 3}));
  EXPECT_EQ(values(nonzero(expand(mask({0, 1}, {2}), {2, 2}))), (V{0, 1, 1, 1}));
  EXPECT_EQ(values(masked_fill(row, expand(mask({1}, {}), {2, 3}), 0)), (V{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(values(scatter_add(zeros({2, 2}), 1, idx({1, 1, 0, 0}, {2, 2}), row)), (V{0, 3, 3, 0}));
  EXPECT_EQ(values(index_add(zeros({2, 3}), 0, idx({1, 1}), row)), (V{0, 0, 0, 2, 4, 6}));
  EXPECT_EQ(values(index_put(zeros({2, 3}), {idx({1})}, make({7}, {}))), (V{0, 0, 0, 7, 7, 7}));
  Tensor alias = getitem(transpose(iota({2, 3}), 0, 1), {});
  EXPECT_EQ(values(alias), (V{0, 3, 1, 4, 2, 5}));
}

// ---- parallel paths -----------------------------------------------------------------------------

TEST(IndexParallel, MatchesOneThread) {
  // Sizes above the grain so the kernels split work; results must not depend on the thread count.
  auto pseudo = [](int64_t n, int64_t mod, int64_t mul) {
    return remainder(mul * arange(n), wrap_scalar(mod));
  };
  Tensor x = to_dtype(reshape(pseudo(300 * 400, 1009, 7919), {300, 400}), kFloat) * 0.5;
  Tensor col = reshape(pseudo(300 * 400, 400, 104729), {300, 400});
  Tensor rows = pseudo(5000, 300, 7);
  Tensor mask2 = gt(x, wrap_scalar(250));
  auto run = [&] {
    std::vector<V> r;
    r.push_back(values(gather(x, 1, col)));
    r.push_back(values(scatter(zeros({300, 400}), 1, col, x)));
    r.push_back(values(scatter_add(zeros({300, 400}), 1, col, x)));
    r.push_back(values(scatter_reduce(x, 1, col, x, "amax", false)));
    r.push_back(values(scatter_reduce(x, 1, col, x, "mean")));
    r.push_back(values(index_select(x, 0, rows)));
    r.push_back(values(index_add(zeros({300, 400}), 0, rows, ones({5000, 400}))));
    r.push_back(values(index(x, {rows})));
    r.push_back(values(index(x, {mask2})));
    r.push_back(values(index(transpose(x, 0, 1), {std::nullopt, rows})));
    r.push_back(values(index_put(zeros({300, 400}), {rows}, ones({400}), true)));
    r.push_back(values(index_put(zeros({300, 400}), {mask2}, index(x, {mask2}))));
    r.push_back(values(masked_fill(x, mask2, -1)));
    r.push_back(values(nonzero(mask2)));
    return r;
  };
  int threads = get_num_threads();
  set_num_threads(1);
  auto serial = run();
  set_num_threads(4);
  auto parallel = run();
  set_num_threads(threads);
  ASSERT_EQ(serial.size(), parallel.size());
  for (size_t k = 0; k < serial.size(); ++k) EXPECT_TRUE(serial[k] == parallel[k]) << "case " << k;
  // spot checks against the definition
  V g = serial[0], xv = values(x), cv = values(col);
  for (int64_t k = 0; k < 300 * 400; k += 4099)
    EXPECT_EQ(g[size_t(k)], xv[size_t((k / 400) * 400 + int64_t(cv[size_t(k)]))]);
  V rs = values(rows), sel = serial[5];
  for (int64_t k = 0; k < 5000; k += 499)
    EXPECT_EQ(sel[size_t(k * 400 + 3)], xv[size_t(int64_t(rs[size_t(k)]) * 400 + 3)]);
}
