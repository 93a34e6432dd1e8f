// `topology:`, as lists of nodes and links or from a generator.
#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "experiment/sections/sections.hpp"
#include "fabrics/registry.hpp"
#include "topologies/generate.hpp"

namespace rdmasim {

using namespace keys;

namespace {

// What a generator's keys hold.
struct GeneratorParams {
  GeneratorKind kind = GeneratorKind::none;
  uint32_t spines = 0, leaves = 0, hosts_per_leaf = 0, k = 0, hosts = 0;
};

Key<GeneratorParams> generator_kind() {
  return declared<GeneratorParams>("kind", "`leaf_spine`, `fat_tree` or `star`", "", "the generator");
}
Key<GeneratorParams> host_link() {
  return declared<GeneratorParams>("host_link", "[link settings](#link-settings)", "",
                                   "overrides the links between a host and its switch");
}
Key<GeneratorParams> fabric_link() {
  return declared<GeneratorParams>("fabric_link", "[link settings](#link-settings)", "",
                                   "overrides the links between switches");
}
template <class M>
Key<GeneratorParams> count(const char* name, M GeneratorParams::*m, uint64_t lo, uint64_t hi,
                           const char* why) {
  return required(key(name, m, whole(lo, hi), "", why), why);
}

// The generators' keys, one table a kind.
const KeyTable<GeneratorParams>& leaf_spine_keys() {
  using G = GeneratorParams;
  static const KeyTable<G> t{
      "topology.generate.leaf_spine",
      "leaf_spine settings",
      {generator_kind(), host_link(), count("spines", &G::spines, 1, 1024, "how many spine switches"),
       count("leaves", &G::leaves, 1, 4096, "how many leaf switches"),
       count("hosts_per_leaf", &G::hosts_per_leaf, 1, 4096, "how many hosts on each leaf"), fabric_link()}};
  return t;
}
const KeyTable<GeneratorParams>& fat_tree_keys() {
  static const KeyTable<GeneratorParams> t{
      "topology.generate.fat_tree",
      "fat_tree settings",
      {generator_kind(), host_link(), count("k", &GeneratorParams::k, 2, 64, "switch radix, an even number"),
       fabric_link()}};
  return t;
}
const KeyTable<GeneratorParams>& star_keys() {
  static const KeyTable<GeneratorParams> t{
      "topology.generate.star",
      "star settings",
      {generator_kind(), host_link(),
       count("hosts", &GeneratorParams::hosts, 1, 65536, "how many hosts on the switch")}};
  return t;
}

// The generator's kind, and its table.
const KeyTable<GeneratorParams>* generator_table(ExperimentDraft& d, const Entry& g) {
  if (!g.value.IsMap()) {
    d.c.error(g.value, g.path,
              "expected a generator such as {kind: fat_tree, k: 4}, got " + describe(g.value));
    return nullptr;
  }
  const YAML::Node kn = g.value["kind"];
  const std::string kp = g.path + ".kind";
  if (!kn || kn.IsNull()) {
    d.c.error(g.value, g.path, "missing key 'kind' (leaf_spine, fat_tree or star)");
    return nullptr;
  }
  auto ks = d.c.scalar(kn, kp, "leaf_spine, fat_tree or star");
  if (!ks) return nullptr;
  switch (from_string<GeneratorKind>(*ks).value_or(GeneratorKind::none)) {
    case GeneratorKind::leaf_spine:
      return &leaf_spine_keys();
    case GeneratorKind::fat_tree:
      return &fat_tree_keys();
    case GeneratorKind::star:
      return &star_keys();
    case GeneratorKind::none:
      break;
  }
  d.c.error(kn, kp, "unknown generator '" + *ks + "'; expected leaf_spine, fat_tree or star");
  return nullptr;
}

void generate(ExperimentDraft& d, const Entry& g) {
  const KeyTable<GeneratorParams>* table = generator_table(d, g);
  if (!table) return;
  // A key of another generator: the rest was likely meant for it too, so
  // only the keys are reported, not what this one misses.
  const std::vector<std::string_view> names = table->names();
  for (auto it = g.value.begin(); it != g.value.end(); ++it)
    if (!it->first.IsScalar() || std::find(names.begin(), names.end(), it->first.Scalar()) == names.end())
      return void(d.c.fields(g.value, g.path, table->what(), names));
  GeneratorParams p;
  p.kind = *from_string<GeneratorKind>(g.value["kind"].Scalar());
  const auto f = table->read(d.c, g.value, g.path, p);
  if (!f || !f->failed.empty()) return;
  LinkConfig host_link = d.x.link, fabric_link = d.x.link;
  if (auto e = f->find("host_link")) host_link = read_link(d, e->value, e->path, d.x.link);
  if (auto e = f->find("fabric_link")) fabric_link = read_link(d, e->value, e->path, d.x.link);
  if (p.kind == GeneratorKind::leaf_spine) {
    if (uint64_t{p.leaves} * p.hosts_per_leaf > kMaxHosts)
      return d.c.error(g.value, g.path,
                       "at most " + std::to_string(kMaxHosts) + " hosts, got " +
                           std::to_string(uint64_t{p.leaves} * p.hosts_per_leaf));
    d.x.topology = generate_leaf_spine(p.spines, p.leaves, p.hosts_per_leaf, host_link, fabric_link);
  } else if (p.kind == GeneratorKind::fat_tree) {
    if (p.k % 2)
      return d.c.error(f->find("k")->value, f->find("k")->path, "k must be even, got " + std::to_string(p.k));
    d.x.topology = generate_fat_tree(p.k, host_link, fabric_link);
  } else {
    d.x.topology = generate_star(p.hosts, host_link);
  }
  const YAML::Mark m = mark_of(g.key);
  for (LinkSpec& l : d.x.topology.links) l.line = m.line + 1, l.column = m.column + 1;
  d.link_nodes.assign(d.x.topology.links.size(), g.key);
}

// What reading the lists keeps while it checks the links.
struct Lists {
  explicit Lists(ExperimentDraft& draft) : d(draft) {}
  ExperimentDraft& d;
  std::unordered_map<std::string, int> line_of;  // every node name -> the line it was declared on
  std::vector<YAML::Node> host_nodes;
  std::vector<std::string> host_paths;
  std::map<std::pair<std::string, std::string>, int> seen;  // unordered pair -> line
  std::unordered_map<std::string, int> links_of;            // node -> the line of its first link
  std::unordered_map<std::string, size_t> link_count;       // node -> its links so far
  std::unordered_set<std::string> hosts;

