#include "apps/csv.hpp"

#include <algorithm>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <streambuf>
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

RecordSource records_of(const json& records) {
  return [&records](const std::function<void(const json&)>& each) {
    for (const auto& r : records) each(r);
  };
}

void write_records_csv(std::ostream& out, const json& records) {
  write_records_csv(out, records_of(records));
}

// Two passes over the records, the columns first, then a line at a time:
// nothing but one record's cells is held besides the output (a k = 32 fat
// tree's port table is 49,152 records).
void write_records_csv(std::ostream& out, const RecordSource& records) {
  std::vector<std::string> columns;
  std::unordered_map<std::string, size_t> column_of;
  std::vector<std::pair<std::string, json>> cells;
  records([&](const json& r) {
    cells.clear();
    flatten(r, "", cells);
    for (const auto& [k, v] : cells)
      if (column_of.try_emplace(k, columns.size()).second) columns.push_back(k);
  });
  for (size_t i = 0; i < columns.size(); ++i) out << (i ? "," : "") << csv_field(columns[i]);
  out << "\n";
  std::vector<const json*> row(columns.size());
  records([&](const json& r) {
    cells.clear();
    flatten(r, "", cells);
    std::fill(row.begin(), row.end(), nullptr);
    for (const auto& [k, v] : cells) row[column_of.at(k)] = &v;  // a key twice: its last value
    for (size_t i = 0; i < columns.size(); ++i) out << (i ? "," : "") << (row[i] ? csv_field(*row[i]) : "");
    out << "\n";
  });
}

namespace {
// Passes what is written on to `to` with `spaces` more after each newline:
// a value written as dump(2) writes it comes out one level deeper, as the
// enclosing object's dump would write it, without the text held whole
// (a k = 64 fat tree's hosts are 31 MiB of it).
class Indenter : public std::streambuf {
 public:
  Indenter(std::streambuf* to, size_t spaces) : to_(to), pad_(spaces, ' ') {}

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    const char* end = s + n;
    while (s != end) {
      const char* nl = std::find(s, end, '\n');
      const char* upto = nl == end ? end : nl + 1;
      if (to_->sputn(s, upto - s) != upto - s) return 0;
      if (nl != end && to_->sputn(pad_.data(), static_cast<std::streamsize>(pad_.size())) !=
                           static_cast<std::streamsize>(pad_.size()))
        return 0;
      s = upto;
    }
    return n;
  }

 private:
  std::streambuf* to_;
  std::string pad_;
};

// `value` as `out << std::setw(2) << value` writes it, `spaces` deeper.
void write_indented(std::ostream& out, const json& value, size_t spaces) {
  Indenter buf(out.rdbuf(), spaces);
  std::ostream deeper(&buf);
  deeper << std::setw(2) << value;
  if (!deeper) out.setstate(std::ios::badbit);
}
}  // namespace

void write_json_with_records(std::ostream& out, const json& results,
                             const std::vector<StreamedTable>& tables) {
  // The keys in the order dump() gives them (std::map: sorted), the tables' among them.
  std::vector<std::string> keys;
  for (const auto& [k, v] : results.items()) keys.push_back(k);
  for (const StreamedTable& t : tables) keys.insert(std::lower_bound(keys.begin(), keys.end(), t.key), t.key);
  out << "{";
  for (size_t i = 0; i < keys.size(); ++i) {
    out << (i ? ",\n  " : "\n  ") << json(keys[i]).dump() << ": ";
    const auto table =
        std::find_if(tables.begin(), tables.end(), [&](const StreamedTable& t) { return t.key == keys[i]; });
    if (table == tables.end()) {
      write_indented(out, results.at(keys[i]), 2);
      continue;
    }
    bool first = true;
    table->records([&](const json& r) {
      out << (first ? "[\n    " : ",\n    ");
      first = false;
      write_indented(out, r, 4);
    });
    out << (first ? "[]" : "\n  ]");
  }
  out << "\n}";
}

std::string records_csv(const json& records) {
  std::ostringstream out;
  write_records_csv(out, records);
  return std::move(out).str();
}

}  // namespace rdmasim
