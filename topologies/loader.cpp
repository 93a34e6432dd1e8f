#include "topologies/loader.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <map>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include "topologies/generate.hpp"
#include "topologies/routing.hpp"

namespace rdmasim {

std::string LoadError::format() const {
  return file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message;
}

namespace {

using YAML::Node;

std::string key_path(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : std::string(path) + "." + std::string(key);
}
std::string index_path(std::string_view path, size_t i) {
  return std::string(path) + "[" + std::to_string(i) + "]";
}

// Is `path` the key path `prefix` or inside it?
bool under(std::string_view path, std::string_view prefix) {
  if (path.substr(0, prefix.size()) != prefix) return false;
  return path.size() == prefix.size() || path[prefix.size()] == '.' || path[prefix.size()] == '[';
}

std::string describe(const Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Scalar:
      return "'" + n.Scalar() + "'";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    default:
      return "nothing";
  }
}

YAML::Mark mark_of(const Node& n) {
  try {
    return n.Mark();
  } catch (const YAML::Exception&) {
    return YAML::Mark::null_mark();
  }
}

template <class Names>
std::string join_names(const Names& names) {
  std::string s;
  for (std::string_view n : names) {
    if (!s.empty()) s += ", ";
    s += n;
  }
  return s;
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

// " (did you mean 'x'?)" when one of `names` is close to `word`.
template <class Names>
std::string suggestion(std::string_view word, const Names& names) {
  // Close means a third of the word or less, and not all of it.
  std::string_view best;
  size_t best_d = std::min(std::max<size_t>(1, word.size() / 3), word.size() - 1) + 1;
  for (std::string_view n : names) {
    const size_t d = edit_distance(word, n);
    if (d < best_d) best = n, best_d = d;
  }
  return best.empty() ? "" : " (did you mean '" + std::string(best) + "'?)";
}

bool valid_name(std::string_view s) {
  if (s.empty()) return false;
  auto ok = [](char c, bool first) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || (!first && (c == '.' || c == '-'));
  };
  for (size_t i = 0; i < s.size(); ++i)
    if (!ok(s[i], i == 0)) return false;
  return true;
}

struct Override {
  std::string shown;     // "--set link.bandwidth=fast", "--fabric ib"
  std::string path;      // canonical key path, as errors name it
  int index = 0;         // position among the options, from 1
  int value_column = 0;  // offset of the value in the option's text, from 0
};

struct Entry {
  Node key, value;
  std::string path;
};

// The keys of one map, checked against the allowed ones.
class Fields {
 public:
  std::vector<Entry> entries;
  Node node;
  std::string path;
  // The entry for `key`; null when absent or given an empty value.
  const Entry* find(std::string_view key) const {
    for (const Entry& e : entries)
      if (e.key.Scalar() == key) return e.value.IsNull() ? nullptr : &e;
    return nullptr;
  }
  bool has(std::string_view key) const { return find(key) != nullptr; }
};

class Converter {
 public:
  explicit Converter(std::string file) : file_(std::move(file)) {}

  std::vector<LoadError>& errors() { return errors_; }
  std::vector<Override>& overrides() { return overrides_; }

  void error(const Node& at, const std::string& path, const std::string& message) {
    errors_.push_back(locate(at, path, message));
  }
  // Where `at` was written: the file, or the command-line option that made it.
  LoadError locate(const Node& at, const std::string& path, const std::string& message) const {
    LoadError e;
    e.message = path.empty() ? message : path + ": " + message;
    const YAML::Mark m = mark_of(at);
    for (auto o = overrides_.rbegin(); o != overrides_.rend(); ++o) {
      // A node the override created has no mark: its parent key names it.
      if (!under(path, o->path) && !(m.is_null() && under(o->path, path))) continue;
      e.file = kCommandLine;
      e.line = o->index;
      e.column = m.is_null() ? 1 : o->value_column + m.column + 1;
      e.message += " (" + o->shown + ")";
      return e;
    }
    e.file = file_;
    e.line = m.is_null() ? 1 : m.line + 1;
    e.column = m.is_null() ? 1 : m.column + 1;
    return e;
  }
  void command_line_error(const Override& o, int column, const std::string& message) {
    errors_.push_back({std::string(kCommandLine), o.index, column, message + " (" + o.shown + ")"});
  }

  // ---- shapes ----

  std::optional<Fields> fields(const Node& node, const std::string& path, std::string_view what,
                               std::initializer_list<std::string_view> allowed) {
    return fields(node, path, what, std::vector<std::string_view>(allowed));
  }
  std::optional<Fields> fields(const Node& node, const std::string& path, std::string_view what,
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
        error(it->first, kp,
              "unknown key" + suggestion(k, allowed) + "; allowed keys: " + join_names(allowed));
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

  void missing(const Fields& f, std::string_view key, const std::string& why) {
    error(f.node, f.path, "missing key '" + std::string(key) + "'" + (why.empty() ? "" : " (" + why + ")"));
  }

  std::optional<std::string> scalar(const Node& v, const std::string& path, std::string_view what) {
    if (v.IsScalar()) return v.Scalar();
    error(v, path, "expected " + std::string(what) + ", got " + describe(v));
    return std::nullopt;
  }

  // ---- values ----

  std::optional<Time> time(const Entry& e) {
    auto s = scalar(e.value, e.path, "a time such as 500ns, 1.5us, 10ms or 1s");
    if (!s) return std::nullopt;
    std::string why;
    if (auto t = parse_time(*s, &why)) return t;
    error(e.value, e.path, why);
    return std::nullopt;
  }
  std::optional<Bytes> bytes(const Entry& e, bool positive = true) {
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
    return b;
  }
  std::optional<DataRate> rate(const Entry& e) {
    auto s = scalar(e.value, e.path, "a rate such as 25Gbps or 100Mbps");
    if (!s) return std::nullopt;
    std::string why;
    if (auto r = parse_rate(*s, &why)) return r;
    error(e.value, e.path, why);
    return std::nullopt;
  }
  std::optional<uint64_t> whole(const Entry& e, uint64_t lo, uint64_t hi) {
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
  std::optional<double> probability(const Entry& e) {
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
  std::optional<bool> boolean(const Entry& e) {
    auto s = scalar(e.value, e.path, "true or false");
    if (!s) return std::nullopt;
    for (const char* t : {"true", "True", "TRUE", "yes", "on"})
      if (*s == t) return true;
    for (const char* f : {"false", "False", "FALSE", "no", "off"})
      if (*s == f) return false;
    error(e.value, e.path, "expected true or false, got " + describe(e.value));
    return std::nullopt;
  }
  template <class E>
  std::optional<E> choice(const Entry& e, std::string_view what) {
    return choice<E>(e.value, e.path, what);
  }
  template <class E>
  std::optional<E> choice(const Node& v, const std::string& path, std::string_view what) {
    const std::string names = join_names(EnumNames<E>::names);
    auto s = scalar(v, path, std::string(what) + " (" + names + ")");
    if (!s) return std::nullopt;
    if (auto x = from_string<E>(*s)) return x;
    error(v, path,
          "unknown " + std::string(what) + " '" + *s + "'" + suggestion(*s, EnumNames<E>::names) +
              "; expected one of " + names);
    return std::nullopt;
  }
  std::optional<std::string> name(const Node& v, const std::string& path, std::string_view what = "a name") {
    auto s = scalar(v, path, what);
    if (!s) return std::nullopt;
    if (valid_name(*s)) return s;
    error(v, path,
          "'" + *s + "' is not a valid name: use letters, digits, '_', and '.' or '-' after the first");
    return std::nullopt;
  }

  template <class T, class Parse>
  void read(const Fields& f, std::string_view key, T& out, Parse parse) {
    if (const Entry* e = f.find(key))
      if (auto v = parse(*e)) out = static_cast<T>(*v);
  }

 private:
  std::string file_;
  std::vector<LoadError> errors_;
  std::vector<Override> overrides_;
};

// ---- command-line overrides ------------------------------------------------

// Sets `key` (a dotted path) to `value` (YAML) in the tree. o.value_column
// says where the value starts in the option's text.
void apply_override(Converter& c, Node root, std::string_view key, std::string_view value, Override o) {
  if (value.empty()) {
    c.command_line_error(o, o.value_column + 1, std::string(key) + ": no value after '='");
    return;
  }
  Node v;
  try {
    v = YAML::Load(std::string(value));
  } catch (const YAML::Exception& ex) {
    c.command_line_error(o, o.value_column + std::max(0, ex.mark.column) + 1,
                         std::string(key) + ": the value is not valid YAML: " + ex.msg);
    return;
  }
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t dot = key.find('.', start);
    parts.emplace_back(
        key.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  Node cur = root;
  std::string path;
  int column = 1;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const bool last = i + 1 == parts.size();
    if (part.empty()) {
      c.command_line_error(o, column, std::string(key) + ": empty part in the key path");
      return;
    }
    Node next;
    if (cur.IsSequence()) {
      size_t idx = 0;
      auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), idx);
      if (ec != std::errc() || p != part.data() + part.size() || idx >= cur.size()) {
        c.command_line_error(o, column,
                             (path.empty() ? std::string("the file") : path) + " is a list of " +
                                 std::to_string(cur.size()) + "; expected an index from 0 to " +
                                 std::to_string(cur.size() == 0 ? 0 : cur.size() - 1) + ", got '" + part +
                                 "'");
        return;
      }
      path = index_path(path, idx);
      if (last)
        cur[idx] = v;
      else
        next.reset(cur[idx]);
    } else if (cur.IsMap() || cur.IsNull()) {
      path = key_path(path, part);
      if (last) {
        cur[part] = v;
      } else {
        if (!cur[part].IsDefined() || cur[part].IsNull()) cur[part] = Node(YAML::NodeType::Map);
        next.reset(cur[part]);
      }
    } else {
      c.command_line_error(o, column, path + " is a single value, so it has no '" + part + "'");
      return;
    }
    if (!last) cur.reset(next);
    column += static_cast<int>(part.size()) + 1;
  }
  o.path = path;
  c.overrides().push_back(o);
}

// Applies one --set text, "key.path=value".
void apply_set(Converter& c, Node root, std::string_view text, Override o) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    c.command_line_error(o, 1, "expected key=value, such as link.bandwidth=25Gbps");
    return;
  }
  o.value_column = static_cast<int>(eq + 1);
  apply_override(c, root, text.substr(0, eq), text.substr(eq + 1), std::move(o));
}

