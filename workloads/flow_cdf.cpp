#include "workloads/flow_cdf.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

namespace rdmasim {

// workloads/cdf/*.txt, compiled in (CMakeLists.txt, rdmasim_embed).
std::string_view websearch_cdf_text();
std::string_view hadoop_cdf_text();

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::optional<double> number(std::string_view s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}
}  // namespace

std::optional<std::vector<CdfPoint>> parse_cdf(std::string_view text, std::string& error) {
  std::vector<CdfPoint> pts;
  int line_no = 0;
  auto fail = [&](const std::string& m) {
    error = fmt::format("line {}: {}", line_no, m);
    return std::nullopt;
  };
  while (!text.empty()) {
    ++line_no;
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    const size_t sp = line.find_first_of(" \t");
    if (sp == std::string_view::npos)
      return fail("expected 'size_bytes cumulative_percent', got '" + std::string(line) + "'");
    const auto size = number(trim(line.substr(0, sp)));
    const auto pct = number(trim(line.substr(sp)));
    // A flow is one message: at most 2^31 bytes (IBA's limit), which also
    // keeps the mean gap between arrivals a time the clock can hold.
    if (!size || *size < 0 || *size > kMaxFlowBytes)
      return fail("size must be a number of bytes from 0 to 2147483648 (2GiB, a message's most), got '" +
                  std::string(line) + "'");
    if (!pct || *pct < 0 || *pct > 100)
      return fail("cumulative percent must be a number from 0 to 100, got '" + std::string(line) + "'");
    if (!pts.empty() && *size < pts.back().size_bytes)
      return fail("sizes must not fall from one line to the next");
    if (!pts.empty() && *pct < pts.back().percent) return fail("cumulative percents must not fall");
    pts.push_back({*size, *pct});
  }
  if (pts.size() < 2) {
    error = "a CDF needs at least two points, found " + std::to_string(pts.size());
    return std::nullopt;
  }
  if (pts.front().percent != 0) {
    error = "the first point's cumulative percent must be 0";
    return std::nullopt;
  }
  if (pts.back().percent != 100) {
    error = "the last point's cumulative percent must be 100";
    return std::nullopt;
  }
  if (pts.back().size_bytes < 1) {
    error = "every size is 0: a flow needs at least 1 byte";
    return std::nullopt;
  }
  return pts;
}

std::optional<std::string_view> builtin_cdf(std::string_view name) {
  if (name == "websearch") return websearch_cdf_text();
  if (name == "hadoop") return hadoop_cdf_text();
  return std::nullopt;
}

}  // namespace rdmasim
