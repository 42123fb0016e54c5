// einsum as a composite of diagonal, permute, sum, mul and bmm, so autograd comes free.
// See Note [einsum].
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "ember/core/shape.h"
#include "ember/ops/linalg.h"
#include "ember/ops/ops.h"

namespace ember {

// Note [einsum]
// Every subscript (a-z, A-Z) and every dim an ellipsis covers gets a global id. Operands are
// brought to one aligned layout, [output ids..., contracted ids...], with size-1 dims where an
// operand lacks an id: repeated subscripts in an operand first become a diagonal, and then each
// operand is permuted and unsqueezed. Contracted ids found in a single operand are summed away
// at once; the operands are then combined left to right, each pair summing the ids no later
// operand mentions (bmm when a summed id is in both, a broadcast mul otherwise), as PyTorch's
// sumproduct_pair does. Multi-operand contractions keep the operands' dtype; a single operand
// reduced by a sum widens integers to int64 as torch.sum does.

namespace {

constexpr int kLetters = 52;
constexpr int kEllipsis = -1;  // marks '...' in a parsed subscript list

int letter_id(char c) { return c >= 'A' && c <= 'Z' ? c - 'A' : c - 'a' + 26; }
char letter_of(int id) { return id < 26 ? char('A' + id) : char('a' + id - 26); }
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

struct Equation {
  std::vector<std::vector<int>> inputs;  // letter ids and kEllipsis, per operand
  bool explicit_output = false;
  std::vector<int> output;
};

// Parses the equation into per-operand subscripts and the explicit output, with torch's errors.
Equation parse(const std::string& eq, size_t num_operands) {
  Equation r;
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  r.inputs.emplace_back();
  int dots = 0;
  bool ellipsis = false;
  for (size_t i = 0; i < lhs.size(); ++i) {
    char c = lhs[i];
    size_t op = r.inputs.size() - 1;
    if (c == ' ') continue;
    if (c == '.') {
      EMBER_CHECK(!ellipsis, "einsum(): found '.' for operand ", op,
                  " for which an ellipsis was already found");
      if (++dots == 3) {
        r.inputs.back().push_back(kEllipsis);
        ellipsis = true;
        dots = 0;
      }
      continue;
    }
    EMBER_CHECK(dots == 0, "einsum(): found '.' for operand ", op,
                " that is not part of any ellipsis");
    if (c == ',') {
      EMBER_CHECK(r.inputs.size() < num_operands,
                  "einsum(): fewer operands were provided than specified in the equation");
      r.inputs.emplace_back();
      ellipsis = false;
    } else {
      EMBER_CHECK(is_letter(c), "einsum(): invalid subscript given at index ", i,
                  " in the equation string, subscripts must be in [a-zA-Z]");
      r.inputs.back().push_back(letter_id(c));
    }
  }
  EMBER_CHECK(dots == 0, "einsum(): found '.' for operand ", r.inputs.size() - 1,
              " that is not part of any ellipsis");
  EMBER_CHECK(r.inputs.size() == num_operands,
              "einsum(): more operands were provided than specified in the equation");
  if (arrow == std::string::npos) return r;
  r.explicit_output = true;
  std::array<bool, kLetters> seen_in{}, seen_out{};
  for (const auto& in : r.inputs)
    for (int id : in)
      if (id != kEllipsis) seen_in[size_t(id)] = true;
  dots = 0;
  ellipsis = false;
  for (size_t i = arrow + 2; i < eq.size(); ++i) {
    char c = eq[i];
    if (c == ' ') continue;
    if (c == '.') {
      EMBER_CHECK(!ellipsis,
                  "einsum(): found '.' for output but an ellipsis (...) was already "
                  "found");
      if (++dots == 3) {
        r.output.push_back(kEllipsis);
        ellipsis = true;
        dots = 0;
      }
      continue;
    }
    EMBER_CHECK(dots == 0, "einsum(): found '.' for output that is not part of any ellipsis (...)");
    EMBER_CHECK(is_letter(c), "einsum(): invalid subscript given at index ", i,
                " in the equation string, subscripts must be in [a-zA-Z]");
    int id = letter_id(c);
    EMBER_CHECK(seen_in[size_t(id)], "einsum(): output subscript ", c,
                " does not appear in the equation for any input operand");
    EMBER_CHECK(!seen_out[size_t(id)], "einsum(): output subscript ", c,
                " appears more than once in the output");
    seen_out[size_t(id)] = true;
    r.output.push_back(id);
  }
  EMBER_CHECK(dots == 0, "einsum(): found '.' for output that is not part of any ellipsis (...)");
  return r;
}

// Sums `dims` of t keeping them as size 1, in t's own dtype (no widening of integers).
Tensor sum_keep(const Tensor& t, const DimVector& dims) {
  return dims.empty() ? t : sum(t, dims, true, t.dtype());
}

// Combines two aligned operands, summing `sum_dims` (PyTorch's sumproduct_pair).
Tensor sumproduct_pair(Tensor left, Tensor right, const std::vector<bool>& summed) {
  int64_t ndim = left.dim();
  DimVector lro, lo, ro, sum_dims, lsum, rsum;
  int64_t lro_size = 1, lo_size = 1, ro_size = 1, sum_size = 1;
  for (int64_t i = 0; i < ndim; ++i) {
    // a dim is broadcast only where its size is 1: a size-0 dim is real (an empty product)
    bool sl = left.size(i) != 1, sr = right.size(i) != 1;
    if (summed[size_t(i)]) {
      sum_dims.push_back(i);
      if (sl && sr) sum_size *= left.size(i);
      else if (sl) lsum.push_back(i);
      else if (sr) rsum.push_back(i);
    } else if (sl && sr) {
      lro.push_back(i);
      lro_size *= left.size(i);
    } else if (sl) {
      lo.push_back(i);
      lo_size *= left.size(i);
    } else {
      ro.push_back(i);
      ro_size *= right.size(i);
    }
  }
  left = sum_keep(left, lsum);
  right = sum_keep(right, rsum);
  bool contracts = false;
  for (int64_t d : sum_dims) contracts = contracts || (left.size(d) != 1 && right.size(d) != 1);
  if (!contracts) return left * right;  // nothing shared to sum: a broadcast product
  DimVector lperm, rperm, out_size, operm(static_cast<size_t>(ndim));
  for (const DimVector* part : {&lro, &lo, &sum_dims, &ro})
    for (int64_t d : *part) lperm.push_back(d);
  for (const DimVector* part : {&lro, &sum_dims, &ro, &lo})
    for (int64_t d : *part) rperm.push_back(d);
  for (int64_t d : lro) out_size.push_back(left.size(d));
  for (int64_t d : lo) out_size.push_back(left.size(d));
  for (size_t i = 0; i < sum_dims.size(); ++i) out_size.push_back(1);
  for (int64_t d : ro) out_size.push_back(right.size(d));
  for (size_t i = 0; i < lperm.size(); ++i) operm[size_t(lperm[i])] = int64_t(i);
  Tensor l = reshape(permute(left, lperm), {lro_size, lo_size, sum_size});
  Tensor r = reshape(permute(right, rperm), {lro_size, sum_size, ro_size});
  return permute(view(bmm(l, r), out_size), operm);
}

// Whether some label is summed over: absent from the explicit output, or repeated (implicit).
bool sums_a_label(const Equation& eq) {
  std::vector<int> count(kLetters + 1, 0);
  for (const auto& in : eq.inputs)
    for (int id : in)
      if (id >= 0 && id < kLetters) ++count[size_t(id)];
  for (int id = 0; id < kLetters; ++id) {
    if (!count[size_t(id)]) continue;
    bool in_output = eq.explicit_output
                         ? std::find(eq.output.begin(), eq.output.end(), id) != eq.output.end()
                         : count[size_t(id)] == 1;
    if (!in_output) return true;
  }
  return false;
}

}  // namespace

Tensor einsum(const std::string& equation, TensorList operands) {
  EMBER_CHECK(!operands.empty(), "einsum(): must provide at least one operand");
  Equation eq = parse(equation, operands.size());
  const size_t nops = operands.size();
  bool mixed = false;
  for (size_t i = 1; i < nops; ++i) mixed = mixed || operands[i].dtype() != operands[0].dtype();
  if (mixed && !sums_a_label(eq)) {
    // no label is summed: torch multiplies the operands with broadcasting, promoting dtypes (a
    // contraction goes through a batched matmul, which requires one dtype: the check below)
    ScalarType rt = result_type(operands);
    std::vector<Tensor> promoted;
    for (const Tensor& t : operands) promoted.push_back(t.to(rt));
    return einsum(equation, TensorList(promoted));
  }
  for (size_t i = 1; i < nops; ++i)
    EMBER_CHECK(operands[i].dtype() == operands[0].dtype(), "einsum(): expected scalar type ",
                scalar_type_name(operands[0].dtype()), " but found ",
                scalar_type_name(operands[i].dtype()), " for operand ", i);

  // Dims covered by each operand's ellipsis; the ellipsis dims of all operands right-align.
  int64_t ell_ndim = 0;
  std::vector<int64_t> op_ell(nops, 0);
  for (size_t i = 0; i < nops; ++i) {
    const auto& in = eq.inputs[i];
    bool has_ell = std::find(in.begin(), in.end(), kEllipsis) != in.end();
    int64_t nlabels = int64_t(in.size()) - (has_ell ? 1 : 0), ndim = operands[i].dim();
    if (has_ell) {
      EMBER_CHECK(nlabels <= ndim, "einsum(): the number of subscripts in the equation (", nlabels,
                  ") is more than the number of dimensions (", ndim, ") for operand ", i);
      op_ell[i] = ndim - nlabels;
      ell_ndim = std::max(ell_ndim, op_ell[i]);
    } else {
      EMBER_CHECK(nlabels == ndim, "einsum(): the number of subscripts in the equation (", nlabels,
                  ") does not match the number of dimensions (", ndim, ") for operand ", i,
                  " and no ellipsis was given");
    }
  }

  // Global ids: letters 0..51, ellipsis dims 52.. ; each operand's dims as ids.
  const int nids = kLetters + int(ell_ndim);
  std::vector<std::vector<int>> op_ids(nops);
  std::vector<int> count(size_t(nids), 0);
  for (size_t i = 0; i < nops; ++i) {
    for (int id : eq.inputs[i]) {
      if (id == kEllipsis) {
        for (int64_t e = ell_ndim - op_ell[i]; e < ell_ndim; ++e)
          op_ids[i].push_back(kLetters + int(e));
      } else {
        op_ids[i].push_back(id);
      }
    }
    for (int id : op_ids[i]) ++count[size_t(id)];
  }

  // Output ids: explicit, or (implicit) the ellipsis then letters seen once, in sorted order.
  std::vector<int> out_ids;
  if (eq.explicit_output) {
    for (int id : eq.output) {
      if (id != kEllipsis) out_ids.push_back(id);
      else
        for (int64_t e = 0; e < ell_ndim; ++e) out_ids.push_back(kLetters + int(e));
    }
  } else {
    for (int64_t e = 0; e < ell_ndim; ++e) out_ids.push_back(kLetters + int(e));
    for (int id = 0; id < kLetters; ++id)
      if (count[size_t(id)] == 1) out_ids.push_back(id);
  }
  std::vector<int> pos(size_t(nids), -1);  // aligned position of each id
  std::vector<int> aligned = out_ids;
  for (int id = 0; id < nids; ++id)
    if (count[size_t(id)] > 0 && std::find(out_ids.begin(), out_ids.end(), id) == out_ids.end())
      aligned.push_back(id);
  for (size_t p = 0; p < aligned.size(); ++p) pos[size_t(aligned[p])] = int(p);
  const int64_t nout = int64_t(out_ids.size()), ndim = int64_t(aligned.size());

  // Align every operand: diagonals for repeated ids, then permute and unsqueeze.
  std::vector<Tensor> ops(nops);
  std::vector<int64_t> seen_size(size_t(nids), 1);
  std::vector<int> owners(size_t(nids), 0);  // operands that mention each id
  for (size_t i = 0; i < nops; ++i) {
    Tensor t = operands[i];
    std::vector<int> ids = op_ids[i];
    for (bool again = true; again;) {
      again = false;
      for (size_t a = 0; a < ids.size() && !again; ++a)
        for (size_t b = a + 1; b < ids.size() && !again; ++b) {
          if (ids[a] != ids[b]) continue;
          EMBER_CHECK(t.size(int64_t(a)) == t.size(int64_t(b)), "einsum(): subscript ",
                      letter_of(ids[a]), " is repeated for operand ", i,
                      " but the sizes don't match, ", t.size(int64_t(a)),
                      " != ", t.size(int64_t(b)));
          t = diagonal(t, 0, int64_t(a), int64_t(b));
          int id = ids[a];
          ids.erase(ids.begin() + std::ptrdiff_t(b));
          ids.erase(ids.begin() + std::ptrdiff_t(a));
          ids.push_back(id);
          again = true;
        }
    }
    DimVector perm;
    for (int id : aligned)
      for (size_t d = 0; d < ids.size(); ++d)
        if (ids[d] == id) perm.push_back(int64_t(d));
    t = permute(t, perm);
    for (int64_t p = 0; p < ndim; ++p) {
      int id = aligned[size_t(p)];
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) {
        t = unsqueeze(t, p);
        continue;
      }
      ++owners[size_t(id)];
      int64_t s = t.size(p), &prev = seen_size[size_t(id)];
      if (id < kLetters)
        EMBER_CHECK(s == prev || s == 1 || prev == 1, "einsum(): subscript ", letter_of(id),
                    " has size ", s, " for operand ", i,
                    " which does not broadcast with previously seen size ", prev);
      else
        EMBER_CHECK(s == prev || s == 1 || prev == 1,
                    "einsum(): operands do not broadcast: "
                    "ellipsis dimension ",
                    id - kLetters, " has size ", s, " for operand ", i,
                    " but previously seen size ", prev);
      if (s != 1) prev = s;
    }
    ops[i] = t;
  }