// ---- cost: and --prices FILE (docs/cost.md) -------------------------------

// An amount of money, watts or years: a number from 0 (above 0 if `positive`).
std::optional<double> amount(Converter& c, const Node& v, const std::string& path, bool positive) {
  const std::string what = positive ? "a number above 0" : "a number from 0";
  auto s = c.scalar(v, path, what);
  if (!s) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(s->c_str(), &end);
  if (s->empty() || end != s->c_str() + s->size() || errno != 0 || !std::isfinite(x) || x < 0 ||
      (positive && x == 0)) {
    c.error(v, path, "expected " + what + ", got " + describe(v));
    return std::nullopt;
  }
  return x;
}

void add_cost(Converter& c, std::vector<CostSetting>& out, const Node& at, const std::string& path,
              std::string key, double amount, std::string text = {}) {
  LoadError where = c.locate(at, path, "");
  const std::string shown = path.empty() ? "" : path + ": ";
  out.push_back({std::move(key), amount, std::move(text), where.file, path,
                 where.message.substr(std::min(where.message.size(), shown.size())), where.line, where.column});
}

// The keys of `cost:` (docs/cost.md); item names are checked by cost/.
void read_cost(Converter& c, const Node& v, const std::string& path, std::vector<CostSetting>& out) {
  auto f = c.fields(v, path, "cost settings",
                    {"currency", "energy_price", "pue", "years", "cpu_core_hour", "prices", "watts"});
  if (!f) return;
  for (const Entry& e : f->entries) {
    if (e.value.IsNull()) continue;
    const std::string& k = e.key.Scalar();
    if (k == "currency") {
      if (auto s = c.name(e.value, e.path, "a currency code such as USD")) add_cost(c, out, e.key, e.path, k, 0, *s);
    } else if (k == "prices" || k == "watts") {
      if (!e.value.IsMap()) {
        c.error(e.value, e.path,
                "expected a map of catalogue items to amounts, such as {roce_nic_100g: 900}, got " +
                    describe(e.value));
        continue;
      }
      for (auto it = e.value.begin(); it != e.value.end(); ++it) {
        auto item = c.name(it->first, e.path, "a catalogue item name");
        if (!item) continue;
        const std::string p = key_path(e.path, *item);
        if (auto x = amount(c, it->second, p, false)) add_cost(c, out, it->first, p, k + "." + *item, *x);
      }
    } else if (auto x = amount(c, e.value, e.path, k == "years" || k == "pue")) {
      add_cost(c, out, e.key, e.path, k, *x);
    }
  }
}

// ---- the conversion --------------------------------------------------------

constexpr std::string_view kWorkloadKeys[] = {
    "name",          "kind",       "from",        "to",    "senders",          "hosts",     "qp",
    "size",          "count",      "outstanding", "start", "timeout",          "retry_cnt", "rnr_retry",
    "min_rnr_timer", "post_recvs", "bad_rkey",    "op",    "inline_threshold", "add",       "compare",
    "swap"};

class ExperimentReader {
 public:
  ExperimentReader(Converter& c, ExperimentConfig& x) : c_(c), x_(x) {}

  void read(const Node& root) {
    auto top =
        c_.fields(root, "", "an experiment",
                  {"name", "fabric", "seed", "stop", "link", "flow_control", "pfc", "ecn", "dcqcn", "ip", "switch",
                   "ib", "tcp", "mpa", "host", "vlan", "topology", "workloads", "faults", "capture", "cost"});
    if (!top) return;
    if (auto e = top->find("name"))
      if (auto n = c_.name(e->value, e->path, "the experiment's name")) x_.name = *n;
    c_.read(*top, "fabric", x_.fabric, [&](const Entry& e) { return c_.choice<FabricKind>(e, "fabric"); });
    c_.read(*top, "seed", x_.seed, [&](const Entry& e) { return c_.whole(e, 0, UINT64_MAX); });
    if (auto e = top->find("stop")) {
      if (auto t = c_.time(*e)) {
        if (t->count() > 0)
          x_.stop = *t;
        else
          c_.error(e->value, e->path, "must be above 0");
      }
    }
    if (auto e = top->find("link")) x_.link = link(e->value, e->path, x_.link);
    if (auto e = top->find("flow_control")) {
      auto s = c_.scalar(e->value, e->path, "none or pfc");
      if (s && (*s == "none" || *s == "pfc"))
        x_.pfc = *s == "pfc";
      else if (s)
        c_.error(e->value, e->path, "unknown flow control '" + *s + "'; expected none or pfc");
    }
    if (auto e = top->find("pfc")) pfc(*e);
    if (auto e = top->find("ecn")) ecn(*e);
    if (auto e = top->find("dcqcn")) dcqcn(*e);
    c_.read(*top, "ip", x_.ip, [&](const Entry& e) { return c_.choice<IpVersion>(e, "IP version"); });
    if (auto e = top->find("switch")) switch_block(*e);
    if (auto e = top->find("ib")) ib(*e);
    if (auto e = top->find("tcp")) tcp(*e);
    if (auto e = top->find("mpa")) {
      if (auto f = c_.fields(e->value, e->path, "MPA options", {"markers", "crc", "revision"})) {
        c_.read(*f, "markers", x_.mpa.markers, [&](const Entry& v) { return c_.boolean(v); });
        c_.read(*f, "crc", x_.mpa.crc, [&](const Entry& v) { return c_.boolean(v); });
        c_.read(*f, "revision", x_.mpa.revision, [&](const Entry& v) { return c_.whole(v, 1, 2); });
      }
    }
    if (auto e = top->find("host")) host(*e);
    if (auto e = top->find("vlan")) vlan(*e);
    if (auto e = top->find("capture")) capture(*e);
    if (auto e = top->find("cost")) read_cost(c_, e->value, e->path, x_.cost);

    if (auto e = top->find("topology"))
      topology(e->value, e->path);
    else
      c_.missing(*top, "topology", "hosts, switches and links, or generate");
    // Bad names and links were left out of the topology, so it makes a
    // graph; without hosts, checking workloads against it would only repeat
    // the topology's errors.
    if (!x_.topology.hosts.empty()) graph_.emplace(x_.topology);
    ib_roots();

    if (auto e = top->find("workloads"))
      workloads(e->value, e->path);
    else
      c_.missing(*top, "workloads", "a list such as [{kind: rdma_write, from: a, to: b}]");
    if (auto e = top->find("faults")) faults(e->value, e->path);
    capture_nodes();
    vlan_hosts();
  }

