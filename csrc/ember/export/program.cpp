#include "ember/export/program.h"

#include <cmath>
#include <functional>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "ember/autograd/grad_mode.h"
#include "ember/core/error.h"
#include "ember/export/interp.h"
#include "ember/ops/ops.h"
#include "ember/serialize/serialize.h"

namespace ember::export_ {

using namespace detail;

namespace {

using serialize::Value;

// Version 2 adds buffer mutations (an older runtime would silently skip them); a file without
// them is written as version 1, which both read.
constexpr int64_t kFormatVersion = 2;

[[noreturn]] void corrupt(const std::string& what) {
  EMBER_ERROR(ErrorKind::Runtime, "ember::export_::load: invalid exported program: ", what);
}

RValue unary(Args& a, Tensor (*f)(const Tensor&)) { return of_tensor(f(a.tensor(0))); }

std::vector<int64_t> pool_stride(Args& a, size_t k) { return a.ints(k); }

Tensor sdpa(Args& a) {
  const Tensor& q = a.tensor(0);
  const Tensor& k = a.tensor(1);
  const Tensor& v = a.tensor(2);
  std::optional<Tensor> mask = a.opt_tensor(3);
  double dropout_p = a.number(4);
  bool causal = a.boolean(5);
  std::optional<double> scale = a.opt_number(6);
  EMBER_CHECK(dropout_p == 0.0,
              "scaled_dot_product_attention: expected dropout_p == 0 in an exported program; got ",
              dropout_p);
  int64_t L = q.size(-2), S = k.size(-2);
  double factor = scale ? *scale : 1.0 / std::sqrt(double(q.size(-1)));
  Tensor scores = matmul(q * Scalar(factor), transpose(k, -2, -1));
  if (causal) {
    Tensor keep = ones({L, S}, TensorOptions().dtype(kBool)).tril();
    scores = masked_fill(scores, logical_not(keep), Scalar(-INFINITY));
  }
  if (mask) {
    if (mask->dtype() == kBool) scores = masked_fill(scores, logical_not(*mask), Scalar(-INFINITY));
    else scores = scores + *mask;
  }
  return matmul(softmax(scores, -1), v);
}

bool is_number(const RValue& v) {
  return v.kind == RValue::Kind::Int || v.kind == RValue::Kind::Double ||
         v.kind == RValue::Kind::Bool;
}

// Python arithmetic on two numbers of which one is a float (sizes scaled at run time).
RValue float_arith(Args& a, char op) {
  double x = a.number(0), y = a.number(1);
  switch (op) {
    case '+':
      return of_double(x + y * a.number(2));
    case '-':
      return of_double(x - y * a.number(2));
    case '*':
      return of_double(x * y);
    case '/':
      EMBER_CHECK(y != 0, a.op, ": float division by zero");
      return of_double(x / y);
    case 'f':
      EMBER_CHECK(y != 0, a.op, ": float division by zero");
      return of_double(std::floor(x / y));
    case '^':
      return of_double(std::pow(x, y));
    default:
      EMBER_ERROR(ErrorKind::Runtime, a.op, ": unknown arithmetic");
  }
}

// Python-style arithmetic: ints stay ints (sizes computed at run time), numbers stay numbers,
// anything with a tensor is a tensor op.
RValue arith(Args& a, char op) {
  if (is_number(a.v[0]) && is_number(a.v[1]) &&
      (a.v[0].kind == RValue::Kind::Double || a.v[1].kind == RValue::Kind::Double ||
       (op == '^' && a.v[1].kind == RValue::Kind::Int && a.v[1].i < 0)))
    return float_arith(a, op);
  bool ints = a.v[0].kind == RValue::Kind::Int && a.v[1].kind == RValue::Kind::Int;
  if (ints) {
    int64_t x = a.v[0].i, y = a.v[1].i;
    switch (op) {
      case '+':
        return of_int(x + y * (a.v.size() > 2 ? a.integer(2) : 1));
      case '-':
        return of_int(x - y * (a.v.size() > 2 ? a.integer(2) : 1));
      case '*':
        return of_int(x * y);
      case '/':
        EMBER_CHECK(y != 0, a.op, ": division by zero");
        if (a.v.size() > 2 && a.v[2].kind == RValue::Kind::Str) {
          int64_t q = x / y;
          if (a.v[2].s == "floor" && (x % y != 0) && ((x < 0) != (y < 0))) --q;
          return of_int(q);
        }
        return of_double(double(x) / double(y));
      case 'f': {
        EMBER_CHECK(y != 0, a.op, ": division by zero");
        int64_t q = x / y;
        if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
        return of_int(q);
      }
      case '^': {
        int64_t r = 1;
        for (int64_t k = 0; k < y; ++k) r *= x;
        return of_int(r);
      }
      default:
        break;
    }
  }
  Tensor x = a.operand(0), y = a.operand(1);
  switch (op) {
    case '+':
      return of_tensor(add(
          x, y, a.v[2].kind == RValue::Kind::Double ? Scalar(a.number(2)) : Scalar(a.integer(2))));
    case '-':
      return of_tensor(sub(
          x, y, a.v[2].kind == RValue::Kind::Double ? Scalar(a.number(2)) : Scalar(a.integer(2))));
    case '*':
      return of_tensor(mul(x, y));
    case '/':
      return of_tensor(div(x, y, a.opt_str(2)));
    case 'f':
      return of_tensor(div(x, y, std::string("floor")));
    case '^':
      return of_tensor(pow(x, y));
    default:
      EMBER_ERROR(ErrorKind::Runtime, a.op, ": unknown arithmetic");
  }
}

std::vector<TensorIndex> index_of(const RValue& spec, const char* op) {
  std::vector<TensorIndex> out;
  auto one = [&](const RValue& e) {
    switch (e.kind) {
      case RValue::Kind::None:
        out.emplace_back(NoneIndex{});
        break;
      case RValue::Kind::Ellipsis:
        out.emplace_back(EllipsisIndex{});
        break;
      case RValue::Kind::Int:
        out.emplace_back(e.i);
        break;
      case RValue::Kind::Bool:
        out.emplace_back(e.b);
        break;
      case RValue::Kind::Tensor:
        out.emplace_back(e.t);
        break;
      case RValue::Kind::Slice: {
        auto bound = [&](const RValue& b) -> std::optional<int64_t> {
          if (b.kind == RValue::Kind::None) return std::nullopt;
          EMBER_CHECK(b.kind == RValue::Kind::Int, op, ": expected int slice bounds; got ",
                      kind_name(b.kind));
          return b.i;
        };
        out.emplace_back(Slice(bound(e.items[0]), bound(e.items[1]), bound(e.items[2])));
        break;
      }
      default:
        EMBER_ERROR(ErrorKind::Runtime, op, ": expected an index; got ", kind_name(e.kind));
    }
  };
  if (spec.kind == RValue::Kind::List) {
    for (const auto& e : spec.items) one(e);
  } else {
    one(spec);
  }
  return out;
}

[[noreturn]] RnnMode throw_bad_mode(const std::string& name) {
  EMBER_ERROR(ErrorKind::Runtime, "rnn_layer: expected mode LSTM, GRU, RNN_TANH or RNN_RELU; got '",
              name, "'");
}

const std::vector<OpDef>& op_table() {
  static const std::vector<OpDef> table = {
      {"linear", "TTO",
       [](Args& a) { return of_tensor(linear(a.tensor(0), a.tensor(1), a.opt_tensor(2))); }},
      {"conv1d", "TTOIPIi",
       [](Args& a) {
         if (a.v[4].kind == RValue::Kind::Str)
           return of_tensor(conv1d_padding_mode(a.tensor(0), a.tensor(1), a.opt_tensor(2),
                                                a.ints(3), a.str(4), a.ints(5), a.integer(6)));
         return of_tensor(conv1d(a.tensor(0), a.tensor(1), a.opt_tensor(2), a.ints(3), a.ints(4),
                                 a.ints(5), a.integer(6)));
       }},
      {"conv2d", "TTOIPIi",
       [](Args& a) {
         if (a.v[4].kind == RValue::Kind::Str)
           return of_tensor(conv2d_padding_mode(a.tensor(0), a.tensor(1), a.opt_tensor(2),
                                                a.ints(3), a.str(4), a.ints(5), a.integer(6)));
         return of_tensor(conv2d(a.tensor(0), a.tensor(1), a.opt_tensor(2), a.ints(3), a.ints(4),
                                 a.ints(5), a.integer(6)));
       }},
      {"batch_norm", "TOOOObff",
       [](Args& a) {
         return of_tensor(batch_norm(a.tensor(0), a.opt_tensor(3), a.opt_tensor(4), a.opt_tensor(1),
                                     a.opt_tensor(2), a.boolean(5), a.number(6), a.number(7)));
       }},
      {"layer_norm", "TIOOf",
       [](Args& a) {
         return of_tensor(
             layer_norm(a.tensor(0), a.ints(1), a.opt_tensor(2), a.opt_tensor(3), a.number(4)));
       }},
      {"group_norm", "TiOOf",
       [](Args& a) {
         return of_tensor(
             group_norm(a.tensor(0), a.integer(1), a.opt_tensor(2), a.opt_tensor(3), a.number(4)));
       }},
      {"relu", "T", [](Args& a) { return unary(a, relu); }},
      {"sigmoid", "T", [](Args& a) { return unary(a, sigmoid); }},
      {"tanh", "T", [](Args& a) { return unary(a, tanh); }},
      {"silu", "T", [](Args& a) { return unary(a, silu); }},
      {"mish", "T", [](Args& a) { return unary(a, mish); }},
      {"hardswish", "T", [](Args& a) { return unary(a, hardswish); }},
      {"hardsigmoid", "T", [](Args& a) { return unary(a, hardsigmoid); }},
      {"exp", "T", [](Args& a) { return unary(a, exp); }},
      {"log", "T", [](Args& a) { return unary(a, log); }},
      {"sqrt", "T", [](Args& a) { return unary(a, sqrt); }},
      {"rsqrt", "T", [](Args& a) { return unary(a, rsqrt); }},
      {"neg", "T", [](Args& a) { return unary(a, neg); }},
      {"abs", "T", [](Args& a) { return unary(a, abs); }},
      {"erf", "T", [](Args& a) { return unary(a, erf); }},
      {"gelu", "Ts", [](Args& a) { return of_tensor(gelu(a.tensor(0), a.str(1))); }},
      {"leaky_relu", "Tf",
       [](Args& a) { return of_tensor(leaky_relu(a.tensor(0), Scalar(a.number(1)))); }},
      {"hardtanh", "Tff",
       [](Args& a) {
         return of_tensor(hardtanh(a.tensor(0), Scalar(a.number(1)), Scalar(a.number(2))));
       }},
      {"elu", "Tf", [](Args& a) { return of_tensor(elu(a.tensor(0), Scalar(a.number(1)))); }},
      {"softplus", "Tff",
       [](Args& a) {
         return of_tensor(softplus(a.tensor(0), Scalar(a.number(1)), Scalar(a.number(2))));
       }},
      {"softmax", "Ti", [](Args& a) { return of_tensor(softmax(a.tensor(0), a.integer(1))); }},
      {"log_softmax", "Ti",
       [](Args& a) { return of_tensor(log_softmax(a.tensor(0), a.integer(1))); }},
      {"max_pool1d", "TIIIIb",
       [](Args& a) {
         return of_tensor(max_pool1d(a.tensor(0), a.ints(1), pool_stride(a, 2), a.ints(3),
                                     a.ints(4), a.boolean(5)));
       }},
      {"max_pool2d", "TIIIIb",
       [](Args& a) {
         return of_tensor(max_pool2d(a.tensor(0), a.ints(1), pool_stride(a, 2), a.ints(3),
                                     a.ints(4), a.boolean(5)));
       }},
      {"avg_pool1d", "TIIIbb",
       [](Args& a) {
         return of_tensor(avg_pool1d(a.tensor(0), a.ints(1), pool_stride(a, 2), a.ints(3),
                                     a.boolean(4), a.boolean(5)));
       }},
      {"avg_pool2d", "TIIIbbj",
       [](Args& a) {
         return of_tensor(avg_pool2d(a.tensor(0), a.ints(1), pool_stride(a, 2), a.ints(3),
                                     a.boolean(4), a.boolean(5), a.opt_int(6)));
       }},
      {"adaptive_avg_pool1d", "TI",
       [](Args& a) { return of_tensor(adaptive_avg_pool1d(a.tensor(0), a.ints(1))); }},
      {"adaptive_avg_pool2d", "TI",
       [](Args& a) { return of_tensor(adaptive_avg_pool2d(a.tensor(0), a.ints(1))); }},
      {"flatten", "Tii",
       [](Args& a) { return of_tensor(flatten(a.tensor(0), a.integer(1), a.integer(2))); }},
      {"view", "TI", [](Args& a) { return of_tensor(view(a.tensor(0), a.ints(1))); }},
      {"reshape", "TI", [](Args& a) { return of_tensor(reshape(a.tensor(0), a.ints(1))); }},
      {"permute", "TI", [](Args& a) { return of_tensor(permute(a.tensor(0), a.ints(1))); }},
      {"transpose", "Tii",
       [](Args& a) { return of_tensor(transpose(a.tensor(0), a.integer(1), a.integer(2))); }},
      {"t", "T", [](Args& a) { return of_tensor(a.tensor(0).t()); }},
      {"contiguous", "T", [](Args& a) { return of_tensor(a.tensor(0).contiguous()); }},
      {"clone", "T", [](Args& a) { return of_tensor(a.tensor(0).clone()); }},
      {"unsqueeze", "Ti", [](Args& a) { return of_tensor(unsqueeze(a.tensor(0), a.integer(1))); }},
      {"squeeze", "Tj",
       [](Args& a) {
         auto dim = a.opt_int(1);
         return of_tensor(dim ? a.tensor(0).squeeze(*dim) : a.tensor(0).squeeze());
       }},
      {"expand", "TI", [](Args& a) { return of_tensor(expand(a.tensor(0), a.ints(1))); }},
      {"cat", "Li", [](Args& a) { return of_tensor(cat(a.tensors(0), a.integer(1))); }},
      {"stack", "Li", [](Args& a) { return of_tensor(stack(a.tensors(0), a.integer(1))); }},
      {"chunk", "Tii",
       [](Args& a) { return of_tensors(chunk(a.tensor(0), a.integer(1), a.integer(2))); }},
      {"split", "Tii",
       [](Args& a) { return of_tensors(split(a.tensor(0), a.integer(1), a.integer(2))); }},
      {"split_with_sizes", "TIi",
       [](Args& a) { return of_tensors(split_with_sizes(a.tensor(0), a.ints(1), a.integer(2))); }},
      {"unbind", "Ti", [](Args& a) { return of_tensors(unbind(a.tensor(0), a.integer(1))); }},
      {"getitem", "ax",
       [](Args& a) {
         const RValue& base = a.v[0];
         if (base.kind == RValue::Kind::List) {
           int64_t n = int64_t(base.items.size()), k = a.integer(1);
           EMBER_CHECK_INDEX(k >= -n && k < n, "getitem: index ", k, " is out of range for ", n,
                             " items");
           return base.items[size_t(k < 0 ? k + n : k)];
         }
         return of_tensor(getitem(a.tensor(0), index_of(a.v[1], "getitem")));
       }},
      {"add", "aaf", [](Args& a) { return arith(a, '+'); }},
      {"sub", "aaf", [](Args& a) { return arith(a, '-'); }},
      {"mul", "aa", [](Args& a) { return arith(a, '*'); }},
      {"div", "aaz", [](Args& a) { return arith(a, '/'); }},
      {"floordiv", "aa", [](Args& a) { return arith(a, 'f'); }},
      {"pow", "aa", [](Args& a) { return arith(a, '^'); }},
      {"matmul", "TT", [](Args& a) { return of_tensor(matmul(a.tensor(0), a.tensor(1))); }},
      {"bmm", "TT", [](Args& a) { return of_tensor(bmm(a.tensor(0), a.tensor(1))); }},
      {"mm", "TT", [](Args& a) { return of_tensor(mm(a.tensor(0), a.tensor(1))); }},
      {"embedding", "TT", [](Args& a) { return of_tensor(embedding(a.tensor(1), a.tensor(0))); }},
      {"dropout", "Tfb",
       [](Args& a) { return of_tensor(dropout(a.tensor(0), a.number(1), a.boolean(2))); }},
      {"scaled_dot_product_attention", "TTTOfbg", [](Args& a) { return of_tensor(sdpa(a)); }},
      {"mean", "TIb",
       [](Args& a) { return of_tensor(mean(a.tensor(0), a.ints(1), a.boolean(2))); }},
      {"sum", "TIb", [](Args& a) { return of_tensor(sum(a.tensor(0), a.ints(1), a.boolean(2))); }},
      {"amax", "TIb",
       [](Args& a) { return of_tensor(amax(a.tensor(0), a.ints(1), a.boolean(2))); }},
      {"masked_fill", "TTa",
       [](Args& a) { return of_tensor(masked_fill(a.tensor(0), a.tensor(1), a.operand(2))); }},
      {"to_dtype", "Td", [](Args& a) { return of_tensor(a.tensor(0).to(a.v[1].dtype)); }},
      {"size", "Ti", [](Args& a) { return of_int(a.tensor(0).size(a.integer(1))); }},
      {"rnn_layer", "TTOTTOOsb",
       [](Args& a) {
         const std::string& name = a.str(7);
         RnnMode mode = name == "LSTM"       ? RnnMode::LSTM
                        : name == "GRU"      ? RnnMode::GRU
                        : name == "RNN_TANH" ? RnnMode::RNN_TANH
                        : name == "RNN_RELU" ? RnnMode::RNN_RELU
                                             : throw_bad_mode(name);
         auto [out, h, c] =
             rnn_layer(a.tensor(0), a.tensor(1), a.opt_tensor(2), a.tensor(3), a.tensor(4),
                       a.opt_tensor(5), a.opt_tensor(6), mode, a.boolean(8));
         RValue cv = c.defined() ? of_tensor(c) : RValue();
         return of_list({of_tensor(out), of_tensor(h), cv});
       }},
      {"sizes", "T",
       [](Args& a) {
         std::vector<RValue> items;
         for (int64_t s : a.tensor(0).sizes()) items.push_back(of_int(s));
         return of_list(std::move(items));
       }},
  };
  return table;
}

const OpDef* find_op(std::string_view name) {
  static const std::unordered_map<std::string_view, const OpDef*> index = [] {
    std::unordered_map<std::string_view, const OpDef*> m;
    for (const auto& d : op_table()) m.emplace(d.name, &d);
    for (const auto& d : flow_op_table()) m.emplace(d.name, &d);
    for (const auto& d : math_op_table()) m.emplace(d.name, &d);
    return m;
  }();
  auto it = index.find(name);
  return it == index.end() ? nullptr : it->second;
}

const Value* field(const Value& dict, const std::string& key) {
  for (const auto& [k, v] : dict.entries)
    if (k.kind == Value::Kind::String && k.s == key) return &v;
  return nullptr;
}

const Value& need(const Value& dict, const std::string& key, Value::Kind kind,
                  const std::string& where) {
  const Value* v = field(dict, key);
  if (!v) corrupt(where + " has no '" + key + "'");
  bool ok = v->kind == kind || (kind == Value::Kind::List && (v->kind == Value::Kind::Tuple));
  if (!ok)
    corrupt(where + "'s '" + key + "' is a " + serialize::kind_name(v->kind) + ", expected a " +
            serialize::kind_name(kind));
  return *v;
}

}  // namespace

struct Graph {
  std::vector<InputSpec> inputs;
  std::map<std::string, Tensor> state;
  Block main;  // its input slots are `inputs`, in order
  // buffers_to_mutate: (state entry, output position in main.outputs after the user outputs)
  std::vector<std::pair<std::string, RValue>> mutations;
};

namespace {

std::shared_ptr<const Block> parse_subgraph(const Value& body, const std::string& where, int depth);

// Parses one argument; `slots` maps the names defined so far to their slots.
RValue parse_arg(const Value& v, const std::unordered_map<std::string, int64_t>& slots,
                 const std::string& where, int depth) {
  if (depth > 32) corrupt(where + ": arguments nest too deeply");
  RValue r;
  switch (v.kind) {
    case Value::Kind::None:
      return r;
    case Value::Kind::Bool:
      r.kind = RValue::Kind::Bool;
      r.b = v.b;
      return r;
    case Value::Kind::Int:
      return of_int(v.i);
    case Value::Kind::Double:
      return of_double(v.d);
    case Value::Kind::String:
      r.kind = RValue::Kind::Str;
      r.s = v.s;
      return r;
    case Value::Kind::List:
    case Value::Kind::Tuple: {
      std::vector<RValue> items;
      for (const auto& item : v.items) items.push_back(parse_arg(item, slots, where, depth + 1));
      return of_list(std::move(items));
    }
    case Value::Kind::Dict: {
      if (v.entries.size() != 1 || v.entries[0].first.kind != Value::Kind::String)
        corrupt(where + ": an argument dict must have one string key");
      const std::string& tag = v.entries[0].first.s;
      const Value& body = v.entries[0].second;
      if (tag == "ref") {
        if (body.kind != Value::Kind::String) corrupt(where + ": a 'ref' must be a string");
        auto it = slots.find(body.s);
        if (it == slots.end())
          corrupt(where + " refers to '" + body.s + "', which is not defined before it");
        r.kind = RValue::Kind::Ref;
        r.i = it->second;
        return r;
      }
      if (tag == "slice") {
        if ((body.kind != Value::Kind::List && body.kind != Value::Kind::Tuple) ||
            body.items.size() != 3)
          corrupt(where + ": a 'slice' must list start, stop and step");
        r.kind = RValue::Kind::Slice;
        for (const auto& b : body.items) {
          RValue e = parse_arg(b, slots, where, depth + 1);
          if (e.kind != RValue::Kind::None && e.kind != RValue::Kind::Int &&
              e.kind != RValue::Kind::Ref)
            corrupt(where + ": slice bounds must be ints, references or null");
          r.items.push_back(std::move(e));
        }
        return r;
      }
      if (tag == "ellipsis") {
        r.kind = RValue::Kind::Ellipsis;
        return r;
      }
      if (tag == "graph") {
        r.kind = RValue::Kind::Graph;
        r.graph = parse_subgraph(body, where, depth + 1);
        return r;
      }
      if (tag == "dtype") {
        auto dt = body.kind == Value::Kind::String ? dtype_named(body.s) : std::nullopt;
        if (!dt) corrupt(where + ": unknown dtype");
        r.kind = RValue::Kind::DType;
        r.dtype = *dt;
        return r;
      }
      corrupt(where + ": unknown argument tag '" + tag + "'");
    }
    default:
      corrupt(where + ": an argument cannot be a " + serialize::kind_name(v.kind));
  }
}

bool is_int_like(const RValue& v) {
  return v.kind == RValue::Kind::Int || v.kind == RValue::Kind::Ref;
}

// Checks a literal argument against its kind letter (references are checked when they run).
bool kind_ok(char kind, const RValue& v) {
  using K = RValue::Kind;
  if (v.kind == K::Ref) return kind != 'd' && kind != 'D' && kind != 'G';
  switch (kind) {
    case 'T':
      return false;
    case 'O':
      return v.kind == K::None;
    case 'i':
      return v.kind == K::Int || v.kind == K::Bool;
    case 'j':
      return v.kind == K::None || v.kind == K::Int;
    case 'f':
      return v.kind == K::Int || v.kind == K::Double || v.kind == K::Bool;
    case 'g':
      return v.kind == K::None || v.kind == K::Int || v.kind == K::Double;
    case 'b':
      return v.kind == K::Bool || v.kind == K::Int;
    case 's':
      return v.kind == K::Str;
    case 'z':
      return v.kind == K::None || v.kind == K::Str;
    case 'I':
    case 'P':
      if (kind == 'P' && v.kind == K::Str) return true;
      if (v.kind == K::Int) return true;
      if (v.kind != K::List) return false;
      for (const auto& e : v.items)
        if (!is_int_like(e)) return false;
      return true;
    case 'L':
      if (v.kind != K::List) return false;
      for (const auto& e : v.items)
        if (e.kind != K::Ref) return false;
      return true;
    case 'a':
      return v.kind == K::Int || v.kind == K::Double || v.kind == K::Bool;
    case 'x':
      return true;  // any index element; getitem checks at run time
    case 'd':
      return v.kind == K::DType;
    case 'D':
      return v.kind == K::DType || v.kind == K::None;
    case 'G':
      return v.kind == K::Graph;
    default:
      return false;
  }
}

RValue resolve(const RValue& a, const std::vector<RValue>& slots) {
  if (a.kind == RValue::Kind::Ref) return slots[size_t(a.i)];
  if (a.items.empty()) return a;  // a Graph argument shares its block (no items)
  RValue out = a;
  for (auto& item : out.items) item = resolve(item, slots);
  return out;
}

int64_t define_slot(std::unordered_map<std::string, int64_t>& slots, const std::string& name,
                    const std::string& where) {
  if (name.empty()) corrupt(where + " has an empty name");
  int64_t slot = int64_t(slots.size());
  if (!slots.emplace(name, slot).second) corrupt(where + ": '" + name + "' is defined twice");
  return slot;
}

// Parses a list of nodes into `block`, defining each node's name after its arguments.
void parse_nodes(const Value& nodes, Block& block, std::unordered_map<std::string, int64_t>& slots,
                 int depth) {
  for (const auto& n : nodes.items) {
    if (n.kind != Value::Kind::Dict) corrupt("a node is not a dict");
    Block::Node node;
    node.name = need(n, "name", Value::Kind::String, "a node").s;
    std::string where = "node '" + node.name + "'";
    const std::string& op = need(n, "op", Value::Kind::String, where).s;
    node.op = find_op(op);
    if (!node.op) corrupt(where + " calls '" + op + "', which this runtime does not run");
    const Value& args = need(n, "args", Value::Kind::List, where);
    std::string_view kinds = node.op->kinds;
    if (args.items.size() != kinds.size())
      corrupt(where + " (" + op + ") has " + std::to_string(args.items.size()) +
              " arguments, expected " + std::to_string(kinds.size()));
    for (size_t k = 0; k < args.items.size(); ++k) {
      RValue a = parse_arg(args.items[k], slots, where, depth);
      if (!kind_ok(kinds[k], a))
        corrupt(where + " (" + op + "): argument " + std::to_string(k) + " is a " +
                kind_name(a.kind) + " literal, which does not fit");
      node.args.push_back(std::move(a));
    }
    if (op == "cond") {  // both branches take the operands
      size_t n_ops = node.args[3].items.size();
      for (size_t k : {size_t(1), size_t(2)})
        if (size_t(node.args[k].graph->num_inputs) != n_ops)
          corrupt(where + " (cond): a branch takes " +
                  std::to_string(node.args[k].graph->num_inputs) + " inputs, the node passes " +
                  std::to_string(n_ops));
    }
    node.slot = define_slot(slots, node.name, where);
    block.nodes.push_back(std::move(node));
  }
  block.num_slots = int64_t(slots.size());
}

// A cond branch: {"inputs": [names], "input_shapes": [[int | str] | null] (optional), "nodes":
// [...], "outputs": [refs]}; its names are its own (it sees only its inputs).
std::shared_ptr<const Block> parse_subgraph(const Value& body, const std::string& where,
                                            int depth) {
  if (depth > 32) corrupt(where + ": graphs nest too deeply");
  if (body.kind != Value::Kind::Dict) corrupt(where + ": a 'graph' must be a dict");
  auto block = std::make_shared<Block>();
  std::unordered_map<std::string, int64_t> slots;
  for (const auto& name : need(body, "inputs", Value::Kind::List, where + "'s graph").items) {
    if (name.kind != Value::Kind::String) corrupt(where + ": a graph input name is not a str");
    define_slot(slots, name.s, where);
  }
  block->num_inputs = int64_t(slots.size());
  if (const Value* shapes = field(body, "input_shapes")) {
    if (shapes->kind != Value::Kind::List || shapes->items.size() != slots.size())
      corrupt(where + ": a graph's input_shapes must list one entry per input");
    for (const auto& s : shapes->items) {
      std::vector<int64_t> dims;
      if (s.kind == Value::Kind::List) {
        for (const auto& d : s.items) dims.push_back(d.kind == Value::Kind::Int ? d.i : -1);
      } else if (s.kind != Value::Kind::None) {
        corrupt(where + ": a graph input shape must be a list or null");
      }
      block->input_shapes.push_back(std::move(dims));
    }
  }
  parse_nodes(need(body, "nodes", Value::Kind::List, where + "'s graph"), *block, slots, depth);
  for (const auto& o : need(body, "outputs", Value::Kind::List, where + "'s graph").items) {
    RValue r = parse_arg(o, slots, where + "'s graph output", depth);
    if (r.kind != RValue::Kind::Ref) corrupt(where + ": a graph output must be a reference");
    block->outputs.push_back(std::move(r));
  }
  return block;
}

}  // namespace

std::vector<RValue> detail::run_block(const Block& block, std::vector<RValue> inputs) {
  EMBER_CHECK(int64_t(inputs.size()) == block.num_inputs, "cond: expected ", block.num_inputs,
              " operands; got ", inputs.size());
  std::vector<RValue> slots(size_t(block.num_slots));
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (k < block.input_shapes.size() && !block.input_shapes[k].empty() &&
        inputs[k].kind == RValue::Kind::Tensor) {
      const auto& want = block.input_shapes[k];
      const Tensor& t = inputs[k].t;
      bool ok = t.dim() == int64_t(want.size());
      for (size_t d = 0; ok && d < want.size(); ++d)
        ok = want[d] < 0 || t.size(int64_t(d)) == want[d];
      EMBER_CHECK(ok, "cond: operand ", k, " has sizes ", t.sizes(),
                  ", which differ from the static sizes the branch was exported with");
    }
    slots[k] = std::move(inputs[k]);
  }
  for (const auto& node : block.nodes) {
    std::vector<RValue> args;
    args.reserve(node.args.size());
    for (const auto& a : node.args) args.push_back(resolve(a, slots));
    Args view{node.op->name, args};
    slots[size_t(node.slot)] = node.op->fn(view);
  }
  std::vector<RValue> out;
  for (const auto& o : block.outputs) out.push_back(slots[size_t(o.i)]);
  return out;
}

