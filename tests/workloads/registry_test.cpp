// The workload kinds' registry: every `kind:` value one kind's, keys declared once per kind.
#include "workloads/registry.hpp"

#include <doctest/doctest.h>

#include <set>
#include <string>

namespace rdmasim {

TEST_CASE("workload registry: each kind name belongs to one kind, found by name and by enum") {
  std::set<std::string_view> seen;
  for (const Workload* k : workload_kinds())
    for (std::string_view n : k->names()) {
      CHECK(seen.insert(n).second);
      CHECK(find_workload(n) == k);
    }
  // Every built-in kind of the enum has its class.
  for (std::string_view n : EnumNames<WorkloadKind>::names) CHECK(seen.count(n) == 1);
  CHECK(find_workload("programs") == nullptr);
  // A kind outside the enum is known by its name alone.
  REQUIRE(find_workload("nvme") != nullptr);
  CHECK(seen.count("nvme") == 1);
  WorkloadConfig w;
  w.kind = WorkloadKind::udp;  // made in code: the enum names it
  CHECK(&workload_of(w) == find_workload("udp"));
  w.kind_name = "compute";  // loaded: the name as written
  CHECK(&workload_of(w) == find_workload("compute"));
}

TEST_CASE("workload registry: a kind declares each key once; the loader allows their union") {
  for (const Workload* k : workload_kinds()) {
    std::set<std::string_view> keys;
    CHECK(k->keys().name() == "workloads." + std::string(k->names().front()));
    for (const KeySpec& s : k->keys().specs()) {
      CHECK_MESSAGE(keys.insert(s.name).second, std::string(s.name));
      CHECK(!s.help.empty());
      CHECK(s.name != "name");
      CHECK(s.name != "kind");
    }
  }
  const auto all = workload_keys();
  CHECK(all.at(0) == "name");
  CHECK(all.at(1) == "kind");
  CHECK(std::set<std::string_view>(all.begin(), all.end()).size() == all.size());
  CHECK(kinds_taking("work") == "compute");
  CHECK(kinds_taking("cdf") == "flows");
  CHECK(kinds_taking("no_such_key").empty());
}

TEST_CASE("key tables: a Markdown row per key, a dash where there is no default or range") {
  constexpr KeySpec keys[] = {{"bs", "size", "4KiB", "512..1MiB", "block size"},
                              {"nsid", "whole number", "", "", "namespace", "0.9"}};
  CHECK(key_table_markdown(keys) ==
        "| key | type | default | range | meaning |\n|---|---|---|---|---|\n"
        "| `bs` | size | `4KiB` | 512..1MiB | block size |\n"
        "| `nsid` | whole number | — | — | namespace (since 0.9) |\n");
}

}  // namespace rdmasim