 private:
  // ---- links ----

  void check_mtu(const Node& at, const std::string& path, uint32_t mtu) {
    if (x_.fabric == FabricKind::iwarp) {
      if (mtu < kMinIpMtu || mtu > kMaxIpMtu)
        c_.error(at, path, "iwarp needs an IP MTU from 576 to 9000, got " + std::to_string(mtu));
    } else if (!is_iba_mtu(mtu)) {
      c_.error(at, path,
               std::string(to_string(x_.fabric)) + " needs an IBA MTU: 256, 512, 1024, 2048 or 4096, got " +
                   std::to_string(mtu));
    }
  }

  LinkConfig link(const Node& v, const std::string& path, LinkConfig base) {
    auto f = c_.fields(v, path, "link settings", {"bandwidth", "delay", "mtu", "buffer", "loss"});
    if (!f) return base;
    c_.read(*f, "bandwidth", base.bandwidth, [&](const Entry& e) { return c_.rate(e); });
    c_.read(*f, "delay", base.delay, [&](const Entry& e) { return c_.time(e); });
    if (auto e = f->find("mtu")) {
      if (auto m = c_.whole(*e, 1, 65535)) {
        base.mtu = static_cast<uint32_t>(*m);
        check_mtu(e->value, e->path, base.mtu);
      }
    }
    c_.read(*f, "buffer", base.buffer, [&](const Entry& e) { return c_.bytes(e); });
    c_.read(*f, "loss", base.loss, [&](const Entry& e) { return c_.probability(e); });
    return base;
  }

  // ---- optional blocks ----

  void pfc(const Entry& e) {
    auto f = c_.fields(e.value, e.path, "PFC settings", {"priority", "xoff", "xon"});
    if (!f) return;
    c_.read(*f, "priority", x_.pfc_config.priority, [&](const Entry& v) { return c_.whole(v, 0, 7); });
    c_.read(*f, "xoff", x_.pfc_config.xoff, [&](const Entry& v) { return c_.bytes(v); });
    c_.read(*f, "xon", x_.pfc_config.xon, [&](const Entry& v) { return c_.bytes(v); });
    if (x_.pfc_config.xon > x_.pfc_config.xoff) {
      const Entry* at = f->find("xon") ? f->find("xon") : f->find("xoff");
      c_.error(at ? at->value : e.value, at ? at->path : e.path,
               "xon (" + to_string(x_.pfc_config.xon) + ") must not exceed xoff (" +
                   to_string(x_.pfc_config.xoff) + ")");
    }
  }

  void ecn(const Entry& e) {
    auto f = c_.fields(e.value, e.path, "ECN settings", {"enabled", "kmin", "kmax", "pmax"});
    if (!f) return;
    c_.read(*f, "enabled", x_.ecn.enabled, [&](const Entry& v) { return c_.boolean(v); });
    c_.read(*f, "kmin", x_.ecn.kmin, [&](const Entry& v) { return c_.bytes(v, false); });
    c_.read(*f, "kmax", x_.ecn.kmax, [&](const Entry& v) { return c_.bytes(v); });
    c_.read(*f, "pmax", x_.ecn.pmax, [&](const Entry& v) { return c_.probability(v); });
    if (x_.ecn.kmin > x_.ecn.kmax) {
      const Entry* at = f->find("kmin") ? f->find("kmin") : f->find("kmax");
      c_.error(at ? at->value : e.value, at ? at->path : e.path,
               "kmin (" + to_string(x_.ecn.kmin) + ") must not exceed kmax (" + to_string(x_.ecn.kmax) + ")");
    }
  }

  void dcqcn(const Entry& e) {
    auto f = c_.fields(e.value, e.path, "DCQCN settings",
                       {"enabled", "cnp_interval", "g", "alpha_period", "rate_period", "byte_counter",
                        "fast_recovery", "additive", "hyper", "min_rate"});
    if (!f) return;
    DcqcnConfig& d = x_.dcqcn;
    c_.read(*f, "enabled", d.enabled, [&](const Entry& v) { return c_.boolean(v); });
    c_.read(*f, "cnp_interval", d.cnp_interval, [&](const Entry& v) { return c_.time(v); });
    c_.read(*f, "g", d.g, [&](const Entry& v) { return c_.probability(v); });
    c_.read(*f, "alpha_period", d.alpha_period, [&](const Entry& v) { return positive_time(v); });
    c_.read(*f, "rate_period", d.rate_period, [&](const Entry& v) { return positive_time(v); });
    c_.read(*f, "byte_counter", d.byte_counter, [&](const Entry& v) { return c_.bytes(v); });
    c_.read(*f, "fast_recovery", d.fast_recovery, [&](const Entry& v) { return c_.whole(v, 0, 1000); });
    c_.read(*f, "additive", d.additive, [&](const Entry& v) { return c_.rate(v); });
    c_.read(*f, "hyper", d.hyper, [&](const Entry& v) { return c_.rate(v); });
    c_.read(*f, "min_rate", d.min_rate, [&](const Entry& v) { return c_.rate(v); });
    if (d.g <= 0) {
      const Entry* at = f->find("g");
      c_.error(at->value, at->path, "must be above 0");
    }
    if (d.enabled && !x_.ecn.enabled) {
      const Entry* at = f->find("enabled");
      c_.error(at->value, at->path, "DCQCN reacts to ECN marks: set ecn.enabled: true as well");
    }
  }
  std::optional<Time> positive_time(const Entry& v) {
    auto t = c_.time(v);
    if (t && t->count() <= 0) {
      c_.error(v.value, v.path, "must be above 0");
      return std::nullopt;
    }
    return t;
  }

  void switch_block(const Entry& e) {
    auto f = c_.fields(e.value, e.path, "switch settings", {"latency", "mode"});
    if (!f) return;
    c_.read(*f, "latency", x_.switch_config.latency, [&](const Entry& v) { return c_.time(v); });
    c_.read(*f, "mode", x_.switch_config.mode,
            [&](const Entry& v) { return c_.choice<SwitchMode>(v, "switch mode"); });
  }

  void ib(const Entry& e) {
    auto f = c_.fields(e.value, e.path, "InfiniBand settings", {"routing", "vls", "sl", "roots"});
    if (!f) return;
    c_.read(*f, "routing", x_.ib.routing,
            [&](const Entry& v) { return c_.choice<IbRouting>(v, "IB routing"); });
    if (auto v = f->find("vls")) {
      // PortInfo VLCap: 1, 2, 4, 8 or 15 data VLs.
      if (auto n = c_.whole(*v, 1, 15)) {
        if (*n == 1 || *n == 2 || *n == 4 || *n == 8 || *n == 15)
          x_.ib.vls = static_cast<uint8_t>(*n);
        else
          c_.error(v->value, v->path, "an IB port has 1, 2, 4, 8 or 15 data VLs, got " + std::to_string(*n));
      }
    }
    c_.read(*f, "sl", x_.ib.sl, [&](const Entry& v) { return c_.whole(v, 0, 15); });
    if (auto v = f->find("roots")) {
      roots_ = *v;
      if (!v->value.IsSequence()) {
        c_.error(v->value, v->path, "expected a list of switch names, got " + describe(v->value));
      } else {
        for (size_t i = 0; i < v->value.size(); ++i)
          if (auto n = c_.name(v->value[i], index_path(v->path, i), "a switch name"))
            x_.ib.roots.push_back(*n);
      }
    }
  }

  void tcp(const Entry& e) {
    auto f = c_.fields(e.value, e.path, "TCP settings",
                       {"congestion_control", "delayed_ack", "min_rto", "initial_cwnd", "listen_port"});
    if (!f) return;
    c_.read(*f, "congestion_control", x_.tcp.congestion_control,
            [&](const Entry& v) { return c_.choice<CongestionControl>(v, "congestion control"); });
    if (auto v = f->find("delayed_ack")) {
      if (v->value.IsScalar() && (v->value.Scalar() == "false" || v->value.Scalar() == "off"))
        x_.tcp.delayed_ack = Time();
      else if (auto t = c_.time(*v))
        x_.tcp.delayed_ack = *t;
    }
    c_.read(*f, "min_rto", x_.tcp.min_rto, [&](const Entry& v) { return c_.time(v); });
    c_.read(*f, "initial_cwnd", x_.tcp.initial_cwnd, [&](const Entry& v) { return c_.whole(v, 1, 1000); });
    c_.read(*f, "listen_port", x_.tcp.listen_port, [&](const Entry& v) { return c_.whole(v, 1, 49151); });
  }

