// A section's keys declared once, as a table (ns-3's GetTypeId attributes
// and INET's typed NED parameters are the models): each row names the key,
// the field it fills, how its value is read (type, unit, range), its
// default as written in YAML and one sentence of help. From the table come
// the section's allowed keys (and the "did you mean" among them), the
// reader of every key, the docs/yaml.md table (rdmasim-keys, run by
// `cmake --build build --target yaml_docs`) and a test that each default is
// what the struct starts with (tests/experiment/key_docs_test.cpp). Adding a
// key is one row in its section's table plus its use.
//
//   using namespace keys;
//   const KeyTable<LinkConfig> kLink{"link", "link settings", {
//       key("bandwidth", &LinkConfig::bandwidth, rate(), "100Gbps", "serialisation rate, each direction"),
//       key("delay", &LinkConfig::delay, time(), "1us", "propagation delay"),
//   }};
//   if (auto f = kLink.read(d.c, e.value, e.path, d.x.link)) { /* checks across keys */ }
//
// A workload kind's table reads the map the loader already checked
// against every kind's keys: `kTable.read(d.c, fields, w)`.
//
// Only loaders include this (it brings in yaml-cpp): experiment/ and the
// workload kinds' readers.
#pragma once

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "topologies/key_spec.hpp"
#include "topologies/yaml_reader.hpp"

