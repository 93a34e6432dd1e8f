// Reading what every verbs workload shares (the verbs kinds and flows): the
// operation, the verbs knobs' rows (ibv_modify_qp's and ibv_post_send's),
// where the payload lives, and what the fabric's transport can carry.
// Only readers include this (it brings in yaml-cpp).
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "topologies/experiment_draft.hpp"
#include "topologies/key_table.hpp"

namespace rdmasim {

// `rows` and then the verbs knobs (ibv_modify_qp's and ibv_post_send's),
// which the verbs kinds and flows take.
std::vector<Key<WorkloadConfig>> with_verbs_knobs(std::vector<Key<WorkloadConfig>> rows);
// add, compare and swap: the atomic operands (ibv_send_wr.wr.atomic).
const KeyTable<WorkloadConfig>& atomic_operand_keys();

// The operation `w.kind` implies (rdma_write for patterns and flows).
WorkloadKind implied_op(WorkloadKind kind);
// `op:`, where w.kind takes one (patterns, atomic_bw/lat, flows), else the
// implied operation; fills w.op. Nullopt after an error about it.
std::optional<WorkloadKind> read_op(ExperimentDraft& d, const Fields& f, WorkloadConfig& w);
// What needs more than one key, once the kind's table has read `f`: the
// operation's own keys (bad_rkey, the atomic operands), payload, and the
// fabric's check of the whole; `sizes_at`: where sizes were written (size:,
// or flows' cdf:), if they were. False when the QP type is unknown.
bool check_verbs(ExperimentDraft& d, const KeyFields& f, WorkloadConfig& w, WorkloadKind op,
                 const Entry& kind, const Entry* sizes_at);

// The validate pass's check that d.workloads_read[read] can end: without
// `stop`, within the longest `stop` there may be.
void check_ends(ExperimentDraft& d, size_t read);

}  // namespace rdmasim