  void host(const Entry& e) {
    auto f = c_.fields(e.value, e.path, "host settings",
                       {"completion", "hybrid_spin", "interrupt_coalescing", "doorbell", "pcie", "poll_cost",
                        "interrupt_cost", "post_cost"});
    if (!f) return;
    HostConfig& h = x_.host;
    c_.read(*f, "completion", h.completion,
            [&](const Entry& v) { return c_.choice<Completion>(v, "completion mode"); });
    c_.read(*f, "hybrid_spin", h.hybrid_spin, [&](const Entry& v) { return c_.time(v); });
    if (auto v = f->find("interrupt_coalescing")) {
      if (auto g = c_.fields(v->value, v->path, "interrupt coalescing settings", {"frames", "delay"})) {
        c_.read(*g, "frames", h.interrupt_coalescing.frames,
                [&](const Entry& w) { return c_.whole(w, 1, 65535); });
        c_.read(*g, "delay", h.interrupt_coalescing.delay, [&](const Entry& w) { return c_.time(w); });
      }
    }
    c_.read(*f, "doorbell", h.doorbell, [&](const Entry& v) { return c_.choice<Doorbell>(v, "doorbell"); });
    if (auto v = f->find("pcie")) {
      if (auto g = c_.fields(v->value, v->path, "PCIe settings", {"latency", "bandwidth"})) {
        c_.read(*g, "latency", h.pcie.latency, [&](const Entry& w) { return c_.time(w); });
        c_.read(*g, "bandwidth", h.pcie.bandwidth, [&](const Entry& w) { return c_.rate(w); });
      }
    }
    c_.read(*f, "poll_cost", h.poll_cost, [&](const Entry& v) { return c_.time(v); });
    c_.read(*f, "interrupt_cost", h.interrupt_cost, [&](const Entry& v) { return c_.time(v); });
    c_.read(*f, "post_cost", h.post_cost, [&](const Entry& v) { return c_.time(v); });
  }

  void vlan(const Entry& e) {
    auto f = c_.fields(e.value, e.path, "VLAN settings", {"id", "pcp", "hosts"});
    if (!f) return;
    VlanConfig v;
    c_.read(*f, "id", v.id,
            [&](const Entry& w) { return c_.whole(w, 1, 4094); });  // 802.1Q: 0 and 4095 reserved
    c_.read(*f, "pcp", v.pcp, [&](const Entry& w) { return c_.whole(w, 0, 7); });
    if (auto h = f->find("hosts")) {
      // hosts: {c: 200, d: 200} puts hosts in other VLANs; names are checked
      // once the topology is known (vlan_hosts()).
      if (!h->value.IsMap()) {
        c_.error(h->value, h->path, "expected a map of host name to VLAN id, such as {c: 200}, got " +
                                        describe(h->value));
      } else {
        for (auto it = h->value.begin(); it != h->value.end(); ++it) {
          const Entry item{it->first, it->second, key_path(h->path, it->first.Scalar())};
          if (auto vid = c_.whole(item, 1, 4094)) {
            v.hosts[it->first.Scalar()] = static_cast<uint16_t>(*vid);
            vlan_host_keys_.push_back(item);
          }
        }
      }
    }
    x_.vlan = v;
  }

  void vlan_hosts() {
    for (const Entry& e : vlan_host_keys_) {
      const std::string n = e.key.Scalar();
      if (graph_ && !graph_->find(n))
        c_.error(e.key, e.path, unknown_node(n));
      else if (graph_ && !graph_->is_host(*graph_->find(n)))
        c_.error(e.key, e.path, "'" + n + "' is not a host: only hosts are put in VLANs (switch ports carry them all)");
    }
  }

  void capture(const Entry& e) {
    auto f = c_.fields(e.value, e.path, "capture settings", {"pcap", "ib_linktype", "snaplen", "max_bytes"});
    if (!f) return;
    if (auto p = f->find("pcap")) {
      capture_list_ = *p;
      if (p->value.IsSequence()) {
        x_.capture.mode = CaptureMode::list;
      } else if (auto s = c_.scalar(p->value, p->path, "none, hosts, all or a list of node names")) {
        auto m = from_string<CaptureMode>(*s);
        if (m && *m != CaptureMode::list)
          x_.capture.mode = *m;
        else
          c_.error(p->value, p->path,
                   "expected none, hosts, all or a list of node names, got " + describe(p->value));
      }
    }
    if (auto v = f->find("ib_linktype")) {
      auto s = c_.scalar(v->value, v->path, "erf or infiniband");
      if (s && (*s == "erf" || *s == "infiniband"))
        x_.capture.ib_linktype_infiniband = *s == "infiniband";
      else if (s)
        c_.error(v->value, v->path, "unknown linktype '" + *s + "'; expected erf (197) or infiniband (247)");
    }
    c_.read(*f, "snaplen", x_.capture.snaplen, [&](const Entry& v) { return c_.whole(v, 64, 262144); });
    c_.read(*f, "max_bytes", x_.capture.max_bytes, [&](const Entry& v) { return c_.bytes(v); });
  }

  void capture_nodes() {
    if (x_.capture.mode != CaptureMode::list || !capture_list_) return;
    const Entry& p = *capture_list_;
    std::map<std::string, int> seen;
    for (size_t i = 0; i < p.value.size(); ++i) {
      const std::string path = index_path(p.path, i);
      auto n = c_.name(p.value[i], path, "a node name");
      if (!n) continue;
      if (!seen.emplace(*n, 0).second)
        c_.error(p.value[i], path, "'" + *n + "' is listed twice");
      else if (graph_ && !graph_->find(*n))
        c_.error(p.value[i], path, unknown_node(*n));
      else
        x_.capture.nodes.push_back(*n);
    }
  }

  // ---- topology ----

  std::string unknown_node(const std::string& n) const {
    std::vector<std::string_view> all;
    for (const auto* list : {&x_.topology.hosts, &x_.topology.switches, &x_.topology.routers})
      all.insert(all.end(), list->begin(), list->end());
    return "unknown node '" + n + "'" + suggestion(n, all) +
           "; nodes are the hosts, switches and routers of the topology";
  }

  void topology(const Node& v, const std::string& path) {
    auto f = c_.fields(v, path, "a topology", {"hosts", "switches", "routers", "links", "generate"});
    if (!f) return;
    if (const Entry* g = f->find("generate")) {
      for (std::string_view k : {"hosts", "switches", "routers", "links"}) {
        if (f->has(k)) {
          c_.error(g->key, g->path, "give either generate or hosts, switches, routers and links, not both");
          return;
        }
      }
      generate(*g);
    } else {
      lists(*f);
    }
    if (x_.fabric == FabricKind::ib) ib_limits(v, path);
  }

