#include "experiment/loader.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fabrics/iwarp/iwarp_network.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;

namespace {

LoadResult load(std::string_view yaml, const std::vector<SetOverride>& sets = {},
                std::optional<std::string> fabric = {}, std::optional<std::string> seed = {}) {
  return load_experiment_text(yaml, "exp.yaml", sets, std::move(fabric), seed);
}

// All errors, formatted, one a line: what a user would read.
std::string errors(const LoadResult& r) {
  std::string s;
  for (const LoadError& e : r.errors) s += e.format() + "\n";
  return s;
}
std::string errors(std::string_view yaml, const std::vector<SetOverride>& sets = {}) {
  return errors(load(yaml, sets));
}

// The unit parsers (core/units.cpp) word their own messages; check what the
// loader adds around them: location, key path, and the value quoted.
bool unit_error(const std::string& text, std::string_view head, std::string_view tail) {
  return text.starts_with(head) && text.ends_with(tail) && text.find('\n') == text.size() - 1;
}

ExperimentConfig good(std::string_view yaml, const std::vector<SetOverride>& sets = {}) {
  LoadResult r = load(yaml, sets);
  INFO(errors(r));
  REQUIRE(r.errors.empty());
  REQUIRE(r.config);
  return *r.config;
}

// Two hosts on one switch, ahead of whatever a test adds (5 lines).
constexpr std::string_view kPair = R"(topology:
  hosts: [a, b]
  switches: [s1]
  links: [[a, s1], [b, s1]]
workloads:
)";
std::string pair_with(std::string_view workloads, std::string_view head = "") {
  return std::string(head) + std::string(kPair) + std::string(workloads);
}

// docs/design.md, "Contract: the experiment file", verbatim.
constexpr std::string_view kDesignExample = R"(name: quickstart
fabric: roce_v2            # ib | roce_v1 | roce_v2 | iwarp
seed: 1
stop: 10ms                 # optional limit of simulated time
link:                      # defaults for every link; any link may override
  bandwidth: 100Gbps
  delay: 1us
  mtu: 4096                # ib, roce: IBA path MTU (256..4096); iwarp: IP MTU
  buffer: 1MiB             # egress queue limit per port
  loss: 0                  # probability that a frame is dropped on the wire
flow_control: none          # Ethernet fabrics: none | pfc; ib is always credit-based
topology:
  hosts: [a, b]
  switches: [s1]           # the fabric's own element: IB switch, L2 bridge (roce_v1),
                           # L3 switch (roce_v2, iwarp)
  routers: []              # optional explicit L3 routers (a boundary for roce_v1)
  links:
    - [a, s1]
    - [b, s1, {bandwidth: 25Gbps, delay: 500ns}]
  # or instead of the lists above:
  # generate: {kind: leaf_spine, spines: 2, leaves: 4, hosts_per_leaf: 8,
  #            host_link: {bandwidth: 25Gbps}}   # host_link overrides host-side links
  # generate: {kind: fat_tree, k: 4}
  # generated names: hosts h0, h1, ...; switches leaf0.., spine0.. (leaf_spine),
  # edge0.., agg0.., core0.. (fat_tree)
workloads:
  - {kind: rdma_write, from: a, to: b, qp: rc, size: 64KiB, count: 100, outstanding: 8}
  - {kind: send, from: b, to: a, qp: ud, size: 2KiB, count: 10, start: 5us}
faults:
  - {at: 50us, link: [b, s1], action: down}     # and later: action: up
capture:
  pcap: hosts              # none | hosts | all | list of node names
)";

}  // namespace

TEST_CASE("loader: the docs/design.md example loads as written") {
  const ExperimentConfig c = good(kDesignExample);
  CHECK(c.name == "quickstart");
  CHECK(c.file == "exp.yaml");
  CHECK(c.fabric == "roce_v2");
  CHECK(c.seed == 1);
  REQUIRE(c.stop);
  CHECK(*c.stop == 10_ms);
  CHECK(c.link.bandwidth == 100_Gbps);
  CHECK(c.link.delay == 1_us);
  CHECK(c.link.mtu == 4096);
  CHECK(c.link.buffer == 1_MiB);
  CHECK(c.link.loss == 0);
  CHECK_FALSE(c.pfc);
  CHECK(c.topology.hosts == std::vector<std::string>{"a", "b"});
  CHECK(c.topology.switches == std::vector<std::string>{"s1"});
  CHECK(c.topology.routers.empty());
  REQUIRE(c.topology.links.size() == 2);
  CHECK(c.topology.links[0].a == "a");
  CHECK(c.topology.links[0].b == "s1");
  CHECK(c.topology.links[0].config.bandwidth == 100_Gbps);
  CHECK(c.topology.links[0].line == 18);
  CHECK(c.topology.links[1].config.bandwidth == 25_Gbps);
  CHECK(c.topology.links[1].config.delay == 500_ns);
  CHECK(c.topology.links[1].config.mtu == 4096);  // the rest from link:
  REQUIRE(c.workloads.size() == 2);
  const WorkloadConfig& w0 = c.workloads[0];
  CHECK(w0.name == "w0");
  CHECK(w0.kind == WorkloadKind::rdma_write);
  CHECK(w0.op == "rdma_write");
  CHECK(w0.from == std::vector<std::string>{"a"});
  CHECK(w0.to == std::vector<std::string>{"b"});
  CHECK(w0.qp == QpType::rc);
  CHECK(w0.size == 64_KiB);
  CHECK(w0.count == 100);
  CHECK(w0.outstanding == 8);
  CHECK(w0.start == Time());
  CHECK(w0.line == 27);
  CHECK(w0.column == 5);
  const WorkloadConfig& w1 = c.workloads[1];
  CHECK(w1.name == "w1");
  CHECK(w1.kind == WorkloadKind::send);
  CHECK(w1.qp == QpType::ud);
  CHECK(w1.size == 2_KiB);
  CHECK(w1.count == 10);
  CHECK(w1.start == 5_us);
  REQUIRE(c.faults.size() == 1);
  CHECK(c.faults[0].at == 50_us);
  CHECK(c.faults[0].a == "b");
  CHECK(c.faults[0].b == "s1");
  CHECK(c.faults[0].link == 1);
  CHECK_FALSE(c.faults[0].up);
  CHECK(c.capture.mode == CaptureMode::hosts);
}

TEST_CASE("loader: defaults") {
  const ExperimentConfig c = good(pair_with("  - {kind: send, from: a, to: b}\n"));
  CHECK(c.name == "exp");  // the file's stem
  CHECK(c.fabric == "roce_v2");
  CHECK(c.seed == 1);
  CHECK_FALSE(c.stop);
  CHECK(c.link.bandwidth == 100_Gbps);
  CHECK(c.link.delay == 1_us);
  CHECK(c.link.mtu == 4096);
  CHECK(c.link.buffer == 1_MiB);
  CHECK_FALSE(c.pfc);
  CHECK(c.pfc_config.priority == 3);
  CHECK_FALSE(c.ecn.enabled);
  CHECK(c.ecn.kmin == 40_KiB);
  CHECK(c.ecn.kmax == 160_KiB);
  CHECK(c.ecn.pmax == 0.2);
  CHECK(c.ip == IpVersion::ipv4);
  CHECK(c.switch_config.latency == 300_ns);
  CHECK(c.switch_config.mode == SwitchMode::cut_through);
  CHECK(c.ib.routing == IbRouting::min_hop);
  CHECK(c.ib.vls == 2);
  CHECK(c.tcp.congestion_control == CongestionControl::newreno);
  CHECK(c.tcp.min_rto == 200_us);
  CHECK(c.tcp.initial_cwnd == 10);
  CHECK_FALSE(c.settings<MpaConfig>("mpa").markers);
  CHECK(c.settings<MpaConfig>("mpa").crc);
  CHECK(c.host.completion == Completion::polling);
  CHECK(c.host.pcie.latency == 400_ns);
  CHECK(c.host.pcie.bandwidth == 128_Gbps);
  CHECK_FALSE(c.vlan);
  CHECK(c.capture.mode == CaptureMode::hosts);
  CHECK(c.capture.snaplen == 65535);
  CHECK_FALSE(c.capture.ib_linktype_infiniband);
  const WorkloadConfig& w = c.workloads.at(0);
  CHECK(w.size == 4_KiB);
  CHECK(w.count == 1);
  CHECK(w.outstanding == 1);
  CHECK(w.qp == QpType::rc);
  CHECK(w.timeout == 14);
  CHECK(w.retry_cnt == 7);
  CHECK(w.rnr_retry == 7);
  CHECK(w.min_rnr_timer == 12);
  CHECK(w.post_recvs);
  CHECK_FALSE(w.bad_rkey);
  CHECK(w.inline_threshold == 0);
}

