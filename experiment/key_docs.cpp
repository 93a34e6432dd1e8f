#include "experiment/key_docs.hpp"

#include "experiment/sections/sections.hpp"
#include "workloads/registry.hpp"

namespace rdmasim {

namespace {

constexpr std::string_view kOpen = "<!-- keys: ";
constexpr std::string_view kClose = "<!-- /keys -->";

void add(const KeyTableBase& t, std::vector<KeyDoc>& out) {
  out.push_back({t.name(), {t.specs().begin(), t.specs().end()}});
  for (const KeyTableBase* s : t.nested()) add(*s, out);
}

}  // namespace

std::vector<KeyDoc> key_docs() {
  std::vector<KeyDoc> out;
  add(experiment_keys(), out);
  for (const Workload* k : workload_kinds()) add(k->keys(), out);
  return out;
}

std::string fill_key_docs(std::string_view md, const std::vector<KeyDoc>& docs,
                          std::vector<std::string>& filled, std::string& error) {
  std::string out;
  size_t at = 0;
  for (size_t open = md.find(kOpen); open != std::string_view::npos; open = md.find(kOpen, at)) {
    const size_t name_end = md.find(" -->", open);
    const size_t close = md.find(kClose, open);
    if (name_end == std::string_view::npos || close == std::string_view::npos) {
      error = "a '" + std::string(kOpen) + "' mark without '" + std::string(kClose) + "' after it";
      return {};
    }
    const std::string name(md.substr(open + kOpen.size(), name_end - open - kOpen.size()));
    const auto doc = std::find_if(docs.begin(), docs.end(), [&](const KeyDoc& d) { return d.name == name; });
    if (doc == docs.end()) {
      error = "no key table named '" + name + "'";
      return {};
    }
    const size_t body = name_end + 4;
    out += md.substr(at, body - at);
    out += "\n" + key_table_markdown(doc->keys);
    filled.push_back(name);
    at = close;
  }
  out += md.substr(at);
  return out;
}

std::string key_docs_markdown(const std::vector<KeyDoc>& docs) {
  std::string out;
  for (const KeyDoc& d : docs) out += "### " + d.name + "\n\n" + key_table_markdown(d.keys) + "\n";
  return out;
}

}  // namespace rdmasim