  void generate(const Entry& g) {
    if (!g.value.IsMap())
      return c_.error(g.value, g.path,
                      "expected a generator such as {kind: fat_tree, k: 4}, got " + describe(g.value));
    const Node kn = g.value["kind"];
    const std::string kp = g.path + ".kind";
    if (!kn || kn.IsNull())
      return c_.error(g.value, g.path, "missing key 'kind' (leaf_spine, fat_tree or star)");
    auto ks = c_.scalar(kn, kp, "leaf_spine, fat_tree or star");
    if (!ks) return;
    auto kind = from_string<GeneratorKind>(*ks);
    std::vector<std::string_view> allowed = {"kind", "host_link"};
    if (kind == GeneratorKind::leaf_spine)
      allowed.insert(allowed.end(), {"spines", "leaves", "hosts_per_leaf", "fabric_link"});
    else if (kind == GeneratorKind::fat_tree)
      allowed.insert(allowed.end(), {"k", "fabric_link"});
    else if (kind == GeneratorKind::star)
      allowed.push_back("hosts");
    else
      return c_.error(kn, kp, "unknown generator '" + *ks + "'; expected leaf_spine, fat_tree or star");
    const size_t before = c_.errors().size();
    auto f = c_.fields(g.value, g.path, std::string(to_string(*kind)) + " settings", allowed);
    if (!f || c_.errors().size() != before) return;
    auto count = [&](std::string_view key, uint64_t lo, uint64_t hi,
                     const char* why) -> std::optional<uint32_t> {
      const Entry* e = f->find(key);
      if (!e) {
        c_.missing(*f, key, why);
        return std::nullopt;
      }
      auto n = c_.whole(*e, lo, hi);
      return n ? std::optional<uint32_t>(static_cast<uint32_t>(*n)) : std::nullopt;
    };
    LinkConfig host_link = x_.link, fabric_link = x_.link;
    if (auto e = f->find("host_link")) host_link = link(e->value, e->path, x_.link);
    if (auto e = f->find("fabric_link")) fabric_link = link(e->value, e->path, x_.link);
    if (*kind == GeneratorKind::leaf_spine) {
      auto spines = count("spines", 1, 1024, "how many spine switches");
      auto leaves = count("leaves", 1, 4096, "how many leaf switches");
      auto per = count("hosts_per_leaf", 1, 4096, "how many hosts on each leaf");
      if (!spines || !leaves || !per) return;
      if (uint64_t{*leaves} * *per > 65536) {
        return c_.error(g.value, g.path,
                        "at most 65536 hosts, got " + std::to_string(uint64_t{*leaves} * *per));
      }
      x_.topology = generate_leaf_spine(*spines, *leaves, *per, host_link, fabric_link);
    } else if (*kind == GeneratorKind::fat_tree) {
      auto k = count("k", 2, 64, "switch radix, an even number");
      if (!k) return;
      if (*k % 2)
        return c_.error(f->find("k")->value, f->find("k")->path, "k must be even, got " + std::to_string(*k));
      x_.topology = generate_fat_tree(*k, host_link, fabric_link);
    } else {
      auto n = count("hosts", 1, 65536, "how many hosts on the switch");
      if (!n) return;
      x_.topology = generate_star(*n, host_link);
    }
    const YAML::Mark m = mark_of(g.key);
    for (LinkSpec& l : x_.topology.links) l.line = m.line + 1, l.column = m.column + 1;
  }

  void lists(const Fields& f) {
    TopologyConfig& t = x_.topology;
    std::unordered_map<std::string, int> line_of;  // every node name -> the line it was declared on
    std::vector<Node> host_nodes;
    std::vector<std::string> host_paths;
    auto names = [&](std::string_view key, std::vector<std::string>& out, bool hosts) {
      const Entry* e = f.find(key);
      if (!e) return;
      if (!e->value.IsSequence()) {
        c_.error(e->value, e->path, "expected a list of names such as [a, b], got " + describe(e->value));
        return;
      }
      for (size_t i = 0; i < e->value.size(); ++i) {
        const std::string path = index_path(e->path, i);
        auto n = c_.name(e->value[i], path);
        if (!n) continue;
        const int line = mark_of(e->value[i]).line + 1;
        if (auto [at, fresh] = line_of.emplace(*n, line); !fresh) {
          c_.error(e->value[i], path,
                   "duplicate name '" + *n + "' (first at line " + std::to_string(at->second) + ")");
          continue;
        }
        out.push_back(*n);
        if (hosts) host_nodes.push_back(e->value[i]), host_paths.push_back(path);
      }
    };
    names("hosts", t.hosts, true);
    names("switches", t.switches, false);
    names("routers", t.routers, false);
    if (const Entry* h = f.find("hosts"); !h)
      c_.missing(f, "hosts", "a list of host names");
    else if (h->value.IsSequence() && h->value.size() == 0)
      c_.error(h->value, h->path, "at least one host");
    if (const Entry* r = f.find("routers"); r && x_.fabric == FabricKind::ib && !t.routers.empty())
      c_.error(r->value, r->path, "ib has no routers here (one subnet, one subnet manager); use switches");

    const Entry* le = f.find("links");
    if (!le) return c_.missing(f, "links", "a list such as [[a, s1], [b, s1]]");
    if (!le->value.IsSequence())
      return c_.error(le->value, le->path,
                      "expected a list of links such as [a, s1], got " + describe(le->value));
    std::map<std::pair<std::string, std::string>, int> seen;  // unordered pair -> line
    std::unordered_map<std::string, int> links_of;
    for (size_t i = 0; i < le->value.size(); ++i) {
      const Node l = le->value[i];
      const std::string path = index_path(le->path, i);
      if (!l.IsSequence() || l.size() < 2 || l.size() > 3) {
        c_.error(l, path, "expected [a, b] or [a, b, {bandwidth: 25Gbps, ...}], got " + describe(l));
        continue;
      }
      auto a = c_.name(l[0], index_path(path, 0), "a node name");
      auto b = c_.name(l[1], index_path(path, 1), "a node name");
      LinkSpec spec{a.value_or(""), b.value_or(""), x_.link};
      if (l.size() == 3) spec.config = link(l[2], index_path(path, 2), x_.link);
      if (!a || !b) continue;
      bool known = true;
      for (size_t end = 0; end < 2; ++end) {
        if (!line_of.count(end ? *b : *a)) {
          c_.error(l[end], index_path(path, end), unknown_node(end ? *b : *a));
          known = false;
        }
      }
      if (!known) continue;
      if (*a == *b) {
        c_.error(l, path, "a link from '" + *a + "' to itself");
        continue;
      }
      const int line = mark_of(l).line + 1;
      if (auto [at, fresh] = seen.emplace(std::minmax(*a, *b), line); !fresh) {
        c_.error(l, path,
                 "duplicate link between '" + *a + "' and '" + *b + "' (first at line " +
                     std::to_string(at->second) + ")");
        continue;
      }
      ++links_of[*a];
      ++links_of[*b];
      const YAML::Mark m = mark_of(l);
      spec.line = m.line + 1;
      spec.column = m.column + 1;
      t.links.push_back(std::move(spec));
    }
    for (size_t i = 0; i < t.hosts.size(); ++i)
      if (!links_of.count(t.hosts[i]))
        c_.error(host_nodes[i], host_paths[i], "host '" + t.hosts[i] + "' has no link");
  }

  void ib_limits(const Node& at, const std::string& path) {
    const TopologyConfig& t = x_.topology;
    // Unicast LIDs are 0x0001..0xBFFF.
    const size_t nodes = t.hosts.size() + t.switches.size() + t.routers.size();
    if (nodes > 0xBFFF)
      c_.error(at, path,
               "ib gives every node a unicast LID: at most 49151 nodes, got " + std::to_string(nodes));
    std::unordered_map<std::string, int> ports;
    for (const LinkSpec& l : t.links) ++ports[l.a], ++ports[l.b];
    for (const std::string& s : t.switches) {
      // Forwarding tables hold 8-bit port numbers; 0 is the switch itself and 255 is reserved.
      if (ports[s] > 254) {
        c_.error(at, path,
                 "IB switch '" + s + "' would need " + std::to_string(ports[s]) +
                     " ports; an IB switch has at most 254 (8-bit port numbers, 0 and 255 reserved)");
        break;
      }
    }
  }

  // Keeps the roots that are switches; reports the others.
  void ib_roots() {
    if (!roots_ || !graph_) return;
    std::vector<std::string> valid;
    for (size_t i = 0; i < roots_->value.size(); ++i) {
      const Node n = roots_->value[i];
      const auto v = n.IsScalar() ? graph_->find(n.Scalar()) : std::nullopt;
      if (v && graph_->kind(*v) == NodeKind::switch_node)
        valid.push_back(n.Scalar());
      else if (n.IsScalar())
        c_.error(n, index_path(roots_->path, i), "'" + n.Scalar() + "' is not a switch of the topology");
    }
    x_.ib.roots = std::move(valid);
  }

  // ---- workloads ----

  // A host name for a workload endpoint.
  std::optional<std::string> host_name(const Node& v, const std::string& path) {
    auto n = c_.name(v, path, "a host name");
    if (!n || !graph_) return n;
    const auto i = graph_->find(*n);
    if (!i) {
      c_.error(v, path, "unknown host '" + *n + "'" + suggestion(*n, x_.topology.hosts));
      return std::nullopt;
    }
    if (!graph_->is_host(*i)) {
      c_.error(v, path,
               "'" + *n + "' is a " + (graph_->kind(*i) == NodeKind::router ? "router" : "switch") +
                   "; workloads run between hosts");
      return std::nullopt;
    }
    return n;
  }