TEST_CASE("loader: every optional block") {
  const ExperimentConfig c = good(
      pair_with(R"(  - {kind: rdma_write, from: a, to: b, name: bulk, timeout: 20, retry_cnt: 3, rnr_retry: 0,
     min_rnr_timer: 1, post_recvs: false, bad_rkey: true, inline_threshold: 64}
  - {kind: atomic_cas, from: a, to: b, compare: 5, swap: 9}
  - {kind: atomic_fadd, from: a, to: b, add: 3}
capture: {pcap: [a, s1], ib_linktype: infiniband, snaplen: 128}
)",
                R"(name: everything
fabric: roce_v1
flow_control: pfc
pfc: {priority: 5, xoff: 100KiB, xon: 50KiB}
ecn: {enabled: true, kmin: 10KiB, kmax: 20KiB, pmax: 0.5}
ip: ipv6
switch: {latency: 1us, mode: store_and_forward}
ib: {routing: updown, vls: 8, sl: 4, roots: [s1]}
tcp: {congestion_control: dctcp, delayed_ack: false, min_rto: 1ms, initial_cwnd: 4}
mpa: {markers: true, crc: false}
host: {completion: hybrid, hybrid_spin: 3us, interrupt_coalescing: {frames: 8, delay: 10us}, doorbell: pio,
       pcie: {latency: 1us, bandwidth: 64Gbps}, poll_cost: 10ns, interrupt_cost: 5us, post_cost: 20ns}
vlan: {id: 7, pcp: 6}
)"));
  CHECK(c.name == "everything");
  CHECK(c.fabric == "roce_v1");
  CHECK(c.pfc);
  CHECK(c.pfc_config.priority == 5);
  CHECK(c.pfc_config.xoff == 100_KiB);
  CHECK(c.pfc_config.xon == 50_KiB);
  CHECK(c.ecn.enabled);
  CHECK(c.ecn.kmin == 10_KiB);
  CHECK(c.ecn.kmax == 20_KiB);
  CHECK(c.ecn.pmax == 0.5);
  CHECK(c.ip == IpVersion::ipv6);
  CHECK(c.switch_config.latency == 1_us);
  CHECK(c.switch_config.mode == SwitchMode::store_and_forward);
  CHECK(c.ib.routing == IbRouting::updown);
  CHECK(c.ib.vls == 8);
  CHECK(c.ib.sl == 4);
  CHECK(c.ib.roots == std::vector<std::string>{"s1"});
  CHECK(c.tcp.congestion_control == CongestionControl::dctcp);
  CHECK(c.tcp.delayed_ack == Time());
  CHECK(c.tcp.min_rto == 1_ms);
  CHECK(c.tcp.initial_cwnd == 4);
  CHECK(c.settings<MpaConfig>("mpa").markers);
  CHECK_FALSE(c.settings<MpaConfig>("mpa").crc);
  CHECK(c.host.completion == Completion::hybrid);
  CHECK(c.host.hybrid_spin == 3_us);
  CHECK(c.host.interrupt_coalescing.frames == 8);
  CHECK(c.host.interrupt_coalescing.delay == 10_us);
  CHECK(c.host.doorbell == Doorbell::pio);
  CHECK(c.host.pcie.latency == 1_us);
  CHECK(c.host.pcie.bandwidth == 64_Gbps);
  CHECK(c.host.poll_cost == 10_ns);
  CHECK(c.host.interrupt_cost == 5_us);
  CHECK(c.host.post_cost == 20_ns);
  REQUIRE(c.vlan);
  CHECK(c.vlan->id == 7);
  CHECK(c.vlan->pcp == 6);
  CHECK(c.capture.mode == CaptureMode::list);
  CHECK(c.capture.nodes == std::vector<std::string>{"a", "s1"});
  CHECK(c.capture.ib_linktype_infiniband);
  CHECK(c.capture.snaplen == 128);
  const WorkloadConfig& w = c.workloads.at(0);
  CHECK(w.name == "bulk");
  CHECK(w.timeout == 20);
  CHECK(w.retry_cnt == 3);
  CHECK(w.rnr_retry == 0);
  CHECK(w.min_rnr_timer == 1);
  CHECK_FALSE(w.post_recvs);
  CHECK(w.bad_rkey);
  CHECK(w.inline_threshold == 64);
  const WorkloadConfig& cas = c.workloads.at(1);
  CHECK(cas.size == 8_B);  // atomics default to their only size
  CHECK(cas.compare_add == 5);
  CHECK(cas.swap == 9);
  CHECK(c.workloads.at(2).compare_add == 3);
}

TEST_CASE("loader: patterns and perftest kinds") {
  const ExperimentConfig c = good(R"(topology: {generate: {kind: star, hosts: 5}}
workloads:
  - {kind: incast, to: h0, senders: 3, size: 1MiB}
  - {kind: incast, to: h1, from: [h3, h4], op: send}
  - {kind: all_to_all}
  - {kind: all_to_all, hosts: [h1, h2], op: rdma_read}
  - {kind: pingpong, from: h0, to: h1}
  - {kind: read_lat, from: h0, to: h1}
  - {kind: atomic_bw, from: h0, to: h1, op: atomic_cas}
  - {kind: send_bw, from: h0, to: h1, qp: ud, size: 4KiB}
  - {kind: write_bw, from: h0, to: h1}
  - {kind: send_bw, from: h0, to: h1, size: 64KiB, cq_moderation: 16, outstanding: 8}
)");
  REQUIRE(c.workloads.size() == 10);
  CHECK(c.workloads[0].from == std::vector<std::string>{"h1", "h2", "h3"});
  CHECK(c.workloads[0].to == std::vector<std::string>{"h0"});
  CHECK(c.workloads[0].op == "rdma_write");
  CHECK(c.workloads[1].from == std::vector<std::string>{"h3", "h4"});
  CHECK(basic_op(c.workloads[1]) == WorkloadKind::send);
  CHECK(c.workloads[2].from.size() == 5);
  CHECK(c.workloads[2].to == c.workloads[2].from);
  CHECK(c.workloads[3].from == std::vector<std::string>{"h1", "h2"});
  CHECK(c.workloads[3].op == "rdma_read");
  CHECK(c.workloads[4].op == "send");  // a SEND ping-pong, reported as one (it said rdma_write)
  CHECK(c.workloads[5].op == "rdma_read");
  CHECK(c.workloads[6].op == "atomic_cas");
  CHECK(c.workloads[6].size == 8_B);
  CHECK(c.workloads[7].op == "send");
  // perftest 4.5's defaults: ib_read_lat's 2 bytes x 1000, one at a time ...
  CHECK(c.workloads[5].size == 2_B);
  CHECK(c.workloads[5].count == 1000);
  CHECK(c.workloads[5].outstanding == 1);
  CHECK(c.workloads[5].cq_moderation == 1);
  CHECK(c.workloads[5].inline_threshold == 0);  // perftest turns inline off on a device it does not know
  CHECK(c.workloads[6].count == 5000);          // ... ib_atomic_bw's 5000 of 8 bytes ...
  CHECK(c.workloads[6].size == 8_B);
  CHECK(c.workloads[7].cq_moderation == 100);  // ... CQ moderation 100 up to 8 KiB ...
  CHECK(c.workloads[8].size == 64_KiB);        // ... ib_write_bw's 64 KiB x 5000 with 128 in flight,
  CHECK(c.workloads[8].count == 5000);
  CHECK(c.workloads[8].outstanding == 128);
  CHECK(c.workloads[8].cq_moderation == 1);  // moderation off above 8 KiB unless asked for,
  CHECK(c.workloads[9].cq_moderation == 8);  // and never above the tx-depth
  CHECK(c.workloads[0].cq_moderation == 1);  // not a perftest kind
}

TEST_CASE("loader: generated topologies") {
  SUBCASE("leaf_spine with host_link and fabric_link") {
    const ExperimentConfig c = good(R"(link: {bandwidth: 100Gbps, delay: 2us}
topology:
  generate: {kind: leaf_spine, spines: 2, leaves: 4, hosts_per_leaf: 8,
             host_link: {bandwidth: 25Gbps}, fabric_link: {bandwidth: 400Gbps}}
workloads: [{kind: rdma_write, from: h0, to: h31}]
)");
    CHECK(c.topology.generated == GeneratorKind::leaf_spine);
    CHECK(c.topology.hosts.size() == 32);
    CHECK(c.topology.switches.size() == 6);
    REQUIRE(c.topology.links.size() == 32 + 8);
    CHECK(c.topology.links.front().config.bandwidth == 25_Gbps);
    CHECK(c.topology.links.front().config.delay == 2_us);  // from link:
    CHECK(c.topology.links.back().config.bandwidth == 400_Gbps);
    CHECK(c.topology.links.front().line == 3);
  }
  SUBCASE("fat_tree") {
    const ExperimentConfig c = good(
        "topology: {generate: {kind: fat_tree, k: 4}}\n"
        "workloads: [{kind: send, from: h0, to: h15}]\n");
    CHECK(c.topology.hosts.size() == 16);
    CHECK(c.topology.switches.size() == 20);
  }
}

