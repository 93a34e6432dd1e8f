// The top level of an experiment file: its keys, each section's reader in
// turn (settings first, since links and workloads depend on the fabric,
// then the topology, the workloads and faults on it), then the validate pass.
#include "experiment/sections/sections.hpp"

namespace rdmasim {

namespace {
// The kernel stack (tcp) receives by interrupt or NAPI, NAPI by default
// as on Linux; RDMA programs wait on a CQ by polling, interrupt or hybrid.
void completion_mode(ExperimentDraft& d) {
  Completion& m = d.x.host.completion;
  if (!d.completion) {
    if (d.x.fabric == FabricKind::tcp) m = Completion::napi;
    return;
  }
  const Entry& e = *d.completion;
  if (d.x.fabric == FabricKind::tcp && (m == Completion::polling || m == Completion::hybrid))
    d.c.error(e.value, e.path,
              "the kernel stack (fabric: tcp) receives by interrupt (one per frame, or per coalesced batch) "
              "or napi; " + std::string(to_string(m)) +
                  " is how RDMA programs wait on a CQ (busy polling of a socket, SO_BUSY_POLL, is not modelled)");
  if (d.x.fabric != FabricKind::tcp && m == Completion::napi)
    d.c.error(e.value, e.path,
              "napi is the kernel stack's receive path (fabric: tcp); RDMA programs wait by polling, "
              "interrupt or hybrid");
}
// host.stack: dpdk is a user-space stack for the plain NICs of `tcp`; its
// poll-mode cores are dedicated, so programs need a core besides them.
void network_stack(ExperimentDraft& d) {
  if (d.x.host.stack != NetStack::dpdk) return;
  if (d.x.fabric != FabricKind::tcp) {
    d.c.error(d.stack->value, d.stack->path,
              "host.stack: dpdk is a user-space TCP/UDP stack for fabric: tcp's plain NICs; " +
                  std::string(to_string(d.x.fabric)) + " is RDMA, whose NIC is the stack");
    return;
  }
  if (d.x.host.dpdk.cores >= d.x.host.cores) {
    const Entry& at = d.dpdk_cores ? *d.dpdk_cores : *d.stack;
    d.c.error(at.value, at.path,
              "the " + std::to_string(d.x.host.dpdk.cores) + " poll-mode core(s) of host.stack: dpdk are dedicated: "
              "host.cores (" + std::to_string(d.x.host.cores) + ") must leave at least one for the programs");
  }
}
}  // namespace

void read_experiment(ExperimentDraft& d, const YAML::Node& root) {
  auto top = d.c.fields(root, "", "an experiment",
                        {"name", "fabric", "seed",     "stop",      "link",   "flow_control", "pfc",
                         "ecn",  "dcqcn",  "congestion_control", "ip",       "switch",    "ib",     "tcp",          "mpa",
                         "host", "vlan",   "topology", "workloads", "faults", "capture",      "cost"});
  if (!top) return;
  if (auto e = top->find("name")) {
    if (auto n = d.c.name(e->value, e->path, "the experiment's name")) d.x.name = *n;
  } else if (d.x.name.size() > kMaxNameLength) {  // the file's stem names the output folder
    d.c.error(root, "name",
              "the experiment's name defaults to the file's name without .yaml, " +
                  std::to_string(d.x.name.size()) + " characters long; give a name: of at most " +
                  std::to_string(kMaxNameLength) + " characters");
  }
  d.c.read(*top, "fabric", d.x.fabric, [&](const Entry& e) { return d.c.choice<FabricKind>(e, "fabric"); });
  d.c.read(*top, "seed", d.x.seed, [&](const Entry& e) { return d.c.whole(e, 0, UINT64_MAX); });
  d.c.read(*top, "stop", d.x.stop, [&](const Entry& e) { return d.c.positive_time(e); });
  if (auto e = top->find("link")) d.x.link = read_link(d, e->value, e->path, d.x.link);
  if (auto e = top->find("flow_control")) read_flow_control(d, *e);
  if (auto e = top->find("pfc")) read_pfc(d, *e);
  if (auto e = top->find("ecn")) read_ecn(d, *e);
  if (auto e = top->find("dcqcn")) read_old_dcqcn(d, *e);
  if (auto e = top->find("congestion_control")) read_congestion_control(d, *e);
  // The ECN-driven algorithms switch marking on unless the file says otherwise.
  const CcAlgorithm cc = d.x.cc.algorithm;
  if ((cc == CcAlgorithm::dcqcn || cc == CcAlgorithm::dctcp) && !d.ecn_enabled) d.x.ecn.enabled = true;
  d.c.read(*top, "ip", d.x.ip, [&](const Entry& e) { return d.c.choice<IpVersion>(e, "IP version"); });
  if (auto e = top->find("ip")) d.ip_version = *e;
  if (auto e = top->find("switch")) read_switch(d, *e);
  if (auto e = top->find("ib")) read_ib(d, *e);
  if (auto e = top->find("tcp")) read_tcp(d, *e);
  if (auto e = top->find("mpa")) read_mpa(d, *e);
  if (auto e = top->find("host")) read_host(d, *e);
  completion_mode(d);
  network_stack(d);
  if (auto e = top->find("vlan")) read_vlan(d, *e);
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

  if (auto e = top->find("workloads"))
    read_workloads(d, *e);
  else
    d.c.missing(*top, "workloads", "a list such as [{kind: rdma_write, from: a, to: b}]");
  if (auto e = top->find("faults")) read_faults(d, *e);
  validate(d);
}

}  // namespace rdmasim
