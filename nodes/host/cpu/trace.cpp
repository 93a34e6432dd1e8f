#include "nodes/host/cpu/trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

namespace rdmasim {

namespace {

// Microseconds with picosecond precision, as trace-event timestamps are.
std::string micros(Time t) {
  const int64_t ps = t.count();
  return fmt::format("{}.{:06}", ps / 1'000'000, ps % 1'000'000);
}

// What a segment is called in a trace: the process for its own time, the
// category for the kernel's.
std::string label(const CpuSegment& s) {
  if (s.use == CpuUse::irq || s.use == CpuUse::softirq || !s.process) return cpu_use_name(s.use);
  if (s.use == CpuUse::user) return s.process->name();
  return s.process->name() + " (" + cpu_use_name(s.use) + ")";
}

std::string xml(std::string_view s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

}  // namespace

std::string cpu_trace_json(const std::string& host, int cores, const std::vector<CpuSegment>& segments) {
  // Written by hand so that timestamps keep every picosecond and the output
  // is byte-identical from run to run.
  using nlohmann::json;
  std::string out = "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n";
  out += fmt::format(
      "{{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"tid\": 0, \"args\": {{\"name\": {}}}}}",
      json(host).dump());
  for (int c = 0; c < cores; ++c)
    out += fmt::format(
        ",\n{{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": {0}, \"args\": {{\"name\": "
        "\"core {0}\"}}}}",
        c);
  for (const CpuSegment& s : segments) {
    if (s.use == CpuUse::idle) continue;
    out += fmt::format(
        ",\n{{\"ph\": \"X\", \"name\": {}, \"cat\": \"{}\", \"pid\": 1, \"tid\": {}, \"ts\": {}, "
        "\"dur\": {}}}",
        json(label(s)).dump(), cpu_use_name(s.use), s.core, micros(s.start), micros(s.end - s.start));
  }
  out += "\n]}\n";
  return out;
}

std::string cpu_trace_svg(const std::string& host, int cores, const std::vector<CpuSegment>& segments,
                          Time from, Time to) {
  constexpr int kLeft = 80, kWidth = 1000, kRow = 28, kTop = 30;
  if (to <= from) to = from + Time::ns(1);
  const double span = static_cast<double>((to - from).count());
  auto x = [&](Time t) {
    const Time c = std::clamp(t, from, to);
    return kLeft + static_cast<double>((c - from).count()) / span * kWidth;
  };
  // A colour per process (in order of first appearance), one per kernel category.
  static constexpr const char* kProcessColours[] = {"#4e79a7", "#59a14f", "#edc948",
                                                    "#b07aa1", "#76b7b2", "#9c755f"};
  // Polling in no process's context: the program that ran last left the
  // core while others spin (kind: flows, many programs a core); each pays
  // its context switch when its completion comes (cpu.hpp).
  static constexpr const char* kNoContextPoll = "#d3d3d3";
  std::map<const Process*, size_t> colour_of;
  std::vector<const Process*> order;
  bool no_context_poll = false;
  for (const CpuSegment& s : segments) {
    if (!s.process && s.use == CpuUse::poll) no_context_poll = true;
    if (s.process && s.use != CpuUse::irq && s.use != CpuUse::softirq &&
        colour_of.emplace(s.process, order.size()).second)
      order.push_back(s.process);
  }
  auto fill = [&](const CpuSegment& s) -> std::string {
    switch (s.use) {
      case CpuUse::irq:
        return "#e15759";
      case CpuUse::softirq:
        return "#f28e2b";
      case CpuUse::syscall:
        return "#bab0ac";
      default:
        if (!s.process) return kNoContextPoll;
        return kProcessColours[colour_of.at(s.process) % std::size(kProcessColours)];
    }
  };
  // A flows run has a program a flow: the legend names the first few.
  constexpr size_t kLegendProcesses = 12;
  const size_t legend_processes = std::min(order.size(), kLegendProcesses + 1);
  const bool more = order.size() > legend_processes;
  const size_t legend_lines = legend_processes + 3 + (no_context_poll ? 1 : 0);
  const int height = kTop + cores * kRow + 40 + static_cast<int>(legend_lines + 1) * 16;
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" "
      "font-size=\"12\">\n",
      kLeft + kWidth + 20, height);
  out += fmt::format("<text x=\"{}\" y=\"18\">{}: CPU from {} us to {} us</text>\n", kLeft, xml(host),
                     micros(from), micros(to));
  for (int c = 0; c < cores; ++c)
    out += fmt::format("<text x=\"4\" y=\"{}\">core {}</text>\n", kTop + c * kRow + 17, c);
  for (const CpuSegment& s : segments) {
    if (s.use == CpuUse::idle || s.end <= from || s.start >= to) continue;
    const double x0 = x(s.start), x1 = x(s.end);
    const int y = kTop + s.core * kRow;
    // Polling is hatched with its letter, as in the seed's figures: p.
    out += fmt::format(
        "<rect x=\"{:.3f}\" y=\"{}\" width=\"{:.3f}\" height=\"20\" fill=\"{}\"{}><title>{} {} us + {} "
        "us</title></rect>\n",
        x0, y, std::max(x1 - x0, 0.2), fill(s), s.use == CpuUse::poll ? " fill-opacity=\"0.35\"" : "",
        xml(label(s)), micros(s.start), micros(s.end - s.start));
    if (s.use == CpuUse::poll && x1 - x0 >= 10)
      out +=
          fmt::format("<text x=\"{:.3f}\" y=\"{}\" text-anchor=\"middle\">p</text>\n", (x0 + x1) / 2, y + 15);
  }
  // Time axis: the window's ends.
  const int axis = kTop + cores * kRow + 4;
  out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n", kLeft, axis,
                     kLeft + kWidth, axis);
  out += fmt::format("<text x=\"{}\" y=\"{}\">{} us</text>\n", kLeft, axis + 14, micros(from));
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{} us</text>\n", kLeft + kWidth, axis + 14,
                     micros(to));
  // Legend.
  int ly = axis + 36;
  auto legend = [&](const std::string& colour, const std::string& what) {
    out += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>\n",
        kLeft, ly - 10, colour, kLeft + 18, ly, xml(what));
    ly += 16;
  };
  for (size_t i = 0; i < legend_processes; ++i) {
    if (more && i == kLegendProcesses) {
      legend("#ffffff", fmt::format("... and {} more processes (colours repeat)", order.size() - i));
      break;
    }
    legend(kProcessColours[i % std::size(kProcessColours)], order[i]->name() + " (pale: polling, p)");
  }
  if (no_context_poll) legend(kNoContextPoll, "polling, no process's context loaded");
  legend("#bab0ac", "context switch / system call");
  legend("#e15759", "hard IRQ");
  legend("#f28e2b", "softirq");
  out += "</svg>\n";
  return out;
}

}  // namespace rdmasim
