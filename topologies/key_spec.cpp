#include "topologies/key_spec.hpp"

#include <algorithm>

namespace rdmasim {

namespace {
std::string code_or_dash(std::string_view s) {
  return s.empty() ? "—" : s.starts_with("**") ? std::string(s) : "`" + std::string(s) + "`";
}
}  // namespace

std::string key_table_markdown(std::span<const KeySpec> keys) {
  std::string out = "| key | type | default | range | meaning |\n|---|---|---|---|---|\n";
  for (const KeySpec& k : keys) {
    out += "| `" + std::string(k.name) + "` | " + std::string(k.type) + " | " + code_or_dash(k.fallback) +
           " | " + (k.range.empty() ? "—" : std::string(k.range)) + " | " + std::string(k.help);
    if (!k.since.empty()) out += " (since " + std::string(k.since) + ")";
    out += " |\n";
  }
  return out;
}

std::vector<std::string_view> KeyTableBase::names() const {
  std::vector<std::string_view> out;
  key_names(specs(), out);
  return out;
}

bool KeyTableBase::has(std::string_view key) const {
  return std::any_of(specs_.begin(), specs_.end(), [&](const KeySpec& k) { return k.name == key; });
}

}  // namespace rdmasim
