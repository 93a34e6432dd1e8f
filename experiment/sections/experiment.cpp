// The top level of an experiment file: its keys, each section's reader in
// turn (settings first, since links and workloads depend on the fabric,
// then the topology, the workloads and faults on it), then the validate pass.
// The fabrics' sections (fabrics/registry.hpp) are read whatever the file's
// fabric, so that --fabric can run a file on another.
#include "experiment/sections/sections.hpp"
#include "fabrics/registry.hpp"

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
}  // namespace

void read_experiment(ExperimentDraft& d, const YAML::Node& root) {
  const std::vector<SectionType> fabric_types = fabric_sections();
  std::vector<std::string_view> keys{"name",  "fabric",        "seed", "stop",   "link", "congestion_control",
                                     "dcqcn", "loss_recovery", "irn",  "switch", "host"};
  for (const SectionType& s : fabric_types) keys.push_back(s.key);
  keys.insert(keys.end(), {"topology", "storage", "workloads", "programs", "faults", "capture", "cost"});
  auto top = d.c.fields(root, "", "an experiment", keys);
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
  d.c.read(*top, "seed", d.x.seed, [&](const Entry& e) { return d.c.whole(e, 0, UINT64_MAX); });
  d.c.read(*top, "stop", d.x.stop, [&](const Entry& e) { return d.c.positive_time(e); });
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
  const CcAlgorithm cc = d.x.cc.algorithm;
  if ((cc == CcAlgorithm::dcqcn || cc == CcAlgorithm::dctcp) && !d.ecn_enabled) d.x.ecn.enabled = true;
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