TEST_CASE("loader: --set, --fabric and --seed") {
  const std::string yaml = R"(topology: {generate: {kind: fat_tree, k: 4}}
workloads: [{kind: send, from: h0, to: h15}]
)";
  const ExperimentConfig c =
      good(yaml, {"link.bandwidth=25Gbps", "workloads.0.count=10", "seed=3", "topology.generate.k=8",
                  "workloads.0.qp=uc", "capture.pcap=[h0, h1]"});
  CHECK(c.seed == 3);
  CHECK(c.link.bandwidth == 25_Gbps);
  CHECK(c.topology.links.at(0).config.bandwidth == 25_Gbps);
  CHECK(c.topology.hosts.size() == 128);
  CHECK(c.workloads.at(0).count == 10);
  CHECK(c.workloads.at(0).qp == QpType::uc);
  CHECK(c.capture.nodes == std::vector<std::string>{"h0", "h1"});

  LoadResult r = load(yaml, {}, "ib", "42");
  REQUIRE(r.config);
  CHECK(r.config->fabric == "ib");
  CHECK(r.config->seed == 42);

  SUBCASE("errors in overrides name the command line") {
    CHECK(unit_error(errors(yaml, {"link.bandwidth=fast"}),
                     "<command line>:1:16: link.bandwidth: expected a rate",
                     "got 'fast' (--set link.bandwidth=fast)\n"));
    CHECK(errors(yaml, {"seed=1", "workloads.0.count=0"}) ==
          "<command line>:2:19: workloads[0].count: expected a whole number from 1, got '0' (--set "
          "workloads.0.count=0)\n");
    CHECK(errors(yaml, {"workloads.3.count=1"}) ==
          "<command line>:1:11: workloads is a list of 1; expected an index from 0 to 0 or a name (w0), got "
          "'3' "
          "(--set "
          "workloads.3.count=1)\n");
    CHECK(errors(yaml, {"count"}) ==
          "<command line>:1:1: expected key=value, such as link.bandwidth=25Gbps (--set count)\n");
    // The only error: the path's first part is not added to the file before
    // the empty part is found (it was, and then reported as an unknown key).
    CHECK(errors(yaml, {"a..b=1"}) ==
          "<command line>:1:3: a..b: empty part in the key path (--set a..b=1)\n");
    CHECK(errors(yaml, {"link.delay=[1"}) ==
          "<command line>:1:12: link.delay: the value is not valid YAML: end of sequence flow not found "
          "(--set link.delay=[1)\n");
    CHECK(errors(yaml, {"link.speed=1Gbps"}) ==
          "<command line>:1:6: link.speed: unknown key; allowed keys: bandwidth, delay, mtu, buffer, loss "
          "(--set link.speed=1Gbps)\n");
    CHECK(errors(load(yaml, {}, "infiniband")) ==
          "<command line>:1:1: fabric: unknown fabric 'infiniband'; expected one of ib, roce_v1, roce_v2, "
          "iwarp, tcp "
          "(--fabric infiniband)\n");
    // Each quoted as the option the user gave: --seed was quoted as the
    // `--set seed=0x10` it became; a sweep's point as its --vary.
    CHECK(errors(load(yaml, {}, {}, "0x10")) ==
          "<command line>:1:1: seed: expected a whole number from 0, got '0x10' (--seed 0x10)\n");
    CHECK(errors(yaml, {{"seed=1"}, {"link.bandwidth=fast", "--vary"}}) ==
          "<command line>:2:16: link.bandwidth: expected a rate such as 25Gbps or 100Mbps (whole bits per "
          "second), got 'fast' (--vary link.bandwidth=fast)\n");
  }
  SUBCASE("list elements by [index], by name, and the part of a path that is wrong") {
    const std::string named = R"(topology: {generate: {kind: fat_tree, k: 4}}
workloads:
  - {name: flood, kind: send, from: h0, to: h15}
  - {kind: send, from: h1, to: h14}
  - {name: a.b, kind: send, from: h2, to: h13}
)";
    const ExperimentConfig n =
        good(named, {"workloads[0].count=7", "workloads.flood.size=128", "workloads.w1.count=3",
                     "workloads[a.b].count=5", "workloads[2].start=1us", "topology.generate.k=6"});
    CHECK(n.workloads.at(0).count == 7);
    CHECK(n.workloads.at(0).size == 128_B);
    CHECK(n.workloads.at(1).count == 3);
    CHECK(n.workloads.at(2).count == 5);
    CHECK(n.workloads.at(2).start == 1_us);
    CHECK(n.topology.hosts.size() == 54);
    // The column points at the part at fault, and the message names it.
    CHECK(errors(named, {"workloads[0].rat=1Gbps"}) ==
          "<command line>:1:14: workloads[0].rat: unknown key (did you mean 'rate'?); allowed keys: name, "
          "kind, from, to, senders, hosts, qp, size, count, outstanding, cq_moderation, start, op, add, "
          "compare, swap, "
          "payload, timeout, retry_cnt, rnr_retry, min_rnr_timer, post_recvs, bad_rkey, inline_threshold, "
          "cdf, load, duration, on, work, chunk, rate, app_cost, initiator, target, nsid, rw, bs, iodepth, "
          "numjobs, group_reporting, rwmixread, runtime, offset, ramp_time, queue_size, hdgst, ddgst, "
          "io_timeout, "
          "admin_timeout, max_retries, reconnect_delay, ctrl_loss_tmo, fast_io_fail_tmo, kato, bw_avg_time, "
          "iops_avg_time (--set "
          "workloads[0].rat=1Gbps)\n");
    CHECK(
        errors(named, {"workloads.flod.count=1"}) ==
        "<command line>:1:11: workloads is a list of 3; expected an index from 0 to 2 or a name (flood, w1, "
        "a.b), got 'flod' (did you mean 'flood'?) (--set workloads.flod.count=1)\n");
    CHECK(
        errors(named, {"workloads[5].count=1"}) ==
        "<command line>:1:11: workloads is a list of 3; expected an index from 0 to 2 or a name (flood, w1, "
        "a.b), got '5' (--set workloads[5].count=1)\n");
    CHECK(errors(named, {"workloads[0.count=1"}) ==
          "<command line>:1:10: workloads[0.count: '[' without a ']' (--set workloads[0.count=1)\n");
    CHECK(errors(named, {"workloads[0]count=1"}) ==
          "<command line>:1:13: workloads[0]count: expected '.' or '[' after ']', got 'c' (--set "
          "workloads[0]count=1)\n");
    CHECK(errors(named, {"workloads[]=1"}) ==
          "<command line>:1:10: workloads[]: empty part in the key path (--set workloads[]=1)\n");
    CHECK(errors(named, {"link[0]=1"}) ==
          "<command line>:1:6: link is not given, so it has no [0] (--set link[0]=1)\n");
    CHECK(errors(named, {"topology[0]=1"}) ==
          "<command line>:1:10: topology is a map, not a list, so it has no [0] (--set topology[0]=1)\n");
    CHECK(errors(named, {"workloads.flood.kind.x=1"}) ==
          "<command line>:1:22: workloads[0].kind is a single value, so it has no 'x' (--set "
          "workloads.flood.kind.x=1)\n");
    CHECK(errors(named, {"topology.generat.k=4"})
              .starts_with("<command line>:1:10: topology.generat: unknown key (did you mean 'generate'?)"));
  }
  SUBCASE("an override that makes the file contradict itself") {
    CHECK(errors(kDesignExample, {"topology.generate.k=4"}) ==
          "<command line>:1:10: topology.generate: give either generate or hosts, switches, routers and "
          "links, not "
          "both (--set topology.generate.k=4)\n");
  }
}

