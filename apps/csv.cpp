#include "apps/csv.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <unordered_map>
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

// Two passes over the records, the columns first, then a line at a time:
// nothing but one record's cells is held besides the output (a k = 32 fat
// tree's port table is 49,152 records).
void write_records_csv(std::ostream& out, const json& records) {
  std::vector<std::string> columns;
  std::unordered_map<std::string, size_t> column_of;
  std::vector<std::pair<std::string, json>> cells;
  for (const auto& r : records) {
    cells.clear();
    flatten(r, "", cells);
    for (const auto& [k, v] : cells)
      if (column_of.try_emplace(k, columns.size()).second) columns.push_back(k);
  }
  for (size_t i = 0; i < columns.size(); ++i) out << (i ? "," : "") << csv_field(columns[i]);
  out << "\n";
  std::vector<const json*> row(columns.size());
  for (const auto& r : records) {
    cells.clear();
    flatten(r, "", cells);
    std::fill(row.begin(), row.end(), nullptr);
    for (const auto& [k, v] : cells) row[column_of.at(k)] = &v;  // a key twice: its last value
    for (size_t i = 0; i < columns.size(); ++i) out << (i ? "," : "") << (row[i] ? csv_field(*row[i]) : "");
    out << "\n";
  }
}

std::string records_csv(const json& records) {
  std::ostringstream out;
  write_records_csv(out, records);
  return std::move(out).str();
}

}  // namespace rdmasim
