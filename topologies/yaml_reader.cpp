#include "topologies/yaml_reader.hpp"

#include <yaml-cpp/depthguard.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace rdmasim {

std::string LoadError::format() const {
  return file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message;
}

std::string key_path(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : std::string(path) + "." + std::string(key);
}
std::string index_path(std::string_view path, size_t i) {
  return std::string(path) + "[" + std::to_string(i) + "]";
}

bool under(std::string_view path, std::string_view prefix) {
  if (path.substr(0, prefix.size()) != prefix) return false;
  return path.size() == prefix.size() || path[prefix.size()] == '.' || path[prefix.size()] == '[';
}

namespace {
// A value as errors quote it: whole when short, else its start and length
// (an error must not repeat a 50 MB value).
constexpr size_t kShown = 64;  // characters of a long value an error shows
bool is_long(std::string_view s) { return s.size() > kShown + 16; }
std::string length_of(std::string_view s) { return " (" + std::to_string(s.size()) + " characters)"; }
std::string shorten(std::string_view s) {
  return is_long(s) ? std::string(s.substr(0, kShown)) + "..." + length_of(s) : std::string(s);
}
std::string quote(std::string_view s) {
  return is_long(s) ? "'" + std::string(s.substr(0, kShown)) + "...'" + length_of(s)
                    : "'" + std::string(s) + "'";
}
}  // namespace

std::string describe(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Scalar:
      return quote(n.Scalar());
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    default:
      return "nothing";
  }
}

std::string seconds_text(long double ps) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3Lgs", ps / 1e12L);
  return b;
}

std::string yaml_error_message(const YAML::Exception& ex) {
  // yaml-cpp's parser recurses once or more per level and stops at a depth
  // of 2000 (yaml-cpp/depthguard.h), with the message "bad file".
  if (dynamic_cast<const YAML::DeepRecursion*>(&ex))
    return "nesting too deep: lists and maps inside each other go deeper here than the YAML reader "
           "follows (an experiment needs at most 5 levels)";
  return ex.msg;
}

YAML::Mark mark_of(const YAML::Node& n) {
  try {
    return n.Mark();
  } catch (const YAML::Exception&) {
    return YAML::Mark::null_mark();
  }
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

bool valid_name(std::string_view s) {
  if (s.empty() || s.size() > kMaxNameLength) return false;
  auto ok = [](char c, bool first) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || (!first && (c == '.' || c == '-'));
  };
  for (size_t i = 0; i < s.size(); ++i)
    if (!ok(s[i], i == 0)) return false;
  return true;
}

LoadError YamlReader::locate(const YAML::Node& at, const std::string& path,
                             const std::string& message) const {
  LoadError e;
  e.message = path.empty() ? message : path + ": " + message;
  const YAML::Mark m = mark_of(at);
  for (auto o = overrides_.rbegin(); o != overrides_.rend(); ++o) {
    // A node the override created has no mark: its parent key names it.
    if (!under(path, o->path) && !(m.is_null() && under(o->path, path))) continue;
    e.file = kCommandLine;
    e.line = o->index;
    e.column = o->value_column + m.column + 1;
    if (m.is_null()) {
      const auto part = std::find_if(o->part_columns.begin(), o->part_columns.end(),
                                     [&](const auto& pc) { return pc.first == path; });
      e.column = part == o->part_columns.end() ? 1 : part->second;
    }
    e.message += " (" + shorten(o->shown) + ")";
    return e;
  }
  e.file = file_;
  e.line = m.is_null() ? 1 : m.line + 1;
  e.column = m.is_null() ? 1 : m.column + 1;
  return e;
}
void YamlReader::command_line_error(const Override& o, int column, const std::string& message) {
  errors_.push_back({std::string(kCommandLine), o.index, column, message + " (" + shorten(o.shown) + ")"});
}