TEST_CASE("loader: unknown keys, wrong types, bad units, unknown names") {
  CHECK(
      errors(pair_with("  - {kind: send, from: a, to: b}\n", "linc: {}\n")) ==
      "exp.yaml:1:1: linc: unknown key (did you mean 'link'?); allowed keys: name, fabric, seed, stop, link, "
      "congestion_control, dcqcn, loss_recovery, irn, switch, host, ib, flow_control, pfc, ecn, vlan, ip, "
      "tcp, mpa, topology, storage, "
      "workloads, programs, faults, capture, cost\n");
  CHECK(errors(pair_with("  - {kind: send, from: a, to: b}\n", "link: {bandwith: 1Gbps}\n")) ==
        "exp.yaml:1:8: link.bandwith: unknown key (did you mean 'bandwidth'?); allowed keys: bandwidth, "
        "delay, mtu, "
        "buffer, loss\n");
  CHECK(
      errors(pair_with("  - {kind: send, from: a, to: b}\n", "link: 100Gbps\n")) ==
      "exp.yaml:1:7: link: expected link settings (a map with keys bandwidth, delay, mtu, buffer, loss), got "
      "'100Gbps'\n");
  // A section that is not a map is an error, not a read of its keys (this crashed).
  CHECK(errors(pair_with("  - {kind: send, from: a, to: b}\n", "pfc: 5\n")) ==
        "exp.yaml:1:6: pfc: expected PFC settings (a map with keys priority, xoff, xon, deadlock_detect, "
        "watchdog, shared_buffer, shared_buffer_per, alpha_shift, reserve, resume_offset), got '5'\n");
  CHECK(errors(pair_with("  - {kind: send, from: a, to: b}\n", "seed: [1]\n")) ==
        "exp.yaml:1:7: seed: expected a whole number from 0, got a list\n");
  CHECK(errors(pair_with("  - {kind: send, from: a, to: b, start: 5 us}\n")) == "");  // a space is fine
  CHECK(unit_error(
      errors(pair_with("  - {kind: send, from: a, to: b}\n  - {kind: send, from: a, to: b, size: big}\n")),
      "exp.yaml:7:40: workloads[1].size: expected a size such as 4096, 64KiB or 1MiB", "got 'big'\n"));
  CHECK(unit_error(errors(pair_with("  - {kind: send, from: a, to: b, start: soon}\n")),
                   "exp.yaml:6:41: workloads[0].start: expected a time", "got 'soon'\n"));
  CHECK(unit_error(errors(pair_with("  - {kind: send, from: a, to: b}\n", "link: {bandwidth: 100GB}\n")),
                   "exp.yaml:1:19: link.bandwidth: expected a rate", "got '100GB'\n"));
  CHECK(unit_error(errors(pair_with("  - {kind: send, from: a, to: b}\n", "link: {bandwidth: 0}\n")),
                   "exp.yaml:1:19: link.bandwidth: expected a rate", "got '0'\n"));
  CHECK(
      errors(pair_with("  - {kind: send, from: a, to: b}\n", "fabric: rocev2\n")) ==
      "exp.yaml:1:9: fabric: unknown fabric 'rocev2' (did you mean 'roce_v2'?); expected one of ib, roce_v1, "
      "roce_v2, iwarp, tcp\n");
  CHECK(
      errors(pair_with("  - {kind: write, from: a, to: b}\n")) ==
      "exp.yaml:6:12: workloads[0].kind: unknown workload kind 'write'; expected one of send, send_imm, "
      "rdma_write, rdma_write_imm, rdma_read, atomic_cas, atomic_fadd, incast, all_to_all, pingpong, "
      "write_bw, "
      "write_lat, read_bw, read_lat, send_bw, send_lat, atomic_bw, atomic_lat, flows, compute, udp, nvme\n");
  CHECK(errors(pair_with("  - {kind: send, from: a, to: b, qp: rd}\n")) ==
        "exp.yaml:6:38: workloads[0].qp: unknown QP type 'rd' (did you mean 'rc'?); expected one of rc, uc, "
        "ud\n");
  CHECK(errors(pair_with("  - {kind: send, from: a, to: c}\n")) ==
        "exp.yaml:6:31: workloads[0].to: unknown host 'c'\n");
  CHECK(errors(pair_with("  - {kind: send, from: a, to: s1}\n")) ==
        "exp.yaml:6:31: workloads[0].to: 's1' is a switch; workloads run between hosts\n");
  CHECK(errors(pair_with("  - {kind: send, from: a}\n")) ==
        "exp.yaml:6:5: workloads[0]: missing key 'to' (a host name)\n");
  CHECK(errors(pair_with("  - {kind: send, from: a, to: b, senders: 2}\n")) ==
        "exp.yaml:6:34: workloads[0].senders: only incast takes senders, not send\n");
  CHECK(errors(pair_with("  - {kind: send, from: a, to: b, count: 1, count: 2}\n")) ==
        "exp.yaml:6:44: workloads[0].count: duplicate key (first at line 6)\n");
  CHECK(errors(pair_with(
            "  - {kind: send, from: a, to: b, name: x}\n  - {kind: send, from: a, to: b, name: x}\n")) ==
        "exp.yaml:7:40: workloads[1].name: duplicate workload name 'x' (first at line 6)\n");
  CHECK(errors(pair_with("  - {kind: send, from: a, to: a}\n")) ==
        "exp.yaml:6:31: workloads[0].to: from and to are the same host 'a'\n");
  CHECK(errors(pair_with("  - {kind: send, from: [a], to: b}\n")) ==
        "exp.yaml:6:24: workloads[0].from: expected one host name, got a list (only incast takes a list of "
        "senders)\n");
}

TEST_CASE("loader: topology errors") {
  CHECK(errors(R"(topology:
  hosts: [a, b, c, a]
  switches: [s1, b]
  links: [[a, s1], [s1, a], [b, s1], [b, b], [b, s9], [c, q]]
workloads: [{kind: send, from: a, to: b}]
)") ==  // c's one link names an unknown node: "c has no link" would follow from it
        "exp.yaml:2:20: topology.hosts[3]: duplicate name 'a' (first at line 2)\n"
        "exp.yaml:3:18: topology.switches[1]: duplicate name 'b' (first at line 2)\n"
        "exp.yaml:4:20: topology.links[1]: duplicate link between 's1' and 'a' (first at line 4)\n"
        "exp.yaml:4:38: topology.links[3]: a link from 'b' to itself\n"
        "exp.yaml:4:50: topology.links[4][1]: unknown node 's9' (did you mean 's1'?); nodes are the hosts, "
        "switches "
        "and routers of the topology\n"
        "exp.yaml:4:59: topology.links[5][1]: unknown node 'q'; nodes are the hosts, switches and routers of "
        "the "
        "topology\n");
  CHECK(errors(R"(topology:
  hosts: [a]
  generate: {kind: star, hosts: 2}
workloads: [{kind: send, from: h0, to: h1}]
)") == "exp.yaml:3:3: topology.generate: give either generate or hosts, switches, routers and links, not "
       "both\n");
  CHECK(
      errors("topology: {generate: {kind: fat_tree, k: 5}}\nworkloads: [{kind: send, from: h0, to: h1}]\n") ==
      "exp.yaml:1:42: topology.generate.k: k must be even, got 5\n");
  CHECK(errors("topology: {generate: {kind: fat_tree, spines: 2}}\nworkloads: [{kind: send, from: h0, to: "
               "h1}]\n") ==
        "exp.yaml:1:39: topology.generate.spines: unknown key; allowed keys: kind, host_link, k, "
        "fabric_link\n");
  CHECK(errors("topology: {generate: {kind: leaf_spine, spines: 2, leaves: 2}}\nworkloads: [{kind: send, "
               "from: h0, to: h1}]\n") ==
        "exp.yaml:1:22: topology.generate: missing key 'hosts_per_leaf' (how many hosts on each leaf)\n");
  CHECK(errors("topology: {generate: {kind: torus}}\nworkloads: [{kind: send, from: h0, to: h1}]\n") ==
        "exp.yaml:1:29: topology.generate.kind: unknown generator 'torus'; expected leaf_spine, fat_tree or "
        "star\n");
  CHECK(errors("workloads: [{kind: send, from: h0, to: h1}]\n") ==
        "exp.yaml:1:1: missing key 'topology' (hosts, switches and links, or generate)\n");
  CHECK(errors("fabric: ib\ntopology: {hosts: [a], routers: [r], links: [[a, r]]}\nworkloads: []\n") ==
        "exp.yaml:2:33: topology.routers: ib has no routers here (one subnet, one subnet manager); use "
        "switches\n"
        "exp.yaml:3:12: workloads: at least one workload\n");
  CHECK(errors("fabric: ib\ntopology: {generate: {kind: star, hosts: 300}}\nworkloads: [{kind: send, from: "
               "h0, to: h1}]\n") ==
        "exp.yaml:2:11: topology: IB switch 's0' would need 300 ports; an IB switch has at most 254 (8-bit "
        "port numbers, 0 and 255 reserved)\n");
}

