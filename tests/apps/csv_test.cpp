#include "apps/csv.hpp"

#include <doctest/doctest.h>

#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "apps/report.hpp"

using namespace rdmasim;
using nlohmann::json;

namespace {
json port(const char* node, int p, uint64_t drops) {
  return {{"node", node}, {"port", p}, {"drops", drops}, {"link_drops", 0}, {"ratio", 0.25 * p}};
}
}  // namespace

TEST_CASE("results.json with its port table written from records is what dump(2) writes of the whole") {
  const json ports = {port("a", 0, 1), port("s1", 3, 0), port("b", 0, 2)};
  json rest = {{"experiment", "x \"quoted\""},
               {"hosts", {{{"name", "a"}, {"cores", json::array()}}, {{"name", "b"}, {"cores", {1, 2}}}}},
               {"seed", 1},
               {"empty", json::object()},
               {"zzz", {{"deep", {{"er", {1.5, "two"}}}}}}};
  for (const json& table : {ports, json::array()}) {
    json whole = rest;
    whole["ports"] = table;
    std::ostringstream want, got;
    want << std::setw(2) << whole;
    write_json_with_records(got, rest, {{"ports", records_of(table)}});
    CHECK(got.str() == want.str());
  }
  SUBCASE("two tables, neither held") {
    json whole = rest;
    whole["ports"] = ports;
    json without = rest;
    without.erase("hosts");
    std::ostringstream want, got;
    want << std::setw(2) << whole;
    write_json_with_records(got, without,
                            {{"ports", records_of(ports)}, {"hosts", records_of(rest["hosts"])}});
    CHECK(got.str() == want.str());
  }
  SUBCASE("the key first or last among the others") {
    for (const char* key : {"aaa", "zzzz"}) {
      json whole = rest;
      whole[key] = ports;
      std::ostringstream want, got;
      want << std::setw(2) << whole;
      write_json_with_records(got, rest, {{key, records_of(ports)}});
      CHECK(got.str() == want.str());
    }
  }
}

TEST_CASE("a CSV from records made one at a time is the CSV of the array") {
  const json ports = {port("a", 0, 1), port("s1", 3, 0)};
  std::ostringstream got;
  write_records_csv(got, records_of(ports));
  CHECK(got.str() == records_csv(ports));
}

TEST_CASE("drops of results without a port table: the sum they hold, or the ports given") {
  const json ports = {port("a", 0, 1), port("s1", 3, 4)};
  json r = {{"hosts", {{{"name", "a"}}}}, {"ports", ports}};
  const json full = drops_json(r);
  CHECK(full["at"]["nic_queue"] == 1);
  CHECK(full["at"]["switch_queue"] == 4);
  r.erase("ports");
  const json hosts = r["hosts"];
  CHECK(drops_json(r, records_of(ports), records_of(hosts)) == full);
  r.erase("hosts");
  CHECK(drops_json(r, records_of(ports), records_of(hosts)) == full);
  r["drops"] = full;
  CHECK(drops_json(r) == full);
}