std::optional<Fields> YamlReader::fields(const YAML::Node& node, const std::string& path,
                                         std::string_view what,
                                         const std::vector<std::string_view>& allowed) {
  if (!node.IsMap()) {
    error(node, path,
          "expected " + std::string(what) + " (a map with keys " + join_names(allowed) + "), got " +
              describe(node));
    return std::nullopt;
  }
  Fields f;
  f.node = node;
  f.path = path;
  std::map<std::string, int> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar()) {
      error(it->first, path, "keys must be plain names, got " + describe(it->first));
      continue;
    }
    const std::string& k = it->first.Scalar();
    const std::string kp = key_path(path, k);
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
      error(it->first, kp, "unknown key" + suggestion(k, allowed) + "; allowed keys: " + join_names(allowed));
      continue;
    }
    if (auto [at, fresh] = seen.emplace(k, mark_of(it->first).line + 1); !fresh) {
      error(it->first, kp, "duplicate key (first at line " + std::to_string(at->second) + ")");
      continue;
    }
    f.entries.push_back({it->first, it->second, kp});
  }
  return f;
}

std::optional<std::string> YamlReader::one_of(const YAML::Node& v, const std::string& path,
                                              std::string_view what,
                                              const std::vector<std::string_view>& names,
                                              std::string_view preferred) {
  const std::string list = join_names(names);
  auto s = scalar(v, path, std::string(what) + " (" + list + ")");
  if (!s) return std::nullopt;
  if (std::find(names.begin(), names.end(), *s) != names.end()) return s;
  error(v, path,
        "unknown " + std::string(what) + " '" + *s + "'" + suggestion(*s, names, preferred) +
            "; expected one of " + list);
  return std::nullopt;
}

void YamlReader::missing(const Fields& f, std::string_view key, const std::string& why) {
  error(f.node, f.path, "missing key '" + std::string(key) + "'" + (why.empty() ? "" : " (" + why + ")"));
}

std::optional<std::string> YamlReader::scalar(const YAML::Node& v, const std::string& path,
                                              std::string_view what) {
  if (v.IsScalar()) return v.Scalar();
  error(v, path, "expected " + std::string(what) + ", got " + describe(v));
  return std::nullopt;
}

std::optional<Time> YamlReader::time(const Entry& e) {
  auto s = scalar(e.value, e.path, "a time such as 500ns, 1.5us, 10ms or 1s");
  if (!s) return std::nullopt;
  std::string why;
  auto t = parse_time(*s, &why);
  if (!t) {
    error(e.value, e.path, why);
    return std::nullopt;
  }
  if (*t > kMaxTimeValue) {
    error(e.value, e.path,
          "at most " + to_string(kMaxTimeValue) +
              ": simulated time is a 64-bit count of picoseconds (2^63 ps, about 106 days) and a run adds "
              "times up; got " +
              describe(e.value));
    return std::nullopt;
  }
  return t;
}
std::optional<Bytes> YamlReader::bytes(const Entry& e, bool positive) {
  auto s = scalar(e.value, e.path, "a size such as 4096, 64KiB or 1MiB");
  if (!s) return std::nullopt;
  std::string why;
  auto b = parse_bytes(*s, &why);
  if (!b) {
    error(e.value, e.path, why);
    return std::nullopt;
  }
  if (positive && b->count() == 0) {
    error(e.value, e.path, "must be at least 1 byte, got " + describe(e.value));
    return std::nullopt;
  }
  // A message size or an inline limit is usually pages or MTUs, which fio
  // and iperf users write 16K or 16KB for 16384: the first size of that
  // kind written with a power-of-10 unit gets a warning with both values.
  const std::string_view key = std::string_view(e.path).substr(e.path.rfind('.') + 1);
  if (auto binary = binary_spelling(*s);
      binary && !size_unit_warned_ && (key == "size" || key == "max_inline")) {
    size_unit_warned_ = true;
    warnings_.push_back(locate(
        e.value, e.path,
        *s + " is " + std::to_string(b->count()) + " bytes (KB, kB, MB and GB count in powers of 10); for " +
            std::to_string(parse_bytes(*binary)->count()) + " bytes write " + *binary));
  }
  return b;
}
std::optional<DataRate> YamlReader::rate(const Entry& e) {
  auto s = scalar(e.value, e.path, "a rate such as 25Gbps or 100Mbps");
  if (!s) return std::nullopt;
  std::string why;
  auto r = parse_rate(*s, &why);
  if (!r) {
    error(e.value, e.path, why);
    return std::nullopt;
  }
  if (r->bps() > kMaxRateBps) {
    error(e.value, e.path,
          "at most 1000Tbps (10^15 bit/s): serialisation times, bits x 10^12 / rate in whole picoseconds, "
          "overflow 64 bits near 10^19 bit/s; got " +
              describe(e.value));
    return std::nullopt;
  }
  if (r->bps() < kMinRateBps) {
    error(e.value, e.path,
          "at least 1Kbps: serialisation times must stay well within the " + to_string(kMaxTimeValue) +
              " a time may be (a 9 KB frame takes 74s at 1Kbps); got " + describe(e.value));
    return std::nullopt;
  }
  return r;
}
std::optional<uint64_t> YamlReader::whole(const Entry& e, uint64_t lo, uint64_t hi) {
  const std::string range = hi == UINT64_MAX
                                ? "a whole number from " + std::to_string(lo)
                                : "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  auto s = scalar(e.value, e.path, range);
  if (!s) return std::nullopt;
  uint64_t v = 0;
  const char* end = s->data() + s->size();
  auto [p, ec] = std::from_chars(s->data(), end, v);
  if (s->empty() || ec != std::errc() || p != end || v < lo || v > hi) {
    error(e.value, e.path, "expected " + range + ", got " + describe(e.value));
    return std::nullopt;
  }
  return v;
}
std::optional<double> YamlReader::probability(const Entry& e) {
  auto s = scalar(e.value, e.path, "a probability from 0 to 1");
  if (!s) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s->c_str(), &end);
  if (s->empty() || end != s->c_str() + s->size() || errno != 0 || !(v >= 0 && v <= 1)) {
    error(e.value, e.path, "expected a probability from 0 to 1, got " + describe(e.value));
    return std::nullopt;
  }
  return v;
}
namespace {
std::string fmt_number(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}
}  // namespace

