#include "experiment/overrides.hpp"

#include <algorithm>
#include <charconv>
#include <optional>

namespace rdmasim {

namespace {

// One part of a key path: a map key or a list element (an index or a name),
// and where it starts in the option's text (from 1).
struct PathPart {
  std::string text;
  bool bracketed = false;  // written as [text]
  int column = 1;
};

// Splits "workloads[0].rate", "workloads.flood.rate" or "workloads[a.b].rate"
// into its parts. A bracket holds anything up to its ']', so a name with a
// dot in it (names may have one) can still be reached.
std::optional<std::vector<PathPart>> split_path(YamlReader& c, const Override& o, std::string_view key) {
  std::vector<PathPart> parts;
  size_t i = 0;
  auto error = [&](size_t at, const std::string& message) {
    c.command_line_error(o, static_cast<int>(at) + 1, std::string(key) + ": " + message);
    return std::nullopt;
  };
  for (;;) {
    const size_t start = i;
    while (i < key.size() && key[i] != '.' && key[i] != '[') ++i;
    if (i == start) return error(start, "empty part in the key path");
    parts.push_back({std::string(key.substr(start, i - start)), false, static_cast<int>(start) + 1});
    while (i < key.size() && key[i] == '[') {
      const size_t close = key.find(']', i);
      if (close == std::string_view::npos) return error(i, "'[' without a ']'");
      if (close == i + 1) return error(i, "empty part in the key path");
      parts.push_back({std::string(key.substr(i + 1, close - i - 1)), true, static_cast<int>(i) + 2});
      i = close + 1;
      if (i < key.size() && key[i] != '.' && key[i] != '[')
        return error(i, "expected '.' or '[' after ']', got '" + std::string(1, key[i]) + "'");
    }
    if (i == key.size()) return parts;
    ++i;  // the '.'
  }
}

// The name a list element answers to: its `name:`; a workload without one
// answers to the name it gets, w0, w1, ... (its index).
std::string element_name(const YAML::Node& element, std::string_view list_path, size_t i) {
  if (element.IsMap() && element["name"] && element["name"].IsScalar()) return element["name"].Scalar();
  return list_path == "workloads" ? "w" + std::to_string(i) : "";
}

// The element of `list` (at `path`) that `part` selects: an index, or the
// name of one element. Reports what the list offers when none matches.
std::optional<size_t> select(YamlReader& c, const Override& o, const YAML::Node& list,
                             const std::string& path, const PathPart& part) {
  const std::string what = path.empty() ? std::string("the file") : path;
  size_t idx = 0;
  auto [p, ec] = std::from_chars(part.text.data(), part.text.data() + part.text.size(), idx);
  const bool number = ec == std::errc() && p == part.text.data() + part.text.size();
  if (number && idx < list.size()) return idx;
  std::vector<std::string> names;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string n = element_name(list[i], path, i);
    if (!number && n == part.text) return i;
    if (!n.empty()) names.push_back(std::move(n));
  }
  std::string message = what + " is a list of " + std::to_string(list.size()) +
                        "; expected an index from 0 to " +
                        std::to_string(list.size() == 0 ? 0 : list.size() - 1);
  const std::string hint = number ? "" : suggestion(part.text, names);
  // A long list (a flows file may have hundreds) shows its first names.
  constexpr size_t kShown = 8;
  if (names.size() > kShown) {
    const size_t all = names.size();
    names.resize(kShown);
    names.push_back("... " + std::to_string(all - kShown) + " more");
  }
  if (!names.empty()) message += " or a name (" + join_names(names) + ")";
  message += ", got '" + part.text + "'" + hint;
  c.command_line_error(o, part.column, message);
  return std::nullopt;
}

// The option's value as YAML; an error at the option when it is none or not YAML.
std::optional<YAML::Node> parse_value(YamlReader& c, std::string_view key, std::string_view value,
                                      const Override& o) {
  if (value.empty()) {
    c.command_line_error(o, o.value_column + 1, std::string(key) + ": no value after '='");
    return std::nullopt;
  }
  try {
    return YAML::Load(std::string(value));
  } catch (const YAML::Exception& ex) {
    c.command_line_error(o, o.value_column + std::max(0, ex.mark.column) + 1,
                         std::string(key) + ": the value is not valid YAML: " + yaml_error_message(ex));
    return std::nullopt;
  }
}

}  // namespace

void apply_override(YamlReader& c, YAML::Node root, std::string_view key, std::string_view value,
                    Override o) {
  const std::optional<YAML::Node> parsed = parse_value(c, key, value, o);
  if (!parsed) return;
  const YAML::Node& v = *parsed;
  // The whole path is split before the file changes: a path refused half
  // way must not leave its first parts added as keys (they would be
  // reported again as unknown).
  const auto parts = split_path(c, o, key);
  if (!parts) return;
  YAML::Node cur = root;
  std::string path;
  for (size_t i = 0; i < parts->size(); ++i) {
    const PathPart& part = (*parts)[i];
    const bool last = i + 1 == parts->size();
    YAML::Node next;
    if (cur.IsSequence()) {
      const auto idx = select(c, o, cur, path, part);
      if (!idx) return;
      path = index_path(path, *idx);
      if (last)
        cur[*idx] = v;
      else
        next.reset(cur[*idx]);
    } else if (part.bracketed) {
      c.command_line_error(o, part.column,
                           (path.empty() ? std::string("the file") : path) + " is " +
                               (cur.IsMap()    ? "a map, not a list"
                                : cur.IsNull() ? "not given"
                                               : "a single value") +
                               ", so it has no [" + part.text + "]");
      return;
    } else if (cur.IsMap() || cur.IsNull()) {
      path = key_path(path, part.text);
      if (last) {
        cur[part.text] = v;
      } else {
        if (!cur[part.text].IsDefined() || cur[part.text].IsNull()) {
          if ((*parts)[i + 1].bracketed) {
            c.command_line_error(o, (*parts)[i + 1].column,
                                 path + " is not given, so it has no [" + (*parts)[i + 1].text + "]");
            return;
          }
          cur[part.text] = YAML::Node(YAML::NodeType::Map);
        }
        next.reset(cur[part.text]);
      }
    } else {
      c.command_line_error(o, part.column, path + " is a single value, so it has no '" + part.text + "'");
      return;
    }
    // An error about a key the override added points at its part.
    o.part_columns.emplace_back(path, part.column);
    if (!last) cur.reset(next);
  }
  o.path = path;
  c.overrides().push_back(o);
}

void apply_set(YamlReader& c, YAML::Node root, std::string_view text, Override o) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    c.command_line_error(o, 1, "expected key=value, such as link.bandwidth=25Gbps");
    return;
  }
  o.value_column = static_cast<int>(eq + 1);
  apply_override(c, root, text.substr(0, eq), text.substr(eq + 1), std::move(o));
}

}  // namespace rdmasim