  // hosts:, switches:, routers: names, each unique across all three.
  void names(const Fields& f, std::string_view key, std::vector<std::string>& out, bool host) {
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
      if (host) host_nodes.push_back(e->value[i]), host_paths.push_back(path);
    }
  }

  const std::string* second_link_of_host(const std::string& a, const std::string& b) {
    for (const std::string* n : {&a, &b})
      if (links_of.count(*n) && hosts.count(*n)) return n;
    return nullptr;
  }

  // Its two ends: names of known nodes. Null when they are not.
  std::optional<std::pair<std::string, std::string>> ends(const YAML::Node& l, const std::string& path,
                                                          LinkSpec& spec) {
    auto a = d.c.name(l[0], index_path(path, 0), "a node name");
    auto b = d.c.name(l[1], index_path(path, 1), "a node name");
    spec = {a.value_or(""), b.value_or(""), d.x.link};
    if (l.size() == 3) spec.config = read_link(d, l[2], index_path(path, 2), d.x.link);
    bool known = a && b;
    for (size_t end = 0; a && b && end < 2; ++end)
      if (!line_of.count(end ? *b : *a)) {
        d.c.error(l[end], index_path(path, end), d.unknown_node(end ? *b : *a));
        known = false;
      }
    if (!known) {
      d.links_incomplete = true;
      return std::nullopt;
    }
    return std::pair{*a, *b};
  }