  std::optional<std::string> one_host(const Fields& f, std::string_view key) {
    const Entry* e = f.find(key);
    if (!e) {
      c_.missing(f, key, "a host name");
      return std::nullopt;
    }
    if (e->value.IsSequence()) {
      c_.error(e->value, e->path, "expected one host name, got a list (only incast takes a list of senders)");
      return std::nullopt;
    }
    return host_name(e->value, e->path);
  }

  std::optional<std::vector<std::string>> host_list(const Entry& e) {
    if (!e.value.IsSequence()) {
      auto n = host_name(e.value, e.path);
      if (!n) return std::nullopt;
      return std::vector<std::string>{*n};
    }
    std::vector<std::string> out;
    bool ok = true;
    for (size_t i = 0; i < e.value.size(); ++i) {
      const std::string path = index_path(e.path, i);
      auto n = host_name(e.value[i], path);
      if (!n) {
        ok = false;
      } else if (std::find(out.begin(), out.end(), *n) != out.end()) {
        c_.error(e.value[i], path, "'" + *n + "' is listed twice");
        ok = false;
      } else {
        out.push_back(*n);
      }
    }
    if (ok && out.empty()) {
      c_.error(e.value, e.path, "the list is empty");
      return std::nullopt;
    }
    return ok ? std::optional(out) : std::nullopt;
  }

  void workloads(const Node& v, const std::string& path) {
    if (!v.IsSequence()) {
      c_.error(v, path, "expected a list of workloads, got " + describe(v));
      return;
    }
    if (v.size() == 0) c_.error(v, path, "at least one workload");
    std::unordered_map<std::string, int> names;  // name -> line
    for (size_t i = 0; i < v.size(); ++i) {
      WorkloadConfig w;
      w.name = "w" + std::to_string(i);
      const std::string wp = index_path(path, i);
      const size_t before = c_.errors().size();
      if (!workload(v[i], wp, w)) continue;
      const int line = mark_of(v[i]).line + 1;
      if (auto [at, fresh] = names.emplace(w.name, line); !fresh) {
        const Node n = v[i].IsMap() && v[i]["name"] ? v[i]["name"] : v[i];
        c_.error(
            n, wp + ".name",
            "duplicate workload name '" + w.name + "' (first at line " + std::to_string(at->second) + ")");
      }
      if (c_.errors().size() == before) reachability(v[i], wp, w);
      x_.workloads.push_back(std::move(w));
    }
  }

  bool workload(const Node& v, const std::string& path, WorkloadConfig& w) {
    const std::vector<std::string_view> all(std::begin(kWorkloadKeys), std::end(kWorkloadKeys));
    auto f = c_.fields(v, path, "a workload", all);
    if (!f) return false;
    const YAML::Mark m = mark_of(v);
    w.line = m.line + 1;
    w.column = m.column + 1;
    const Entry* ke = f->find("kind");
    if (!ke) {
      c_.missing(*f, "kind", "one of " + join_names(EnumNames<WorkloadKind>::names));
      return false;
    }
    auto kind = c_.choice<WorkloadKind>(*ke, "workload kind");
    if (!kind) return false;
    w.kind = *kind;
    if (auto e = f->find("name"))
      if (auto n = c_.name(e->value, e->path, "a workload name")) w.name = *n;

    // Keys that belong to other kinds.
    auto only = [&](std::string_view key, bool allowed, const std::string& why) {
      if (const Entry* e = f->find(key); e && !allowed) c_.error(e->key, e->path, why);
    };
    const std::string kind_name(to_string(w.kind));
    only("senders", w.kind == WorkloadKind::incast, "only incast takes senders, not " + kind_name);
    only("hosts", w.kind == WorkloadKind::all_to_all,
         "only all_to_all takes hosts; " + kind_name + " takes from and to");
    only("from", w.kind != WorkloadKind::all_to_all, "all_to_all takes hosts: [list], not from and to");
    only("to", w.kind != WorkloadKind::all_to_all, "all_to_all takes hosts: [list], not from and to");
    const bool atomic_kind = w.kind == WorkloadKind::atomic_bw || w.kind == WorkloadKind::atomic_lat;
    only("op", is_pattern(w.kind) || atomic_kind,
         "only incast, all_to_all, pingpong, atomic_bw and atomic_lat take op; " + kind_name +
             " implies its operation");

    // The basic operation.
    WorkloadKind op = w.kind;
    const Entry* ope = f->find("op");
    if (is_pattern(w.kind)) op = WorkloadKind::rdma_write;
    switch (w.kind) {
      case WorkloadKind::write_bw:
      case WorkloadKind::write_lat:
        op = WorkloadKind::rdma_write;
        break;
      case WorkloadKind::read_bw:
      case WorkloadKind::read_lat:
        op = WorkloadKind::rdma_read;
        break;
      case WorkloadKind::send_bw:
      case WorkloadKind::send_lat:
        op = WorkloadKind::send;
        break;
      case WorkloadKind::atomic_bw:
      case WorkloadKind::atomic_lat:
        op = WorkloadKind::atomic_fadd;
        break;
      default:
        break;
    }
    if (ope && (is_pattern(w.kind) || atomic_kind)) {
      auto o = c_.choice<WorkloadKind>(*ope, "operation");
      if (!o) return false;
      if (!is_basic(*o)) {
        c_.error(ope->value, ope->path,
                 "op must be a basic operation: send, send_imm, rdma_write, rdma_write_imm, "
                 "rdma_read, atomic_cas or atomic_fadd");
        return false;
      }
      if (atomic_kind && !is_atomic(*o)) {
        c_.error(ope->value, ope->path, "atomic_bw and atomic_lat take op: atomic_cas or atomic_fadd");
        return false;
      }
      op = *o;
    }
    w.op = std::string(to_string(op));
    const Entry& op_at = ope ? *ope : *ke;  // where to point at errors about the operation

    // Endpoints.
    const size_t hosts = x_.topology.hosts.size();
    if (w.kind == WorkloadKind::all_to_all) {
      if (const Entry* e = f->find("hosts")) {
        if (auto l = host_list(*e)) w.from = *l;
        if (w.from.size() == 1) c_.error(e->value, e->path, "all_to_all needs at least two hosts");
      } else if (graph_) {
        w.from = x_.topology.hosts;
        if (hosts < 2) c_.error(v, path, "all_to_all needs at least two hosts");
      }
      w.to = w.from;
    } else if (w.kind == WorkloadKind::incast) {
      if (auto to = one_host(*f, "to")) w.to = {*to};
      const Entry* fe = f->find("from");
      const Entry* se = f->find("senders");
      if (fe && se) {
        c_.error(se->key, se->path, "give either from (a list of senders) or senders (a count), not both");
      } else if (fe) {
        if (auto l = host_list(*fe)) {
          w.from = *l;
          if (!w.to.empty() && std::find(w.from.begin(), w.from.end(), w.to[0]) != w.from.end())
            c_.error(fe->value, fe->path, "'" + w.to[0] + "' is both a sender and the receiver");
        }
      } else if (se) {
        if (auto n = c_.whole(*se, 1, std::max<size_t>(hosts, 2) - 1)) {
          // The first n hosts other than the receiver, in topology order.
          for (const std::string& h : x_.topology.hosts)
            if (w.from.size() < *n && (w.to.empty() || h != w.to[0])) w.from.push_back(h);
        }
      } else {
        c_.missing(*f, "from", "incast needs from: [senders] or senders: N");
      }
    } else {
      auto from = one_host(*f, "from");
      auto to = one_host(*f, "to");
      if (from) w.from = {*from};
      if (to) w.to = {*to};
      if (from && to && *from == *to)
        c_.error(f->find("to")->value, f->find("to")->path, "from and to are the same host '" + *to + "'");
    }

    // Amounts and timing.
    const Entry* se = f->find("size");
    if (is_atomic(op)) w.size = Bytes(8);
    if (se) {
      if (auto b = c_.bytes(*se, /*positive=*/false)) {  // zero-length messages are legal verbs
        w.size = *b;
        if (is_atomic(op) && b->count() != 8)
          c_.error(se->value, se->path,
                   "atomic operations move exactly 8 bytes (one 64-bit word), got " + to_string(*b));
      }
    }
    c_.read(*f, "count", w.count, [&](const Entry& e) { return c_.whole(e, 1, UINT64_MAX); });
    // A QP's send queue holds 16384 work requests (the RNIC's max_qp_wr); a
    // workload keeps one more than `outstanding` posted.
    c_.read(*f, "outstanding", w.outstanding, [&](const Entry& e) { return c_.whole(e, 1, 16383); });
    c_.read(*f, "start", w.start, [&](const Entry& e) { return c_.time(e); });
    c_.read(*f, "timeout", w.timeout, [&](const Entry& e) { return c_.whole(e, 0, 31); });
    c_.read(*f, "retry_cnt", w.retry_cnt, [&](const Entry& e) { return c_.whole(e, 0, 7); });
    c_.read(*f, "rnr_retry", w.rnr_retry, [&](const Entry& e) { return c_.whole(e, 0, 7); });
    c_.read(*f, "min_rnr_timer", w.min_rnr_timer, [&](const Entry& e) { return c_.whole(e, 0, 31); });
    c_.read(*f, "post_recvs", w.post_recvs, [&](const Entry& e) { return c_.boolean(e); });
    c_.read(*f, "bad_rkey", w.bad_rkey, [&](const Entry& e) { return c_.boolean(e); });
    c_.read(*f, "inline_threshold", w.inline_threshold,
            [&](const Entry& e) { return c_.whole(e, 0, 65536); });
    if (const Entry* e = f->find("bad_rkey");
        e && w.bad_rkey && (op == WorkloadKind::send || op == WorkloadKind::send_imm))
      c_.error(e->value, e->path, "SEND uses no rkey; bad_rkey applies to RDMA and atomic operations");

    // Atomic operands.
    only("add", op == WorkloadKind::atomic_fadd, "add is only for atomic_fadd, not " + w.op);
    only("compare", op == WorkloadKind::atomic_cas, "compare is only for atomic_cas, not " + w.op);
    only("swap", op == WorkloadKind::atomic_cas, "swap is only for atomic_cas, not " + w.op);
    if (op == WorkloadKind::atomic_cas) w.compare_add = 0;
    c_.read(*f, "add", w.compare_add, [&](const Entry& e) { return c_.whole(e, 0, UINT64_MAX); });
    c_.read(*f, "compare", w.compare_add, [&](const Entry& e) { return c_.whole(e, 0, UINT64_MAX); });
    c_.read(*f, "swap", w.swap, [&](const Entry& e) { return c_.whole(e, 0, UINT64_MAX); });

    // What the transport can carry: the operations each IBA service type supports; RFC 5040 for iWARP.
    const Entry* qe = f->find("qp");
    if (qe) {
      auto q = c_.choice<QpType>(*qe, "QP type");
      if (!q) return false;
      w.qp = *q;
    }
    const Entry& qp_at = qe ? *qe : *ke;
    if (x_.fabric == FabricKind::iwarp) {
      if (w.qp != QpType::rc)
        c_.error(qp_at.value, qp_at.path,
                 "iwarp has only reliable connections (RFC 5040): no " + std::string(to_string(w.qp)) +
                     " QPs; use qp: rc");
      if (is_atomic(op))
        c_.error(op_at.value, op_at.path,
                 "iwarp has no atomic operations (RFC 5040); " + w.op + " is not available");
      if (has_immediate(op))
        c_.error(op_at.value, op_at.path,
                 "iwarp has no immediate data (RFC 5040); " + w.op + " is not available");
    } else if (w.qp == QpType::ud && op != WorkloadKind::send && op != WorkloadKind::send_imm) {
      c_.error(qp_at.value, qp_at.path,
               "UD QPs carry only SEND; " + w.op + " needs qp: rc" +
                   (op == WorkloadKind::rdma_write || op == WorkloadKind::rdma_write_imm ? " or uc" : ""));
    } else if (w.qp == QpType::uc && (op == WorkloadKind::rdma_read || is_atomic(op))) {
      c_.error(qp_at.value, qp_at.path, "UC QPs have no RDMA READ or atomics; " + w.op + " needs qp: rc");
    }
    if (w.qp == QpType::ud && x_.fabric != FabricKind::iwarp &&
        (op == WorkloadKind::send || op == WorkloadKind::send_imm)) {
      const uint32_t mtu = smallest_mtu();
      if (w.size.count() > mtu) {
        const Entry& at = se ? *se : *ke;
        c_.error(at.value, at.path,
                 "a UD message fits in one packet: at most the path MTU (" + std::to_string(mtu) +
                     " bytes), got " + to_string(w.size));
      }
    } else if (w.size.count() > (uint64_t{1} << 31) && se) {
      c_.error(se->value, se->path,
               "a message is at most 2GiB (2^31 bytes, the IBA limit), got " + to_string(w.size));
    }
    return true;
  }

