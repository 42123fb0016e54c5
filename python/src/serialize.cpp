// Checkpoint format bindings (ember._C._serialize): Python objects <-> serialize::Value, and the
// IDX reader behind ember.datasets.
#include <Python.h>

#include <unordered_map>

#include "common.h"
#include "ember/data/idx.h"

namespace ember::py {

namespace {

using serialize::Value;

constexpr int kMaxDepth = 200;

Value to_value(nb::handle h, nb::handle ordered_dict, int depth) {
  if (depth > kMaxDepth) throw nb::value_error("ember.save: the object nests too deeply");
  PyObject* o = h.ptr();
  if (o == Py_None) return Value();
  if (PyBool_Check(o)) return Value::from_bool(o == Py_True);
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) throw nb::value_error("ember.save: int does not fit in 64 bits");
    return Value::from_int(v);
  }
  if (PyFloat_Check(o)) return Value::from_double(PyFloat_AS_DOUBLE(o));
  if (PyUnicode_Check(o)) return Value::from_string(nb::cast<std::string>(h));
  Tensor* t = nullptr;
  if (nb::try_cast<Tensor*>(h, t) && t) return Value(*t);
  if (PyTuple_Check(o) || PyList_Check(o)) {
    std::vector<Value> items;
    for (nb::handle item : nb::borrow<nb::sequence>(h))
      items.push_back(to_value(item, ordered_dict, depth + 1));
    return PyList_Check(o) ? Value::list(std::move(items)) : Value::tuple(std::move(items));
  }
  if (PyDict_Check(o)) {
    std::vector<std::pair<Value, Value>> entries;
    for (auto [k, v] : nb::borrow<nb::dict>(h)) {
      if (!PyUnicode_Check(k.ptr()) && !(PyLong_Check(k.ptr()) && !PyBool_Check(k.ptr())))
        throw nb::type_error(("ember.save: dict keys must be str or int; got " +
                              std::string(nb::type_name(k.type()).c_str()))
                                 .c_str());
      entries.emplace_back(to_value(k, ordered_dict, depth + 1),
                           to_value(v, ordered_dict, depth + 1));
    }
    return Value::dict(std::move(entries), PyObject_IsInstance(o, ordered_dict.ptr()) == 1);
  }
  throw nb::type_error(
      ("ember.save: cannot save an object of type " + std::string(nb::type_name(h.type()).c_str()) +
       "; checkpoints hold tensors, dicts, lists, tuples, str, int, float, bool and None")
          .c_str());
}

nb::object from_value(const Value& v, nb::handle ordered_dict,
                      std::unordered_map<const TensorImpl*, nb::object>& seen) {
  switch (v.kind) {
    case Value::Kind::None:
      return nb::none();
    case Value::Kind::Bool:
      return nb::bool_(v.b);
    case Value::Kind::Int:
      return nb::int_(v.i);
    case Value::Kind::Double:
      return nb::float_(v.d);
    case Value::Kind::String: {
      PyObject* str = PyUnicode_DecodeUTF8(v.s.data(), Py_ssize_t(v.s.size()), "strict");
      if (!str) {
        PyErr_Clear();
        EMBER_ERROR(ErrorKind::Runtime,
                    "ember.load: corrupt checkpoint (a string is not valid UTF-8)");
      }
      return nb::steal(str);
    }
    case Value::Kind::Tensor: {
      // The same stored tensor referenced twice loads as one Python object.
      auto [it, fresh] = seen.try_emplace(v.tensor.impl());
      if (fresh) it->second = nb::cast(v.tensor);
      return it->second;
    }
    case Value::Kind::List:
    case Value::Kind::Tuple: {
      nb::list items;
      for (const Value& item : v.items) items.append(from_value(item, ordered_dict, seen));
      return v.kind == Value::Kind::List ? nb::object(items) : nb::object(nb::tuple(items));
    }
    case Value::Kind::Dict: {
      nb::object d = v.ordered ? ordered_dict() : nb::dict();
      for (const auto& [k, val] : v.entries)
        d[from_value(k, ordered_dict, seen)] = from_value(val, ordered_dict, seen);
      return d;
    }
  }
  return nb::none();
}

nb::object to_python(const Value& v, nb::handle ordered_dict) {
  std::unordered_map<const TensorImpl*, nb::object> seen;
  return from_value(v, ordered_dict, seen);
}

}  // namespace

void bind_serialize(nb::module_& ser) {
  ser.def(
      "save_file",
      [](nb::handle obj, const std::string& path, nb::handle ordered_dict) {
        Value v = to_value(obj, ordered_dict, 0);
        nb::gil_scoped_release nogil;
        serialize::save_file(v, path);
      },
      nb::arg("obj").none(), nb::arg("path"), nb::arg("ordered_dict").none(),
      "Saves obj to path atomically.");
  ser.def(
      "save_stream",
      [](nb::handle obj, nb::object write, nb::handle ordered_dict) {
        Value v = to_value(obj, ordered_dict, 0);
        serialize::write(v, [&](const void* data, size_t n) {
          if (n) write(nb::bytes(static_cast<const char*>(data), n));
        });
      },
      nb::arg("obj").none(), nb::arg("write"), nb::arg("ordered_dict").none(),
      "Writes obj through a file object's write method.");
  ser.def(
      "load_fd",
      [](int fd, bool mmap, nb::handle ordered_dict) {
        Value v;
        {
          nb::gil_scoped_release nogil;
          v = serialize::load_fd(fd, mmap);
        }
        return to_python(v, ordered_dict);
      },
      nb::arg("fd"), nb::arg("mmap"), nb::arg("ordered_dict").none(),
      "Loads a checkpoint from an open file descriptor.");
  ser.def(
      "load_bytes",
      [](nb::bytes data, nb::handle ordered_dict) {
        return to_python(serialize::load_bytes(data.c_str(), data.size()), ordered_dict);
      },
      nb::arg("data"), nb::arg("ordered_dict").none(), "Loads a checkpoint from bytes.");
  ser.def(
      "read_idx",
      [](const std::string& path) {
        nb::gil_scoped_release nogil;
        return data::read_idx(path);
      },
      nb::arg("path"), "Reads an IDX file (gzipped or not) into a tensor.");
  ser.def("find_idx_file", &data::find_idx_file, nb::arg("root"), nb::arg("name"),
          "The path of root/name or root/name.gz; raises if neither exists.");
}

}  // namespace ember::py
