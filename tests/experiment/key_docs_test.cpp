// The key tables (topologies/key_table.hpp) and the reference generated
// from them (experiment/key_docs.hpp).
#include "experiment/key_docs.hpp"

#include <doctest/doctest.h>

#include "experiment/loader.hpp"
#include "experiment/sections/sections.hpp"
#include "topologies/key_table.hpp"
#include "workloads/registry.hpp"

using namespace rdmasim;

namespace {

struct Knobs {
  Time delay = Time::us(1);
  uint32_t count = 4;
  Bytes buffer{4096};
};

const KeyTable<Knobs>& knobs() {
  static const KeyTable<Knobs> t{
      "knobs",
      "knob settings",
      {
          key("delay", &Knobs::delay, keys::time(), "1us", "how long"),
          required(key("count", &Knobs::count, keys::whole(1, 8), "", "how many"), "how many, such as 4"),
          key("buffer", &Knobs::buffer, keys::size(), "4KiB", "how much"),
      }};
  return t;
}

std::string read(std::string_view yaml, Knobs& k) {
  YamlReader c("exp.yaml");
  knobs().read(c, YAML::Load(std::string(yaml)), "knobs", k);
  std::string s;
  for (const LoadError& e : c.errors()) s += e.format() + "\n";
  return s;
}

}  // namespace

TEST_CASE("key table: one row reads, allows, requires and documents a key") {
  Knobs k;
  CHECK(read("{delay: 5us, count: 2}", k).empty());
  CHECK(k.delay == Time::us(5));
  CHECK(k.count == 2);
  CHECK(read("{count: 2, bufer: 1KiB}", k) ==
        "exp.yaml:1:12: knobs.bufer: unknown key (did you mean 'buffer'?); allowed keys: delay, count, "
        "buffer\n");
  CHECK(read("{delay: 1us}", k) == "exp.yaml:1:1: knobs: missing key 'count' (how many, such as 4)\n");
  CHECK(read("{count: 9}", k).find("knobs.count") != std::string::npos);
  CHECK(key_table_markdown(knobs().specs()) ==
        "| key | type | default | range | meaning |\n|---|---|---|---|---|\n"
        "| `delay` | time | `1us` | — | how long |\n"
        "| `count` | whole number | **required** | 1..8 | how many |\n"
        "| `buffer` | size | `4KiB` | above 0 | how much |\n");
  CHECK(knobs().default_mismatches().empty());
}

TEST_CASE("key table: a default that is not the struct's is found") {
  static const KeyTable<Knobs> wrong{
      "knobs", "knob settings", {key("delay", &Knobs::delay, keys::time(), "2us", "")}};
  const auto m = wrong.default_mismatches();
  REQUIRE(m.size() == 1);
  CHECK(m[0] == "knobs.delay: default '2us' is not what the struct starts with");
}

TEST_CASE("key tables: every section's defaults are what its struct starts with") {
  for (const std::string& m : experiment_keys().default_mismatches()) FAIL_CHECK(m);
  // A workload kind's too (a default the kind sets is documented apart: documented_default).
  for (const Workload* k : workload_kinds())
    for (const std::string& m : k->keys().default_mismatches()) FAIL_CHECK(m);
}

TEST_CASE("key docs: marks are filled from the tables, and the rest is kept") {
  const std::vector<KeyDoc> docs{{"knobs", {knobs().specs().begin(), knobs().specs().end()}}};
  std::vector<std::string> filled;
  std::string error;
  const std::string md = "# Title\n\nProse.\n\n<!-- keys: knobs -->\nstale\n<!-- /keys -->\n\nMore prose.\n";
  const std::string made = fill_key_docs(md, docs, filled, error);
  CHECK(error.empty());
  CHECK(made == "# Title\n\nProse.\n\n<!-- keys: knobs -->\n" + key_table_markdown(docs[0].keys) +
                    "<!-- /keys -->\n\nMore prose.\n");
  CHECK(fill_key_docs(made, docs, filled, error) == made);
  CHECK(filled == std::vector<std::string>{"knobs", "knobs"});
  fill_key_docs("<!-- keys: nope -->\n<!-- /keys -->\n", docs, filled, error);
  CHECK(error == "no key table named 'nope'");
}

TEST_CASE("key docs: every table has a name of its own") {
  const std::vector<KeyDoc> docs = key_docs();
  for (size_t i = 0; i < docs.size(); ++i)
    for (size_t j = i + 1; j < docs.size(); ++j) CHECK_MESSAGE(docs[i].name != docs[j].name, docs[i].name);
}

TEST_CASE("key docs: a section read as a list is documented as a list") {
  // Each section given as a map: those whose reader wants a list say so, and their row must too.
  const std::string base =
      "topology: {hosts: [a, b], switches: [s1], links: [[a, s1], [b, s1]]}\n"
      "workloads: [{kind: send, from: a, to: b}]\n";
  int lists = 0;
  for (const KeySpec& k : experiment_keys().specs()) {
    if (k.name == "topology" || k.name == "workloads" || (k.type != "map" && !k.type.starts_with("list")))
      continue;
    const LoadResult r = load_experiment_text(base + std::string(k.name) + ": {}\n", "exp.yaml");
    bool wants_list = false;
    for (const LoadError& e : r.errors)
      wants_list |= e.message.starts_with(std::string(k.name) + ": expected a list");
    lists += wants_list;
    CHECK_MESSAGE(wants_list == k.type.starts_with("list"), k.name, " is documented as ", k.type);
  }
  CHECK(lists == 2);  // programs and faults
}
