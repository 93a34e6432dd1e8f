// A key of an experiment file declared once: its name, type, unit, default,
// range, help and the version it appeared in. A section's table of these is
// what its reader allows (and suggests among for a misspelt key), and what
// docs/yaml.md lists for it (experiment/key_docs.hpp, rdmasim-keys, the yaml_docs
// test). topologies/key_table.hpp binds a section's keys to the fields they fill.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rdmasim {

struct KeySpec {
  std::string_view name;
  std::string_view type;        // as docs/yaml.md shows it: "size", "time", "host", "rc, uc or ud", ...
  std::string_view fallback;    // the default as written in YAML; "" when the key is required or has none
  std::string_view range;       // "1..16383", ""
  std::string_view help;        // one sentence: what it means
  std::string_view since = "";  // the version that added it, "" for the first
};

// The names of `keys`, in order.
template <class Out>
void key_names(std::span<const KeySpec> keys, Out& out) {
  for (const KeySpec& k : keys) out.push_back(k.name);
}

// A Markdown table of `keys` (| key | type | default | range | meaning |).
std::string key_table_markdown(std::span<const KeySpec> keys);

// The type-free half of a key table (topologies/key_table.hpp): its name,
// its rows as KeySpecs, its nested tables. What a section's users outside
// the loader see of it (a workload kind's keys, the docs).
class KeyTableBase {
 public:
  KeyTableBase(std::string name, std::string what) : name_(std::move(name)), what_(std::move(what)) {}
  virtual ~KeyTableBase() = default;
  // "link", "host.pcie", "workloads.nvme": where docs/yaml.md shows the table.
  const std::string& name() const { return name_; }
  // "link settings": what an error calls a map of these keys.
  const std::string& what() const { return what_; }
  std::span<const KeySpec> specs() const { return specs_; }
  std::vector<std::string_view> names() const;
  // Is `key` one of its keys?
  bool has(std::string_view key) const;
  // The tables of nested maps, as "<name>.<key>".
  virtual std::vector<const KeyTableBase*> nested() const = 0;
  // The keys whose default, read by the key's own reader, is not what the
  // struct starts with ("host.cores: 1 reads as 2, the struct holds 4"): empty when they agree.
  virtual std::vector<std::string> default_mismatches() const = 0;

 protected:
  std::string name_, what_;
  std::vector<KeySpec> specs_;
};

}  // namespace rdmasim
