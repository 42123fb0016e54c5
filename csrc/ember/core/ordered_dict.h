#pragma once
// An insertion-ordered string-keyed map, the type libtorch's named_parameters() returns.
#include <string>
#include <utility>
#include <vector>

#include "ember/core/error.h"

namespace ember {

template <class Key, class Value>
class OrderedDict {
 public:
  class Item {
   public:
    Item(Key key, Value value) : pair_(std::move(key), std::move(value)) {}
    const Key& key() const { return pair_.first; }
    Value& value() { return pair_.second; }
    const Value& value() const { return pair_.second; }
    Value& operator*() { return pair_.second; }
    Value* operator->() { return &pair_.second; }

   private:
    std::pair<Key, Value> pair_;
  };

  /// Appends; a key that is already present raises (libtorch's insert semantics).
  Value& insert(Key key, Value value) {
    EMBER_CHECK(!contains(key), "OrderedDict: key '", key, "' already defined");
    items_.emplace_back(std::move(key), std::move(value));
    return items_.back().value();
  }
  /// Inserts or overwrites.
  Value& insert_or_assign(const Key& key, Value value) {
    if (Value* v = find(key)) return *v = std::move(value);
    return insert(key, std::move(value));
  }
  Value* find(const Key& key) {
    for (auto& it : items_)
      if (it.key() == key) return &it.value();
    return nullptr;
  }
  const Value* find(const Key& key) const { return const_cast<OrderedDict*>(this)->find(key); }
  bool contains(const Key& key) const { return find(key) != nullptr; }
  Value& operator[](const Key& key) {
    Value* v = find(key);
    EMBER_CHECK_INDEX(v, "OrderedDict: no such key: '", key, "'");
    return *v;
  }
  const Value& operator[](const Key& key) const { return const_cast<OrderedDict&>(*this)[key]; }

  size_t size() const { return items_.size(); }
  bool is_empty() const { return items_.empty(); }
  std::vector<Key> keys() const {
    std::vector<Key> out;
    for (const auto& it : items_) out.push_back(it.key());
    return out;
  }
  std::vector<Value> values() const {
    std::vector<Value> out;
    for (const auto& it : items_) out.push_back(it.value());
    return out;
  }
  const std::vector<Item>& items() const { return items_; }
  auto begin() { return items_.begin(); }
  auto end() { return items_.end(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

 private:
  std::vector<Item> items_;
};

}  // namespace ember
