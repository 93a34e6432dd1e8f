// Reading what every verbs workload shares (the verbs kinds and flows): the
// operation, the verbs knobs (ibv_modify_qp's and ibv_post_send's), the QP
// type, where the payload lives, and what the fabric's transport can carry.
// Only readers include this (it brings in yaml-cpp).
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "topologies/experiment_draft.hpp"
#include "topologies/key_spec.hpp"

namespace rdmasim {

// The verbs knobs read_verbs_knobs reads (ibv_modify_qp's and ibv_post_send's).
inline constexpr KeySpec kVerbsKnobs[] = {
    {"timeout", "whole number", "14", "0..31",
     "local ACK timeout, 4.096 µs × 2^timeout (`ibv_qp_attr.timeout`)"},
    {"retry_cnt", "whole number", "7", "0..7", "transport retries before `IBV_WC_RETRY_EXC_ERR`"},
    {"rnr_retry", "whole number", "7", "0..7", "RNR retries; 7 means forever"},
    {"min_rnr_timer", "whole number", "12", "0..31", "RNR NAK timer, in the IBA encoding (12 = 0.64 ms)"},
    {"post_recvs", "bool", "true", "", "`false`: the receiver posts no receive buffers (to see RNR NAKs)"},
    {"bad_rkey", "bool", "false", "",
     "the sender uses a wrong rkey (to see a remote access error); not for SEND"},
    {"inline_threshold", "whole number", "0", "0..65536",
     "messages up to this size are posted with `IBV_SEND_INLINE`"},
};
// `keys` and then the verbs knobs.
std::vector<KeySpec> with_verbs_knobs(std::span<const KeySpec> keys);

// The operation `w.kind` implies (rdma_write for patterns and flows).
WorkloadKind implied_op(WorkloadKind kind);
// `op:`, where w.kind takes one (patterns, atomic_bw/lat, flows), else the
// implied operation; fills w.op. Nullopt after an error about it.
std::optional<WorkloadKind> read_op(ExperimentDraft& d, const Fields& f, WorkloadConfig& w);
// start, the verbs knobs, the atomic operands, qp and payload, then the
// fabric's check of the whole; `sizes_at`: where sizes were written (size:,
// or flows' cdf:), if they were. False when the QP type is unknown.
bool read_verbs_knobs(ExperimentDraft& d, const Fields& f, WorkloadConfig& w, WorkloadKind op,
                      const Entry& kind, const Entry* sizes_at);

// The validate pass's check that d.workloads_read[read] can end: without
// `stop`, within the longest `stop` there may be.
void check_ends(ExperimentDraft& d, size_t read);

}  // namespace rdmasim
