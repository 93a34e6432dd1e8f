#include "experiment/loader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <tuple>

#include "experiment/overrides.hpp"
#include "experiment/sections/sections.hpp"
#include "topologies/yaml_reader.hpp"

namespace rdmasim {

namespace {

LoadResult finish(YamlReader& c, ExperimentConfig&& x) {
  LoadResult r;
  auto& errors = c.errors();
  std::stable_sort(errors.begin(), errors.end(), [](const LoadError& a, const LoadError& b) {
    auto key = [](const LoadError& e) { return std::make_tuple(e.file != kCommandLine, e.line, e.column); };
    return key(a) < key(b);
  });
  r.errors = std::move(errors);
  r.warnings = std::move(c.warnings());
  if (r.errors.empty()) r.config = std::move(x);
  return r;
}

// YAML text to a tree; false (and the error) for a syntax error, or for a
// second document: YAML::Load would read the first alone and drop the rest
// of the file without a word (docs/yaml.md).
bool parse_yaml(YamlReader& c, std::string_view text, const std::filesystem::path& file, YAML::Node& root) {
  try {
    const std::vector<YAML::Node> documents = YAML::LoadAll(std::string(text));
    root = documents.empty() ? YAML::Node() : documents.front();
    for (size_t i = 1; i < documents.size(); ++i) {
      if (documents[i].IsNull()) continue;  // a '---' with nothing after it adds nothing
      const YAML::Mark m = documents[i].Mark();
      c.errors().push_back({file.string(), std::max(1, m.line + 1), std::max(1, m.column + 1),
                            "YAML: a second document begins here, after '---'; an experiment file is one "
                            "document: move its keys into the first, or remove the '---'"});
      return false;
    }
    return true;
  } catch (const YAML::ParserException& ex) {
    c.errors().push_back(
        {file.string(), ex.mark.line + 1, ex.mark.column + 1, "YAML syntax: " + yaml_error_message(ex)});
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
  else if (!std::filesystem::is_regular_file(file, ec))  // a FIFO or a device would block or never end
    why = "cannot read the file: it is not a regular file (a FIFO or a device)";
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
                const std::filesystem::path& file, const std::vector<SetOverride>& sets,
                const std::optional<std::string>& fabric, const std::optional<std::string>& seed) {
  YamlReader c(file.string());
  ExperimentConfig x;
  x.file = file;
  x.name = file.stem().string();
  if (!text) {
    c.errors().push_back({file.string(), 1, 1, read_error});
    return finish(c, std::move(x));
  }
  YAML::Node root;
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
  for (const SetOverride& s : sets)
    apply_set(c, root, s.text, Override{s.option + " " + s.text, "", ++index, 0, {}});
  if (fabric) apply_override(c, root, "fabric", *fabric, Override{"--fabric " + *fabric, "", ++index, 0, {}});
  if (seed) apply_override(c, root, "seed", *seed, Override{"--seed " + *seed, "", ++index, 0, {}});
  ExperimentDraft draft{c, x};
  read_experiment(draft, root);
  return finish(c, std::move(x));
}

}  // namespace

LoadResult load_experiment_text(std::string_view yaml, const std::filesystem::path& file,
                                const std::vector<SetOverride>& set_overrides,
                                std::optional<std::string> fabric_override,
                                std::optional<std::string> seed_override) {
  return load(yaml, "", file, set_overrides, fabric_override, seed_override);
}

LoadResult load_experiment(const std::filesystem::path& file, const std::vector<SetOverride>& set_overrides,
                           std::optional<std::string> fabric_override,
                           std::optional<std::string> seed_override) {
  std::string why;
  const auto text = read_text(file, why);
  return load(text, why, file, set_overrides, fabric_override, seed_override);
}

CostLoad load_cost_file(const std::filesystem::path& file) {
  YamlReader c(file.string());
  CostLoad r;
  std::string why;
  YAML::Node root;
  if (const auto text = read_text(file, why)) {
    if (parse_yaml(c, *text, file, root)) read_cost(c, root, "", r.settings);
  } else {
    c.errors().push_back({file.string(), 1, 1, why});
  }
  r.errors = std::move(c.errors());
  return r;
}

}  // namespace rdmasim
