// The roce_v1 fabric's reading of an experiment: `vlan:` (802.1Q), and
// RoCE v1's reachability rule: its frames are not routable (annex A16), so
// they never leave their VLAN or cross a router.
#include "fabrics/ethernet/ethernet_sections.hpp"
#include "fabrics/roce_v1/roce_v1_network.hpp"
#include "topologies/cc_algorithms.hpp"
#include "topologies/experiment_draft.hpp"
#include "topologies/key_table.hpp"
#include "topologies/reachability.hpp"

namespace rdmasim {

using namespace keys;

namespace {

const KeyTable<VlanConfig>& vlan_keys() {
  using V = VlanConfig;
  static const KeyTable<V> t{
      "vlan",
      "VLAN settings",
      {
          // 802.1Q: VLAN ids 0 and 4095 are reserved.
          key("id", &V::id, whole(1, 4094), "100", "VLAN id of every host not listed in `hosts`"),
          key("pcp", &V::pcp, whole(0, 7), "3", "priority code point"),
          declared<V>(
              "hosts", "map of host name to 1..4094", "{}",
              "hosts in another VLAN, e.g. `{c: 200, d: 200}`. On roce_v1 each VLAN is a broadcast domain: "
              "bridge ports to hosts carry only their host's VLAN, links between switches carry all, and a "
              "workload between hosts of different VLANs is an error"),
      }};
  return t;
}

class VlanSection final : public Section {
 public:
  void read(ExperimentDraft& d, const Entry& e) override {
    VlanConfig v;
    const auto f = vlan_keys().read(d.c, e.value, e.path, v);
    if (!f) return;
    if (auto h = f->find("hosts")) {
      // hosts: {c: 200, d: 200} puts hosts in other VLANs; names are checked
      // once the topology is known (the validate pass).
      if (!h->value.IsMap()) {
        d.c.error(h->value, h->path,
                  "expected a map of host name to VLAN id, such as {c: 200}, got " + describe(h->value));
      } else {
        for (auto it = h->value.begin(); it != h->value.end(); ++it) {
          const Entry item{it->first, it->second, key_path(h->path, it->first.Scalar())};
          if (auto vid = d.c.whole(item, 1, 4094)) {
            v.hosts[it->first.Scalar()] = static_cast<uint16_t>(*vid);
            hosts_.push_back(item);
          }
        }
      }
    }
    d.x.vlan = v;
  }
  void validate(ExperimentDraft& d) override {
    for (const Entry& e : hosts_) {
      const std::string n = e.key.Scalar();
      if (d.graph && !d.graph->find(n))
        d.c.error(e.key, e.path, d.unknown_node(n));
      else if (d.graph && !d.graph->is_host(*d.graph->find(n)))
        d.c.error(e.key, e.path,
                  "'" + n + "' is not a host: only hosts are put in VLANs (switch ports carry them all)");
    }
  }

 private:
  std::vector<Entry> hosts_;  // vlan.hosts' keys
};

}  // namespace

std::vector<SectionType> RoceV1Net::sections() const {
  std::vector<SectionType> s = ethernet_sections();
  s.push_back({"vlan",
               []() -> std::unique_ptr<Section> { return std::make_unique<VlanSection>(); },
               {"map", "", "802.1Q tag on roce_v1 frames; absent: untagged", &vlan_keys()}});
  return s;
}

// No IP header, so no ECN or telemetry option: only the delay-based
// algorithms, which need nothing of the network.
std::string RoceV1Net::cc_error(CcAlgorithm a) const {
  switch (cc_facts(a).signal) {
    case CcSignal::none:
    case CcSignal::nic_timing:
      return {};
    case CcSignal::ip_ecn:
      return "it reacts to ECN marks in an IP header, and RoCE v1 frames have none (a GRH follows the "
             "Ethernet header)";
    case CcSignal::ip_telemetry:
      return "its switch telemetry rides in an IPv4 option, and RoCE v1 frames have no IP header";
    case CcSignal::ib_fecn:
      return "it is InfiniBand's (IBA annex A10): its FECN marks come from InfiniBand switches, and "
             "Ethernet bridges set none";
  }
  return {};
}

// Hosts in different VLANs are in different broadcast domains.
std::string RoceV1Net::scope_error(const ExperimentConfig& x, const WorkloadConfig& w) const {
  if (!x.vlan) return {};
  for (const std::string& a : w.from) {
    for (const std::string& b : w.to) {
      if (a != b && x.vlan->of(a) != x.vlan->of(b))
        return a + " (VLAN " + std::to_string(x.vlan->of(a)) + ") and " + b + " (VLAN " +
               std::to_string(x.vlan->of(b)) +
               ") are in different broadcast domains: roce_v1 frames cannot leave their VLAN; "
               "use roce_v2 or put them in one VLAN";
    }
  }
  return {};
}

bool RoceV1Net::reaches_all(const ExperimentConfig&, Paths& paths, const std::vector<int>& from,
                            const std::vector<int>& to) const {
  return common_group(paths.bridged(), from, to);
}

std::string RoceV1Net::pair_error(const ExperimentConfig&, Paths& paths, int a, int b) const {
  if (common_group(paths.bridged(), {a}, {b})) return {};
  const Graph& g = paths.graph();
  return g.name(a) + " and " + g.name(b) +
         " are in different broadcast domains (a router separates them): roce_v1 frames "
         "cannot be routed; use roce_v2 or put them on one L2 network";
}

}  // namespace rdmasim
