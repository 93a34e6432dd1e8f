// The Ethernet fabrics' sections: `flow_control:`, `pfc:` (802.1Qbb), `ecn:`.
#include "fabrics/ethernet/ethernet_sections.hpp"

#include "topologies/experiment_draft.hpp"
#include "topologies/key_table.hpp"

namespace rdmasim {

using namespace keys;

namespace {

void read_flow_control(ExperimentDraft& d, const Entry& e) {
  auto s = d.c.scalar(e.value, e.path, "none or pfc");
  if (s && (*s == "none" || *s == "pfc"))
    d.x.pfc = *s == "pfc";
  else if (s)
    d.c.error(e.value, e.path, "unknown flow control '" + *s + "'; expected none or pfc");
}

const KeyTable<PfcConfig>& watchdog_keys() {
  using P = PfcConfig;
  static const KeyTable<P> t{
      "pfc.watchdog",
      "PFC watchdog settings",
      {
          required(
              key("detect", &P::watchdog_detect,
                  time_from(kShortestTimer, "a paused queue is looked at this often"), "",
                  "a port's queue of the PFC priority paused this long with frames waiting is drained (its "
                  "frames dropped)"),
              "how long a paused queue with frames waits before it is drained"),
          key("restore", &P::watchdog_restore, time_from(kShortestTimer, "the watchdog's timer"), "",
              "PFC frames for the drained queue are ignored until none came for this long (default: "
              "`detect`)"),
      }};
  return t;
}

const KeyTable<PfcConfig>& pfc_keys() {
  using P = PfcConfig;
  static const KeyTable<P> t{
      "pfc",
      "PFC settings",
      {
          key("priority", &P::priority, whole(0, 7), "3",
              "the 802.1p priority RDMA traffic uses and PFC pauses"),
          key("xoff", &P::xoff, size(), "256KiB",
              "ingress bytes held for the priority at which a PAUSE is sent upstream"),
          key("xon", &P::xon, size(), "128KiB", "... and at which the pause is lifted; at most `xoff`"),
          key("deadlock_detect", &P::deadlock_detect,
              time_from(kShortestTimer, "a paused port is looked at every quarter of it"), "1ms",
              "a cycle of ports each paused this long with frames waiting is reported in results.json "
              "`pfc_deadlocks` ([reliability.md](reliability.md#pfc-deadlocks))"),
          with_table(declared<P>("watchdog", "`{detect: TIME, restore: TIME}`", "",
                                 "the switches' PFC watchdog; each event in results.json `pfc_watchdog` "
                                 "([reliability.md](reliability.md#pfc-watchdog))"),
                     watchdog_keys()),
          key("shared_buffer", &P::shared_buffer, size(false), "0B",
              "nonzero: a switch's ports share one buffer of this size with a dynamic PFC threshold (HPCC's "
              "simulator's SwitchMmu) instead of `xoff`/`xon` "
              "([congestion_control.md](congestion_control.md#the-switch-shared-buffer-ecn-the-control-class)"
              ")"),
          key("shared_buffer_per", &P::shared_buffer_per, rate_or_zero(), "0",
              "nonzero: `shared_buffer` per this much of the hosts' link rate"),
          key("alpha_shift", &P::alpha_shift, whole(0, 16), "3",
              "the dynamic threshold is the free buffer >> this (1/8), one less per doubling of a port's "
              "rate "
              "above the hosts'"),
          key("reserve", &P::reserve, size(false), "4KiB", "per port and priority bytes not shared"),
          key("resume_offset", &P::resume_offset, size(false), "3KiB", "resume this far below the threshold"),
      }};
  return t;
}

void read_pfc(ExperimentDraft& d, const Entry& e) {
  PfcConfig& p = d.x.pfc_config;
  const auto f = pfc_keys().read(d.c, e.value, e.path, p);
  if (!f) return;
  if (const Entry* w = f->find("watchdog")) watchdog_keys().read(d.c, w->value, w->path, p);
  if (p.xon > p.xoff) order_error(d.c, *f, "xon", to_string(p.xon), "xoff", to_string(p.xoff), false);
}

const KeyTable<EcnConfig>& ecn_keys() {
  using E = EcnConfig;
  static const KeyTable<E> t{
      "ecn",
      "ECN settings",
      {
          key("enabled", &E::enabled, boolean(), "false", "mark at all"),
          key("kmin", &E::kmin, size(false), "40KiB", "queue length where marking starts; at most `kmax`"),
          key("kmax", &E::kmax, size(), "160KiB", "queue length where marking reaches `pmax`"),
          key("pmax", &E::pmax, probability(), "0.2", "marking probability at `kmax`"),
          key("rates_per", &E::rates_per, rate_or_zero(), "0",
              "nonzero: `kmin` and `kmax` per this much of the port's rate"),
          key("at", &E::at, choice<EcnAt>("ECN marking point"), "enqueue",
              "when the queue is measured and the frame marked"),
          key("per_priority", &E::per_priority, boolean(), "false",
              "the frame's own priority's queue, not the port's"),
      }};
  return t;
}

void read_ecn(ExperimentDraft& d, const Entry& e) {
  EcnConfig& c = d.x.ecn;
  const auto f = ecn_keys().read(d.c, e.value, e.path, c);
  if (!f) return;
  if (const Entry* en = f->find("enabled")) d.ecn_enabled = *en;
  if (c.kmin > c.kmax) order_error(d.c, *f, "kmin", to_string(c.kmin), "kmax", to_string(c.kmax), false);
}

}  // namespace

std::vector<SectionType> ethernet_sections() {
  return {plain_section<read_flow_control>(
              "flow_control",
              {"`none` or `pfc`", "none",
               "Ethernet fabrics: 802.1Qbb PFC on the `pfc.priority`. `ib` is always credit-based "
               "and ignores it"}),
          plain_section<read_pfc>("pfc",
                                  {"map", "", "PFC thresholds (used when `flow_control: pfc`)", &pfc_keys()}),
          plain_section<read_ecn>(
              "ecn", {"map", "", "ECN marking at switch egress (roce_v2, iwarp, tcp)", &ecn_keys()})};
}

}  // namespace rdmasim
