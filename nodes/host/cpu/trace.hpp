// A host's CPU timeline, from the segments Cpu::trace_into records: what
// each core did when (a process's code, a system call or context switch,
// an IRQ handler, polling; gaps are idle).
//   - Chrome/Perfetto trace-event JSON ("X" complete events, one thread per
//     core), which ui.perfetto.dev and chrome://tracing open;
//   - an SVG of a time window, one row per core, like the seed's timelines.
#pragma once

#include <string>
#include <vector>

#include "nodes/host/cpu/cpu.hpp"

namespace rdmasim {

std::string cpu_trace_json(const std::string& host, int cores, const std::vector<CpuSegment>& segments);
// The window [from, to) of the timeline as an SVG picture.
std::string cpu_trace_svg(const std::string& host, int cores, const std::vector<CpuSegment>& segments,
                          Time from, Time to);

}  // namespace rdmasim