  uint32_t smallest_mtu() const {
    uint32_t mtu = x_.link.mtu;
    for (const LinkSpec& l : x_.topology.links) mtu = std::min(mtu, l.config.mtu);
    return mtu;
  }

  // Can every sender reach its receiver (and back)?
  void reachability(const Node& v, const std::string& path, const WorkloadConfig& w) {
    if (!graph_) return;
    const Graph& g = *graph_;
    if (!routed_) {
      routed_ = link_groups(g, true);
      bridged_ = link_groups(g, false);
    }
    std::vector<int> from, to;
    for (const std::string& n : w.from) from.push_back(*g.find(n));
    for (const std::string& n : w.to) to.push_back(*g.find(n));
    // RoCE v1: hosts in different VLANs are in different broadcast domains.
    if (x_.fabric == FabricKind::roce_v1 && x_.vlan) {
      for (const std::string& a : w.from) {
        for (const std::string& b : w.to) {
          if (a != b && x_.vlan->of(a) != x_.vlan->of(b)) {
            c_.error(v, path,
                     a + " (VLAN " + std::to_string(x_.vlan->of(a)) + ") and " + b + " (VLAN " +
                         std::to_string(x_.vlan->of(b)) +
                         ") are in different broadcast domains: roce_v1 frames cannot leave their VLAN; "
                         "use roce_v2 or put them in one VLAN");
            return;
          }
        }
      }
    }
    const bool updown = x_.fabric == FabricKind::ib && x_.ib.routing == IbRouting::updown;
    // The common case, all in one network, needs no look at every pair.
    if (!updown && common_group(x_.fabric == FabricKind::roce_v1 ? *bridged_ : *routed_, from, to)) return;
    for (int a : from) {
      for (int b : to) {
        if (a == b) continue;
        const bool connected = common_group(*routed_, {a}, {b});
        if (!connected) {
          c_.error(v, path,
                   g.name(a) + " cannot reach " + g.name(b) + ": no path through switches and routers");
          return;
        }
        if (x_.fabric == FabricKind::roce_v1 && !common_group(*bridged_, {a}, {b})) {
          c_.error(v, path,
                   g.name(a) + " and " + g.name(b) +
                       " are in different broadcast domains (a router separates them): roce_v1 frames "
                       "cannot be routed; use roce_v2 or put them on one L2 network");
          return;
        }
        if (updown) {
          if (!ib_table_) {
            std::vector<int> roots;
            for (const std::string& r : x_.ib.roots) roots.push_back(*g.find(r));
            ib_table_ = ib_forwarding(g, IbRouting::updown, roots);
          }
          if (!ib_path(g, *ib_table_, a, b) || !ib_path(g, *ib_table_, b, a)) {
            c_.error(v, path,
                     g.name(a) + " and " + g.name(b) +
                         " have no legal up*/down* path between them; name the top switches in ib.roots "
                         "or use ib.routing: min_hop");
            return;
          }
        }
      }
    }
  }

