// The experiment, as plain validated structs. experiment/loader.cpp fills
// them from YAML (docs/yaml.md is the reference of every key); the model
// reads only these structs. No yaml-cpp or Boost here: this header is
// included widely.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/units.hpp"
#include "nodes/host/host_config.hpp"
#include "topologies/storage_config.hpp"

namespace rdmasim {

// A link's properties. `mtu` is the IBA path MTU on ib, roce_v1 and roce_v2
// (256..4096) and the IP MTU on iwarp (576..9000).
struct LinkConfig {
  DataRate bandwidth{100'000'000'000};
  Time delay = Time::us(1);
  uint32_t mtu = 4096;
  Bytes buffer{1 << 20};  // egress queue limit per port
  double loss = 0;        // probability that a frame is lost on the wire
};

struct LinkSpec {
  std::string a, b;
  LinkConfig config;
  int line = 0, column = 0;  // where it was written (for a generated link: the generate key)
};

enum class GeneratorKind { none, leaf_spine, fat_tree, star };

// Nodes and links. After loading it is always filled in, generated or not.
// A node's ports are numbered in the order its links appear in `links`,
// from 0 (topologies/routing.hpp relies on that rule; so does the model).
// Port numbers are 16-bit (nodes/port.hpp): a node has at most 65,536
// links, and the generators and lists at most this many hosts.
inline constexpr size_t kMaxPortsPerNode = 65536;
inline constexpr size_t kMaxHosts = 65536;

struct TopologyConfig {
  std::vector<std::string> hosts, switches, routers;
  std::vector<LinkSpec> links;
  GeneratorKind generated = GeneratorKind::none;  // which generator made it, if any
};

// clang-format off
enum class WorkloadKind {
  send, send_imm, rdma_write, rdma_write_imm, rdma_read, atomic_cas, atomic_fadd,  // basic verbs operations
  incast, all_to_all, pingpong,                                                       // patterns, with `op`
  flows,                                                                              // flow sizes from a CDF
  write_bw, write_lat, read_bw, read_lat, send_bw, send_lat, atomic_bw, atomic_lat,  // perftest-style
  compute,                                                                            // a process computing, no I/O
  udp                                                                                 // kernel UDP datagrams (fabric: tcp)
};
// clang-format on
enum class QpType { rc, uc, ud };

// `kind: flows` (workloads/flows.hpp): flows between random pairs of hosts,
// sizes drawn from a CDF, Poisson arrivals offering `load` of each sender's
// link. A CDF is points of (size, cumulative percent), percent rising from
// 0 to 100; sizes between points are interpolated linearly.
struct CdfPoint {
  double size_bytes = 0;
  double percent = 0;
};
struct FlowsConfig {
  std::string cdf = "websearch";  // websearch, hadoop, or the file it was read from
  std::vector<CdfPoint> points;   // filled by the loader
  double load = 0.3;              // 0 < load <= 1 of each sender's host link
  Time duration;                  // arrivals in [start, start + duration)
  // The largest flow the CDF draws: its last size, rounded as a flow's is.
  uint64_t largest() const {
    if (points.empty()) return 0;
    const auto b = static_cast<uint64_t>(points.back().size_bytes + 0.5);
    return b < 1 ? 1 : b;
  }
};

// What a workload kind keeps of its own keys (workloads/workload_kind.hpp):
// a kind whose keys no other code reads derives a struct from this, and its
// reader stores one in WorkloadConfig::settings; its run reads it back with
// settings_as<T>(). The built-in kinds still use the shared fields below.
struct WorkloadSettings {
  virtual ~WorkloadSettings() = default;
};

struct WorkloadConfig {
  std::string name;  // w0, w1, ... when not given
  // `kind:` as written: the registry's name for the kind (workloads/registry.cpp).
  std::string kind_name;
  // The built-in kinds' enum (verbs operations, patterns, perftest kinds,
  // flows, compute, udp); a kind outside them leaves it as it is and is
  // known by kind_name alone.
  WorkloadKind kind = WorkloadKind::rdma_write;
  // The kind's own settings, when it keeps them apart (null for the built-in kinds).
  std::shared_ptr<const WorkloadSettings> settings;
  // The kind's settings as the type its reader stored (the kind knows it).
  template <class T>
  const T& settings_as() const {
    return static_cast<const T&>(*settings);
  }
  // Basic kinds, pingpong and perftest kinds: one host each. incast: the
  // senders in `from`, the receiver in `to`. all_to_all: its hosts in both.
  std::vector<std::string> from;
  std::vector<std::string> to;
  QpType qp = QpType::rc;
  Bytes size{4096};          // bytes per message (8 for atomics)
  uint64_t count = 1;        // messages per sender-receiver pair
  uint32_t outstanding = 1;  // work requests in flight per QP
  // One send work request in cq_moderation is signalled (and the last): the
  // others complete with it (perftest's -Q; the perftest bandwidth kinds).
  uint32_t cq_moderation = 1;
  Time start;
  // Verbs knobs, with the real verbs encodings and defaults (ibv_modify_qp):
  uint8_t timeout = 14;        // local ACK timeout, 4.096us * 2^timeout
  uint8_t retry_cnt = 7;       // transport retries
  uint8_t rnr_retry = 7;       // RNR retries, 7 = forever
  uint8_t min_rnr_timer = 12;  // IBA RNR NAK timer encoding (12 = 0.64 ms)
  bool post_recvs = true;      // false: the receiver posts no receive buffers (RNR test)
  bool bad_rkey = false;       // the sender uses a wrong rkey (remote access error test)
  // The verbs operation each message uses. Always filled after loading:
  // the kind itself for basic kinds, `op:` for patterns (default
  // rdma_write), implied by the name for perftest kinds (write_bw ->
  // rdma_write, atomic_* -> atomic_fadd unless `op: atomic_cas`).
  std::string op;
  uint32_t inline_threshold = 0;  // messages up to this size are posted inline (IBV_SEND_INLINE)
  // Atomic operands (ibv_send_wr.wr.atomic): fetch-and-add adds `compare_add`;
  // compare-and-swap compares with `compare_add` and swaps in `swap`.
  uint64_t compare_add = 1;
  uint64_t swap = 1;
  // compute: the host in `from`, CPU time needed, and the slice it runs
  // between letting other compute processes on its core have theirs.
  Time work;
  Time chunk = Time::us(10);
  FlowsConfig flows;  // kind: flows; its hosts are in `from` (and `to`)
  // payload: pattern: the buffers are computed from the payload pattern,
  // not stored (nodes/host/memory.hpp); memory: real bytes in host memory.
  // The default for flows; other kinds take it for RC WRITEs and READs.
  bool computed_payload = false;
  // udp: a traffic generator on `from` offers `rate` of `size`-byte
  // datagrams (payload) for `duration`; the program on `to` spends
  // `app_cost` of its own per datagram it receives.
  DataRate rate;
  Time duration;
  Time app_cost;
  int line = 0, column = 0;
};

struct FaultConfig {
  Time at;
  std::string a, b;  // the link's ends as written
  bool up = false;   // action: up (true) or down (false)
  size_t link = 0;   // index of the link in topology.links
  int line = 0, column = 0;
};

// programs: a real verbs program run on a host (docs/programs.md).
struct ProgramConfig {
  std::string host;
  std::string run;                // as written; {NAME} becomes host NAME's address when it starts
  std::vector<std::string> argv;  // `run` split at white space
  std::string path;               // argv[0] found on PATH
  Time start;
  Time silence = Time::s(20);  // real time a program may run without an intercepted call before it is killed
  int line = 0, column = 0;
};

enum class CaptureMode { none, hosts, all, list };
// capture.timeseries: how often, and which ports and QPs (docs/yaml.md#capture).
struct TimeSeriesConfig {
  Time interval;
  // ports: every port (all_ports), or the listed ones, a node alone meaning
  // all its ports; neither (ports: none) writes no queues.csv.
  bool all_ports = true;
  struct Port {
    std::string node;
    std::optional<uint16_t> port;  // none: every port of the node
  };
  std::vector<Port> ports;
  // qps: every workload's QPs, or those of `workloads`; neither (qps: none) writes no qps.csv.
  bool all_qps = true;
  std::vector<std::string> workloads;
};
struct CaptureConfig {
  CaptureMode mode = CaptureMode::hosts;
  std::vector<std::string> nodes;       // mode list: the nodes whose ports are captured
  bool ib_linktype_infiniband = false;  // ib: linktype 247 instead of ERF (197)
  uint32_t snaplen = 65535;
  Bytes max_bytes{uint64_t{1} << 30};  // all capture files together; the run goes on without them past it
  // cpu_trace: each host's CPU timeline of [cpu_trace_from, cpu_trace_to)
  // in trace/<host>.json (trace-event JSON) and trace/<host>.svg.
  bool cpu_trace = false;
  bool latency_samples = false;  // latency.csv: every latency sample of every workload
  Time cpu_trace_from;
  Time cpu_trace_to = Time::max();
  std::optional<TimeSeriesConfig> timeseries;  // sample queues and QP rates (timeseries/*.csv)
};

// 802.1Qbb priority flow control on Ethernet fabrics (flow_control: pfc).
struct PfcConfig {
  uint8_t priority = 3;   // the 802.1p priority RDMA traffic uses and PFC protects
  Bytes xoff{256 << 10};  // ingress bytes held for a priority at which PAUSE is sent
  Bytes xon{128 << 10};   // ... and at which it is lifted
  // A cycle of ports each paused with frames waiting this long is reported
  // as a deadlock (results.json pfc_deadlocks).
  Time deadlock_detect = Time::ms(1);
  // PFC watchdog (pfc.watchdog): a switch port's priority paused this long
  // with frames waiting is drained (its frames dropped) and PFC frames for it
  // ignored until none has come for `watchdog_restore`. Zero: no watchdog.
  Time watchdog_detect{};
  Time watchdog_restore{};  // zero: the detection time
  // A switch's buffer shared by its ports (HPCC's simulator's SwitchMmu).
  // Zero: the static per-port XOFF/XON above. Otherwise a port's priority
  // pauses upstream when the bytes it holds beyond `reserve` reach
  // (shared_buffer - headrooms - reserves - shared bytes in use) >> alpha_shift
  // (USE_DYNAMIC_PFC_THRESHOLD 1), and resumes `resume_offset` below that.
  Bytes shared_buffer{0};
  DataRate shared_buffer_per{};  // nonzero: shared_buffer per this much of the fastest host link's rate
  uint32_t alpha_shift = 3;      // 1/8; one less per doubling of a port's rate above the hosts'
  Bytes reserve{4096};           // per port and priority, not shared
  Bytes resume_offset{3072};
};

// RED-like ECN marking at switch egress (roce_v2, iwarp): no mark below
// kmin, probability rising linearly to pmax at kmax, always above kmax.
enum class EcnAt { enqueue, dequeue };
struct EcnConfig {
  bool enabled = false;
  Bytes kmin{40 << 10};
  Bytes kmax{160 << 10};
  double pmax = 0.2;
  DataRate rates_per{};       // nonzero: kmin and kmax per this much of the port's rate (KMIN_MAP, KMAX_MAP)
  EcnAt at = EcnAt::enqueue;  // when the queue is measured and the frame marked
  bool per_priority = false;  // the frame's own priority's queue, not the whole port's
};

// Congestion control at the NICs of the IBA fabrics (congestion_control:),
// one algorithm for every RC and UC QP of a run. Each algorithm's defaults
// are its paper's (docs/congestion_control.md says which, and where the
// paper leaves a value open, what was chosen).
enum class CcAlgorithm { none, dcqcn, hpcc, timely, dctcp, swift, ib_cca };

// Where the defaults come from. paper: each algorithm's paper (and the
// switch's ecn:/pfc: sections as written); hpcc_ns3: the HPCC authors'
// ns-3 simulator as its run.py runs it (docs/congestion_control.md,
// "The hpcc_ns3 profile", cites each value). A key the file sets wins
// over the profile.
enum class CcProfile { paper, hpcc_ns3 };

// DCQCN (Zhu et al., SIGCOMM 2015; the defaults are the paper's). The
// receiver of an ECN CE-marked packet sends its sender a CNP, at most one
// per QP per cnp_interval; the sender cuts its QP's rate on a CNP and
// recovers it in steps on timers and bytes sent.
struct DcqcnConfig {
  Time cnp_interval = Time::us(50);  // NP: least time between two CNPs of one QP
  double g = 1.0 / 256;              // RP: gain of the congestion estimate alpha
  Time alpha_period = Time::us(55);  // alpha decays after a period without a CNP
  Time rate_period = Time::us(55);   // rate increase timer
  // RP: CNPs within this time of the last cut are one cut, taken when it
  // has passed (HPCC's simulator's RATE_DECREASE_INTERVAL). Zero: every CNP cuts.
  Time decrease_period{};
  Bytes byte_counter{10'000'000};  // a rate increase every this many bytes sent; 0: no byte counter
  uint32_t fast_recovery = 5;      // steps that halve the gap to the target rate
  DataRate additive{40'000'000};   // target rate step in additive increase
  DataRate hyper{100'000'000};     // target rate step in hyper increase
  DataRate min_rate{10'000'000};   // the rate never falls below this
  // Nonzero: additive and hyper are per this much line rate (a NIC of
  // twice it takes twice the steps), as HPCC's simulator's run.py scales them by 25 Gb/s.
  DataRate rates_per{};
  // A cut sets the target to the current rate (the paper). false: only if a
  // timer step came since the last cut, as HPCC's simulator's CLAMP_TARGET_RATE 0.
  bool clamp_target_rate = true;
  // Hyper increase once either count (timer or bytes) is more than one
  // step past F (HPCC's simulator, whose only count is the timer's).
  // true: only once both are past F, as QCN (IEEE 802.1Qau) counts them.
  bool hyper_needs_both = false;
};

// HPCC (Li et al., SIGCOMM 2019, section 3 and Algorithm 1; defaults: its
// simulator's run.py, which the paper's evaluation ran).
struct HpccConfig {
  double eta = 0.95;                   // target utilisation (U_TARGET)
  uint32_t max_stage = 0;              // additive steps before a multiplicative update is forced (MI_THRESH)
  DataRate additive{10'000'000};       // W_AI expressed as a rate (W_AI = additive x base_rtt)
  DataRate rates_per{25'000'000'000};  // additive is per this much line rate (0: as given)
  Time base_rtt = Time::us(10);        // T: the base RTT the window is sized to (W_init = line rate x T)
  DataRate min_rate{1'000'000'000};
  // Each ACK between reference updates sets the rate from the reference
  // window too (FAST_REACT 1); false: only once an RTT.
  bool fast_react = true;
};

// TIMELY (Mittal et al., SIGCOMM 2015, Algorithm 1 and section 5).
enum class TimelyUpdate { per_min_rtt, per_rtt };
struct TimelyConfig {
  Time t_low = Time::us(50);    // below it: additive increase whatever the gradient
  Time t_high = Time::us(500);  // above it: multiplicative decrease by the RTT
  Time min_rtt = Time::us(20);  // normalises the gradient
  // alpha: weight of the newest RTT difference in the smoothed one. 0.875
  // is HPCC's simulator's (rdma-hw.cc TimelyAlpha); the paper gives no number.
  double ewma = 0.875;
  double beta = 0.8;                   // multiplicative decrease factor
  DataRate additive{10'000'000};       // delta
  DataRate hyper{50'000'000};          // the step of hyperactive increase (N delta, N = 5)
  DataRate rates_per{10'000'000'000};  // additive and hyper are per this much line rate (0: as given)
  uint32_t hai_threshold = 5;          // increases in a row before hyperactive increase
  DataRate min_rate{1'000'000'000};
  // When it updates: once per RTT (an ACK past the PSN sent at the last
  // update, HPCC's simulator), or at the first sample min_rtt after the last.
  TimelyUpdate update = TimelyUpdate::per_rtt;
  // Nonzero: the QP also keeps at most the BDP at its rate and this RTT
  // unacknowledged (run.py's timely_vwin: HAS_WIN 1, VAR_WIN 1). Zero: rate
  // only (run.py's timely). Without it an incast's first burst is all sent
  // before any RTT sample can show the queue (docs/congestion_control.md).
  Time window_rtt = Time::us(10);
  // The largest cut at once; 1: down to min_rate, as rdma-hw.cc clamps
  // 1 - beta x gradient at 0, which after a burst leaves every flow at the
  // floor, climbing back one step per packet at 1 Gb/s.
  double max_mdf = 0.5;
};

// DCTCP (Alizadeh et al., SIGCOMM 2010) for RoCE, as the DCTCP baseline of
// HPCC's simulator (rdma-hw.cc HandleAckDctcp): a paced rate, cut by
// alpha/2 at most once a window when ECN-echoed ACKs arrived (alpha, the
// EWMA of the fraction echoed, updated first), raised by rate_ai once a
// window otherwise; the window is the BDP at the current rate.
struct DctcpConfig {
  double g = 1.0 / 16;           // gain of alpha
  Time base_rtt = Time::us(10);  // the window at line rate = line rate x base_rtt
  Bytes min_window{4096};
  DataRate rate_ai{615'000'000};  // DCTCP_RATE_AI: one MTU per RTT of 13 us at MTU 1 KB
  DataRate min_rate{1'000'000'000};
};

// Swift (Kumar et al., SIGCOMM 2020, Algorithm 1): a fabric window and an
// endpoint window from delay targets; the fabric target grows with hops.
struct SwiftConfig {
  Time base_target = Time::us(25);  // fabric delay target with no hops
  Time per_hop = Time::us(1);       // h: target added per hop the ACK crossed
  Time endpoint_target = Time::us(10);
  double additive = 1.0;         // ai: packets a window per RTT below target
  double beta = 0.8;             // multiplicative decrease gain
  double max_mdf = 0.5;          // largest cut at once
  double min_window = 0.01;      // packets; below one packet the QP is paced
  Time base_rtt = Time::us(10);  // initial window = line rate x base_rtt
  uint32_t retx_reset = 5;       // RETX_RESET_THRESHOLD: timeouts in a row that reset cwnd to min_window
};

// InfiniBand congestion control (IBA annex A10): switches mark FECN when a
// port's queue is above `threshold`; the destination returns BECN; the
// source raises its CCT index on a BECN and a timer lowers it; the index
// picks an inter-packet delay from the congestion control table.
struct IbCcaConfig {
  Bytes threshold{64 << 10};  // switch: queue depth above which FECN is set (marking rate: every packet)
  uint32_t increase = 1;      // CCTI_Increase: index steps per BECN
  Time timer = Time::us(10);  // CCTI_Timer: one step down each
  uint32_t limit = 127;       // CCTI_Limit: the table's last index
  uint32_t min = 0;           // CCTI_Min
  Time delay_step = Time::ns(100);  // the table: index i delays each packet by i x delay_step
};

struct CcConfig {
  CcAlgorithm algorithm = CcAlgorithm::none;
  CcProfile profile = CcProfile::paper;
  // RoCE: the 802.1p priority (and DSCP 8 x it) of ACKs, NAKs and CNPs,
  // served before data at every port (strict priority, as HPCC's
  // simulator's ACK_HIGH_PRIO); -1: they share the data's queue.
  int control_priority = -1;
  DcqcnConfig dcqcn;
  HpccConfig hpcc;
  TimelyConfig timely;
  DctcpConfig dctcp;
  SwiftConfig swift;
  IbCcaConfig ib_cca;
};

// Loss recovery of RC QPs on the IBA fabrics: go-back-N (IBA 9.7.6.1), or
// IRN (Mittal et al., "Revisiting Network Support for RDMA", SIGCOMM 2018):
// selective retransmission from SACK-carrying NACKs, out-of-order placement
// at the receiver, and at most a BDP of packets in flight (BDP-FC), so that
// RoCE v2 needs no PFC. docs/reliability.md#irn-loss-recovery.
enum class LossRecovery { go_back_n, irn };
struct IrnConfig {
  Time rto_low = Time::us(100);   // RTO_low: with rto_low_packets or fewer in flight (section 3.1)
  Time rto_high = Time::us(320);  // RTO_high: otherwise
  uint32_t rto_low_packets = 3;   // N
  Time base_rtt = Time::us(10);   // BDP-FC's cap: line rate x base_rtt, in MTU packets
  uint32_t bdp_packets = 0;       // the cap in packets; 0: from base_rtt
};

enum class IpVersion { ipv4, ipv6 };
enum class SwitchMode { cut_through, store_and_forward };
struct SwitchConfig {
  Time latency = Time::ns(300);  // forwarding decision to start of transmission
  SwitchMode mode = SwitchMode::cut_through;
};

enum class IbRouting { min_hop, updown };
struct IbConfig {
  IbRouting routing = IbRouting::min_hop;
  uint8_t vls = 2;                 // data VLs per port: 1, 2, 4, 8 or 15
  uint8_t sl = 0;                  // service level of every QP
  std::vector<std::string> roots;  // updown: root switches; empty = those farthest from hosts
};

enum class CongestionControl { newreno, cubic, dctcp };
struct TcpConfig {
  CongestionControl congestion_control = CongestionControl::newreno;
  Time delayed_ack = Time::us(40);  // 0: acknowledge every segment at once
  Time min_rto = Time::us(200);
  uint32_t initial_cwnd = 10;    // segments (RFC 6928)
  uint16_t listen_port = 18515;  // iwarp: the passive end's port (perftest's default)
};

// 802.1Q tag on roce_v1 frames. Every host is in VLAN `id` unless `hosts`
// puts it in another; each VLAN is a broadcast domain of its own.
struct VlanConfig {
  uint16_t id = 100;
  uint8_t pcp = 3;
  std::map<std::string, uint16_t> hosts;  // host -> VLAN, for hosts not in `id`
  uint16_t of(const std::string& host) const {
    auto it = hosts.find(host);
    return it == hosts.end() ? id : it->second;
  }
};

// cost: and --prices FILE (docs/cost.md): changes to the price catalogue,
// applied in order (a --prices file's, then the experiment's). cost/ checks
// the item names against the catalogue.
struct CostSetting {
  std::string key;  // currency, energy_price, pue, years, cpu_core_hour, ethernet_switches, prices.ITEM,
                    // watts.ITEM
  double amount = 0;
  std::string text;  // currency, ethernet_switches
  // Where it was written, for errors: "file:line:column: path: ...note".
  std::string file, path, note;
  int line = 0, column = 0;
};

// Settings only one fabric reads, kept in its folder: the fabric's struct
// derives from this, its section (fabrics/fabric.hpp) stores it in
// ExperimentConfig::fabric_settings under the section's key, and its code
// reads it back with ExperimentConfig::settings<T>(key).
struct FabricSettings {
  virtual ~FabricSettings() = default;
};

struct ExperimentConfig {
  std::string name;  // the file's stem when not given
  std::filesystem::path file;
  std::string fabric = "roce_v2";  // a name in fabrics/registry.cpp
  uint64_t seed = 1;
  std::optional<Time> stop;
  LinkConfig link;   // the defaults every link started from
  bool pfc = false;  // flow_control: pfc (Ethernet fabrics; ib is always credit-based)
  PfcConfig pfc_config;
  EcnConfig ecn;
  CcConfig cc;
  LossRecovery loss_recovery = LossRecovery::go_back_n;
  IrnConfig irn;
  IpVersion ip = IpVersion::ipv4;
  SwitchConfig switch_config;
  IbConfig ib;
  TcpConfig tcp;
  HostConfig host;
  std::optional<VlanConfig> vlan;  // absent: untagged frames
  TopologyConfig topology;
  std::vector<WorkloadConfig> workloads;
  std::vector<FaultConfig> faults;
  std::vector<ProgramConfig> programs;
  CaptureConfig capture;
  std::vector<CostSetting> cost;
  StorageConfig storage;  // `storage:` (docs/storage.md)
  // By section key; a section not written has none (its defaults apply).
  std::map<std::string, std::shared_ptr<const FabricSettings>, std::less<>> fabric_settings;

  // The settings under `key`, or T's defaults.
  template <class T>
  const T& settings(std::string_view key) const {
    static const T defaults{};
    auto it = fabric_settings.find(key);
    if (it == fabric_settings.end()) return defaults;
    return dynamic_cast<const T&>(*it->second);
  }
};

// Names of enum values, as written in YAML and printed in results.
template <class E>
struct EnumNames;
#define RDMASIM_ENUM_NAMES(E, last, ...)                       \
  template <>                                                  \
  struct EnumNames<E> {                                        \
    static constexpr std::string_view names[] = {__VA_ARGS__}; \
  };                                                           \
  static_assert(std::size(EnumNames<E>::names) == static_cast<size_t>(E::last) + 1)
RDMASIM_ENUM_NAMES(WorkloadKind, udp, "send", "send_imm", "rdma_write", "rdma_write_imm", "rdma_read",
                   "atomic_cas", "atomic_fadd", "incast", "all_to_all", "pingpong", "flows", "write_bw",
                   "write_lat", "read_bw", "read_lat", "send_bw", "send_lat", "atomic_bw", "atomic_lat",
                   "compute", "udp");
RDMASIM_ENUM_NAMES(NvmeRw, readwrite, "read", "write", "randread", "randwrite", "randrw", "readwrite");
RDMASIM_ENUM_NAMES(TargetCpu, interrupt, "poll", "interrupt");
RDMASIM_ENUM_NAMES(QpType, ud, "rc", "uc", "ud");
RDMASIM_ENUM_NAMES(CaptureMode, list, "none", "hosts", "all", "list");
RDMASIM_ENUM_NAMES(GeneratorKind, star, "none", "leaf_spine", "fat_tree", "star");
RDMASIM_ENUM_NAMES(LossRecovery, irn, "go_back_n", "irn");
RDMASIM_ENUM_NAMES(IpVersion, ipv6, "ipv4", "ipv6");
RDMASIM_ENUM_NAMES(SwitchMode, store_and_forward, "cut_through", "store_and_forward");
RDMASIM_ENUM_NAMES(IbRouting, updown, "min_hop", "updown");
RDMASIM_ENUM_NAMES(CongestionControl, dctcp, "newreno", "cubic", "dctcp");
RDMASIM_ENUM_NAMES(CcAlgorithm, ib_cca, "none", "dcqcn", "hpcc", "timely", "dctcp", "swift", "ib_cca");
RDMASIM_ENUM_NAMES(CcProfile, hpcc_ns3, "paper", "hpcc_ns3");
RDMASIM_ENUM_NAMES(EcnAt, dequeue, "enqueue", "dequeue");
RDMASIM_ENUM_NAMES(TimelyUpdate, per_rtt, "per_min_rtt", "per_rtt");
RDMASIM_ENUM_NAMES(Completion, napi, "polling", "interrupt", "hybrid", "napi");
RDMASIM_ENUM_NAMES(NetStack, dpdk, "kernel", "dpdk");
RDMASIM_ENUM_NAMES(Doorbell, pio, "dma", "pio");
#undef RDMASIM_ENUM_NAMES

template <class E>
concept NamedEnum = std::is_enum_v<E> && requires {
  EnumNames<E>::names;
};

template <NamedEnum E>
constexpr std::string_view to_string(E e) {
  return EnumNames<E>::names[static_cast<size_t>(e)];
}
template <NamedEnum E>
constexpr std::optional<E> from_string(std::string_view s) {
  for (size_t i = 0; i < std::size(EnumNames<E>::names); ++i)
    if (EnumNames<E>::names[i] == s) return static_cast<E>(i);
  return std::nullopt;
}

// Kinds of workload.
constexpr bool is_basic(WorkloadKind k) { return k <= WorkloadKind::atomic_fadd; }
constexpr bool is_pattern(WorkloadKind k) {
  return k == WorkloadKind::incast || k == WorkloadKind::all_to_all || k == WorkloadKind::pingpong;
}
constexpr bool is_perftest(WorkloadKind k) {
  return k >= WorkloadKind::write_bw && k <= WorkloadKind::atomic_lat;
}
constexpr bool is_atomic(WorkloadKind k) {
  return k == WorkloadKind::atomic_cas || k == WorkloadKind::atomic_fadd;
}
constexpr bool has_immediate(WorkloadKind k) {
  return k == WorkloadKind::send_imm || k == WorkloadKind::rdma_write_imm;
}
// The basic operation of a loaded workload (parses `op`).
inline WorkloadKind basic_op(const WorkloadConfig& w) {
  return from_string<WorkloadKind>(w.op).value_or(w.kind);
}

// The MTUs an IBA path may have, and the iWARP IP MTU range.
constexpr bool is_iba_mtu(uint32_t mtu) {
  return mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 || mtu == 4096;
}
constexpr uint32_t kMinIpMtu = 576, kMaxIpMtu = 9000;

// The MTU of every path: the smallest of the links' (and of `link:`).
inline uint32_t path_mtu(const ExperimentConfig& x) {
  uint32_t mtu = x.link.mtu;
  for (const LinkSpec& l : x.topology.links) mtu = l.config.mtu < mtu ? l.config.mtu : mtu;
  return mtu;
}

}  // namespace rdmasim
