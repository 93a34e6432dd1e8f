// The generic half of reading an experiment file: typed getters over a
// yaml-cpp tree (times, sizes, rates, whole numbers, probabilities, names,
// enum choices), maps checked against their allowed keys with a suggestion
// for a misspelt one, and errors located at the key or value at fault — in
// the file, or in the command-line option that put the value there
// (experiment/overrides.hpp). The section readers (experiment/sections/) say
// what each key means.
// Only the loader includes this (it brings in yaml-cpp).
#pragma once

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/units.hpp"
#include "topologies/config.hpp"
#include "topologies/load_error.hpp"

namespace rdmasim {

// What the model's arithmetic holds (docs/reliability.md, "Limits"). Time
// is a signed 64-bit count of picoseconds: the clock reaches 2^63 ps, about
// 106 days, and a run adds delays, latencies and timers up, so no one time
// in a file may be more than 1000 s. Serialisation times are bits x 10^12 /
// rate in 64-bit arithmetic, which overflows near 10^19 bit/s; below
// 1 Kbps a frame would take longer than a time may be.
inline constexpr Time kMaxTimeValue = Time::s(1000);
inline constexpr uint64_t kMinRateBps = 1'000;                  // 1Kbps
inline constexpr uint64_t kMaxRateBps = 1'000'000'000'000'000;  // 1000Tbps
// Names become file names (pcap/<node>-<port>.pcap, out/<name>) and fill
// tables and messages: at most 64 characters.
inline constexpr size_t kMaxNameLength = 64;

// "path.key", or "key" at the top.
std::string key_path(std::string_view path, std::string_view key);
// "path[i]".
std::string index_path(std::string_view path, size_t i);
// Is `path` the key path `prefix` or inside it?
bool under(std::string_view path, std::string_view prefix);
// A node as an error shows it: 'value', a list, a map or nothing.
std::string describe(const YAML::Node& n);
// What is wrong with a YAML text, as the user should read it (yaml-cpp
// says "bad file" for nesting too deep to parse).
std::string yaml_error_message(const YAML::Exception& ex);
// Where a node was written; null for a node made in memory.
YAML::Mark mark_of(const YAML::Node& n);
// Node names: letters, digits, '_', and '.' or '-' after the first; at
// most kMaxNameLength characters.
bool valid_name(std::string_view s);
size_t edit_distance(std::string_view a, std::string_view b);
// A count of picoseconds that may be far past what Time holds, in seconds ("1.2e+03s").
std::string seconds_text(long double ps);

template <class Names>
std::string join_names(const Names& names) {
  std::string s;
  for (std::string_view n : names) {
    if (!s.empty()) s += ", ";
    s += n;
  }
  return s;
}

// " (did you mean 'x'?)" when one of `names` is close to `word`; given a
// `preferred` name, or else one that begins with the word (three letters or
// more): `preferred` when it is one of those ("roce": roce_v1 and roce_v2
// begin with it), else the first. Without one, no guess by prefix ("write"
// is rdma_write more often than write_bw).
template <class Names>
std::string suggestion(std::string_view word, const Names& names, std::string_view preferred = {}) {
  // Close means a third of the word or less, and not all of it.
  std::string_view best;
  size_t best_d = std::min(std::max<size_t>(1, word.size() / 3), word.size() - 1) + 1;
  for (std::string_view n : names) {
    const size_t d = edit_distance(word, n);
    if (d < best_d) best = n, best_d = d;
  }
  if (best.empty() && !preferred.empty() && word.size() >= 3)
    for (std::string_view n : names)
      if (n.starts_with(word) && (best.empty() || n == preferred)) best = n;
  return best.empty() ? "" : " (did you mean '" + std::string(best) + "'?)";
}

// A value the command line put into the tree (--set, --fabric, --seed).
struct Override {
  std::string shown;     // "--set link.bandwidth=fast", "--fabric ib"
  std::string path;      // canonical key path, as errors name it
  int index = 0;         // position among the options, from 1
  int value_column = 0;  // offset of the value in the option's text, from 0
  // The key path up to each part of the option's path, and the column the
  // part starts at: an error about a key the option added points at it.
  std::vector<std::pair<std::string, int>> part_columns;
};

// One key of a map, its value, and its key path.
struct Entry {
  YAML::Node key, value;
  std::string path;
};

// The keys of one map, checked against the allowed ones.
class Fields {
 public:
  std::vector<Entry> entries;
  YAML::Node node;
  std::string path;
  // The entry for `key`; null when absent or given an empty value.
  const Entry* find(std::string_view key) const {
    for (const Entry& e : entries)
      if (e.key.Scalar() == key) return e.value.IsNull() ? nullptr : &e;
    return nullptr;
  }
  bool has(std::string_view key) const { return find(key) != nullptr; }
};

// Reads values out of a tree and collects every error, each located.
class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

