// A key of an experiment file declared once: its name, type, unit, default,
// range, help and the version it appeared in. A section's table of these is
// what its reader allows (and suggests among for a misspelt key), and what
// docs/yaml.md lists for it (experiment/key_docs.hpp, rdmasim-keys, the yaml_docs
// test). topologies/key_table.hpp binds a section's keys to the fields they fill.
#pragma once

#include <span>
#include <string>
#include <string_view>

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

}  // namespace rdmasim
