// The ib fabric's reading of an experiment: `ib:` (routing, virtual lanes,
// service level), and the checks only ib makes (up*/down* paths, LIDs and
// switch ports, VL buffers).
#include <algorithm>
#include <unordered_map>

#include "fabrics/ib/ib_fabric.hpp"
#include "fabrics/ib/ib_network.hpp"
#include "fabrics/ib/virtual_lanes.hpp"
#include "topologies/cc_algorithms.hpp"
#include "topologies/experiment_draft.hpp"
#include "topologies/key_table.hpp"
#include "topologies/reachability.hpp"

namespace rdmasim {

using namespace keys;

namespace {

// PortInfo VLCap: 1, 2, 4, 8 or 15 data VLs.
ValueType<uint64_t> data_vls() {
  return {"`1`, `2`, `4`, `8` or `15`", "", "", [](YamlReader& c, const Entry& v) -> std::optional<uint64_t> {
            auto n = c.whole(v, 1, 15);
            if (n && *n != 1 && *n != 2 && *n != 4 && *n != 8 && *n != 15) {
              c.error(v.value, v.path, "an IB port has 1, 2, 4, 8 or 15 data VLs, got " + std::to_string(*n));
              return std::nullopt;
            }
            return n;
          }};
}

const KeyTable<IbConfig>& ib_keys() {
  using I = IbConfig;
  static const KeyTable<I> t{
      "ib",
      "InfiniBand settings",
      {
          key("routing", &I::routing, choice<IbRouting>("IB routing"), "min_hop",
              "how the subnet manager fills forwarding tables (below)"),
          key("vls", &I::vls, data_vls(), "2",
              "data virtual lanes per port; the model runs at most 8 (a port's egress classes), so `15` "
              "runs as 8"),
          key("sl", &I::sl, whole(0, 15), "0", "service level of every QP"),
          declared<I>("roots", "list of switch names", "",
                      "`updown` roots; default: the switches farthest from every host"),
      }};
  return t;
}

class IbSection final : public Section {
 public:
  void read(ExperimentDraft& d, const Entry& e) override {
    const auto f = ib_keys().read(d.c, e.value, e.path, d.x.ib);
    if (!f) return;
    if (auto v = f->find("roots")) {
      roots_ = *v;
      if (!v->value.IsSequence()) {
        d.c.error(v->value, v->path, "expected a list of switch names, got " + describe(v->value));
      } else {
        for (size_t i = 0; i < v->value.size(); ++i)
          if (auto n = d.c.name(v->value[i], index_path(v->path, i), "a switch name"))
            d.x.ib.roots.push_back(*n);
      }
    }
  }
  // Keeps the roots that are switches; reports the others.
  void validate(ExperimentDraft& d) override {
    if (!roots_ || !d.graph) return;
    std::vector<std::string> valid;
    for (size_t i = 0; i < roots_->value.size(); ++i) {
      const YAML::Node n = roots_->value[i];
      const auto v = n.IsScalar() ? d.graph->find(n.Scalar()) : std::nullopt;
      if (v && d.graph->kind(*v) == NodeKind::switch_node)
        valid.push_back(n.Scalar());
      else if (n.IsScalar())
        d.c.error(n, index_path(roots_->path, i), "'" + n.Scalar() + "' is not a switch of the topology");
    }
    d.x.ib.roots = std::move(valid);
  }

