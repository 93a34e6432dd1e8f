#include "workloads/workload_reader.hpp"

#include <algorithm>

namespace rdmasim {

std::optional<std::string> host_name(ExperimentDraft& d, const YAML::Node& v, const std::string& path) {
  auto n = d.c.name(v, path, "a host name");
  if (!n || !d.graph) return n;
  const auto i = d.graph->find(*n);
  if (!i) {
    d.c.error(v, path, "unknown host '" + *n + "'" + suggestion(*n, d.x.topology.hosts));
    return std::nullopt;
  }
  if (!d.graph->is_host(*i)) {
    d.c.error(v, path,
              "'" + *n + "' is a " + (d.graph->kind(*i) == NodeKind::router ? "router" : "switch") +
                  "; workloads run between hosts");
    return std::nullopt;
  }
  return n;
}

std::optional<std::string> one_host(ExperimentDraft& d, const Fields& f, std::string_view key) {
  const Entry* e = f.find(key);
  if (!e) {
    d.c.missing(f, key, "a host name");
    return std::nullopt;
  }
  if (e->value.IsSequence()) {
    d.c.error(e->value, e->path, "expected one host name, got a list (only incast takes a list of senders)");
    return std::nullopt;
  }
  return host_name(d, e->value, e->path);
}

std::optional<std::vector<std::string>> host_list(ExperimentDraft& d, const Entry& e) {
  if (!e.value.IsSequence()) {
    auto n = host_name(d, e.value, e.path);
    if (!n) return std::nullopt;
    return std::vector<std::string>{*n};
  }
  std::vector<std::string> out;
  bool ok = true;
  for (size_t i = 0; i < e.value.size(); ++i) {
    const std::string path = index_path(e.path, i);
    auto n = host_name(d, e.value[i], path);
    if (!n) {
      ok = false;
    } else if (std::find(out.begin(), out.end(), *n) != out.end()) {
      d.c.error(e.value[i], path, "'" + *n + "' is listed twice");
      ok = false;
    } else {
      out.push_back(*n);
    }
  }
  if (ok && out.empty()) {
    d.c.error(e.value, e.path, "the list is empty");
    return std::nullopt;
  }
  return ok ? std::optional(out) : std::nullopt;
}

void from_to(ExperimentDraft& d, const Fields& f, WorkloadConfig& w) {
  auto from = one_host(d, f, "from");
  auto to = one_host(d, f, "to");
  if (from) w.from = {*from};
  if (to) w.to = {*to};
  if (from && to && *from == *to)
    d.c.error(f.find("to")->value, f.find("to")->path, "from and to are the same host '" + *to + "'");
}

}  // namespace rdmasim
