// CSV (RFC 4180) for pandas and R: the tables beside results.json
// (workloads.csv, ports.csv, hosts.csv) and the sweep's. Column names are
// results.json's keys; a nested key is joined with dots (latency_ns.p50).
#pragma once

#include <functional>
#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace rdmasim {

// One CSV field: numbers and booleans as JSON writes them, null empty,
// text quoted when it must be.
std::string csv_field(const nlohmann::json& v);

// A header and a line per object of `records` (a JSON array): every key
// any object has, in the order first seen; nested objects flattened with
// dots; lists of names joined with ';'.
std::string records_csv(const nlohmann::json& records);
// The same, written to `out` a line at a time.
void write_records_csv(std::ostream& out, const nlohmann::json& records);

// Records made one at a time, on each call as many times as asked (a
// table too large to hold as JSON objects: a k = 64 fat tree's 393,216
// ports): the source calls `each` with every record in turn.
using RecordSource = std::function<void(const std::function<void(const nlohmann::json&)>& each)>;
// The records of a JSON array (held by the caller while the source lives).
RecordSource records_of(const nlohmann::json& records);
void write_records_csv(std::ostream& out, const RecordSource& records);

// A table written from records, not held in results.json's content: its
// key there and where its records come from.
struct StreamedTable {
  std::string key;
  RecordSource records;
};
// `results` as `out << std::setw(2) << results` writes it, with each of
// `tables` an array of its records (which `results` does not hold) in its
// place among the keys: the same bytes without the tables in memory.
void write_json_with_records(std::ostream& out, const nlohmann::json& results,
                             const std::vector<StreamedTable>& tables);

}  // namespace rdmasim
