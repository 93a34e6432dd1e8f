#include "programs/programs_extension.hpp"

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "programs/programs_run.hpp"

namespace rdmasim {

namespace {

class ProgramsExtension : public RunExtension {
 public:
  explicit ProgramsExtension(const RunContext& run) : programs_(run.net, run.fabric, run.dir) {}
  void start() override { programs_.start(); }
  bool finished() const override { return programs_.finished(); }
  // Those still running are killed, with the reason.
  void after_run(std::string_view reason) override {
    programs_.end(reason == "stop" ? "the experiment's stop time came"
                                   : "the simulation had nothing left to do");
  }
  void results(nlohmann::json& out) const override { out["programs"] = programs_.results(); }

 private:
  ProgramsRun programs_;
};

}  // namespace

std::unique_ptr<RunExtension> programs_extension(const RunContext& run) {
  if (run.cfg.programs.empty()) return nullptr;
  if (run.split)
    throw InputError("programs: a run with programs cannot be split over ranks (docs/programs.md)");
  return std::make_unique<ProgramsExtension>(run);
}

}  // namespace rdmasim