  // links[i]: [a, b] or [a, b, {link settings}].
  void link(const YAML::Node& l, const std::string& path) {
    if (!l.IsSequence() || l.size() < 2 || l.size() > 3) {
      d.c.error(l, path, "expected [a, b] or [a, b, {bandwidth: 25Gbps, ...}], got " + describe(l));
      d.links_incomplete = true;
      return;
    }
    LinkSpec spec;
    const auto ab = ends(l, path, spec);
    if (!ab) return;
    const auto& [a, b] = *ab;
    if (a == b) return d.c.error(l, path, "a link from '" + a + "' to itself");
    const int line = mark_of(l).line + 1;
    if (auto [at, fresh] = seen.emplace(std::minmax(a, b), line); !fresh)
      return d.c.error(l, path,
                       "duplicate link between '" + a + "' and '" + b + "' (first at line " +
                           std::to_string(at->second) + ")");
    // A host has one NIC with one port (nodes/host/rnic.hpp). The link
    // stays in the graph, so that what else is wrong is still found.
    if (const std::string* h = second_link_of_host(a, b))
      d.c.error(l, path,
                "host '" + *h + "' has more than one link (first at line " + std::to_string(links_of[*h]) +
                    "); a host has one NIC port");
    for (const std::string* n : {&a, &b}) {
      if (++link_count[*n] <= kMaxPortsPerNode) continue;
      // Left out, as a link to an unknown node is, so that the graph can be built.
      if (link_count[*n] == kMaxPortsPerNode + 1)
        d.c.error(l, path,
                  "'" + *n + "' would have more than " + std::to_string(kMaxPortsPerNode) +
                      " links; a node has at most that many ports (port numbers are 16-bit)");
      d.links_incomplete = true;
      return;
    }
    for (const std::string* n : {&a, &b}) links_of.emplace(*n, line);
    spec.line = line;
    spec.column = mark_of(l).column + 1;
    d.x.topology.links.push_back(std::move(spec));
    d.link_nodes.push_back(l);
  }
};

void lists(ExperimentDraft& d, const Fields& f) {
  TopologyConfig& t = d.x.topology;
  Lists r(d);
  r.names(f, "hosts", t.hosts, true);
  r.names(f, "switches", t.switches, false);
  r.names(f, "routers", t.routers, false);
  if (const Entry* h = f.find("hosts"); h && h->value.IsSequence() && h->value.size() == 0)
    d.c.error(h->value, h->path, "at least one host");
  if (const Entry* h = f.find("hosts"); h && t.hosts.size() > kMaxHosts)
    d.c.error(h->value, h->path,
              "at most " + std::to_string(kMaxHosts) + " hosts, got " + std::to_string(t.hosts.size()));
  if (const Entry* rt = f.find("routers"); rt && !t.routers.empty())
    if (const std::string_view why = fabric_of(d.x).routers_error(); !why.empty())
      d.c.error(rt->value, rt->path, std::string(why));
  const Entry* le = f.find("links");
  if (!le) return;
  if (!le->value.IsSequence())
    return d.c.error(le->value, le->path,
                     "expected a list of links such as [a, s1], got " + describe(le->value));
  r.hosts.insert(t.hosts.begin(), t.hosts.end());
  for (size_t i = 0; i < le->value.size(); ++i) r.link(le->value[i], index_path(le->path, i));
  for (size_t i = 0; i < t.hosts.size() && !d.links_incomplete; ++i)
    if (!r.links_of.count(t.hosts[i]))
      d.c.error(r.host_nodes[i], r.host_paths[i], "host '" + t.hosts[i] + "' has no link");
}
}  // namespace

const KeyTable<TopologyConfig>& topology_keys() {
  using T = TopologyConfig;
  static const KeyTable<T> t{
      "topology",
      "a topology",
      {
          declared<T>("hosts", "list of names", "", "end nodes with an RDMA NIC; at least one"),
          declared<T>(
              "switches", "list of names", "[]",
              "the fabric's own element: IB switch (`ib`), L2 bridge (`roce_v1`), L3 switch (`roce_v2`, "
              "`iwarp`, `tcp`)"),
          declared<T>(
              "routers", "list of names", "[]",
              "explicit L3 routers; a broadcast-domain boundary, so `roce_v1` cannot cross one. Not allowed "
              "on `ib` (one subnet)"),
          declared<T>("links", "list", "", "each `[a, b]` or `[a, b, {link settings}]`"),
          with_table(with_table(with_table(declared<T>("generate", "map", "",
                                                       "a generator instead of the four keys above (below)"),
                                           leaf_spine_keys()),
                                fat_tree_keys()),
                     star_keys()),
      }};
  return t;
}

void read_topology(ExperimentDraft& d, const Entry& e) {
  d.topology = e;
  const auto f = topology_keys().read(d.c, e.value, e.path, d.x.topology);
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
    // hosts and links are required unless there is a generator.
    if (!f->find("hosts")) d.c.missing(*f, "hosts", "a list of host names");
    lists(d, *f);
    if (!f->find("links")) d.c.missing(*f, "links", "a list such as [[a, s1], [b, s1]]");
  }
}

}  // namespace rdmasim