// Checks a run could once make only after it had started: the loader
// makes them, so `validate` reports them too.
TEST_CASE("loader: a host has one link, an IB VL buffer holds a packet") {
  CHECK(errors(R"(topology:
  hosts: [a, b]
  switches: [s1, s2]
  links: [[a, s1], [b, s1], [s2, a], [b, s2]]
workloads: [{kind: send, from: a, to: b}]
)") == "exp.yaml:4:29: topology.links[2]: host 'a' has more than one link (first at line 4); a host has "
       "one NIC port\n"
       "exp.yaml:4:38: topology.links[3]: host 'b' has more than one link (first at line 4); a host has "
       "one NIC port\n");
  // A 4096-byte path MTU: the largest packet is 4196 bytes; 2 VLs need 8392.
  CHECK(errors(R"(fabric: ib
topology:
  hosts: [a, b]
  switches: [s]
  links: [[a, s], [b, s, {buffer: 8KiB}]]
workloads: [{kind: send, from: a, to: b}]
)") == "exp.yaml:5:19: topology.links[1]: link b - s: buffer 8KiB is too small for ib: each of the 2 data "
       "VLs needs room for a 4190-byte packet (IBA 7.9), so at least 8380B\n");
  // ... with a smaller MTU it fits; one VL needs two packets' room.
  CHECK(errors(pair_with("  - {kind: send, from: a, to: b}\n",
                         "fabric: ib\nlink: {mtu: 2048, buffer: 8KiB}\n")) == "");
  // A generated topology's links are reported once, at the generator.
  CHECK(errors(R"(fabric: ib
ib: {vls: 1}
topology: {generate: {kind: star, hosts: 3, host_link: {buffer: 4KiB}}}
workloads: [{kind: send, from: h0, to: h1}]
)") == "exp.yaml:3:12: topology.generate: link h0 - s0: buffer 4KiB is too small for ib: each of the 1 data "
       "VLs needs room for a 4190-byte packet (IBA 7.9), so at least 8380B\n");
  // Ethernet fabrics have no per-VL buffers.
  CHECK(errors(pair_with("  - {kind: send, from: a, to: b}\n", "link: {buffer: 4KiB}\n")) == "");
}

TEST_CASE("loader: a ping-pong is of SENDs, so its op is send") {
  // op: rdma_write, its default, ran SENDs and said rdma_write; on tcp a
  // ping-pong without op was refused as RDMA.
  CHECK(errors(pair_with("  - {kind: pingpong, from: a, to: b}\n", "fabric: tcp\n")) == "");
  CHECK(errors(pair_with("  - {kind: pingpong, from: a, to: b, op: send}\n")) == "");
  for (const char* op : {"rdma_write", "rdma_read", "atomic_fadd", "send_imm"})
    CHECK(errors(pair_with("  - {kind: pingpong, from: a, to: b, op: " + std::string(op) + "}\n")) ==
          "exp.yaml:6:42: workloads[0].op: pingpong is a SEND ping-pong and takes op: send (write_lat is "
          "the RDMA WRITE ping-pong)\n");
}

TEST_CASE("loader: what the fabrics and transports cannot do") {
  SUBCASE("mtu") {
    CHECK(errors(pair_with("  - {kind: send, from: a, to: b}\n", "link: {mtu: 1500}\n")) ==
          "exp.yaml:1:13: link.mtu: roce_v2 needs an IBA MTU: 256, 512, 1024, 2048 or 4096, got 1500\n");
    CHECK(errors(pair_with("  - {kind: send, from: a, to: b}\n", "fabric: iwarp\nlink: {mtu: 1500}\n")) ==
          "");
    CHECK(errors(pair_with("  - {kind: send, from: a, to: b}\n", "fabric: iwarp\nlink: {mtu: 256}\n")) ==
          "exp.yaml:2:13: link.mtu: iwarp needs an IP MTU from 576 to 9000, got 256\n");
    CHECK(errors(R"(fabric: ib
topology: {hosts: [a, b], links: [[a, b, {mtu: 9000}]]}
workloads: [{kind: send, from: a, to: b}]
)") == "exp.yaml:2:48: topology.links[0][2].mtu: ib needs an IBA MTU: 256, 512, 1024, 2048 or 4096, "
       "got 9000\n");
  }
  SUBCASE("sizes and counts") {
    CHECK(errors(pair_with("  - {kind: send, from: a, to: b, size: 0}\n")) ==
          "");  // a zero-length SEND is legal
    CHECK(errors(pair_with("  - {kind: atomic_cas, from: a, to: b, size: 0}\n")) ==
          "exp.yaml:6:46: workloads[0].size: atomic operations move exactly 8 bytes (one 64-bit word), got "
          "0B\n");
    CHECK(errors(pair_with("  - {kind: send, from: a, to: b, count: 0}\n")) ==
          "exp.yaml:6:41: workloads[0].count: expected a whole number from 1, got '0'\n");
    CHECK(errors(pair_with("  - {kind: send, from: a, to: b, outstanding: 0}\n")) ==
          "exp.yaml:6:47: workloads[0].outstanding: expected a whole number from 1 to 16383, got '0'\n");
    CHECK(errors(pair_with("  - {kind: send, from: a, to: b, outstanding: 16384}\n")) ==
          "exp.yaml:6:47: workloads[0].outstanding: expected a whole number from 1 to 16383, got '16384'\n");
    CHECK(errors(pair_with("  - {kind: atomic_fadd, from: a, to: b, size: 4}\n")) ==
          "exp.yaml:6:47: workloads[0].size: atomic operations move exactly 8 bytes (one 64-bit word), got "
          "4B\n");
    CHECK(errors(pair_with("  - {kind: send, from: a, to: b, qp: ud, size: 4097}\n")) ==
          "exp.yaml:6:48: workloads[0].size: a UD message fits in one packet: at most the path MTU (4096 "
          "bytes), got "
          "4097B\n");
    CHECK(errors(pair_with("  - {kind: send, from: a, to: b, qp: ud, size: 4KiB}\n")) == "");
    // A flow is one message of a size its cdf draws: a UD one must fit a packet too.
    CHECK(errors(pair_with("  - {kind: flows, op: send, qp: ud, cdf: hadoop, duration: 1us}\n")) ==
          "exp.yaml:6:42: workloads[0].cdf: a UD message fits in one packet: at most the path MTU (4096 "
          "bytes), but the cdf hadoop draws flows of up to 10000000 bytes\n");
    CHECK(errors(pair_with("  - {kind: flows, op: send, qp: ud, duration: 1us}\n")) ==
          "exp.yaml:6:12: workloads[0].kind: a UD message fits in one packet: at most the path MTU (4096 "
          "bytes), but the cdf websearch draws flows of up to 30000000 bytes\n");
    CHECK(errors(pair_with("  - {kind: flows, op: send, qp: rc, cdf: hadoop, duration: 1us}\n")) == "");
    // A CDF file that cannot be read does not hide what else is wrong.
    CHECK(errors(pair_with("  - {kind: flows, cdf: no_such.cdf, load: 0}\n")) ==
          "exp.yaml:6:5: workloads[0]: missing key 'duration' (how long flows arrive, such as 1ms)\n"
          "exp.yaml:6:24: workloads[0].cdf: expected websearch, hadoop or a readable CDF file, got "
          "'no_such.cdf'\n"
          "exp.yaml:6:43: workloads[0].load: expected a load above 0 and at most 1, got '0'\n");
    CHECK(errors(pair_with("  - {kind: rdma_write, from: a, to: b, size: 2GiB}\n")) == "");
    CHECK(errors(pair_with("  - {kind: rdma_write, from: a, to: b, size: 3GiB}\n")) ==
          "exp.yaml:6:46: workloads[0].size: a message is at most 2GiB (2^31 bytes, the IBA limit), got "
          "3GiB\n");
    CHECK(errors(pair_with("  - {kind: send, from: a, to: b, timeout: 32, retry_cnt: 8}\n")) ==
          "exp.yaml:6:43: workloads[0].timeout: expected a whole number from 0 to 31, got '32'\n"
          "exp.yaml:6:58: workloads[0].retry_cnt: expected a whole number from 0 to 7, got '8'\n");
  }
  SUBCASE("QP types") {
    CHECK(errors(pair_with("  - {kind: rdma_write, from: a, to: b, qp: ud}\n")) ==
          "exp.yaml:6:44: workloads[0].qp: UD QPs carry only SEND; rdma_write needs qp: rc or uc\n");
    CHECK(errors(pair_with("  - {kind: atomic_cas, from: a, to: b, qp: ud}\n")) ==
          "exp.yaml:6:44: workloads[0].qp: UD QPs carry only SEND; atomic_cas needs qp: rc\n");
    CHECK(errors(pair_with("  - {kind: rdma_read, from: a, to: b, qp: uc}\n")) ==
          "exp.yaml:6:43: workloads[0].qp: UC QPs have no RDMA READ or atomics; rdma_read needs qp: rc\n");
    CHECK(errors(pair_with("  - {kind: atomic_fadd, from: a, to: b, qp: uc}\n")) ==
          "exp.yaml:6:45: workloads[0].qp: UC QPs have no RDMA READ or atomics; atomic_fadd needs qp: rc\n");
    CHECK(errors(pair_with("  - {kind: rdma_write_imm, from: a, to: b, qp: uc}\n")) == "");
    CHECK(errors(pair_with("  - {kind: incast, from: [a], to: b, op: rdma_read, qp: uc}\n")) ==
          "exp.yaml:6:57: workloads[0].qp: UC QPs have no RDMA READ or atomics; rdma_read needs qp: rc\n");
  }
  SUBCASE("iwarp") {
    const std::string head = "fabric: iwarp\n";
    CHECK(errors(pair_with("  - {kind: send, from: a, to: b, qp: ud}\n", head)) ==
          "exp.yaml:7:38: workloads[0].qp: iwarp has only reliable connections (RFC 5040): no ud QPs; use "
          "qp: rc\n");
    CHECK(errors(pair_with("  - {kind: atomic_cas, from: a, to: b}\n", head)) ==
          "exp.yaml:7:12: workloads[0].kind: iwarp has no atomic operations (RFC 5040); atomic_cas is not "
          "available\n");
    // A kind whose operation is op's default names both (it said atomic_fadd alone).
    CHECK(errors(pair_with("  - {kind: atomic_bw, from: a, to: b}\n", head)) ==
          "exp.yaml:7:12: workloads[0].kind: iwarp has no atomic operations (RFC 5040); atomic_bw (op "
          "atomic_fadd) is not available\n");
    CHECK(errors(pair_with("  - {kind: send_imm, from: a, to: b}\n", head)) ==
          "exp.yaml:7:12: workloads[0].kind: iwarp has no immediate data (RFC 5040); send_imm is not "
          "available\n");
    CHECK(errors(pair_with("  - {kind: incast, from: [a], to: b, op: rdma_write_imm}\n", head)) ==
          "exp.yaml:7:42: workloads[0].op: iwarp has no immediate data (RFC 5040); rdma_write_imm is not "
          "available\n");
    CHECK(errors(pair_with("  - {kind: rdma_read, from: a, to: b}\n", head)) == "");
    // The same file is fine on another fabric, and --fabric switches it.
    const std::string ud = pair_with("  - {kind: send, from: a, to: b, qp: ud}\n");
    CHECK(errors(ud) == "");
    CHECK(errors(load(ud, {}, "iwarp")) ==
          "exp.yaml:6:38: workloads[0].qp: iwarp has only reliable connections (RFC 5040): no ud QPs; use "
          "qp: rc\n");
  }
  SUBCASE("probabilities and thresholds") {
    CHECK(errors(pair_with("  - {kind: send, from: a, to: b}\n", "link: {loss: 1.5}\n")) ==
          "exp.yaml:1:14: link.loss: expected a probability from 0 to 1, got '1.5'\n");
    CHECK(errors(pair_with("  - {kind: send, from: a, to: b}\n", "ecn: {pmax: -0.1}\n")) ==
          "exp.yaml:1:13: ecn.pmax: expected a probability from 0 to 1, got '-0.1'\n");
    CHECK(errors(pair_with("  - {kind: send, from: a, to: b}\n", "ecn: {kmin: 200KiB}\n")) ==
          "exp.yaml:1:13: ecn.kmin: kmin (200KiB) must not exceed kmax (160KiB)\n");
    CHECK(errors(pair_with("  - {kind: send, from: a, to: b}\n", "pfc: {xon: 300KiB}\n")) ==
          "exp.yaml:1:12: pfc.xon: xon (300KiB) must not exceed xoff (256KiB)\n");
    CHECK(errors(pair_with("  - {kind: send, from: a, to: b}\n", "ib: {vls: 3}\n")) ==
          "exp.yaml:1:11: ib.vls: an IB port has 1, 2, 4, 8 or 15 data VLs, got 3\n");
  }
}

