#include "workloads/flow_stats_json.hpp"

namespace rdmasim {

using nlohmann::json;

json flow_stats_json(const FlowStats& s) {
  return {{"ops", s.ops},
          {"bytes", s.bytes},
          {"completions", s.completions},
          {"recv_completions", s.recv_completions},
          {"start", s.start.count()},
          {"end", s.end.count()},
          {"latency", s.latency_ps},
          {"posted", s.posted_ps},
          {"completed", s.completed_ps},
          {"verified", s.data_verified},
          {"mismatch", s.data_mismatch},
          {"finished", s.finished},
          {"planned", s.planned_ops},
          {"undelivered_bytes", s.undelivered_bytes},
          {"retransmitted", s.retransmitted_packets}};
}

FlowStats flow_stats_of(const json& j) {
  FlowStats s;
  s.ops = j.at("ops").get<uint64_t>();
  s.bytes = j.at("bytes").get<uint64_t>();
  s.completions = j.at("completions").get<std::map<std::string, uint64_t>>();
  s.recv_completions = j.at("recv_completions").get<std::map<std::string, uint64_t>>();
  s.start = Time::ps(j.at("start").get<int64_t>());
  s.end = Time::ps(j.at("end").get<int64_t>());
  s.latency_ps = j.at("latency").get<std::vector<int64_t>>();
  s.posted_ps = j.at("posted").get<std::vector<int64_t>>();
  s.completed_ps = j.at("completed").get<std::vector<std::pair<uint64_t, int64_t>>>();
  s.data_verified = j.at("verified").get<bool>();
  s.data_mismatch = j.at("mismatch").get<bool>();
  s.finished = j.at("finished").get<bool>();
  s.planned_ops = j.at("planned").get<uint64_t>();
  s.undelivered_bytes = j.at("undelivered_bytes").get<uint64_t>();
  s.retransmitted_packets = j.at("retransmitted").get<uint64_t>();
  return s;
}

}  // namespace rdmasim
