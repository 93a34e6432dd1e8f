// `congestion_control:`, the algorithm at the IBA fabrics' NICs and each
// algorithm's parameters. Every sub-map is read and checked whichever
// algorithm is chosen, so that --set congestion_control.algorithm=X can
// switch between them; which fabric can run which is the validate pass's.
#include "experiment/sections/sections.hpp"

namespace rdmasim {

namespace {

// A rate, or 0 (no scaling).
std::optional<DataRate> rate_or_zero(ExperimentDraft& d, const Entry& v) {
  if (v.value.IsScalar() && v.value.Scalar() == "0") return DataRate(0);
  return d.c.rate(v);
}

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
  // ACK_HIGH_PRIO 1 for dcqcn and timely, 0 for hp and dctcp.
  cc.control_priority = cc.algorithm == CcAlgorithm::dcqcn || cc.algorithm == CcAlgorithm::timely ? 6 : -1;
  // The switch (third.cc, switch-mmu.cc): ECN at dequeue per priority on
  // KMIN_MAP/KMAX_MAP/PMAX_MAP; DCTCP's maps are a step at 30 KB per 10 Gb/s.
  EcnConfig& e = d.x.ecn;
  e.at = EcnAt::dequeue;
  e.per_priority = true;
  if (cc.algorithm == CcAlgorithm::dctcp) {
    e.kmin = e.kmax = Bytes(30'000);
    e.pmax = 1.0;
    e.rates_per = DataRate(10'000'000'000);
  } else {
    e.kmin = Bytes(100'000);
    e.kmax = Bytes(400'000);
    e.pmax = 0.2;
    e.rates_per = DataRate(25'000'000'000);
  }
  // BUFFER_SIZE 16 MB per 50 Gb/s of the NICs' rate; USE_DYNAMIC_PFC_THRESHOLD 1.
  PfcConfig& p = d.x.pfc_config;
  p.shared_buffer = Bytes(16u << 20);
  p.shared_buffer_per = DataRate(50'000'000'000);
  p.alpha_shift = 3;
  p.reserve = Bytes(4096);
  p.resume_offset = Bytes(3072);
}

void read_dcqcn(ExperimentDraft& d, const Entry& e) {
  auto f = d.c.fields(
      e.value, e.path, "DCQCN settings",
      {"cnp_interval", "g", "alpha_period", "rate_period", "decrease_period", "byte_counter", "fast_recovery",
       "additive", "hyper", "min_rate", "rates_per", "clamp_target_rate", "hyper_needs_both"});
  if (!f) return;
  DcqcnConfig& dc = d.x.cc.dcqcn;
  d.c.read(*f, "cnp_interval", dc.cnp_interval, [&](const Entry& v) { return d.c.time(v); });
  d.c.read(*f, "g", dc.g, [&](const Entry& v) { return d.c.number(v, 0, 1, true); });
  d.c.read(*f, "alpha_period", dc.alpha_period, [&](const Entry& v) { return d.c.positive_time(v); });
  d.c.read(*f, "rate_period", dc.rate_period, [&](const Entry& v) { return d.c.positive_time(v); });
  d.c.read(*f, "decrease_period", dc.decrease_period, [&](const Entry& v) { return d.c.time(v); });
  d.c.read(*f, "byte_counter", dc.byte_counter, [&](const Entry& v) { return d.c.bytes(v, false); });
  d.c.read(*f, "fast_recovery", dc.fast_recovery, [&](const Entry& v) { return d.c.whole(v, 0, 1000); });
  d.c.read(*f, "additive", dc.additive, [&](const Entry& v) { return d.c.rate(v); });
  d.c.read(*f, "hyper", dc.hyper, [&](const Entry& v) { return d.c.rate(v); });
  d.c.read(*f, "min_rate", dc.min_rate, [&](const Entry& v) { return d.c.rate(v); });
  d.c.read(*f, "rates_per", dc.rates_per, [&](const Entry& v) { return rate_or_zero(d, v); });
  d.c.read(*f, "clamp_target_rate", dc.clamp_target_rate, [&](const Entry& v) { return d.c.boolean(v); });
  d.c.read(*f, "hyper_needs_both", dc.hyper_needs_both, [&](const Entry& v) { return d.c.boolean(v); });
}

void read_hpcc(ExperimentDraft& d, const Entry& e) {
  auto f = d.c.fields(e.value, e.path, "HPCC settings",
                      {"eta", "max_stage", "additive", "rates_per", "base_rtt", "min_rate", "fast_react"});
  if (!f) return;
  HpccConfig& h = d.x.cc.hpcc;
  d.c.read(*f, "eta", h.eta, [&](const Entry& v) { return d.c.number(v, 0, 1, true); });
  d.c.read(*f, "max_stage", h.max_stage, [&](const Entry& v) { return d.c.whole(v, 0, 1000); });
  d.c.read(*f, "additive", h.additive, [&](const Entry& v) { return d.c.rate(v); });
  d.c.read(*f, "base_rtt", h.base_rtt, [&](const Entry& v) { return d.c.positive_time(v); });
  d.c.read(*f, "min_rate", h.min_rate, [&](const Entry& v) { return d.c.rate(v); });
  d.c.read(*f, "rates_per", h.rates_per, [&](const Entry& v) { return rate_or_zero(d, v); });
  d.c.read(*f, "fast_react", h.fast_react, [&](const Entry& v) { return d.c.boolean(v); });
}

void read_timely(ExperimentDraft& d, const Entry& e) {
  auto f = d.c.fields(e.value, e.path, "TIMELY settings",
                      {"t_low", "t_high", "min_rtt", "ewma", "beta", "additive", "hyper", "rates_per",
                       "hai_threshold", "min_rate", "update", "window_rtt", "max_mdf"});
  if (!f) return;
  TimelyConfig& t = d.x.cc.timely;
  d.c.read(*f, "t_low", t.t_low, [&](const Entry& v) { return d.c.time(v); });
  d.c.read(*f, "t_high", t.t_high, [&](const Entry& v) { return d.c.positive_time(v); });
  d.c.read(*f, "min_rtt", t.min_rtt, [&](const Entry& v) { return d.c.positive_time(v); });
  d.c.read(*f, "ewma", t.ewma, [&](const Entry& v) { return d.c.number(v, 0, 1, true); });
  d.c.read(*f, "beta", t.beta, [&](const Entry& v) { return d.c.number(v, 0, 1, true); });
  d.c.read(*f, "additive", t.additive, [&](const Entry& v) { return d.c.rate(v); });
  d.c.read(*f, "hai_threshold", t.hai_threshold, [&](const Entry& v) { return d.c.whole(v, 1, 1000); });
  d.c.read(*f, "min_rate", t.min_rate, [&](const Entry& v) { return d.c.rate(v); });
  d.c.read(*f, "hyper", t.hyper, [&](const Entry& v) { return d.c.rate(v); });
  d.c.read(*f, "rates_per", t.rates_per, [&](const Entry& v) { return rate_or_zero(d, v); });
  d.c.read(*f, "window_rtt", t.window_rtt, [&](const Entry& v) { return d.c.time(v); });
  d.c.read(*f, "max_mdf", t.max_mdf, [&](const Entry& v) { return d.c.number(v, 0, 1, true); });
  d.c.read(*f, "update", t.update,
           [&](const Entry& v) { return d.c.choice<TimelyUpdate>(v, "TIMELY update schedule"); });
  if (t.t_low >= t.t_high) {
    const Entry* at = f->find("t_low") ? f->find("t_low") : f->find("t_high");
    d.c.error(at->value, at->path,
              "t_low (" + to_string(t.t_low) + ") must be below t_high (" + to_string(t.t_high) + ")");
  }
}

void read_dctcp(ExperimentDraft& d, const Entry& e) {
  auto f =
      d.c.fields(e.value, e.path, "DCTCP settings", {"g", "base_rtt", "min_window", "rate_ai", "min_rate"});
  if (!f) return;
  DctcpConfig& c = d.x.cc.dctcp;
  d.c.read(*f, "g", c.g, [&](const Entry& v) { return d.c.number(v, 0, 1, true); });
  d.c.read(*f, "base_rtt", c.base_rtt, [&](const Entry& v) { return d.c.positive_time(v); });
  d.c.read(*f, "min_window", c.min_window, [&](const Entry& v) { return d.c.bytes(v); });
  d.c.read(*f, "rate_ai", c.rate_ai, [&](const Entry& v) { return d.c.rate(v); });
  d.c.read(*f, "min_rate", c.min_rate, [&](const Entry& v) { return d.c.rate(v); });
}

void read_swift(ExperimentDraft& d, const Entry& e) {
  auto f = d.c.fields(e.value, e.path, "Swift settings",
                      {"base_target", "per_hop", "endpoint_target", "additive", "beta", "max_mdf",
                       "min_window", "base_rtt", "retx_reset"});
  if (!f) return;
  SwiftConfig& s = d.x.cc.swift;
  d.c.read(*f, "base_target", s.base_target, [&](const Entry& v) { return d.c.positive_time(v); });
  d.c.read(*f, "per_hop", s.per_hop, [&](const Entry& v) { return d.c.time(v); });
  d.c.read(*f, "endpoint_target", s.endpoint_target, [&](const Entry& v) { return d.c.positive_time(v); });
  d.c.read(*f, "additive", s.additive, [&](const Entry& v) { return d.c.number(v, 0, 1000, true); });
  d.c.read(*f, "beta", s.beta, [&](const Entry& v) { return d.c.number(v, 0, 1, true); });
  d.c.read(*f, "max_mdf", s.max_mdf, [&](const Entry& v) { return d.c.number(v, 0, 1, true); });
  d.c.read(*f, "min_window", s.min_window, [&](const Entry& v) { return d.c.number(v, 0, 1000, true); });
  d.c.read(*f, "base_rtt", s.base_rtt, [&](const Entry& v) { return d.c.positive_time(v); });
  d.c.read(*f, "retx_reset", s.retx_reset, [&](const Entry& v) { return d.c.whole(v, 1, 1000); });
}

void read_ib_cca(ExperimentDraft& d, const Entry& e) {
  auto f = d.c.fields(e.value, e.path, "IB congestion control settings",
                      {"threshold", "increase", "timer", "limit", "min", "delay_step"});
  if (!f) return;
  IbCcaConfig& c = d.x.cc.ib_cca;
  d.c.read(*f, "threshold", c.threshold, [&](const Entry& v) { return d.c.bytes(v); });
  d.c.read(*f, "increase", c.increase, [&](const Entry& v) { return d.c.whole(v, 1, 127); });
  d.c.read(*f, "timer", c.timer, [&](const Entry& v) { return d.c.positive_time(v); });
  // A10.2.2: the congestion control table has at most 128 entries (index 0..127).
  d.c.read(*f, "limit", c.limit, [&](const Entry& v) { return d.c.whole(v, 0, 127); });
  d.c.read(*f, "min", c.min, [&](const Entry& v) { return d.c.whole(v, 0, 127); });
  d.c.read(*f, "delay_step", c.delay_step, [&](const Entry& v) { return d.c.positive_time(v); });
  if (c.min > c.limit) {
    const Entry* at = f->find("min") ? f->find("min") : f->find("limit");
    d.c.error(at->value, at->path,
              "min (" + std::to_string(c.min) + ") must not exceed limit (" + std::to_string(c.limit) + ")");
  }
}

}  // namespace

void read_congestion_control(ExperimentDraft& d, const Entry& e) {
  auto f = d.c.fields(
      e.value, e.path, "congestion control settings",
      {"algorithm", "profile", "control_priority", "dcqcn", "hpcc", "timely", "dctcp", "swift", "ib_cca"});
  if (!f) return;
  d.c.read(*f, "algorithm", d.x.cc.algorithm,
           [&](const Entry& v) { return d.c.choice<CcAlgorithm>(v, "congestion control algorithm"); });
  if (const Entry* a = f->find("algorithm")) d.cc_algorithm = *a;
  if (const Entry* a = f->find("control_priority")) d.cc_control = *a;
  d.c.read(*f, "profile", d.x.cc.profile,
           [&](const Entry& v) { return d.c.choice<CcProfile>(v, "congestion control profile"); });
  if (d.x.cc.profile == CcProfile::hpcc_ns3) apply_hpcc_ns3(d);
  d.c.read(*f, "control_priority", d.x.cc.control_priority, [&](const Entry& v) -> std::optional<int> {
    if (v.value.IsScalar() && v.value.Scalar() == "none") return -1;
    auto n = d.c.whole(v, 0, 7);
    return n ? std::optional<int>(static_cast<int>(*n)) : std::nullopt;
  });
  if (auto s = f->find("dcqcn")) read_dcqcn(d, *s);
  if (auto s = f->find("hpcc")) read_hpcc(d, *s);
  if (auto s = f->find("timely")) read_timely(d, *s);
  if (auto s = f->find("dctcp")) read_dctcp(d, *s);
  if (auto s = f->find("swift")) read_swift(d, *s);
  if (auto s = f->find("ib_cca")) read_ib_cca(d, *s);
}

// The top-level `dcqcn:` of earlier versions: its settings live under
// congestion_control now, and reading both would leave two places to look.
void read_old_dcqcn(ExperimentDraft& d, const Entry& e) {
  d.c.error(e.key, e.path,
            "moved under congestion_control: write congestion_control: {algorithm: dcqcn, dcqcn: {...}} "
            "(without 'enabled'; docs/congestion_control.md)");
}

}  // namespace rdmasim