std::optional<double> YamlReader::number(const Entry& e, double lo, double hi, bool open_lo) {
  const std::string range = std::string(open_lo ? "above " : "from ") + fmt_number(lo) +
                            (open_lo ? " up to " : " to ") + fmt_number(hi);
  auto s = scalar(e.value, e.path, "a number " + range);
  if (!s) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s->c_str(), &end);
  if (s->empty() || end != s->c_str() + s->size() || errno != 0 || !(v >= lo && v <= hi) ||
      (open_lo && v == lo)) {
    error(e.value, e.path, "expected a number " + range + ", got " + describe(e.value));
    return std::nullopt;
  }
  return v;
}
std::optional<bool> YamlReader::boolean(const Entry& e) {
  auto s = scalar(e.value, e.path, "true or false");
  if (!s) return std::nullopt;
  for (const char* t : {"true", "True", "TRUE", "yes", "on"})
    if (*s == t) return true;
  for (const char* f : {"false", "False", "FALSE", "no", "off"})
    if (*s == f) return false;
  error(e.value, e.path, "expected true or false, got " + describe(e.value));
  return std::nullopt;
}

std::optional<Time> YamlReader::positive_time(const Entry& v) {
  auto t = time(v);
  if (t && t->count() <= 0) {
    error(v.value, v.path, "must be above 0");
    return std::nullopt;
  }
  return t;
}

std::optional<std::string> YamlReader::name(const YAML::Node& v, const std::string& path,
                                            std::string_view what) {
  auto s = scalar(v, path, what);
  if (!s) return std::nullopt;
  if (s->size() > kMaxNameLength) {
    error(v, path,
          "a name is at most " + std::to_string(kMaxNameLength) +
              " characters (names become file names), got " + describe(v));
    return std::nullopt;
  }
  if (valid_name(*s)) return s;
  error(v, path,
        describe(v) + " is not a valid name: use letters, digits, '_', and '.' or '-' after the first");
  return std::nullopt;
}

}  // namespace rdmasim