namespace rdmasim {

// How one value is read: its type and range as docs/yaml.md shows them,
// and the reader's check.
template <class V>
struct ValueType {
  std::string type, range, unit;
  std::function<std::optional<V>(YamlReader&, const Entry&)> parse;
};

namespace keys {

inline ValueType<Time> time() {
  return {"time", "", "", [](YamlReader& c, const Entry& e) { return c.time(e); }};
}
inline ValueType<Time> positive_time() {
  return {"time", "above 0", "", [](YamlReader& c, const Entry& e) { return c.positive_time(e); }};
}
// The shortest period or timeout a timer key takes: a timer set to fire
// every picosecond made a run crawl (IRN's RTO of 1ps: an event a
// picosecond a QP), and no NIC, switch or kernel times anything finer
// than a microsecond (IBA's shortest local ACK timeout is 8.192 us; mlx5's
// DCQCN timers are set in microseconds).
inline constexpr Time kShortestTimer = Time::us(1);
// A time of at least `lo`, a timer's: docs/yaml.md's range says "at least
// LO"; below it the error says `why` ("the PFC watchdog's polling").
ValueType<Time> time_from(Time lo, std::string why);
// A size; `above 0` unless told.
inline ValueType<Bytes> size(bool positive = true) {
  return {"size", positive ? "above 0" : "", "",
          [positive](YamlReader& c, const Entry& e) { return c.bytes(e, positive); }};
}
// A size from `lo` to `hi` ("sndbuf must be from 4KiB to 1GiB, got ...").
ValueType<Bytes> size_in(Bytes lo, Bytes hi, std::string what);
// A size above 0 and at most `hi` ("at most 64KiB of inline data, got ...").
ValueType<Bytes> size_at_most(Bytes hi, std::string what);
inline ValueType<DataRate> rate() {
  return {"rate", "", "", [](YamlReader& c, const Entry& e) { return c.rate(e); }};
}
// A rate, or `0` (no scaling).
ValueType<DataRate> rate_or_zero();
inline ValueType<uint64_t> whole(uint64_t lo, uint64_t hi, std::string unit = "") {
  return {"whole number", std::to_string(lo) + ".." + std::to_string(hi), std::move(unit),
          [lo, hi](YamlReader& c, const Entry& e) { return c.whole(e, lo, hi); }};
}
// A whole number from `lo` up, to the largest 64-bit one.
inline ValueType<uint64_t> at_least(uint64_t lo) {
  return {"whole number", std::to_string(lo) + "..", "",
          [lo](YamlReader& c, const Entry& e) { return c.whole(e, lo, UINT64_MAX); }};
}
// A number in [lo, hi], or (lo, hi] when `open_lo`.
ValueType<double> number(double lo, double hi, bool open_lo = false);
inline ValueType<double> probability() {
  return {"probability", "0..1", "", [](YamlReader& c, const Entry& e) { return c.probability(e); }};
}
inline ValueType<bool> boolean() {
  return {"bool", "", "", [](YamlReader& c, const Entry& e) { return c.boolean(e); }};
}
// `vt`, refusing besides a value `out` says is out of range, with the
// message `why` makes of its entry; `range` is how docs/yaml.md says it.
template <class V>
ValueType<V> refusing(ValueType<V> vt, std::string range, std::function<bool(const V&)> out,
                      std::function<std::string(const Entry&)> why) {
  vt.range = std::move(range);
  vt.parse = [parse = std::move(vt.parse), out, why](YamlReader& c, const Entry& e) -> std::optional<V> {
    auto v = parse(c, e);
    if (v && out(*v)) {
      c.error(e.value, e.path, why(e));
      return std::nullopt;
    }
    return v;
  };
  return vt;
}
// "`a`, `b` or `c`".
std::string choices(std::span<const std::string_view> names);
// One of E's names; `what` names the choice in errors ("switch mode").
template <NamedEnum E>
ValueType<E> choice(std::string what) {
  return {choices(EnumNames<E>::names), "", "",
          [what](YamlReader& c, const Entry& e) { return c.choice<E>(e, what); }};
}

}  // namespace keys

// A map read by a table: its entries, and which of them were read without error.
struct KeyFields : Fields {
  std::vector<std::string_view> failed;
  // The entry for `key` when it was given and read without error.
  const Entry* read_ok(std::string_view key) const {
    return std::find(failed.begin(), failed.end(), key) == failed.end() ? find(key) : nullptr;
  }
};

// One row: what docs/yaml.md shows of the key, and how it fills a T.
template <class T>
struct Key {
  std::string name, type, fallback, range, help, unit;
  // Reads the entry into the T; null: the section's own code reads it.
  std::function<void(YamlReader&, const Entry&, T&)> read;
  // Do two Ts hold the same value of this key? Null for a key the section reads itself.
  std::function<bool(const T&, const T&)> same;
  // The tables of its value's keys (a nested map's, documented as
  // "<section>.<key>"; a generator's, one a kind).
  std::vector<const KeyTableBase*> subs;
  // Non-empty: the key must be given, and its absence says this ("when, such as 50us").
  std::string required;
  // Non-empty: the default docs/yaml.md shows, when the section's reader
  // sets it from more than this key ("1 (perftest kinds: 5000 for *_bw,
  // ...)"); `fallback`, if any, is then what the struct starts with.
  std::string shown_fallback;
};

// A row's documented half; its reader is the caller's.
template <class T>
Key<T> row(std::string name, std::string type, std::string fallback, std::string range, std::string help,
           std::string unit) {
  Key<T> k;
  k.name = std::move(name);
  k.type = std::move(type);
  k.fallback = std::move(fallback);
  k.range = std::move(range);
  k.help = std::move(help);
  k.unit = std::move(unit);
  return k;
}

// `k`, whose value is a map the section reads with `sub` (documented as "<section>.<key>").
template <class T>
Key<T> with_table(Key<T> k, const KeyTableBase& sub) {
  k.subs.push_back(&sub);
  return k;
}

// `k`, which must be given; `why` is what the error about its absence suggests.
template <class T>
Key<T> required(Key<T> k, std::string why) {
  k.required = std::move(why);
  return k;
}

// `k`, whose default the section's reader sets from more than the key
// (the kind, the fabric); `shown` is the default as docs/yaml.md says it.
template <class T>
Key<T> documented_default(Key<T> k, std::string shown) {
  k.shown_fallback = std::move(shown);
  return k;
}

// The field `member` of a T, read as `vt`.
template <class T, class Get, class V>
Key<T> key_at(std::string name, Get get, ValueType<V> vt, std::string fallback, std::string help) {
  Key<T> k = row<T>(std::move(name), std::move(vt.type), std::move(fallback), std::move(vt.range),
                    std::move(help), std::move(vt.unit));
  k.read = [get, parse = std::move(vt.parse)](YamlReader& c, const Entry& e, T& t) {
    if (auto v = parse(c, e)) {
      auto& to = get(t);
      using M = std::remove_reference_t<decltype(to)>;
      if constexpr (std::is_same_v<V, Bytes> && std::is_integral_v<M>)
        to = static_cast<M>(v->count());
      else
        to = static_cast<M>(*v);
    }
  };
  k.same = [get](const T& a, const T& b) { return get(const_cast<T&>(a)) == get(const_cast<T&>(b)); };
  return k;
}
template <class T, class M, class V>
Key<T> key(std::string name, M T::*member, ValueType<V> vt, std::string fallback, std::string help) {
  return key_at<T>(
      std::move(name), [member](T& t) -> M& { return t.*member; }, std::move(vt), std::move(fallback),
      std::move(help));
}
// A key the section reads itself (a list, a choice with a special value, a
// check beyond its own value): declared here for the allowed keys and the
// docs, its use in the section's reader.
template <class T>
Key<T> declared(std::string name, std::string type, std::string fallback, std::string help) {
  return row<T>(std::move(name), std::move(type), std::move(fallback), "", std::move(help), "");
}

template <class T>
class KeyTable final : public KeyTableBase {
 public:
  KeyTable(const KeyTable&) = delete;  // its KeySpecs view its rows' strings
  KeyTable(std::string name, std::string what, std::vector<Key<T>> keys)
      : KeyTableBase(std::move(name), std::move(what)), keys_(std::move(keys)) {
    // A whole number's unit is shown with its type: "whole number (segments)".
    for (Key<T>& k : keys_) {
      if (!k.unit.empty()) k.type += " (" + k.unit + ")";
      const std::string_view shown = !k.required.empty()        ? "**required**"
                                     : k.shown_fallback.empty() ? std::string_view(k.fallback)
                                                                : std::string_view(k.shown_fallback);
      specs_.push_back({k.name, k.type, shown, k.range, k.help});
    }
  }
  const std::vector<Key<T>>& keys() const { return keys_; }