TEST_CASE("loader: reachability") {
  const std::string two_domains = R"(topology:
  hosts: [a, b, c]
  switches: [s1, s2]
  routers: [r1]
  links: [[a, s1], [b, s1], [s1, r1], [r1, s2], [c, s2]]
workloads:
  - {kind: send, from: a, to: b}
  - {kind: send, from: a, to: c}
)";
  CHECK(errors(two_domains) == "");
  CHECK(errors(load(two_domains, {}, "roce_v1")) ==
        "exp.yaml:8:5: workloads[1]: a and c are in different broadcast domains (a router separates them): "
        "roce_v1 "
        "frames cannot be routed; use roce_v2 or put them on one L2 network\n");
  CHECK(errors(R"(topology:
  hosts: [a, b, c, d]
  switches: [s1, s2]
  links: [[a, s1], [b, s1], [c, s2], [d, s2]]
workloads:
  - {kind: send, from: a, to: b}
  - {kind: incast, from: [a, b, c], to: d}
)") == "exp.yaml:7:5: workloads[1]: a cannot reach d: no path through switches and routers\n");
  // A host does not forward: a - b - c is no path from a to c (and b has one port too many).
  CHECK(errors(R"(topology:
  hosts: [a, b, c]
  links: [[a, b], [b, c]]
workloads: [{kind: send, from: a, to: c}]
)") == "exp.yaml:3:19: topology.links[1]: host 'b' has more than one link (first at line 3); a host has one "
       "NIC port\n"
       "exp.yaml:4:13: workloads[0]: a cannot reach c: no path through switches and routers\n");
}

TEST_CASE("loader: faults and capture") {
  CHECK(
      errors(pair_with(
          "  - {kind: send, from: a, to: b}\nfaults:\n  - {at: 1us, link: [a, b], action: down}\n"
          "  - {at: 1us, link: [a, s1], action: sideways}\n  - {at: 2us, link: [a, s9], action: up}\n"
          "  - {link: [a, s1], action: up}\ncapture: {pcap: [a, zz]}\n")) ==
      "exp.yaml:8:21: faults[0].link: there is no link between 'a' and 'b'\n"
      "exp.yaml:9:38: faults[1].action: unknown action 'sideways'; expected down or up\n"
      "exp.yaml:10:25: faults[2].link[1]: unknown node 's9' (did you mean 's1'?); nodes are the hosts, "
      "switches "
      "and routers of the topology\n"
      "exp.yaml:11:5: faults[3]: missing key 'at' (when, such as 50us)\n"
      "exp.yaml:12:21: capture.pcap[1]: unknown node 'zz'; nodes are the hosts, switches and routers of the "
      "topology\n");
  const ExperimentConfig c =
      good(pair_with("  - {kind: send, from: a, to: b}\nfaults:\n  - {at: 1us, link: [s1, a], action: up}\n"
                     "capture: {pcap: none}\n"));
  CHECK(c.faults.at(0).up);
  CHECK(c.faults.at(0).link == 0);
  CHECK(c.capture.mode == CaptureMode::none);
}

TEST_CASE("loader: capture.timeseries ports and qps") {
  const std::string w = "  - {name: big, kind: send, from: a, to: b}\n  - {kind: send, from: b, to: a}\n";
  SUBCASE("defaults: every port, every workload") {
    const ExperimentConfig c = good(pair_with(w + "capture: {timeseries: {interval: 1us}}\n"));
    REQUIRE(c.capture.timeseries);
    CHECK(c.capture.timeseries->interval == Time::us(1));
    CHECK(c.capture.timeseries->all_ports);
    CHECK(c.capture.timeseries->all_qps);
  }
  SUBCASE("lists") {
    const ExperimentConfig c =
        good(pair_with(w + "capture: {timeseries: {interval: 1us, ports: [s1:1, a], qps: [w1]}}\n"));
    const TimeSeriesConfig& t = *c.capture.timeseries;
    CHECK_FALSE(t.all_ports);
    REQUIRE(t.ports.size() == 2);
    CHECK((t.ports[0].node == "s1" && t.ports[0].port == 1));
    CHECK((t.ports[1].node == "a" && !t.ports[1].port));
    CHECK_FALSE(t.all_qps);
    CHECK(t.workloads == std::vector<std::string>{"w1"});
  }
  SUBCASE("none") {
    const ExperimentConfig c = good(pair_with(w + "capture: {timeseries: {interval: 1us, qps: none}}\n"));
    CHECK(c.capture.timeseries->all_ports);
    CHECK_FALSE(c.capture.timeseries->all_qps);
    CHECK(c.capture.timeseries->workloads.empty());
  }
  SUBCASE("errors") {
    CHECK(
        errors(pair_with(w + "capture:\n  timeseries:\n    interval: 1us\n"
                             "    ports: [s2, s1:2, a:x, s1:1, s1:1, b, b:0]\n"
                             "    qps: [bg, big, big]\n")) ==
        "exp.yaml:11:13: capture.timeseries.ports[0]: unknown node 's2' (did you mean 's1'?); nodes are the "
        "hosts, switches and routers of the topology\n"
        "exp.yaml:11:17: capture.timeseries.ports[1]: s1 has no port 2; its ports are 0..1, in the order its "
        "links appear in topology.links\n"
        "exp.yaml:11:23: capture.timeseries.ports[2]: expected NODE or NODE:PORT (a port number from 0), got "
        "'a:x'\n"
        "exp.yaml:11:34: capture.timeseries.ports[4]: 's1:1' is listed twice (first at line 11)\n"
        "exp.yaml:11:43: capture.timeseries.ports[6]: 'b:0' is already sampled: b is listed whole at line "
        "11\n"
        "exp.yaml:12:11: capture.timeseries.qps[0]: unknown workload 'bg' (did you mean 'big'?); a workload "
        "is "
        "named by its name key (w0, w1, ... in order when not given)\n"
        "exp.yaml:12:20: capture.timeseries.qps[2]: 'big' is listed twice\n");
    CHECK(errors(pair_with(w + "capture: {timeseries: {interval: 1us, ports: [], qps: some}}\n")) ==
          "exp.yaml:8:46: capture.timeseries.ports: an empty list; write none to sample no ports (NODE or "
          "NODE:PORT)\n"
          "exp.yaml:8:55: capture.timeseries.qps: expected all, none or a list of workload names, got "
          "'some'\n");
    CHECK(errors(pair_with(w + "capture: {timeseries: {interval: 1us, ports: none, qps: none}}\n")) ==
          "exp.yaml:8:23: capture.timeseries: ports and qps are both none: nothing to sample; leave out "
          "timeseries instead\n");
  }
}

