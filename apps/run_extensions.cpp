#include "apps/run_extensions.hpp"

#include "programs/programs_extension.hpp"
#include "programs/programs_run.hpp"

namespace rdmasim {

const std::vector<RunFeature>& run_features() {
  // A feature is its folder and a line here.
  static const std::vector<RunFeature> all{
      {programs_extension, format_programs_summary, program_failure},
  };
  return all;
}

std::vector<std::unique_ptr<RunExtension>> make_run_extensions(const RunContext& run) {
  std::vector<std::unique_ptr<RunExtension>> out;
  for (const RunFeature& f : run_features())
    if (auto e = f.make(run)) out.push_back(std::move(e));
  return out;
}

std::string run_features_summary(const nlohmann::json& results) {
  std::string out;
  for (const RunFeature& f : run_features()) out += f.summary(results);
  return out;
}

std::string run_features_failure(const nlohmann::json& results) {
  for (const RunFeature& f : run_features())
    if (std::string why = f.failure(results); !why.empty()) return why;
  return {};
}

}  // namespace rdmasim
