// `congestion_control:`, the algorithm at the IBA fabrics' NICs and each
// algorithm's parameters. Every sub-map is read and checked whichever
// algorithm is chosen, so that --set congestion_control.algorithm=X can
// switch between them; which fabric can run which is the validate pass's.
#include "experiment/sections/sections.hpp"

namespace rdmasim {

namespace {

void read_dcqcn(ExperimentDraft& d, const Entry& e) {
  auto f = d.c.fields(e.value, e.path, "DCQCN settings",
                      {"cnp_interval", "g", "alpha_period", "rate_period", "byte_counter", "fast_recovery",
                       "additive", "hyper", "min_rate", "clamp_target_rate"});
  if (!f) return;
  DcqcnConfig& dc = d.x.cc.dcqcn;
  d.c.read(*f, "cnp_interval", dc.cnp_interval, [&](const Entry& v) { return d.c.time(v); });
  d.c.read(*f, "g", dc.g, [&](const Entry& v) { return d.c.number(v, 0, 1, true); });
  d.c.read(*f, "alpha_period", dc.alpha_period, [&](const Entry& v) { return d.c.positive_time(v); });
  d.c.read(*f, "rate_period", dc.rate_period, [&](const Entry& v) { return d.c.positive_time(v); });
  d.c.read(*f, "byte_counter", dc.byte_counter, [&](const Entry& v) { return d.c.bytes(v); });
  d.c.read(*f, "fast_recovery", dc.fast_recovery, [&](const Entry& v) { return d.c.whole(v, 0, 1000); });
  d.c.read(*f, "additive", dc.additive, [&](const Entry& v) { return d.c.rate(v); });
  d.c.read(*f, "hyper", dc.hyper, [&](const Entry& v) { return d.c.rate(v); });
  d.c.read(*f, "min_rate", dc.min_rate, [&](const Entry& v) { return d.c.rate(v); });
  d.c.read(*f, "clamp_target_rate", dc.clamp_target_rate, [&](const Entry& v) { return d.c.boolean(v); });
}

void read_hpcc(ExperimentDraft& d, const Entry& e) {
  auto f =
      d.c.fields(e.value, e.path, "HPCC settings", {"eta", "max_stage", "additive", "base_rtt", "min_rate"});
  if (!f) return;
  HpccConfig& h = d.x.cc.hpcc;
  d.c.read(*f, "eta", h.eta, [&](const Entry& v) { return d.c.number(v, 0, 1, true); });
  d.c.read(*f, "max_stage", h.max_stage, [&](const Entry& v) { return d.c.whole(v, 0, 1000); });
  d.c.read(*f, "additive", h.additive, [&](const Entry& v) { return d.c.rate(v); });
  d.c.read(*f, "base_rtt", h.base_rtt, [&](const Entry& v) { return d.c.positive_time(v); });
  d.c.read(*f, "min_rate", h.min_rate, [&](const Entry& v) { return d.c.rate(v); });
}

void read_timely(ExperimentDraft& d, const Entry& e) {
  auto f =
      d.c.fields(e.value, e.path, "TIMELY settings",
                 {"t_low", "t_high", "min_rtt", "ewma", "beta", "additive", "hai_threshold", "min_rate"});
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
  if (t.t_low >= t.t_high) {
    const Entry* at = f->find("t_low") ? f->find("t_low") : f->find("t_high");
    d.c.error(at->value, at->path,
              "t_low (" + to_string(t.t_low) + ") must be below t_high (" + to_string(t.t_high) + ")");
  }
}

void read_dctcp(ExperimentDraft& d, const Entry& e) {
  auto f = d.c.fields(e.value, e.path, "DCTCP settings", {"g", "base_rtt", "min_window"});
  if (!f) return;
  DctcpConfig& c = d.x.cc.dctcp;
  d.c.read(*f, "g", c.g, [&](const Entry& v) { return d.c.number(v, 0, 1, true); });
  d.c.read(*f, "base_rtt", c.base_rtt, [&](const Entry& v) { return d.c.positive_time(v); });
  d.c.read(*f, "min_window", c.min_window, [&](const Entry& v) { return d.c.bytes(v); });
}

void read_swift(ExperimentDraft& d, const Entry& e) {
  auto f = d.c.fields(
      e.value, e.path, "Swift settings",
      {"base_target", "per_hop", "endpoint_target", "additive", "beta", "max_mdf", "min_window", "base_rtt"});
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
  auto f = d.c.fields(e.value, e.path, "congestion control settings",
                      {"algorithm", "dcqcn", "hpcc", "timely", "dctcp", "swift", "ib_cca"});
  if (!f) return;
  d.c.read(*f, "algorithm", d.x.cc.algorithm,
           [&](const Entry& v) { return d.c.choice<CcAlgorithm>(v, "congestion control algorithm"); });
  if (const Entry* a = f->find("algorithm")) d.cc_algorithm = *a;
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