 private:
  std::optional<Entry> roots_;
};

void ib_limits(ExperimentDraft& d) {
  const YAML::Node& at = d.topology->value;
  const std::string& path = d.topology->path;
  const TopologyConfig& t = d.x.topology;
  // Unicast LIDs are 0x0001..0xBFFF.
  const size_t nodes = t.hosts.size() + t.switches.size() + t.routers.size();
  if (nodes > 0xBFFF)
    d.c.error(at, path,
              "ib gives every node a unicast LID: at most 49151 nodes, got " + std::to_string(nodes));
  std::unordered_map<std::string, int> ports;
  for (const LinkSpec& l : t.links) ++ports[l.a], ++ports[l.b];
  for (const std::string& s : t.switches) {
    // Forwarding tables hold 8-bit port numbers; 0 is the switch itself and 255 is reserved.
    if (ports[s] > 254) {
      d.c.error(at, path,
                "IB switch '" + s + "' would need " + std::to_string(ports[s]) +
                    " ports; an IB switch has at most 254 (8-bit port numbers, 0 and 255 reserved)");
      break;
    }
  }
}

// IBA 7.9: a VL's receive buffer must hold the largest packet, or nothing
// could ever be sent on it; a port's egress queue (the same `buffer`) takes
// the two packets an HCA keeps queued.
void ib_buffers(ExperimentDraft& d) {
  const uint8_t vls = modelled_data_vls(d.x.ib.vls);
  const uint64_t need = ib_max_packet(path_mtu(d.x));
  const LinkSpec* reported = nullptr;  // a generated topology's links share one place: say it once
  for (size_t i = 0; i < d.x.topology.links.size(); ++i) {
    const LinkSpec& l = d.x.topology.links[i];
    const uint64_t buffer = l.config.buffer.count();
    if (buffer / vls >= need && buffer >= 2 * need) continue;
    if (reported && reported->line == l.line && reported->column == l.column) continue;
    reported = &l;
    const bool generated = d.x.topology.generated != GeneratorKind::none;
    d.c.error(d.link_nodes[i], generated ? "topology.generate" : index_path("topology.links", i),
              "link " + l.a + " - " + l.b + ": buffer " + to_string(l.config.buffer) +
                  " is too small for ib: each of the " + std::to_string(vls) + " data VLs needs room for a " +
                  std::to_string(need) + "-byte packet (IBA 7.9), so at least " +
                  to_string(Bytes(std::max<uint64_t>(need * vls, 2 * need))));
  }
}

bool updown(const ExperimentConfig& x) { return x.ib.routing == IbRouting::updown; }

}  // namespace

std::vector<SectionType> IbNet::sections() const {
  return {{"ib",
           []() -> std::unique_ptr<Section> { return std::make_unique<IbSection>(); },
           {"map", "", "InfiniBand routing, VLs, SL", &ib_keys()}}};
}

std::string_view IbNet::routers_error() const {
  return "ib has no routers here (one subnet, one subnet manager); use switches";
}

// Up*/down* routing may leave a pair without a legal path: every pair is looked at.
bool IbNet::reaches_all(const ExperimentConfig& x, Paths& paths, const std::vector<int>& from,
                        const std::vector<int>& to) const {
  return !updown(x) && Fabric::reaches_all(x, paths, from, to);
}

std::string IbNet::pair_error(const ExperimentConfig& x, Paths& paths, int a, int b) const {
  if (!updown(x)) return {};
  const Graph& g = paths.graph();
  const ForwardingTable& table = paths.updown(x.ib.roots);
  if (ib_path(g, table, a, b) && ib_path(g, table, b, a)) return {};
  return g.name(a) + " and " + g.name(b) +
         " have no legal up*/down* path between them; name the top switches in ib.roots "
         "or use ib.routing: min_hop";
}

// IBA annex A10: switches set FECN, the receiver answers with BECN, the
// sender's NIC throttles. Nothing on an IB wire carries ECN, telemetry or
// the timestamps the Ethernet RNICs' delay-based algorithms keep.
std::string IbNet::cc_error(CcAlgorithm a) const {
  switch (cc_facts(a).signal) {
    case CcSignal::none:
    case CcSignal::ib_fecn:
      return {};
    case CcSignal::ip_ecn:
      return "it reacts to ECN marks in an IP header, and InfiniBand frames have none (their switches mark "
             "FECN: ib_cca)";
    case CcSignal::ip_telemetry:
      return "its switch telemetry rides in an IPv4 option, and InfiniBand frames have no IP header";
    case CcSignal::nic_timing:
      return "it is an Ethernet RNIC's; InfiniBand NICs run IBA's congestion control (annex A10: ib_cca)";
  }
  return {};
}

// The control class (congestion_control.control_priority: on ib the SL of
// ACKs, NAKs and CNPs) is served first on its VL: that VL must not be the
// data's, or data would be served first too.
void ib_control_class(ExperimentDraft& d) {
  const int sl = d.x.cc.control_priority;
  if (sl < 0 || !d.cc_control) return;
  const uint8_t vls = modelled_data_vls(d.x.ib.vls);
  const SlToVl t = SlToVl::modulo(vls);
  const auto control = static_cast<uint8_t>(sl);
  if (t(control) != t(d.x.ib.sl)) return;
  d.c.error(d.cc_control->value, d.cc_control->path,
            "on ib the control class is SL " + std::to_string(sl) + ", which runs on VL " +
                std::to_string(t(control)) + " as the QPs' SL " + std::to_string(d.x.ib.sl) +
                " does (ib.vls: " + std::to_string(vls) + ", SL s on VL s mod vls): " +
                (vls < 2 ? "it needs ib.vls of 2 or more" : "choose an SL on another VL"));
}

void IbNet::validate(ExperimentDraft& d) const {
  ib_control_class(d);
  if (!d.topology) return;
  ib_limits(d);
  ib_buffers(d);
}

}  // namespace rdmasim
