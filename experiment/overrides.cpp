#include "experiment/overrides.hpp"

#include <algorithm>
#include <charconv>

namespace rdmasim {

void apply_override(YamlReader& c, YAML::Node root, std::string_view key, std::string_view value,
                    Override o) {
  if (value.empty()) {
    c.command_line_error(o, o.value_column + 1, std::string(key) + ": no value after '='");
    return;
  }
  YAML::Node v;
  try {
    v = YAML::Load(std::string(value));
  } catch (const YAML::Exception& ex) {
    c.command_line_error(o, o.value_column + std::max(0, ex.mark.column) + 1,
                         std::string(key) + ": the value is not valid YAML: " + yaml_error_message(ex));
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
  // The whole path is checked before the file changes: a path refused half
  // way must not leave its first parts added as keys (they would be
  // reported again as unknown).
  int column = 1;
  for (const std::string& part : parts) {
    if (part.empty()) {
      c.command_line_error(o, column, std::string(key) + ": empty part in the key path");
      return;
    }
    column += static_cast<int>(part.size()) + 1;
  }
  YAML::Node cur = root;
  std::string path;
  column = 1;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const bool last = i + 1 == parts.size();
    YAML::Node next;
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
        if (!cur[part].IsDefined() || cur[part].IsNull()) cur[part] = YAML::Node(YAML::NodeType::Map);
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