ExportedProgram::ExportedProgram() = default;
ExportedProgram::~ExportedProgram() = default;
ExportedProgram::ExportedProgram(ExportedProgram&&) noexcept = default;
ExportedProgram& ExportedProgram::operator=(ExportedProgram&&) noexcept = default;

const std::vector<InputSpec>& ExportedProgram::inputs() const { return graph_->inputs; }

std::vector<InputSpec> ExportedProgram::user_inputs() const {
  std::vector<InputSpec> out;
  for (const auto& in : graph_->inputs)
    if (in.kind == "user_input") out.push_back(in);
  return out;
}

const std::map<std::string, Tensor>& ExportedProgram::state_dict() const { return graph_->state; }

size_t ExportedProgram::num_nodes() const { return graph_->main.nodes.size(); }

std::vector<std::string> ExportedProgram::mutated_buffers() const {
  std::vector<std::string> out;
  for (const auto& [target, value] : graph_->mutations) out.push_back(target);
  return out;
}

ExportedProgram load(const std::string& path) {
  Value root;
  try {
    root = serialize::load_file(path);
  } catch (const Error& e) {
    EMBER_ERROR(ErrorKind::Runtime, "ember::export_::load: cannot read '", path, "': ", e.what());
  }
  if (root.kind != Value::Kind::Dict) corrupt("the file is a checkpoint, not an exported program");
  const Value* fmt = field(root, "format");
  if (!fmt || fmt->kind != Value::Kind::String || fmt->s != "ember.export")
    corrupt("the file is a checkpoint, not an exported program (no format 'ember.export')");
  const Value& version = need(root, "version", Value::Kind::Int, "the program");
  if (version.i < 1 || version.i > kFormatVersion)
    corrupt("format version " + std::to_string(version.i) + " is not supported (this build reads " +
            std::to_string(kFormatVersion) + ")");

  auto g = std::make_unique<Graph>();
  const Value& state = need(root, "state", Value::Kind::Dict, "the program");
  for (const auto& [k, v] : state.entries) {
    if (k.kind != Value::Kind::String || v.kind != Value::Kind::Tensor)
      corrupt("'state' must map names to tensors");
    g->state[k.s] = v.tensor;
  }

  std::unordered_map<std::string, int64_t> slots;
  auto define = [&](const std::string& name, const std::string& where) {
    define_slot(slots, name, where);
  };

  const Value& inputs = need(root, "inputs", Value::Kind::List, "the program");
  for (const auto& in : inputs.items) {
    if (in.kind != Value::Kind::Dict) corrupt("an input is not a dict");
    InputSpec spec;
    spec.name = need(in, "name", Value::Kind::String, "an input").s;
    std::string where = "input '" + spec.name + "'";
    spec.kind = need(in, "kind", Value::Kind::String, where).s;
    if (spec.kind != "parameter" && spec.kind != "buffer" && spec.kind != "constant" &&
        spec.kind != "user_input")
      corrupt(where + " has unknown kind '" + spec.kind + "'");
    auto dt = dtype_named(need(in, "dtype", Value::Kind::String, where).s);
    if (!dt) corrupt(where + " has an unknown dtype");
    spec.dtype = *dt;
    for (const auto& d : need(in, "shape", Value::Kind::List, where).items) {
      if (d.kind == Value::Kind::Int && d.i >= 0) {
        spec.shape.push_back(d.i);
        spec.dims.emplace_back();
      } else if (d.kind == Value::Kind::String) {
        spec.shape.push_back(-1);
        spec.dims.push_back(d.s);
      } else {
        corrupt(where + " has a bad shape entry");
      }
    }
    if (spec.kind != "user_input") {
      spec.target = need(in, "target", Value::Kind::String, where).s;
      auto it = g->state.find(spec.target);
      if (it == g->state.end()) corrupt(where + ": no state entry '" + spec.target + "'");
      const Tensor& t = it->second;
      bool same = t.dtype() == spec.dtype && t.dim() == int64_t(spec.shape.size());
      for (int64_t k = 0; same && k < t.dim(); ++k) same = t.size(k) == spec.shape[size_t(k)];
      if (!same) corrupt(where + ": the state tensor's dtype or shape differs from the input's");
    }
    define(spec.name, where);
    g->main.num_slots = int64_t(slots.size());
    g->inputs.push_back(std::move(spec));
  }

  g->main.num_inputs = g->main.num_slots;
  parse_nodes(need(root, "nodes", Value::Kind::List, "the program"), g->main, slots, 0);
  for (const auto& o : need(root, "outputs", Value::Kind::List, "the program").items) {
    RValue r = parse_arg(o, slots, "an output", 0);
    if (r.kind != RValue::Kind::Ref) corrupt("an output must be a reference");
    g->main.outputs.push_back(std::move(r));
  }
  // buffers_to_mutate: each names a buffer input's state entry and the value written back
  if (const Value* muts = field(root, "mutations")) {
    if (version.i < 2) corrupt("'mutations' needs format version 2");
    if (muts->kind != Value::Kind::List) corrupt("'mutations' must be a list");
    for (const auto& m : muts->items) {
      if (m.kind != Value::Kind::Dict) corrupt("a mutation is not a dict");
      const std::string& target = need(m, "target", Value::Kind::String, "a mutation").s;
      bool is_buffer = false;
      for (const auto& in : g->inputs) is_buffer |= in.kind == "buffer" && in.target == target;
      if (!is_buffer) corrupt("a mutation names '" + target + "', which is no buffer input");
      const Value* val = field(m, "value");
      if (!val) corrupt("the mutation of '" + target + "' has no 'value'");
      RValue r = parse_arg(*val, slots, "the mutation of '" + target + "'", 0);
      if (r.kind != RValue::Kind::Ref) corrupt("a mutation's value must be a reference");
      g->main.outputs.push_back(r);  // computed with the outputs, written back after
      g->mutations.emplace_back(target, std::move(r));
    }
  }
  ExportedProgram p;
  p.graph_ = std::move(g);
  return p;
}

