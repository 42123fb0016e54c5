// ember's checkpoint format (docs/FORMAT.md): a 24-byte prelude, a JSON header describing the
// tree and the tensors, then 64-byte aligned raw little-endian tensor data.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "ember/ops/ops.h"
#include "ember/serialize/json.h"
#include "ember/serialize/serialize.h"

static_assert(std::endian::native == std::endian::little, "checkpoints store little-endian data");

namespace ember::serialize {

namespace {

constexpr char kMagic[8] = {'E', 'M', 'B', 'E', 'R', 'C', 'K', 'P'};
constexpr uint32_t kVersion = 1;
constexpr uint64_t kPrelude = 24;  // magic, version, flags, header length
constexpr uint64_t kAlign = 64;
constexpr int kMaxDepth = 200;

uint64_t align_up(uint64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// ---- writing ----

class Writer {
 public:
  std::string header(const Value& root) {
    std::string tree;
    node(root, tree, 0);
    std::string out = "{\"tensors\":[";
    for (size_t k = 0; k < tensors_.size(); ++k) {
      const Tensor& t = tensors_[k];
      if (k) out += ',';
      out += "{\"dtype\":\"" + std::string(dtype_name(t.dtype())) + "\",\"shape\":[";
      for (int64_t d = 0; d < t.dim(); ++d) out += (d ? "," : "") + std::to_string(t.size(d));
      out += "],\"offset\":" + std::to_string(offsets_[k]) +
             ",\"nbytes\":" + std::to_string(t.nbytes());
      if (t.requires_grad()) out += ",\"requires_grad\":true";
      out += '}';
    }
    return out + "],\"root\":" + tree + "}";
  }

  const std::vector<Tensor>& tensors() const { return tensors_; }
  const std::vector<uint64_t>& offsets() const { return offsets_; }

 private:
  void node(const Value& v, std::string& out, int depth) {
    EMBER_CHECK(depth <= kMaxDepth, "ember.save: the object nests deeper than ", kMaxDepth,
                " levels");
    switch (v.kind) {
      case Value::Kind::None:
        out += "null";
        return;
      case Value::Kind::Bool:
        out += v.b ? "true" : "false";
        return;
      case Value::Kind::Int:
        out += std::to_string(v.i);
        return;
      case Value::Kind::Double: {
        // C99 hex floats are exact; strtod reads them back, and inf/nan too.
        char buf[64];
        std::snprintf(buf, sizeof buf, "%a", v.d);
        out += "{\"float\":\"" + std::string(buf) + "\"}";
        return;
      }
      case Value::Kind::String:
        append_json_string(out, v.s);
        return;
      case Value::Kind::Tensor:
        out += "{\"tensor\":" + std::to_string(tensor_index(v.tensor)) + "}";
        return;
      case Value::Kind::List:
      case Value::Kind::Tuple: {
        out += v.kind == Value::Kind::List ? "{\"list\":[" : "{\"tuple\":[";
        for (size_t k = 0; k < v.items.size(); ++k) {
          if (k) out += ',';
          node(v.items[k], out, depth + 1);
        }
        out += "]}";
        return;
      }
      case Value::Kind::Dict: {
        out += "{\"dict\":[";
        for (size_t k = 0; k < v.entries.size(); ++k) {
          const Value& key = v.entries[k].first;
          EMBER_CHECK_TYPE(key.kind == Value::Kind::String || key.kind == Value::Kind::Int,
                           "ember.save: dict keys must be str or int; got ", kind_name(key.kind));
          out += k ? ",[" : "[";
          node(key, out, depth + 1);
          out += ',';
          node(v.entries[k].second, out, depth + 1);
          out += ']';
        }
        out += v.ordered ? "],\"ordered\":true}" : "]}";
        return;
      }
    }
  }

  // The same tensor object referenced twice is stored once and loads as one object.
  size_t tensor_index(const Tensor& t) {
    EMBER_CHECK(t.defined(), "ember.save: cannot save an undefined tensor");
    auto [it, fresh] = index_.try_emplace(t.impl(), tensors_.size());
    if (fresh) {
      offsets_.push_back(next_);
      next_ = align_up(next_ + t.nbytes());
      tensors_.push_back(t);
    }
    return it->second;
  }

  std::unordered_map<const TensorImpl*, size_t> index_;
  std::vector<Tensor> tensors_;
  std::vector<uint64_t> offsets_;
  uint64_t next_ = 0;
};

// ---- reading ----

struct TensorEntry {
  ScalarType dtype;
  std::vector<int64_t> shape;
  uint64_t offset, nbytes;
  bool requires_grad;
};

// A name read from the file, safe to put in an error message (ASCII, at most 32 characters).
std::string printable(const std::string& s) {
  std::string out;
  for (size_t k = 0; k < s.size() && k < 32; ++k) {
    unsigned char c = uint8_t(s[k]);
    if (c >= 0x20 && c < 0x7F) {
      out += char(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

[[noreturn]] void corrupt(const std::string& what) {
  EMBER_ERROR(ErrorKind::Runtime, "ember.load: corrupt checkpoint (", what, ")");
}

int64_t get_int(const Json& obj, const char* key) {
  const Json* v = obj.find(key);
  if (!v || v->kind != Json::Kind::Int) corrupt(std::string("missing integer '") + key + "'");
  return v->i;
}

ScalarType dtype_from_name(const std::string& name) {
#define EMBER_DTYPE_NAME(cpp, n, py) \
  if (name == #py) return ScalarType::n;
  EMBER_FORALL_DTYPES_AND_COMPLEX(EMBER_DTYPE_NAME)
#undef EMBER_DTYPE_NAME
  corrupt("unknown dtype '" + printable(name) + "'");
}

TensorEntry tensor_entry(const Json& j, uint64_t data_size) {
  if (j.kind != Json::Kind::Object) corrupt("tensor entry is not an object");
  const Json* dt = j.find("dtype");
  const Json* shape = j.find("shape");
  if (!dt || dt->kind != Json::Kind::String) corrupt("tensor entry without dtype");
  if (!shape || shape->kind != Json::Kind::Array) corrupt("tensor entry without shape");
  TensorEntry e{dtype_from_name(dt->s), {}, 0, 0, false};
  uint64_t numel = 1;
  for (const Json& d : shape->items) {
    if (d.kind != Json::Kind::Int || d.i < 0)
      corrupt("tensor shape must hold non-negative integers");
    e.shape.push_back(d.i);
    if (__builtin_mul_overflow(numel, uint64_t(d.i), &numel)) corrupt("tensor shape overflows");
  }
  int64_t offset = get_int(j, "offset"), nbytes = get_int(j, "nbytes");
  uint64_t expect;
  if (offset < 0 || nbytes < 0 ||
      __builtin_mul_overflow(numel, uint64_t(element_size(e.dtype)), &expect) ||
      expect != uint64_t(nbytes))
    corrupt("tensor byte length does not match its shape and dtype");
  e.offset = uint64_t(offset);
  e.nbytes = uint64_t(nbytes);
  if (e.offset > data_size || e.nbytes > data_size - e.offset)
    EMBER_ERROR(ErrorKind::Runtime, "ember.load: file is truncated: a tensor needs bytes [",
                e.offset, ", ", e.offset + e.nbytes, ") of the data section but it holds only ",
                data_size);
  if (const Json* rg = j.find("requires_grad"))
    e.requires_grad = rg->kind == Json::Kind::Bool && rg->b;
  return e;
}

class Reader {
 public:
  Reader(const Source& src, uint64_t data_start) : src_(src), data_start_(data_start) {}

  Value decode(const Json& header) {
    if (header.kind != Json::Kind::Object) corrupt("header is not an object");
    const Json* tensors = header.find("tensors");
    const Json* root = header.find("root");
    if (!tensors || tensors->kind != Json::Kind::Array || !root)
      corrupt("header lacks tensors or root");
    uint64_t data_size = src_.size() - data_start_;
    for (const Json& t : tensors->items) entries_.push_back(tensor_entry(t, data_size));
    check_disjoint();
    loaded_.resize(entries_.size());
    return node(*root);
  }

 private:
  Value node(const Json& j) {
    switch (j.kind) {
      case Json::Kind::Null:
        return Value();
      case Json::Kind::Bool:
        return Value::from_bool(j.b);
      case Json::Kind::Int:
        return Value::from_int(j.i);
      case Json::Kind::String:
        return Value::from_string(j.s);
      case Json::Kind::Array:
        corrupt("bare array in tree");
      case Json::Kind::Object:
        break;
    }
    if (j.fields.empty()) corrupt("empty node");
    const auto& [tag, body] = j.fields.front();
    if (tag == "float") {
      if (body.kind != Json::Kind::String || body.s.empty()) corrupt("float node");
      char* end = nullptr;
      double d = std::strtod(body.s.c_str(), &end);
      if (end != body.s.c_str() + body.s.size()) corrupt("float node");
      return Value::from_double(d);
    }
    if (tag == "tensor") {
      if (body.kind != Json::Kind::Int || body.i < 0 || uint64_t(body.i) >= entries_.size())
        corrupt("tensor reference out of range");
      return Value(tensor(size_t(body.i)));
    }
    if (body.kind != Json::Kind::Array) corrupt("container node");
    std::vector<Value> items;
    if (tag == "list" || tag == "tuple") {
      for (const Json& item : body.items) items.push_back(node(item));
      return tag == "list" ? Value::list(std::move(items)) : Value::tuple(std::move(items));
    }
    if (tag != "dict") corrupt("unknown node '" + printable(tag) + "'");
    std::vector<std::pair<Value, Value>> entries;
    for (const Json& kv : body.items) {
      if (kv.kind != Json::Kind::Array || kv.items.size() != 2) corrupt("dict entry");
      Value key = node(kv.items[0]);
      if (key.kind != Value::Kind::String && key.kind != Value::Kind::Int) corrupt("dict key");
      entries.emplace_back(std::move(key), node(kv.items[1]));
    }
    const Json* ordered = j.find("ordered");
    return Value::dict(std::move(entries),
                       ordered && ordered->kind == Json::Kind::Bool && ordered->b);
  }

  // The writer stores each tensor once, in its own extent. Extents that overlap would let a
  // small file claim its data section many times over and make load allocate that much.
  void check_disjoint() const {
    std::vector<std::pair<uint64_t, uint64_t>> extents;
    for (const TensorEntry& e : entries_)
      if (e.nbytes) extents.emplace_back(e.offset, e.offset + e.nbytes);
    std::sort(extents.begin(), extents.end());
    for (size_t k = 1; k < extents.size(); ++k)
      if (extents[k].first < extents[k - 1].second) corrupt("tensor data extents overlap");
  }

  const Tensor& tensor(size_t k) {
    if (loaded_[k].defined()) return loaded_[k];
    const TensorEntry& e = entries_[k];
    Tensor t = src_.view(data_start_ + e.offset, e.shape, e.dtype);
    if (!t.defined()) {
      t = empty(e.shape, e.dtype);
      src_.read(data_start_ + e.offset, t.data_ptr(), e.nbytes);
    }
    if (e.requires_grad && is_floating_point(e.dtype)) t.requires_grad_(true);
    return loaded_[k] = t;
  }

  const Source& src_;
  uint64_t data_start_;
  std::vector<TensorEntry> entries_;
  std::vector<Tensor> loaded_;
};

uint64_t le64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

}  // namespace

void write(const Value& root, const Sink& sink) {
  Writer w;
  std::string header = w.header(root);
  uint8_t prelude[kPrelude] = {};
  std::memcpy(prelude, kMagic, 8);
  std::memcpy(prelude + 8, &kVersion, 4);
  uint64_t hlen = header.size();
  std::memcpy(prelude + 16, &hlen, 8);
  sink(prelude, kPrelude);
  sink(header.data(), header.size());
  static const char zeros[kAlign] = {};
  uint64_t pos = kPrelude + hlen, data_start = align_up(pos);
  sink(zeros, data_start - pos);
  pos = 0;
  for (size_t k = 0; k < w.tensors().size(); ++k) {
    sink(zeros, w.offsets()[k] - pos);
    Tensor c = contiguous(w.tensors()[k].detach());
    sink(c.data_ptr(), c.nbytes());
    pos = w.offsets()[k] + c.nbytes();
  }
}

Value read(const Source& src) {
  uint64_t size = src.size();
  uint8_t prelude[kPrelude] = {};
  src.read(0, prelude, std::min<uint64_t>(size, kPrelude));
  if (size >= 2 && prelude[0] == 'P' && prelude[1] == 'K')
    EMBER_ERROR(ErrorKind::Runtime,
                "ember.load: this is a zip archive (PyTorch's .pt checkpoint format); "
                "loading PyTorch checkpoints is not yet supported");
  // Room for more readers (safetensors: an 8-byte header length, then '{') goes here.
  EMBER_CHECK(size >= 8 && std::memcmp(prelude, kMagic, 8) == 0,
              "ember.load: not an ember checkpoint (bad magic number)");
  EMBER_CHECK(size >= kPrelude, "ember.load: file is truncated (", size,
              " bytes, shorter than the prelude)");
  uint32_t version;
  std::memcpy(&version, prelude + 8, 4);
  EMBER_CHECK(version == kVersion, "ember.load: unsupported checkpoint version ", version,
              " (this build reads version ", kVersion, ")");
  uint64_t hlen = le64(prelude + 16);
  EMBER_CHECK(hlen <= size - kPrelude, "ember.load: file is truncated: the header claims ", hlen,
              " bytes but only ", size - kPrelude, " follow the prelude");
  uint64_t data_start = align_up(kPrelude + hlen);
  EMBER_CHECK(data_start <= size, "ember.load: file is truncated inside the header padding");
  std::string header(hlen, '\0');
  src.read(kPrelude, header.data(), hlen);
  Json j = parse_json(header);
  return Reader(src, data_start).decode(j);
}

}  // namespace ember::serialize