  // The map `v` with only these keys, each read into `out` in the table's
  // order; the Fields for what the section checks beyond (null: not a map).
  std::optional<KeyFields> read(YamlReader& c, const YAML::Node& v, const std::string& path, T& out) const {
    auto f = c.fields(v, path, what_, names());
    if (!f) return std::nullopt;
    return read(c, std::move(*f), out);
  }
  // The same for a map whose keys the caller checked (a workload's, against every kind's).
  KeyFields read(YamlReader& c, Fields f, T& out) const {
    KeyFields kf{std::move(f), {}};
    for (const Key<T>& k : keys_) {
      if (!k.required.empty() && !kf.find(k.name)) {
        c.missing(kf, k.name, k.required);
        kf.failed.push_back(k.name);
      }
      if (const Entry* e = k.read ? kf.find(k.name) : nullptr) {
        const size_t before = c.errors().size();
        k.read(c, *e, out);
        if (c.errors().size() != before) kf.failed.push_back(k.name);
      }
    }
    return kf;
  }

  std::vector<const KeyTableBase*> nested() const override {
    std::vector<const KeyTableBase*> out;
    for (const Key<T>& k : keys_) out.insert(out.end(), k.subs.begin(), k.subs.end());
    return out;
  }
  std::vector<std::string> default_mismatches() const override;

 private:
  std::vector<Key<T>> keys_;
};

// A nested map: `name` holds a `Sub` read by `sub` into the T's `member`;
// `check`, when given, then checks what needs several of its keys.
template <class T, class Sub>
Key<T> map_key(
    std::string name, Sub T::*member, const KeyTable<Sub>& sub, std::string help,
    std::type_identity_t<std::function<void(YamlReader&, const KeyFields&, const Sub&)>> check = {}) {
  Key<T> k = row<T>(std::move(name), "map", "", "", std::move(help), "");
  k.read = [member, &sub, check](YamlReader& c, const Entry& e, T& t) {
    if (auto f = sub.read(c, e.value, e.path, t.*member); f && check) check(c, *f, t.*member);
  };
  k.subs.push_back(&sub);
  return k;
}

// "`first` (a) must not exceed `second` (b)" at `first`, or at `second`
// when only it was given; `strict`: "must be below".
void order_error(YamlReader& c, const Fields& f, std::string_view first, const std::string& a,
                 std::string_view second, const std::string& b, bool strict);

// Parses `text` as the entry of `key` (for the defaults' test).
Entry default_entry(const std::string& key, const std::string& text);

template <class T>
std::vector<std::string> KeyTable<T>::default_mismatches() const {
  std::vector<std::string> out;
  for (const Key<T>& k : keys_) {
    if (!k.same || k.fallback.empty()) continue;
    YamlReader c("<default>");
    T fresh{}, read{};
    k.read(c, default_entry(k.name, k.fallback), read);
    if (!c.errors().empty())
      out.push_back(name_ + "." + k.name + ": default '" + k.fallback +
                    "' does not read: " + c.errors().front().message);
    else if (!k.same(fresh, read))
      out.push_back(name_ + "." + k.name + ": default '" + k.fallback +
                    "' is not what the struct starts with");
  }
  for (const KeyTableBase* s : nested())
    for (std::string& m : s->default_mismatches()) out.push_back(std::move(m));
  return out;
}

}  // namespace rdmasim