std::vector<Tensor> ExportedProgram::run(const std::vector<Tensor>& user) const {
  const Graph& g = *graph_;
  NoGradGuard no_grad;
  std::vector<RValue> inputs(g.inputs.size());
  size_t next_user = 0, n_user = 0;
  for (const auto& in : g.inputs) n_user += in.kind == "user_input";
  EMBER_CHECK(user.size() == n_user, "ExportedProgram.run: expected ", n_user, " inputs; got ",
              user.size());
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    const InputSpec& in = g.inputs[k];
    if (in.kind != "user_input") {
      inputs[k] = of_tensor(g.state.at(in.target));
      continue;
    }
    const Tensor& t = user[next_user++];
    EMBER_CHECK(t.defined(), "ExportedProgram.run: input '", in.name, "' is undefined");
    EMBER_CHECK(t.dtype() == in.dtype, "ExportedProgram.run: input '", in.name,
                "': expected dtype ", dtype_name(in.dtype), "; got ", dtype_name(t.dtype()));
    EMBER_CHECK(t.dim() == int64_t(in.shape.size()), "ExportedProgram.run: input '", in.name,
                "': expected ", in.shape.size(), " dims; got ", t.dim());
    for (size_t d = 0; d < in.shape.size(); ++d)
      EMBER_CHECK(in.shape[d] < 0 || t.size(int64_t(d)) == in.shape[d],
                  "ExportedProgram.run: input '", in.name, "': expected size ", in.shape[d],
                  " at dim ", d, " (a static dim); got ", t.size(int64_t(d)));
    inputs[k] = of_tensor(t);
  }
  std::vector<RValue> results = run_block(g.main, std::move(inputs));
  std::vector<Tensor> out;
  for (size_t k = 0; k < results.size(); ++k) {
    const RValue& v = results[k];
    EMBER_CHECK(v.kind == RValue::Kind::Tensor, "ExportedProgram.run: an output is a ",
                kind_name(v.kind), ", expected a Tensor");
    out.push_back(v.t);
  }
  // buffers_to_mutate: the new values (after the user outputs) are copied into the buffers,
  // as torch's ExportedProgram.module() does, once every output is computed
  size_t n_user_out = out.size() - g.mutations.size();
  for (size_t k = 0; k < g.mutations.size(); ++k) {
    Tensor buffer = g.state.at(g.mutations[k].first);
    buffer.copy_(out[n_user_out + k]);
  }
  out.resize(n_user_out);
  return out;
}

std::vector<std::string> runtime_ops() {
  std::vector<std::string> out;
  for (const auto& d : op_table()) out.emplace_back(d.name);
  for (const auto& d : flow_op_table()) out.emplace_back(d.name);
  for (const auto& d : math_op_table()) out.emplace_back(d.name);
  return out;
}

}  // namespace ember::export_