  Tensor result;
  if (nops == 1) {
    DimVector dims;
    for (int64_t p = nout; p < ndim; ++p) dims.push_back(p);
    result = dims.empty() ? ops[0] : sum(ops[0], dims, true);
  } else {
    // Contracted ids only one operand mentions are summed before any product.
    for (size_t i = 0; i < nops; ++i) {
      DimVector own;
      for (int64_t p = nout; p < ndim; ++p)
        if (owners[size_t(aligned[size_t(p)])] == 1 && ops[i].size(p) > 1) own.push_back(p);
      ops[i] = sum_keep(ops[i], own);
    }
    // last[p]: the last operand mentioning contracted position p; it is summed at that pair.
    std::vector<size_t> last(size_t(ndim), 0);
    for (size_t i = 0; i < nops; ++i)
      for (int id : op_ids[i]) last[size_t(pos[size_t(id)])] = i;
    result = ops[0];
    for (size_t i = 1; i < nops; ++i) {
      std::vector<bool> summed(size_t(ndim), false);
      for (int64_t p = nout; p < ndim; ++p) summed[size_t(p)] = last[size_t(p)] <= i;
      result = sumproduct_pair(result, ops[i], summed);
    }
  }
  // Contracted dims are size 1 now; drop them, and give broadcast output dims their full size.
  DimVector drop;
  for (int64_t p = nout; p < ndim; ++p) drop.push_back(p);
  // As a view (torch's einsum ends in ViewBackward0): dropping size-1 dims always is one.
  if (!drop.empty()) {
    DimVector kept(result.sizes());
    kept.resize(size_t(nout));
    result = view(result, kept);
  }
  return result;
}

}  // namespace ember