TEST_CASE("loader: all errors are reported, sorted by line") {
  const LoadResult r = load(R"(fabric: iwarp
link: {loss: 2}
topology:
  hosts: [a, b]
  switches: [s1]
  links: [[a, s1], [b, s1]]
workloads:
  - {kind: atomic_fadd, from: a, to: b}
  - {kind: send, from: a, to: b, count: 0}
capture: {pcap: sometimes}
seed: x
)");
  CHECK_FALSE(r.config);
  REQUIRE(r.errors.size() == 5);
  for (size_t i = 1; i < r.errors.size(); ++i) CHECK(r.errors[i - 1].line <= r.errors[i].line);
  CHECK(r.errors.front().line == 2);
  CHECK(r.errors.back().message == "seed: expected a whole number from 0, got 'x'");
}

TEST_CASE("loader: files") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("rdmasim_loader_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto write = [&](const char* name, std::string_view text) {
    std::ofstream(dir / name) << text;
    return dir / name;
  };
  SUBCASE("a good file") {
    const LoadResult r = load_experiment(write("design.yaml", kDesignExample));
    REQUIRE(r.config);
    CHECK(r.config->file == dir / "design.yaml");
  }
  SUBCASE("missing") {
    const auto p = dir / "none.yaml";
    const LoadResult r = load_experiment(p);
    CHECK(errors(r) == p.string() + ":1:1: cannot open the file: no such file\n");
  }
  SUBCASE("a directory") {
    CHECK(errors(load_experiment(dir)) == dir.string() + ":1:1: cannot read the file: it is a directory\n");
  }
  SUBCASE("unreadable") {
    const auto p = write("secret.yaml", kDesignExample);
    std::filesystem::permissions(p, std::filesystem::perms::none);
    if (std::ifstream(p)) {
      MESSAGE("running as root: cannot make a file unreadable");
    } else {
      CHECK(errors(load_experiment(p)) == p.string() + ":1:1: cannot open the file: Permission denied\n");
    }
  }
  SUBCASE("YAML syntax errors") {
    const auto p = write("syntax.yaml", "name: x\ntopology: {hosts: [a, b}\n");
    const LoadResult r = load_experiment(p);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].file == p.string());
    CHECK(r.errors[0].line == 2);
    CHECK(r.errors[0].message.rfind("YAML syntax: ", 0) == 0);
  }
  SUBCASE("empty") {
    CHECK(errors(load_experiment(write("empty.yaml", ""))) ==
          (dir / "empty.yaml").string() +
              ":1:1: the file is empty; expected an experiment (see docs/yaml.md)\n");
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("loader: LoadError formats as file:line:column: message") {
  CHECK(LoadError{"exp.yaml", 14, 15, "workloads[1].size: bad"}.format() ==
        "exp.yaml:14:15: workloads[1].size: bad");
}

TEST_CASE("loader: RoCE v1 VLANs are broadcast domains") {
  const std::string w = "  - {kind: send, from: a, to: b}\n";
  // On roce_v2 the hosts route between VLANs: the file loads.
  const ExperimentConfig c = good(pair_with(w, "fabric: roce_v2\nvlan: {id: 100, hosts: {b: 200}}\n"));
  REQUIRE(c.vlan);
  CHECK(c.vlan->of("a") == 100);
  CHECK(c.vlan->of("b") == 200);
  // On roce_v1 each VLAN is a broadcast domain (the workload is on line 8).
  CHECK(
      errors(pair_with(w, "fabric: roce_v1\nvlan: {id: 100, hosts: {b: 200}}\n")) ==
      "exp.yaml:8:5: workloads[0]: a (VLAN 100) and b (VLAN 200) are in different broadcast domains: roce_v1 "
      "frames cannot leave their VLAN; use roce_v2 or put them in one VLAN\n");
  CHECK(errors(pair_with(w, "fabric: roce_v2\nvlan: {hosts: {zz: 200}}\n"))
            .find("exp.yaml:2:16: vlan.hosts.zz: unknown node 'zz'") == 0);
  CHECK(errors(pair_with(w, "fabric: roce_v2\nvlan: {hosts: {s1: 200}}\n")).find("'s1' is not a host") !=
        std::string::npos);
  CHECK(errors(pair_with(w, "fabric: roce_v2\nvlan: {hosts: {b: 4095}}\n"))
            .find("exp.yaml:2:19: vlan.hosts.b:") == 0);
}

TEST_CASE("loader: loss_recovery and irn, their defaults and where IRN can run") {
  const std::string w = "  - {kind: rdma_write, from: a, to: b}\n";
  ExperimentConfig c = good(pair_with(w));
  CHECK(c.loss_recovery == LossRecovery::go_back_n);
  CHECK(c.irn.rto_low == 100_us);  // the paper's (section 4.1)
  CHECK(c.irn.rto_high == 320_us);
  CHECK(c.irn.rto_low_packets == 3);
  c = good(pair_with(w, "loss_recovery: irn\nirn: {rto_high: 200us, bdp_packets: 40}\n"));
  CHECK(c.loss_recovery == LossRecovery::irn);
  CHECK(c.irn.rto_high == 200_us);
  CHECK(c.irn.bdp_packets == 40);
  CHECK(errors(pair_with(w, "loss_recovery: selective\n"))
            .find("exp.yaml:1:16: loss_recovery: unknown loss recovery") == 0);
  CHECK(
      errors(pair_with(w, "fabric: roce_v1\nloss_recovery: irn\n")) ==
      "exp.yaml:2:16: loss_recovery: irn cannot run on fabric roce_v1: its extension header rides in an IPv4 "
      "option, and roce_v1 frames have no IP header; irn runs on roce_v2\n");
  CHECK(
      errors(pair_with(w, "fabric: iwarp\nloss_recovery: irn\n")) ==
      "exp.yaml:2:16: loss_recovery: irn cannot run on fabric iwarp: iWARP runs over TCP, which recovers its "
      "own losses; irn runs on roce_v2\n");
  CHECK(
      errors(pair_with(w, "ip: ipv6\nloss_recovery: irn\n")) ==
      "exp.yaml:2:16: loss_recovery: irn cannot run on fabric roce_v2: its extension header rides in an IPv4 "
      "option: set ip: ipv4\n");
  CHECK(errors(pair_with(w, "loss_recovery: irn\ncongestion_control: {algorithm: hpcc}\n"))
            .find("HPCC's telemetry") != std::string::npos);
  // Checked whichever recovery runs, so that --set loss_recovery=irn finds them right.
  CHECK(
      errors(pair_with(w, "irn: {rto_low: 1ms}\n")).find("rto_low (1ms) must not exceed rto_high (320us)") !=
      std::string::npos);
}

TEST_CASE("loader: congestion_control, its defaults, ECN switched on by the algorithms that need it") {
  const std::string w = "  - {kind: rdma_write, from: a, to: b}\n";
  ExperimentConfig c = good(pair_with(w));
  CHECK(c.cc.algorithm == CcAlgorithm::none);
  CHECK_FALSE(c.ecn.enabled);
  c = good(pair_with(w, "congestion_control: {algorithm: dcqcn, dcqcn: {g: 0.5, min_rate: 1Gbps}}\n"));
  CHECK(c.cc.algorithm == CcAlgorithm::dcqcn);
  CHECK(c.cc.dcqcn.g == 0.5);
  CHECK(c.cc.dcqcn.min_rate == DataRate(1'000'000'000));
  CHECK(c.cc.dcqcn.cnp_interval == 50_us);  // the paper's
  CHECK(c.cc.dcqcn.clamp_target_rate);      // the paper's: every cut
  CHECK(c.ecn.enabled);
  c = good(pair_with(w, "congestion_control: {algorithm: dcqcn, dcqcn: {clamp_target_rate: false}}\n"));
  CHECK_FALSE(c.cc.dcqcn.clamp_target_rate);
  CHECK(errors(pair_with(w, "congestion_control: {algorithm: dcqcn, dcqcn: {clamp_target_rate: 0.5}}\n")) ==
        "exp.yaml:1:67: congestion_control.dcqcn.clamp_target_rate: expected true or false, got '0.5'\n");
  // The file says otherwise: it stays off.
  c = good(pair_with(w, "ecn: {enabled: false}\ncongestion_control: {algorithm: dctcp}\n"));
  CHECK_FALSE(c.ecn.enabled);
  // Delay- and telemetry-based algorithms leave ECN alone.
  for (const char* a : {"timely", "swift", "hpcc"}) {
    c = good(pair_with(w, std::string("congestion_control: {algorithm: ") + a + "}\n"));
    CHECK_FALSE(c.ecn.enabled);
  }
  c = good(pair_with(w, "congestion_control: {algorithm: hpcc}\n"), {"congestion_control.hpcc.eta=0.9"});
  CHECK(c.cc.hpcc.eta == 0.9);
  CHECK(c.cc.hpcc.max_stage == 0);  // HPCC's simulator's MI_THRESH (run.py)
  // The hpcc_ns3 profile sets the reference's values; a key the file sets wins.
  c = good(
      pair_with(w, "congestion_control: {algorithm: dcqcn, profile: hpcc_ns3, dcqcn: {fast_recovery: 3}}\n"));
  CHECK(c.cc.dcqcn.rate_period == Time::us(300));
  CHECK(c.cc.dcqcn.decrease_period == Time::us(4));
  CHECK(c.cc.dcqcn.fast_recovery == 3);
  CHECK(c.cc.control_priority == 6);
  CHECK(c.ecn.at == EcnAt::dequeue);
  CHECK(c.ecn.rates_per == DataRate(25'000'000'000));
  CHECK(c.pfc_config.shared_buffer == Bytes(16u << 20));
  c = good(pair_with(w, "congestion_control: {algorithm: dctcp, profile: hpcc_ns3}\necn: {pmax: 0.5}\n"));
  CHECK(c.ecn.kmin == Bytes(30'000));
  CHECK(c.ecn.pmax == 0.5);
  CHECK(c.cc.control_priority == -1);
  c = good(pair_with(w, "fabric: ib\ncongestion_control: {algorithm: ib_cca, ib_cca: {threshold: 32KiB}}\n"));
  CHECK(c.cc.ib_cca.threshold == 32_KiB);
}

TEST_CASE("loader: congestion_control errors name the key and the place") {
  const std::string w = "  - {kind: rdma_write, from: a, to: b}\n";
  // The fabric says why; the registry, which fabrics run it.
  CHECK(
      errors(pair_with(w, "fabric: roce_v1\ncongestion_control: {algorithm: hpcc}\n")) ==
      "exp.yaml:2:33: congestion_control.algorithm: hpcc cannot run on fabric roce_v1: its switch telemetry "
      "rides in an IPv4 option, and RoCE v1 frames have no IP header; hpcc runs on roce_v2\n");
  CHECK(errors(pair_with(w, "fabric: iwarp\ncongestion_control: {algorithm: swift}\n")) ==
        "exp.yaml:2:33: congestion_control.algorithm: swift cannot run on fabric iwarp: iWARP runs over TCP, "
        "whose congestion control is tcp.congestion_control; swift runs on roce_v1 and roce_v2\n");
  CHECK(
      errors(pair_with("  - {kind: send, from: a, to: b}\n",
                       "fabric: tcp\ncongestion_control: {algorithm: dctcp}\n")) ==
      "exp.yaml:2:33: congestion_control.algorithm: dctcp cannot run on fabric tcp: the kernel's TCP has its "
      "own congestion control, tcp.congestion_control; dctcp runs on roce_v2\n");
  CHECK(
      errors(pair_with(w, "congestion_control: {algorithm: ib_cca}\n")) ==
      "exp.yaml:1:33: congestion_control.algorithm: ib_cca cannot run on fabric roce_v2: it is InfiniBand's "
      "(IBA annex A10): its FECN marks come from InfiniBand switches, and IP switches mark ECN instead "
      "(dcqcn, dctcp); ib_cca runs on ib\n");
  CHECK(
      errors(pair_with(w, "ip: ipv6\ncongestion_control: {algorithm: hpcc}\n")) ==
      "exp.yaml:2:33: congestion_control.algorithm: hpcc cannot run on fabric roce_v2: its switch telemetry "
      "rides in an IPv4 option: set ip: ipv4\n");
  // --fabric moves a file onto a fabric its algorithm cannot run on: the same error.
  CHECK(errors(load(pair_with(w, "congestion_control: {algorithm: dctcp}\n"), {}, "ib"))
            .find("dctcp cannot run on fabric ib") != std::string::npos);
  CHECK(errors(pair_with(w, "congestion_control: {algorithm: timely, timely: {t_low: 600us}}\n")) ==
        "exp.yaml:1:57: congestion_control.timely.t_low: t_low (600us) must be below t_high (500us)\n");
  CHECK(errors(pair_with(w, "dcqcn: {enabled: true}\n")) ==
        "exp.yaml:1:1: dcqcn: moved under congestion_control: write congestion_control: {algorithm: dcqcn, "
        "dcqcn: {...}} (without 'enabled'; docs/congestion_control.md)\n");
  CHECK(errors(pair_with(w, "link: {bandwidth: 30Gbps}\ncongestion_control: {algorithm: hpcc}\n"))
            .find("a link runs at 30Gbps") != std::string::npos);
}

// The warnings of `yaml` with its STOP replaced by `stop`, a line each.
static std::string stop_warnings(const std::string& yaml, const std::string& stop) {
  LoadResult r = load_experiment_text(std::string(yaml).replace(yaml.find("STOP"), 4, stop), "exp.yaml");
  REQUIRE(r.config);
  std::string s;
  for (const LoadError& w : r.warnings) s += w.format() + "\n";
  return s;
}

TEST_CASE("loader: a stop written without its unit is warned about, where it is written") {
  const std::string yaml = R"(topology: {hosts: [a, b], switches: [s], links: [[a, s], [b, s]]}
workloads: [{kind: send, from: a, to: b}]
stop: STOP
)";
  auto warnings = [&](const std::string& stop) { return stop_warnings(yaml, stop); };
  CHECK(warnings("500") ==
        "exp.yaml:3:7: stop: 500 has no unit, so it is 500ps (a number without a unit is picoseconds); write "
        "the unit, such as 500us\n");
  CHECK(warnings("2000000000") ==
        "exp.yaml:3:7: stop: 2000000000 has no unit, so it is 2ms (a number without a unit is picoseconds); "
        "write the unit, such as 2000000000us\n");
  // With a unit, however short: nothing to say (it said 500ns had no unit).
  for (const char* stop : {"500ns", "500ps", "1us", "1.5 us", "2ms", "1s"}) {
    INFO(stop);
    CHECK(warnings(stop).empty());
  }
}

TEST_CASE("loader: a workload that starts at or after the stop is warned about at its start") {
  const std::string yaml = R"(topology: {hosts: [a, b], switches: [s], links: [[a, s], [b, s]]}
workloads:
  - {kind: send, from: a, to: b}
  - {name: late, kind: send, from: b, to: a, start: 20us}
stop: STOP
)";
  auto warnings = [&](const std::string& stop) { return stop_warnings(yaml, stop); };
  CHECK(warnings("10us") ==
        "exp.yaml:4:53: workloads[1].start: workload 'late' starts at 20us, not before stop (10us): it will "
        "not run\n");
  CHECK(warnings("20us").find("workload 'late' starts at 20us, not before stop (20us)") != std::string::npos);
  CHECK(warnings("21us").empty());
}

TEST_CASE("loader: a second YAML document is refused where it begins") {
  // YAML::Load read the first document alone: the rest was dropped without a word.
  const std::string yaml = R"(topology: {hosts: [a, b], switches: [s], links: [[a, s], [b, s]]}
workloads: [{kind: send, from: a, to: b}]
---
fabric: ib
stop: 1us
)";
  CHECK(errors(yaml) ==
        "exp.yaml:4:1: YAML: a second document begins here, after '---'; an experiment file is one document: "
        "move its keys into the first, or remove the '---'\n");
  // A first '---', and one or a '...' with nothing after them, add no document.
  CHECK(good("---\n" + yaml.substr(0, yaml.find("---")) + "---\n").workloads.size() == 1);
  CHECK(good(yaml.substr(0, yaml.find("---")) + "...\n").workloads.size() == 1);
}