  // Links joined at every node that forwards (switches, and routers when
  // through_routers): two hosts reach each other when one of their links
  // shares a group. Per host, its groups, ascending.
  static std::vector<std::vector<int>> link_groups(const Graph& g, bool through_routers) {
    std::vector<int> parent(static_cast<size_t>(g.link_count()));
    for (size_t i = 0; i < parent.size(); ++i) parent[i] = static_cast<int>(i);
    auto find = [&](int x) {
      while (parent[x] != x) x = parent[x] = parent[parent[x]];
      return x;
    };
    for (int n = g.host_count(); n < g.size(); ++n) {
      if (g.kind(n) == NodeKind::router && !through_routers) continue;
      const auto ports = g.ports(n);
      for (size_t p = 1; p < ports.size(); ++p) parent[find(ports[p].link)] = find(ports[0].link);
    }
    std::vector<std::vector<int>> groups(static_cast<size_t>(g.host_count()));
    for (int h = 0; h < g.host_count(); ++h) {
      for (const Graph::Port& p : g.ports(h)) groups[h].push_back(find(p.link));
      std::sort(groups[h].begin(), groups[h].end());
    }
    return groups;
  }

  // Is there one group every host of `from` and `to` is in?
  static bool common_group(const std::vector<std::vector<int>>& groups, const std::vector<int>& from,
                           const std::vector<int>& to) {
    std::vector<int> common = groups[from.front()];
    for (const auto* list : {&from, &to}) {
      for (int h : *list) {
        std::vector<int> both;
        std::set_intersection(common.begin(), common.end(), groups[h].begin(), groups[h].end(),
                              std::back_inserter(both));
        common = std::move(both);
      }
    }
    return !common.empty();
  }

  // ---- faults ----

  void faults(const Node& v, const std::string& path) {
    if (!v.IsSequence()) {
      c_.error(
          v, path,
          "expected a list of faults such as [{at: 50us, link: [a, s1], action: down}], got " + describe(v));
      return;
    }
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string fp = index_path(path, i);
      auto f = c_.fields(v[i], fp, "a fault", {"at", "link", "action"});
      if (!f) continue;
      FaultConfig fault;
      const YAML::Mark m = mark_of(v[i]);
      fault.line = m.line + 1;
      fault.column = m.column + 1;
      bool ok = true;
      if (const Entry* e = f->find("at")) {
        if (auto t = c_.time(*e))
          fault.at = *t;
        else
          ok = false;
      } else {
        c_.missing(*f, "at", "when, such as 50us");
        ok = false;
      }
      if (const Entry* e = f->find("action")) {
        auto s = c_.scalar(e->value, e->path, "down or up");
        if (s && (*s == "down" || *s == "up")) {
          fault.up = *s == "up";
        } else {
          if (s) c_.error(e->value, e->path, "unknown action '" + *s + "'; expected down or up");
          ok = false;
        }
      } else {
        c_.missing(*f, "action", "down or up");
        ok = false;
      }
      const Entry* le = f->find("link");
      if (!le) {
        c_.missing(*f, "link", "the link's two ends, such as [a, s1]");
        continue;
      }
      if (!le->value.IsSequence() || le->value.size() != 2) {
        c_.error(le->value, le->path,
                 "expected the link's two ends, such as [a, s1], got " + describe(le->value));
        continue;
      }
      auto a = c_.name(le->value[0], index_path(le->path, 0), "a node name");
      auto b = c_.name(le->value[1], index_path(le->path, 1), "a node name");
      if (!a || !b || !graph_) continue;
      const auto ia = graph_->find(*a), ib = graph_->find(*b);
      if (!ia) c_.error(le->value[0], index_path(le->path, 0), unknown_node(*a));
      if (!ib) c_.error(le->value[1], index_path(le->path, 1), unknown_node(*b));
      if (!ia || !ib) continue;
      const auto l = graph_->find_link(*ia, *ib);
      if (!l) {
        c_.error(le->value, le->path, "there is no link between '" + *a + "' and '" + *b + "'");
        continue;
      }
      fault.a = *a;
      fault.b = *b;
      fault.link = static_cast<size_t>(*l);
      if (ok) x_.faults.push_back(std::move(fault));
    }
  }

  Converter& c_;
  ExperimentConfig& x_;
  std::optional<Graph> graph_;
  std::optional<Entry> roots_, capture_list_;
  std::vector<Entry> vlan_host_keys_;
  std::optional<ForwardingTable> ib_table_;
  std::optional<std::vector<std::vector<int>>> routed_, bridged_;  // link_groups()
};

LoadResult finish(Converter& c, ExperimentConfig&& x) {
  LoadResult r;
  auto& errors = c.errors();
  std::stable_sort(errors.begin(), errors.end(), [](const LoadError& a, const LoadError& b) {
    auto key = [](const LoadError& e) { return std::make_tuple(e.file != kCommandLine, e.line, e.column); };
    return key(a) < key(b);
  });
  r.errors = std::move(errors);
  if (r.errors.empty()) r.config = std::move(x);
  return r;
}

// YAML text to a tree; false (and the error) for a syntax error.
bool parse_yaml(Converter& c, std::string_view text, const std::filesystem::path& file, Node& root) {
  try {
    root = YAML::Load(std::string(text));
    return true;
  } catch (const YAML::ParserException& ex) {
    c.errors().push_back({file.string(), ex.mark.line + 1, ex.mark.column + 1, "YAML syntax: " + ex.msg});
  } catch (const YAML::Exception& ex) {
    c.errors().push_back({file.string(), std::max(1, ex.mark.line + 1), std::max(1, ex.mark.column + 1),
                          "cannot read YAML: " + ex.msg});
  }
  return false;
}

// The whole file, or nothing and why.
std::optional<std::string> read_text(const std::filesystem::path& file, std::string& why) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec))
    why = "cannot open the file: no such file";
  else if (std::filesystem::is_directory(file, ec))
    why = "cannot read the file: it is a directory";
  std::ifstream in;
  if (why.empty()) {
    in.open(file, std::ios::binary);
    if (!in) why = std::string("cannot open the file: ") + std::strerror(errno);
  }
  if (!why.empty()) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    why = "cannot read the file";
    return std::nullopt;
  }
  return text.str();
}

LoadResult load(std::optional<std::string_view> text, std::string read_error,
                const std::filesystem::path& file, const std::vector<std::string>& sets,
                const std::optional<std::string>& fabric, const std::optional<uint64_t>& seed) {
  Converter c(file.string());
  ExperimentConfig x;
  x.file = file;
  x.name = file.stem().string();
  if (!text) {
    c.errors().push_back({file.string(), 1, 1, read_error});
    return finish(c, std::move(x));
  }
  Node root;
  if (!parse_yaml(c, *text, file, root)) return finish(c, std::move(x));
  if (!root.IsMap()) {
    if (root.IsNull())
      c.errors().push_back(
          {file.string(), 1, 1, "the file is empty; expected an experiment (see docs/yaml.md)"});
    else
      c.error(
          root, "",
          "expected an experiment (a map with name, fabric, topology, workloads ...), got " + describe(root));
    return finish(c, std::move(x));
  }
  int index = 0;
  for (const std::string& s : sets) apply_set(c, root, s, Override{"--set " + s, "", ++index, 0});
  if (fabric) apply_override(c, root, "fabric", *fabric, Override{"--fabric " + *fabric, "", ++index, 0});
  if (seed) {
    const std::string v = std::to_string(*seed);
    apply_override(c, root, "seed", v, Override{"--seed " + v, "", ++index, 0});
  }
  ExperimentReader(c, x).read(root);
  return finish(c, std::move(x));
}

}  // namespace

LoadResult load_experiment_text(std::string_view yaml, const std::filesystem::path& file,
                                const std::vector<std::string>& set_overrides,
                                std::optional<std::string> fabric_override,
                                std::optional<uint64_t> seed_override) {
  return load(yaml, "", file, set_overrides, fabric_override, seed_override);
}

LoadResult load_experiment(const std::filesystem::path& file, const std::vector<std::string>& set_overrides,
                           std::optional<std::string> fabric_override,
                           std::optional<uint64_t> seed_override) {
  std::string why;
  const auto text = read_text(file, why);
  return load(text, why, file, set_overrides, fabric_override, seed_override);
}

CostLoad load_cost_file(const std::filesystem::path& file) {
  Converter c(file.string());
  CostLoad r;
  std::string why;
  Node root;
  if (const auto text = read_text(file, why)) {
    if (parse_yaml(c, *text, file, root)) read_cost(c, root, "", r.settings);
  } else {
    c.errors().push_back({file.string(), 1, 1, why});
  }
  r.errors = std::move(c.errors());
  return r;
}

}  // namespace rdmasim
