// The top level of an experiment file: its keys, each section's reader in
// turn (settings first, since links and workloads depend on the fabric,
// then the topology, the workloads and faults on it), then the validate pass.
// The fabrics' sections (fabrics/registry.hpp) are read whatever the file's
// fabric, so that --fabric can run a file on another.
#include "experiment/sections/sections.hpp"
#include "fabrics/registry.hpp"
#include "topologies/cc_algorithms.hpp"

namespace rdmasim {

namespace {
// How a program learns of arrivals is the fabric's to allow: the kernel
// stack (tcp) by interrupt or NAPI, RDMA programs on a CQ.
void completion_mode(ExperimentDraft& d) {
  const Fabric& fabric = fabric_of(d.x);
  Completion& m = d.x.host.completion;
  if (!d.completion) {
    m = fabric.default_completion();
    return;
  }
  if (const std::string why = fabric.completion_error(m); !why.empty())
    d.c.error(d.completion->value, d.completion->path, why);
}
std::string plain_nics() {
  return fabric_list([](const Fabric& f) { return f.host_nic().dpdk; });
}
// host.stack: dpdk is a user-space stack for the plain NICs of the fabrics without RDMA; its
// poll-mode cores are dedicated, so programs need a core besides them.
void network_stack(ExperimentDraft& d) {
  if (d.x.host.stack != NetStack::dpdk) return;
  if (!fabric_of(d.x).host_nic().dpdk) {
    d.c.error(d.stack->value, d.stack->path,
              "host.stack: dpdk is a user-space TCP/UDP stack for fabric: " + plain_nics() +
                  "'s plain NICs; " + d.x.fabric + " is RDMA, whose NIC is the stack");
    return;
  }
  if (d.x.host.dpdk.cores >= d.x.host.cores) {
    const Entry& at = d.dpdk_cores ? *d.dpdk_cores : *d.stack;
    d.c.error(at.value, at.path,
              "the " + std::to_string(d.x.host.dpdk.cores) +
                  " poll-mode core(s) of host.stack: dpdk are dedicated: "
                  "host.cores (" +
                  std::to_string(d.x.host.cores) + ") must leave at least one for the programs");
  }
}
using X = ExperimentConfig;
Key<X> section(const char* name, const char* type, std::string fallback, const char* help) {
  return declared<X>(name, type, fallback, help);
}
Key<X> section(const char* name, const KeyTableBase& t, const char* help) {
  return with_table(declared<X>(name, "map", "", help), t);
}
// A section that is a list, each item a map of `t`'s keys.
Key<X> list_section(const char* name, const KeyTableBase& t, const char* help) {
  return with_table(declared<X>(name, "list of maps", "", help), t);
}

// The sections read before the fabrics' (settings the fabrics' build on).
std::vector<Key<X>> settings_sections() {
  return {
      section("name", "name", "",
              "names the experiment; output goes to `out/<name>` (compare: `out/<name>-compare`, sweep: "
              "`out/<name>-sweep`); default: the file's stem (then at most 64 characters too)"),
      section(
          "fabric", "a fabric's name", ExperimentConfig{}.fabric,
          "the network and transport ([design.md](design.md#the-fabrics-and-what-they-share)): `ib`, "
          "`roce_v1`, `roce_v2`, `iwarp` or `tcp`; `tcp` is no RDMA: plain Ethernet NICs and the kernel's "
          "network stack on the host CPU (its receive path: [host "
          "model](host.md#the-kernel-receive-path-fabric-tcp)); it runs `send` (and `send_bw`, `send_lat`, "
          "`pingpong`, and `incast`, `all_to_all`, `flows` with `op: send`) over kernel TCP sockets ([host "
          "model](host.md#kernel-tcp-sockets-fabric-tcp)), `udp` and `compute` workloads"),
      key("seed", &X::seed, keys::whole(0, UINT64_MAX), "1",
          "seeds every random stream ([what it drives](#what-the-seed-drives)); same file + same seed = same "
          "results and pcaps"),
      section(
          "stop", "time, above 0", "",
          "stop simulated time here even if work remains. Without it every workload must be able to end "
          "within 1000 s of simulated time: one that never can (RC SENDs with `post_recvs: false` and "
          "`rnr_retry: 7`, or a `count` too large) is an error "
          "([reliability.md](reliability.md#limits)), and "
          "a program still running then is killed ([programs.md](programs.md#what-you-get)). "
          "A bare number (picoseconds) gets a warning at its line: `stop: 500` is 500 ps, almost always "
          "`500us` without its unit; so does a workload whose `start` is not before it (it runs nothing)"),
      section("link", link_keys(), "defaults for every link"),
      section("congestion_control", cc_keys(),
              "congestion control at the NICs of `ib`, `roce_v1` and `roce_v2`: DCQCN, HPCC, TIMELY, DCTCP, "
              "Swift, IB "
              "CCA ([congestion_control.md](congestion_control.md))"),
      section("dcqcn", "—", "", "an error naming its place now, `congestion_control`"),
      section(
          "loss_recovery", "`go_back_n` or `irn`", "go_back_n",
          "how RC QPs recover lost packets: IBA's go-back-N, or IRN's selective retransmission with BDP-FC "
          "(`roce_v2` over `ip: ipv4`, not with `hpcc`; [reliability.md](reliability.md#irn-loss-recovery))"),
      section("irn", irn_keys(), "IRN's timers and in-flight cap (used when `loss_recovery: irn`)"),
      section("switch", switch_keys(), "switch forwarding latency and mode"),
      section("host", host_keys(), "host CPU, PCIe and completion model"),
  };
}

// The sections read after the fabrics': the network, what runs on it, what is recorded.
std::vector<Key<X>> network_sections() {
  return {
      section("topology", topology_keys(), "**required**: nodes and links, or a generator"),
      section("storage", storage_keys(),
              "NVMe over Fabrics targets: their hosts, namespaces, SSD and CPU ([storage.md](storage.md))"),
      with_table(declared<X>("workloads", "list of [workloads](#workloads)", "",
                             "the traffic; **required**, at least one, unless there are `programs`"),
                 workload_common_keys()),
      list_section(
          "programs", program_keys(),
          "real verbs programs (`ibv_rc_pingpong`, ...) run on the hosts ([programs.md](programs.md))"),
      list_section("faults", fault_keys(), "links going down and up"),
      section("capture", capture_keys(), "which ports write pcap files, and what else a run records"),
      section("cost", cost_keys(), "changes to the price catalogue ([cost.md](cost.md))"),
  };
}

}  // namespace

const KeyTable<ExperimentConfig>& experiment_keys() {
  static const KeyTable<X> t{
      "experiment", "an experiment", [] {
        std::vector<Key<X>> k = settings_sections();
        for (const SectionType& s : fabric_sections()) {
          Key<X> row = declared<X>(std::string(s.key), std::string(s.doc.type), std::string(s.doc.fallback),
                                   std::string(s.doc.help));
          k.push_back(s.doc.keys ? with_table(std::move(row), *s.doc.keys) : std::move(row));
        }
        for (Key<X>& s : network_sections()) k.push_back(std::move(s));
        return k;
      }()};
  return t;
}

void read_experiment(ExperimentDraft& d, const YAML::Node& root) {
  const std::vector<SectionType> fabric_types = fabric_sections();
  const auto top = experiment_keys().read(d.c, root, "", d.x);
  if (!top) return;
  if (auto e = top->find("name")) {
    if (auto n = d.c.name(e->value, e->path, "the experiment's name")) d.x.name = *n;
  } else if (d.x.name.size() > kMaxNameLength) {  // the file's stem names the output folder
    d.c.error(root, "name",
              "the experiment's name defaults to the file's name without .yaml, " +
                  std::to_string(d.x.name.size()) + " characters long; give a name: of at most " +
                  std::to_string(kMaxNameLength) + " characters");
  }
  d.c.read(*top, "fabric", d.x.fabric, [&](const Entry& e) {
    return d.c.one_of(e.value, e.path, "fabric", fabric_names(), ExperimentConfig{}.fabric);
  });
  d.c.read(*top, "stop", d.x.stop, [&](const Entry& e) {
    const std::optional<Time> t = d.c.positive_time(e);
    // A bare number is picoseconds (docs/yaml.md, "Units"): `stop: 500` is
    // almost always 500us or 500ms written without its unit, and ends the
    // run before anything happened.
    if (t && !written_with_unit(e.value.Scalar()))
      d.c.warnings().push_back(d.c.locate(e.value, e.path,
                                          e.value.Scalar() + " has no unit, so it is " + to_string(*t) +
                                              " (a number without a unit is picoseconds); write the unit, "
                                              "such as " +
                                              e.value.Scalar() + "us"));
    return t;
  });
  if (auto e = top->find("link")) d.x.link = read_link(d, e->value, e->path, d.x.link);
  if (auto e = top->find("dcqcn")) read_old_dcqcn(d, *e);
  if (auto e = top->find("congestion_control")) read_congestion_control(d, *e);
  if (auto e = top->find("loss_recovery")) read_loss_recovery(d, *e);
  if (auto e = top->find("irn")) read_irn(d, *e);
  if (auto e = top->find("switch")) read_switch(d, *e);
  if (auto e = top->find("host")) read_host(d, *e);
  std::vector<std::unique_ptr<Section>> sections;
  for (const SectionType& s : fabric_types) {
    if (auto e = top->find(s.key)) {
      sections.push_back(s.make());
      sections.back()->read(d, *e);
    }
  }
  // The ECN-driven algorithms switch marking on unless the file says otherwise.
  if (cc_facts(d.x.cc.algorithm).signal == CcSignal::ip_ecn && !d.ecn_enabled) d.x.ecn.enabled = true;
  completion_mode(d);
  network_stack(d);
  if (auto e = top->find("capture")) read_capture(d, *e);
  if (auto e = top->find("cost")) read_cost(d.c, e->value, e->path, d.x.cost);

  if (auto e = top->find("topology"))
    read_topology(d, *e);
  else
    d.c.missing(*top, "topology", "hosts, switches and links, or generate");
  // Bad names and links were left out of the topology, so it makes a
  // graph; without hosts, checking workloads against it would only repeat
  // the topology's errors.
  if (!d.x.topology.hosts.empty()) d.graph.emplace(d.x.topology);

  if (auto e = top->find("storage")) read_storage(d, *e);
  if (auto e = top->find("workloads"))
    read_workloads(d, *e);
  else if (!top->find("programs"))
    d.c.missing(*top, "workloads", "a list such as [{kind: rdma_write, from: a, to: b}], or programs");
  if (auto e = top->find("programs")) read_programs(d, *e);
  if (auto e = top->find("faults")) read_faults(d, *e);
  validate(d, sections);
}

}  // namespace rdmasim
