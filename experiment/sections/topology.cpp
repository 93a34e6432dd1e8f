// `topology:`, as lists of nodes and links or from a generator.
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "experiment/sections/sections.hpp"
#include "fabrics/registry.hpp"
#include "topologies/generate.hpp"

namespace rdmasim {

namespace {

void generate(ExperimentDraft& d, const Entry& g) {
  if (!g.value.IsMap())
    return d.c.error(g.value, g.path,
                     "expected a generator such as {kind: fat_tree, k: 4}, got " + describe(g.value));
  const YAML::Node kn = g.value["kind"];
  const std::string kp = g.path + ".kind";
  if (!kn || kn.IsNull())
    return d.c.error(g.value, g.path, "missing key 'kind' (leaf_spine, fat_tree or star)");
  auto ks = d.c.scalar(kn, kp, "leaf_spine, fat_tree or star");
  if (!ks) return;
  auto kind = from_string<GeneratorKind>(*ks);
  std::vector<std::string_view> allowed = {"kind", "host_link"};
  if (kind == GeneratorKind::leaf_spine)
    allowed.insert(allowed.end(), {"spines", "leaves", "hosts_per_leaf", "fabric_link"});
  else if (kind == GeneratorKind::fat_tree)
    allowed.insert(allowed.end(), {"k", "fabric_link"});
  else if (kind == GeneratorKind::star)
    allowed.push_back("hosts");
  else
    return d.c.error(kn, kp, "unknown generator '" + *ks + "'; expected leaf_spine, fat_tree or star");
  const size_t before = d.c.errors().size();
  auto f = d.c.fields(g.value, g.path, std::string(to_string(*kind)) + " settings", allowed);
  if (!f || d.c.errors().size() != before) return;
  auto count = [&](std::string_view key, uint64_t lo, uint64_t hi,
                   const char* why) -> std::optional<uint32_t> {
    const Entry* e = f->find(key);
    if (!e) {
      d.c.missing(*f, key, why);
      return std::nullopt;
    }
    auto n = d.c.whole(*e, lo, hi);
    return n ? std::optional<uint32_t>(static_cast<uint32_t>(*n)) : std::nullopt;
  };
  LinkConfig host_link = d.x.link, fabric_link = d.x.link;
  if (auto e = f->find("host_link")) host_link = read_link(d, e->value, e->path, d.x.link);
  if (auto e = f->find("fabric_link")) fabric_link = read_link(d, e->value, e->path, d.x.link);
  if (*kind == GeneratorKind::leaf_spine) {
    auto spines = count("spines", 1, 1024, "how many spine switches");
    auto leaves = count("leaves", 1, 4096, "how many leaf switches");
    auto per = count("hosts_per_leaf", 1, 4096, "how many hosts on each leaf");
    if (!spines || !leaves || !per) return;
    if (uint64_t{*leaves} * *per > 65536) {
      return d.c.error(g.value, g.path,
                       "at most 65536 hosts, got " + std::to_string(uint64_t{*leaves} * *per));
    }
    d.x.topology = generate_leaf_spine(*spines, *leaves, *per, host_link, fabric_link);
  } else if (*kind == GeneratorKind::fat_tree) {
    auto k = count("k", 2, 64, "switch radix, an even number");
    if (!k) return;
    if (*k % 2)
      return d.c.error(f->find("k")->value, f->find("k")->path, "k must be even, got " + std::to_string(*k));
    d.x.topology = generate_fat_tree(*k, host_link, fabric_link);
  } else {
    auto n = count("hosts", 1, 65536, "how many hosts on the switch");
    if (!n) return;
    d.x.topology = generate_star(*n, host_link);
  }
  const YAML::Mark m = mark_of(g.key);
  for (LinkSpec& l : d.x.topology.links) l.line = m.line + 1, l.column = m.column + 1;
  d.link_nodes.assign(d.x.topology.links.size(), g.key);
}

void lists(ExperimentDraft& d, const Fields& f) {
  TopologyConfig& t = d.x.topology;
  std::unordered_map<std::string, int> line_of;  // every node name -> the line it was declared on
  std::vector<YAML::Node> host_nodes;
  std::vector<std::string> host_paths;
  auto names = [&](std::string_view key, std::vector<std::string>& out, bool hosts) {
    const Entry* e = f.find(key);
    if (!e) return;
    if (!e->value.IsSequence()) {
      d.c.error(e->value, e->path, "expected a list of names such as [a, b], got " + describe(e->value));
      return;
    }
    for (size_t i = 0; i < e->value.size(); ++i) {
      const std::string path = index_path(e->path, i);
      auto n = d.c.name(e->value[i], path);
      if (!n) continue;
      const int line = mark_of(e->value[i]).line + 1;
      if (auto [at, fresh] = line_of.emplace(*n, line); !fresh) {
        d.c.error(e->value[i], path,
                  "duplicate name '" + *n + "' (first at line " + std::to_string(at->second) + ")");
        continue;
      }
      out.push_back(*n);
      if (hosts) host_nodes.push_back(e->value[i]), host_paths.push_back(path);
    }
  };
  names("hosts", t.hosts, true);
  names("switches", t.switches, false);
  names("routers", t.routers, false);
  if (const Entry* h = f.find("hosts"); !h)
    d.c.missing(f, "hosts", "a list of host names");
  else if (h->value.IsSequence() && h->value.size() == 0)
    d.c.error(h->value, h->path, "at least one host");
  if (const Entry* r = f.find("routers"); r && !t.routers.empty())
    if (const std::string_view why = fabric_of(d.x).routers_error(); !why.empty())
      d.c.error(r->value, r->path, std::string(why));

  const Entry* le = f.find("links");
  if (!le) return d.c.missing(f, "links", "a list such as [[a, s1], [b, s1]]");
  if (!le->value.IsSequence())
    return d.c.error(le->value, le->path,
                     "expected a list of links such as [a, s1], got " + describe(le->value));
  std::map<std::pair<std::string, std::string>, int> seen;  // unordered pair -> line
  std::unordered_map<std::string, int> links_of;            // node -> the line of its first link
  const std::unordered_set<std::string> hosts(t.hosts.begin(), t.hosts.end());
  auto second_link_of_host = [&](const std::string& a, const std::string& b) -> const std::string* {
    for (const std::string* n : {&a, &b})
      if (links_of.count(*n) && hosts.count(*n)) return n;
    return nullptr;
  };
  for (size_t i = 0; i < le->value.size(); ++i) {
    const YAML::Node l = le->value[i];
    const std::string path = index_path(le->path, i);
    if (!l.IsSequence() || l.size() < 2 || l.size() > 3) {
      d.c.error(l, path, "expected [a, b] or [a, b, {bandwidth: 25Gbps, ...}], got " + describe(l));
      d.links_incomplete = true;
      continue;
    }
    auto a = d.c.name(l[0], index_path(path, 0), "a node name");
    auto b = d.c.name(l[1], index_path(path, 1), "a node name");
    LinkSpec spec{a.value_or(""), b.value_or(""), d.x.link};
    if (l.size() == 3) spec.config = read_link(d, l[2], index_path(path, 2), d.x.link);
    if (!a || !b) {
      d.links_incomplete = true;
      continue;
    }
    bool known = true;
    for (size_t end = 0; end < 2; ++end) {
      if (!line_of.count(end ? *b : *a)) {
        d.c.error(l[end], index_path(path, end), d.unknown_node(end ? *b : *a));
        known = false;
      }
    }
    if (!known) {
      d.links_incomplete = true;
      continue;
    }
    if (*a == *b) {
      d.c.error(l, path, "a link from '" + *a + "' to itself");
      continue;
    }
    const int line = mark_of(l).line + 1;
    if (auto [at, fresh] = seen.emplace(std::minmax(*a, *b), line); !fresh) {
      d.c.error(l, path,
                "duplicate link between '" + *a + "' and '" + *b + "' (first at line " +
                    std::to_string(at->second) + ")");
      continue;
    }
    // A host has one NIC with one port (nodes/host/rnic.hpp). The link
    // stays in the graph, so that what else is wrong is still found.
    if (const std::string* h = second_link_of_host(*a, *b))
      d.c.error(l, path,
                "host '" + *h + "' has more than one link (first at line " + std::to_string(links_of[*h]) +
                    "); a host has one NIC port");
    const YAML::Mark m = mark_of(l);
    for (const std::string* n : {&*a, &*b}) links_of.emplace(*n, m.line + 1);
    spec.line = m.line + 1;
    spec.column = m.column + 1;
    t.links.push_back(std::move(spec));
    d.link_nodes.push_back(l);
  }
  for (size_t i = 0; i < t.hosts.size() && !d.links_incomplete; ++i)
    if (!links_of.count(t.hosts[i]))
      d.c.error(host_nodes[i], host_paths[i], "host '" + t.hosts[i] + "' has no link");
}
}  // namespace

void read_topology(ExperimentDraft& d, const Entry& e) {
  d.topology = e;
  auto f = d.c.fields(e.value, e.path, "a topology", {"hosts", "switches", "routers", "links", "generate"});
  if (!f) return;
  if (const Entry* g = f->find("generate")) {
    for (std::string_view k : {"hosts", "switches", "routers", "links"}) {
      if (f->has(k)) {
        d.c.error(g->key, g->path, "give either generate or hosts, switches, routers and links, not both");
        return;
      }
    }
    generate(d, *g);
  } else {
    lists(d, *f);
  }
}

}  // namespace rdmasim
