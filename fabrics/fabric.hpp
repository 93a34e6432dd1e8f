// A fabric, as the rest of rdmasim sees it: the one interface the loader,
// the runner and the cost model ask about a kind of network. Each fabric
// folder (fabrics/ib, roce_v1, roce_v2, iwarp) implements it and the
// registry (fabrics/registry.cpp) lists them; nothing above fabrics/ names
// a fabric. docs/architecture.md says how to add one.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/packet.hpp"
#include "fabrics/ethernet/wire/ethernet.hpp"
#include "pcap/pcap_writer.hpp"
#include "topologies/config.hpp"

namespace rdmasim {

class Host;
struct Network;
struct ExperimentDraft;  // topologies/experiment_draft.hpp
struct Entry;            // topologies/yaml_reader.hpp
class Paths;             // topologies/reachability.hpp
class KeyTableBase;      // topologies/key_table.hpp

// What a built fabric is to a run: how a capture shows its frames and how a
// program addresses a peer. The fabric's builder returns it.
struct BuiltFabric {
  Linktype linktype = Linktype::Ethernet;
  std::function<void(Packet&)> sealer;  // fills CRCs of a frame a capture observes
  // The sealer reads state only the sender's side holds (iWARP's MPA stream
  // descriptions): a run split over ranks seals a frame before it crosses.
  bool seal_before_crossing = false;
  std::function<ibv_ah_attr(Host& from, Host& to)> address;  // the address vector a QP to `to` uses
  uint32_t mtu = 4096;                                       // the path MTU the QPs use
};

// One top-level section of an experiment file that a fabric reads (`ib:`,
// `vlan:`), made fresh for every file, so it may keep what its validate
// step needs. Every fabric's sections are read whatever the file's fabric
// (--fabric may run a file on another), in the registry's order.
class Section {
 public:
  virtual ~Section() = default;
  virtual void read(ExperimentDraft& d, const Entry& e) = 0;
  // Once every section is read and the topology is known (d.graph).
  virtual void validate(ExperimentDraft&) {}
};
// How the experiment's top-level table shows a section (docs/yaml.md), and
// the table of its keys when it is a map (topologies/key_table.hpp).
struct SectionDoc {
  std::string_view type, fallback, help;
  const KeyTableBase* keys = nullptr;
};
struct SectionType {
  std::string_view key;
  std::unique_ptr<Section> (*make)();
  SectionDoc doc;
};
// A section that keeps nothing: a reader function.
template <void (*Read)(ExperimentDraft&, const Entry&)>
SectionType plain_section(std::string_view key, SectionDoc doc) {
  struct S final : Section {
    void read(ExperimentDraft& d, const Entry& e) override { Read(d, e); }
  };
  return {key, []() -> std::unique_ptr<Section> { return std::make_unique<S>(); }, doc};
}

// Where a workload was written, for errors about it.
struct WorkloadSites {
  const Entry& kind;  // its kind:
  const Entry& op;    // op: when written, else kind:
  const Entry& qp;    // qp: when written, else kind:
  const Entry* size;  // size: (flows: cdf:), if written
};

// The price catalogue's families of this fabric's hardware (docs/cost.md).
struct CostFamilies {
  std::string_view adapter;   // ib, roce, iwarp
  std::string_view switches;  // ib; ethernet: the Ethernet switch family the price book names
                              // (cost.ethernet_switches), the same box for every Ethernet fabric
  std::string_view cable;     // ib, ethernet
};

class Fabric {
 public:
  virtual ~Fabric() = default;
  // As `fabric:` and results.json name it.
  virtual std::string_view name() const = 0;
  // What a host's NIC offers the programs above it: RDMA verbs (QPs,
  // memory registration), or a network stack's sockets (TCP, UDP), which
  // host.stack: dpdk may run in user space instead of the kernel. The
  // built NIC answers the same (NicFabric::sockets()).
  struct HostNic {
    bool verbs = true;
    bool sockets = false;
    bool dpdk = false;
  };
  virtual HostNic host_nic() const { return {}; }
  // `compare` runs these unless told: the RDMA fabrics (the kernel TCP
  // baseline is asked for by name).
  virtual bool compared_by_default() const { return host_nic().verbs; }
  // Further columns `rdmasim compare` can run this fabric as: a name and the
  // one KEY=VALUE override that makes it (tcp: `dpdk`, its user-space stack).
  struct Variant {
    std::string_view name;
    std::string_view set;
  };
  virtual std::vector<Variant> variants() const { return {}; }

  // ---- reading an experiment (experiment/ calls these) ----