  std::vector<LoadError>& errors() { return errors_; }
  // What is legal but likely not meant (a 1000-based message size), each located.
  std::vector<LoadError>& warnings() { return warnings_; }
  std::vector<Override>& overrides() { return overrides_; }

  // An error about the node `at`, whose key path is `path`.
  void error(const YAML::Node& at, const std::string& path, const std::string& message) {
    errors_.push_back(locate(at, path, message));
  }
  // Where `at` was written: the file, or the command-line option that made it.
  LoadError locate(const YAML::Node& at, const std::string& path, const std::string& message) const;
  void command_line_error(const Override& o, int column, const std::string& message);

  // ---- shapes ----

  // The map `node` with only the `allowed` keys, each once; `what` names it in errors.
  std::optional<Fields> fields(const YAML::Node& node, const std::string& path, std::string_view what,
                               std::initializer_list<std::string_view> allowed) {
    return fields(node, path, what, std::vector<std::string_view>(allowed));
  }
  std::optional<Fields> fields(const YAML::Node& node, const std::string& path, std::string_view what,
                               const std::vector<std::string_view>& allowed);
  void missing(const Fields& f, std::string_view key, const std::string& why);
  std::optional<std::string> scalar(const YAML::Node& v, const std::string& path, std::string_view what);

  // ---- values ----

  std::optional<Time> time(const Entry& e);
  std::optional<Time> positive_time(const Entry& e);
  std::optional<Bytes> bytes(const Entry& e, bool positive = true);
  std::optional<DataRate> rate(const Entry& e);
  std::optional<uint64_t> whole(const Entry& e, uint64_t lo, uint64_t hi);
  std::optional<double> probability(const Entry& e);
  // A number in [lo, hi], or (lo, hi] when `open_lo`.
  std::optional<double> number(const Entry& e, double lo, double hi, bool open_lo = false);
  std::optional<bool> boolean(const Entry& e);
  std::optional<std::string> name(const YAML::Node& v, const std::string& path,
                                  std::string_view what = "a name");
  template <class E>
  std::optional<E> choice(const Entry& e, std::string_view what) {
    return choice<E>(e.value, e.path, what);
  }
  template <class E>
  std::optional<E> choice(const YAML::Node& v, const std::string& path, std::string_view what) {
    const std::vector<std::string_view> names(std::begin(EnumNames<E>::names), std::end(EnumNames<E>::names));
    auto s = one_of(v, path, what, names);
    return s ? from_string<E>(*s) : std::nullopt;
  }
  // One of `names` (a choice that is not an enum, such as the registry's
  // fabrics); `preferred` is the one suggested when several begin alike.
  std::optional<std::string> one_of(const YAML::Node& v, const std::string& path, std::string_view what,
                                    const std::vector<std::string_view>& names,
                                    std::string_view preferred = {});

  // Sets `out` from `key` when the map has it and `parse` accepts it.
  template <class T, class Parse>
  void read(const Fields& f, std::string_view key, T& out, Parse parse) {
    if (const Entry* e = f.find(key))
      if (auto v = parse(*e)) out = static_cast<T>(*v);
  }

 private:
  std::string file_;
  std::vector<LoadError> errors_;
  std::vector<LoadError> warnings_;
  std::vector<Override> overrides_;
  bool size_unit_warned_ = false;  // the first size written with a power-of-10 unit only
};

}  // namespace rdmasim
