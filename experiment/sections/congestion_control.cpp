// `congestion_control:`, the algorithm at the IBA fabrics' NICs and each
// algorithm's parameters. Every sub-map is read and checked whichever
// algorithm is chosen, so that --set congestion_control.algorithm=X can
// switch between them; which fabric can run which is the validate pass's.
#include "experiment/sections/sections.hpp"
#include "topologies/cc_algorithms.hpp"

namespace rdmasim {

namespace {

// `profile: hpcc_ns3`: HPCC's simulator as its run.py runs it, for the
// algorithm chosen (docs/congestion_control.md cites each value). Keys the
// file sets are read after this, so they win.
void apply_hpcc_ns3(ExperimentDraft& d) {
  CcConfig& cc = d.x.cc;
  // run.py: `dcqcn` (mode 1), not `dcqcn_paper`.
  DcqcnConfig& dc = cc.dcqcn;
  dc.alpha_period = Time::us(1);      // ALPHA_RESUME_INTERVAL 1
  dc.decrease_period = Time::us(4);   // RATE_DECREASE_INTERVAL 4
  dc.rate_period = Time::us(300);     // RP_TIMER 300
  dc.g = 1.0 / 256;                   // EWMA_GAIN 0.00390625
  dc.fast_recovery = 1;               // FAST_RECOVERY_TIMES 1
  dc.additive = DataRate(5'000'000);  // RATE_AI 5 Mb/s x bw / 25
  dc.hyper = DataRate(50'000'000);    // RATE_HAI 50 Mb/s x bw / 25
  dc.rates_per = DataRate(25'000'000'000);
  dc.min_rate = DataRate(1'000'000'000);  // MIN_RATE 1000Mb/s
  dc.clamp_target_rate = false;           // CLAMP_TARGET_RATE 0
  dc.byte_counter = Bytes(0);             // rdma-hw.cc has no byte counter
  dc.hyper_needs_both = false;
  // The simulator marks the ACK of every CE packet and cuts at most once a
  // RATE_DECREASE_INTERVAL: one CNP per QP per 4 us carries the same.
  dc.cnp_interval = Time::us(4);
  // HPCC, TIMELY, DCTCP: the defaults are run.py's already (config.hpp).
  cc.hpcc = HpccConfig{};
  cc.timely = TimelyConfig{};
  cc.timely.window_rtt = Time{};  // run.py's timely: HAS_WIN 0
  cc.timely.max_mdf = 1.0;        // rdma-hw.cc: c clamped at 0
  cc.dctcp = DctcpConfig{};
  // run.py's ACK_HIGH_PRIO, and its switch (third.cc, switch-mmu.cc): ECN
  // at dequeue per priority on KMIN_MAP/KMAX_MAP/PMAX_MAP, per algorithm.
  const CcAlgorithmFacts& ref = cc_facts(cc.algorithm);
  cc.control_priority = ref.reference_ack_high_priority ? 6 : -1;
  EcnConfig& e = d.x.ecn;
  e.at = EcnAt::dequeue;
  e.per_priority = true;
  e.kmin = ref.reference_kmin;
  e.kmax = ref.reference_kmax;
  e.pmax = ref.reference_pmax;
  e.rates_per = ref.reference_rates_per;
  // BUFFER_SIZE 16 MB per 50 Gb/s of the NICs' rate; USE_DYNAMIC_PFC_THRESHOLD 1.
  PfcConfig& p = d.x.pfc_config;
  p.shared_buffer = Bytes(16u << 20);
  p.shared_buffer_per = DataRate(50'000'000'000);
  p.alpha_shift = 3;
  p.reserve = Bytes(4096);
  p.resume_offset = Bytes(3072);
}

using namespace keys;

// mlx5 sets DCQCN's timers in whole microseconds (rpg_time_reset, the alpha update period).
ValueType<Time> dcqcn_timer() { return time_from(kShortestTimer, "a NIC's DCQCN timer"); }

const KeyTable<DcqcnConfig>& dcqcn_keys() {
  using C = DcqcnConfig;
  static const KeyTable<C> t{
      "congestion_control.dcqcn",
      "DCQCN settings",
      {
          key("cnp_interval", &C::cnp_interval, time(), "50us", "least time between two CNPs to one QP"),
          key("g", &C::g, number(0, 1, true), "0.00390625", "gain of the congestion estimate alpha (1/256)"),
          key("alpha_period", &C::alpha_period, dcqcn_timer(), "55us",
              "alpha decays by (1 − g) after each period without a CNP"),
          key("rate_period", &C::rate_period, dcqcn_timer(), "55us", "a rate-increase step every period"),
          key("decrease_period", &C::decrease_period, time(), "0s",
              "CNPs within this time of the last cut are one cut, taken when it passes"),
          key("byte_counter", &C::byte_counter, size(false), "10000000B",
              "a rate-increase step every this many bytes sent (10 MB); `0`: none"),
          key("fast_recovery", &C::fast_recovery, whole(0, 1000, "steps"), "5",
              "steps that halve the gap to the target rate before it rises"),
          key("additive", &C::additive, rate(), "40Mbps", "target increase per step (additive increase)"),
          key("hyper", &C::hyper, rate(), "100Mbps", "target increase per step in hyper increase"),
          key("min_rate", &C::min_rate, rate(), "10Mbps", "the rate never falls below this"),
          key("rates_per", &C::rates_per, rate_or_zero(), "0",
              "nonzero: `additive` and `hyper` per this much line rate"),
          key("clamp_target_rate", &C::clamp_target_rate, boolean(), "true",
              "a cut sets the target rate to the current rate (the paper); `false`: only if a timer step "
              "came "
              "since the last cut, as HPCC's simulator's `CLAMP_TARGET_RATE 0` (docs/congestion_control.md)"),
          key("hyper_needs_both", &C::hyper_needs_both, boolean(), "false",
              "hyper increase only once both counts are past F (QCN) instead of either"),
      }};
  return t;
}

const KeyTable<HpccConfig>& hpcc_keys() {
  using C = HpccConfig;
  static const KeyTable<C> t{
      "congestion_control.hpcc",
      "HPCC settings",
      {
          key("eta", &C::eta, number(0, 1, true), "0.95", "target utilisation η"),
          key("max_stage", &C::max_stage, whole(0, 1000, "steps"), "0",
              "additive steps before a multiplicative update is forced (MI_THRESH)"),
          key("additive", &C::additive, rate(), "10Mbps",
              "W_AI as a rate: the window grows by `additive` × `base_rtt` a step"),
          key("rates_per", &C::rates_per, rate_or_zero(), "25Gbps", "`additive` per this much line rate"),
          key("base_rtt", &C::base_rtt, positive_time(), "10us",
              "T: the window is rate × T, initially line rate × T"),
          key("min_rate", &C::min_rate, rate(), "1Gbps", "the rate (and window) never falls below this"),
          key("fast_react", &C::fast_react, boolean(), "true",
              "ACKs between reference updates set the rate too"),
      }};
  return t;
}

const KeyTable<TimelyConfig>& timely_keys() {
  using C = TimelyConfig;
  static const KeyTable<C> t{
      "congestion_control.timely",
      "TIMELY settings",
      {
          key("t_low", &C::t_low, time(), "50us",
              "below it: + `additive` whatever the gradient; below `t_high`"),
          key("t_high", &C::t_high, positive_time(), "500us", "above it: × (1 − β (1 − t_high / rtt))"),
          key("min_rtt", &C::min_rtt, positive_time(), "20us",
              "normalises the RTT gradient; also the least time between two updates"),
          key("ewma", &C::ewma, number(0, 1, true), "0.875", "weight of the newest RTT difference (α)"),
          key("beta", &C::beta, number(0, 1, true), "0.8", "multiplicative decrease factor β"),
          key("additive", &C::additive, rate(), "10Mbps", "δ, the additive step"),
          key("hyper", &C::hyper, rate(), "50Mbps", "the hyperactive step"),
          key("rates_per", &C::rates_per, rate_or_zero(), "10Gbps",
              "`additive` and `hyper` per this much line rate"),
          key("hai_threshold", &C::hai_threshold, whole(1, 1000, "increases"), "5",
              "increases in a row before each step is `hyper`"),
          key("min_rate", &C::min_rate, rate(), "1Gbps", "the rate never falls below this"),
          key("update", &C::update, choice<TimelyUpdate>("TIMELY update schedule"), "per_rtt",
              "once an RTT, or the first sample `min_rtt` after the last update"),
          key("window_rtt", &C::window_rtt, time(), "10us",
              "nonzero: at most rate × this unacknowledged; `0s`: rate only"),
          key("max_mdf", &C::max_mdf, number(0, 1, true), "0.5",
              "the largest cut at once (`1`: down to `min_rate`)"),
      }};
  return t;
}

const KeyTable<DctcpConfig>& dctcp_keys() {
  using C = DctcpConfig;
  static const KeyTable<C> t{
      "congestion_control.dctcp",
      "DCTCP settings",
      {
          key("g", &C::g, number(0, 1, true), "0.0625", "gain of α (1/16)"),
          key("base_rtt", &C::base_rtt, positive_time(), "10us", "the window is rate × base_rtt"),
          key("min_window", &C::min_window, size(), "4096B", "the window never falls below this"),
          key("rate_ai", &C::rate_ai, rate(), "615Mbps", "rate increase a window without a cut"),
          key("min_rate", &C::min_rate, rate(), "1Gbps", "the rate never falls below this"),
      }};
  return t;
}

const KeyTable<SwiftConfig>& swift_keys() {
  using C = SwiftConfig;
  static const KeyTable<C> t{
      "congestion_control.swift",
      "Swift settings",
      {
          key("base_target", &C::base_target, positive_time(), "25us", "fabric delay target with no hops"),
          key("per_hop", &C::per_hop, time(), "1us",
              "added to the fabric target per switch the ACK crossed (from its TTL)"),
          key("endpoint_target", &C::endpoint_target, positive_time(), "10us", "endpoint delay target"),
          key("additive", &C::additive, number(0, 1000, true), "1",
              "ai: packets added a window per RTT below target"),
          key("beta", &C::beta, number(0, 1, true), "0.8", "multiplicative decrease gain"),
          key("max_mdf", &C::max_mdf, number(0, 1, true), "0.5", "the largest cut at once"),
          key("min_window", &C::min_window, number(0, 1000, true), "0.01",
              "packets; below one packet the QP is paced"),
          key("base_rtt", &C::base_rtt, positive_time(), "10us",
              "the window starts at (and never exceeds) line rate × base_rtt"),
          key("retx_reset", &C::retx_reset, whole(1, 1000, "timeouts"), "5",
              "retransmission timeouts in a row that reset the windows to `min_window`"),
      }};
  return t;
}

const KeyTable<IbCcaConfig>& ib_cca_keys() {
  using C = IbCcaConfig;
  // A10.2.2: the congestion control table has at most 128 entries (index 0..127).
  static const KeyTable<C> t{
      "congestion_control.ib_cca",
      "IB congestion control settings",
      {
          key("threshold", &C::threshold, size(), "64KiB",
              "a switch sets FECN on packets leaving a port with more queued than this"),
          key("increase", &C::increase, whole(1, 127), "1", "CCTI_Increase: index steps per BECN"),
          // IBA annex A10: CCTI_Timer counts units of 1.024 us.
          key("timer", &C::timer,
              time_from(Time::ns(1024), "CCTI_Timer counts 1.024 us units, IBA annex A10"), "10us",
              "CCTI_Timer: the index falls by one each"),
          key("limit", &C::limit, whole(0, 127), "127", "CCTI_Limit: the table's last index"),
          key("min", &C::min, whole(0, 127), "0", "CCTI_Min; at most `limit`"),
          key("delay_step", &C::delay_step, positive_time(), "100ns",
              "table entry i delays each packet by i × delay_step"),
      }};
  return t;
}

// `control_priority`: 0..7, or none (-1).
ValueType<int> priority_or_none() {
  return {"0..7 or `none`", "", "", [](YamlReader& c, const Entry& v) -> std::optional<int> {
            if (v.value.IsScalar() && v.value.Scalar() == "none") return -1;
            auto n = c.whole(v, 0, 7);
            return n ? std::optional<int>(static_cast<int>(*n)) : std::nullopt;
          }};
}

}  // namespace

const KeyTable<CcConfig>& cc_keys() {
  using C = CcConfig;
  static const KeyTable<C> t{
      "congestion_control",
      "congestion control settings",
      {
          key("algorithm", &C::algorithm, choice<CcAlgorithm>("congestion control algorithm"), "none",
              "the algorithm. `dcqcn`, `dctcp`: `roce_v2` (ECN in the IP header); `hpcc`: `roce_v2` over "
              "`ip: "
              "ipv4`, links at a rate of the telemetry's table; `timely`, `swift`: `roce_v1`, `roce_v2`; "
              "`ib_cca`: `ib`. Another fabric is an error, which says why and which fabrics run it. `iwarp` "
              "and "
              "`tcp` have TCP's (`tcp.congestion_control`)"),
          key("profile", &C::profile, choice<CcProfile>("congestion control profile"), "paper",
              "`hpcc_ns3`: every algorithm's parameters, the switch buffer, PFC, ECN and ACK priority as "
              "HPCC's "
              "simulator's run.py sets them; keys the file sets win "
              "([congestion_control.md](congestion_control.md#the-hpcc_ns3-profile))"),
          key("control_priority", &C::control_priority, priority_or_none(), "none",
              "`roce_v2`: ACKs, NAKs and CNPs in this priority (DSCP 8p + 2), served first at every port"),
          map_key("dcqcn", &C::dcqcn, dcqcn_keys(), "DCQCN's parameters"),
          map_key("hpcc", &C::hpcc, hpcc_keys(), "HPCC's parameters"),
          map_key("timely", &C::timely, timely_keys(), "TIMELY's parameters",
                  [](YamlReader& c, const KeyFields& f, const TimelyConfig& t) {
                    if (t.t_low >= t.t_high)
                      order_error(c, f, "t_low", to_string(t.t_low), "t_high", to_string(t.t_high), true);
                  }),
          map_key("dctcp", &C::dctcp, dctcp_keys(), "DCTCP's parameters"),
          map_key("swift", &C::swift, swift_keys(), "Swift's parameters"),
          map_key("ib_cca", &C::ib_cca, ib_cca_keys(), "IB CCA's parameters",
                  [](YamlReader& c, const KeyFields& f, const IbCcaConfig& b) {
                    if (b.min > b.limit)
                      order_error(c, f, "min", std::to_string(b.min), "limit", std::to_string(b.limit),
                                  false);
                  }),
      }};
  return t;
}

void read_congestion_control(ExperimentDraft& d, const Entry& e) {
  // `profile: hpcc_ns3` sets the defaults the file's keys then override.
  if (e.value.IsMap() && e.value["profile"] && e.value["profile"].IsScalar() &&
      from_string<CcProfile>(e.value["profile"].Scalar()) == CcProfile::hpcc_ns3) {
    const YAML::Node a = e.value["algorithm"];
    if (auto alg = a && a.IsScalar() ? from_string<CcAlgorithm>(a.Scalar()) : std::nullopt)
      d.x.cc.algorithm = *alg;
    apply_hpcc_ns3(d);
  }
  const auto f = cc_keys().read(d.c, e.value, e.path, d.x.cc);
  if (!f) return;
  if (const Entry* a = f->find("algorithm")) d.cc_algorithm = *a;
  if (const Entry* a = f->find("control_priority")) d.cc_control = *a;
}

// The top-level `dcqcn:` of earlier versions: its settings live under
// congestion_control now, and reading both would leave two places to look.
void read_old_dcqcn(ExperimentDraft& d, const Entry& e) {
  d.c.error(e.key, e.path,
            "moved under congestion_control: write congestion_control: {algorithm: dcqcn, dcqcn: {...}} "
            "(without 'enabled'; docs/congestion_control.md)");
}

}  // namespace rdmasim
