// docs/yaml.md's key reference, generated from the key tables
// (topologies/key_table.hpp): every section's, its nested maps', each
// fabric section's and each workload kind's. A Markdown file marks where a
// table goes with `<!-- keys: NAME -->` ... `<!-- /keys -->`; the
// rdmasim-keys program (apps/keys_main.cpp) fills the marks, and the
// yaml_docs test fails when a file is not what the tables make.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "topologies/key_spec.hpp"

namespace rdmasim {

struct KeyDoc {
  std::string name;           // "link", "host.pcie", "workloads.flows"
  std::vector<KeySpec> keys;  // views into static tables
};

// Every table, the experiment's top level first, each nested map after its parent.
std::vector<KeyDoc> key_docs();

// `md` with each marked table filled from `docs`; the names it filled are
// added to `filled`. An unknown name or an unclosed mark is an error, in `error`.
std::string fill_key_docs(std::string_view md, const std::vector<KeyDoc>& docs,
                          std::vector<std::string>& filled, std::string& error);

// Every table with a heading, as `rdmasim-keys` prints it.
std::string key_docs_markdown(const std::vector<KeyDoc>& docs);

}  // namespace rdmasim