  // The sections this fabric reads; fabrics that share one (`pfc:`) list
  // the same SectionType, and it is read once.
  virtual std::vector<SectionType> sections() const { return {}; }
  // Why a link cannot have this MTU on this fabric, or "" when it can.
  virtual std::string mtu_error(uint32_t mtu) const = 0;
  // Why the topology's routers are refused, or "" when they are not.
  virtual std::string_view routers_error() const { return {}; }
  // Errors about what a workload asks of the transport (its QP type,
  // operation, message size). True when it checked the message size; the
  // loader checks the transport-wide 2 GiB limit otherwise.
  virtual bool check_workload(ExperimentDraft& d, const WorkloadConfig& w, const WorkloadSites& at) const = 0;
  // Reachability between a workload's hosts beyond a path through switches
  // and routers. `scope_error`: for the workload as a whole (names), "" if
  // none. `reaches_all`: the common case, every host of `from` and `to` in
  // one network. `pair_error`: for a pair that has a path, "" if none.
  virtual std::string scope_error(const ExperimentConfig&, const WorkloadConfig&) const { return {}; }
  virtual bool reaches_all(const ExperimentConfig&, Paths& paths, const std::vector<int>& from,
                           const std::vector<int>& to) const;
  virtual std::string pair_error(const ExperimentConfig&, Paths&, int a, int b) const {
    (void)a, (void)b;
    return {};
  }
  // Why its NICs cannot run congestion control `a` (`congestion_control:`),
  // or "" when they can: what the algorithm reacts to must exist on this
  // fabric's wire. Said of this fabric alone (the validate pass adds which
  // fabrics do run it, from the registry); a fabric with a congestion
  // control of its own says where that is set. What depends on more than
  // the algorithm (IP version, link rates) is the fabric's `validate`.
  virtual std::string cc_error(CcAlgorithm a) const = 0;
  // Why its RC transport cannot run loss recovery `r` (`loss_recovery:`),
  // or "": go-back-N everywhere; IRN where its extension header has a place.
  virtual std::string recovery_error(LossRecovery r) const = 0;
  // A SEND that finds no receive buffer is answered with an RNR NAK and
  // retried (IBA 9.7.5.2.8), forever at rnr_retry 7.
  virtual bool rnr_naks() const { return true; }
  // The validate pass's checks for a file of this fabric.
  virtual void validate(ExperimentDraft&) const {}
  // How a program learns that work arrived (host.completion): RDMA
  // programs wait on a CQ by polling, interrupt or hybrid, polling unless
  // told; `completion_error` says why a mode is refused, or "".
  virtual Completion default_completion() const { return Completion::polling; }
  virtual std::string completion_error(Completion m) const;

  // ---- building a network (build_network in fabrics/network.hpp) ----

  // Bytes each frame takes on the wire beyond what a capture shows.
  virtual uint32_t wire_overhead() const { return kEthernetWireOverhead; }
  // The shortest frame its links carry, as captured: the ports pad a
  // shorter one with zeros (LinkParams::min_frame); 0 for none.
  virtual uint32_t min_frame() const { return kEthernetMinFrame; }
  // The headers and CRCs of the fabric's leanest data frame (a middle
  // packet: no RETH, no VLAN tag, no TCP options), without the link's own
  // per-frame overhead (wire_overhead); kind: flows' ideal FCT counts them.
  virtual uint32_t data_frame_headers(const ExperimentConfig& x) const = 0;
  // Every non-host node in net.nodes (the hosts exist already).
  virtual void create_nodes(Network& net) const = 0;
  // After the links are wired: hosts' NIC encapsulation and addresses,
  // switches' forwarding state. `mtu` of the result is the runner's.
  virtual BuiltFabric finish(Network& net) const = 0;
  // The path MTU is an IBA MTU, set as every NIC's active MTU (not on iwarp,
  // whose links give TCP an IP MTU).
  virtual bool iba_mtu() const { return true; }

  // What a run of this fabric needs beyond the parts every fabric has
  // (experiment/memory_estimate.cpp); measured, as those are, by
  // bench/memory.py.
  struct MemoryCosts {
    uint64_t host_bytes = 0;           // each host
    uint64_t connection_bytes = 0;     // each end of a connection, beyond its QP
    std::string_view connection_part;  // what those are, as the estimate names them
    bool setup_floods = false;         // each connection floods a frame to every host at setup
    // A byte stream (iwarp's TCP) keeps what a connection has sent until it
    // is acknowledged, in a send buffer that doubles as it fills, up to this
    // many bytes a connection; 0: no such buffer.
    uint64_t stream_buffer_limit = 0;
    // Frames a sending host keeps in the network (0: the estimate's own
    // figure, measured on RoCE v2 with DCQCN; a TCP window holds more).
    uint64_t in_flight_bytes = 0;
    // Each (switch, addressed node): IB's linear forwarding tables, an
    // entry a destination LID at every switch.
    uint64_t forwarding_entry_bytes = 0;
  };
  virtual MemoryCosts memory_costs() const { return {}; }

  // ---- cost (cost/ calls this) ----
  virtual CostFamilies cost_families() const = 0;

  static constexpr uint32_t kEthernetWireOverhead = 24;  // preamble and SFD 8, FCS 4, inter-frame gap 12
  static constexpr uint32_t kEthernetMinFrame = EthernetView::kMinFrameLen;
  // Header sizes for data_frame_headers.
  static constexpr uint32_t kEthernetHeader = 14, kGrh = 40, kUdpHeader = 8, kTcpHeader = 20, kBth = 12,
                            kIcrc = 4;
  static uint32_t ip_header(const ExperimentConfig& x) { return x.ip == IpVersion::ipv6 ? 40 : 20; }
};

}  // namespace rdmasim
