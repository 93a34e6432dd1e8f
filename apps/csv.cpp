#include "apps/csv.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

namespace rdmasim {

using nlohmann::json;

namespace {

void flatten(const json& j, const std::string& prefix, std::vector<std::pair<std::string, json>>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) flatten(v, prefix.empty() ? k : prefix + "." + k, out);
  } else if (j.is_array() &&
             std::any_of(j.begin(), j.end(), [](const json& v) { return v.is_structured(); })) {
    // A list of records (a host's cores): one column per element and key,
    // `cores.0.user_ps`, so every cell stays a number.
    for (size_t i = 0; i < j.size(); ++i) flatten(j[i], prefix + "." + std::to_string(i), out);
  } else if (j.is_array()) {
    std::string joined;
    for (const auto& v : j)
      joined += (joined.empty() ? "" : ";") + (v.is_string() ? v.get<std::string>() : v.dump());
    out.emplace_back(prefix, joined);
  } else {
    out.emplace_back(prefix, j);
  }
}

}  // namespace

std::string csv_field(const json& v) {
  if (v.is_null()) return "";
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string records_csv(const json& records) {
  std::vector<std::string> columns;
  std::vector<std::map<std::string, json>> rows;
  for (const auto& r : records) {
    std::vector<std::pair<std::string, json>> cells;
    flatten(r, "", cells);
    auto& row = rows.emplace_back();
    for (auto& [k, v] : cells) {
      if (std::find(columns.begin(), columns.end(), k) == columns.end()) columns.push_back(k);
      row[k] = std::move(v);
    }
  }
  std::string out;
  for (size_t i = 0; i < columns.size(); ++i) out += (i ? "," : "") + csv_field(columns[i]);
  out += "\n";
  for (const auto& row : rows) {
    for (size_t i = 0; i < columns.size(); ++i) {
      auto it = row.find(columns[i]);
      out += (i ? "," : "") + (it == row.end() ? std::string() : csv_field(it->second));
    }
    out += "\n";
  }
  return out;
}

}  // namespace rdmasim
