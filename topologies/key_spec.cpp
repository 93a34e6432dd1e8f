#include "topologies/key_spec.hpp"

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

}  // namespace rdmasim
