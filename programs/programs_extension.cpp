#include "programs/programs_extension.hpp"

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "programs/programs_run.hpp"
#include "topologies/yaml_reader.hpp"

namespace rdmasim {

namespace {

class ProgramsExtension : public RunExtension {
 public:
  explicit ProgramsExtension(const RunContext& run)
      : programs_(run.net, run.fabric, run.dir), stop_set_(run.cfg.stop.has_value()) {}
  void start() override { programs_.start(); }
  // Without `stop`, programs get the 1000 s of simulated time a workload may take (docs/yaml.md, stop):
  // a server whose client left early polls its CQ for ever, and that run would never end.
  Time before_advance(Time now, Time upto) override {
    if (stop_set_ || programs_.finished()) return upto;
    if (now < kMaxTimeValue) return std::min(upto, kMaxTimeValue);
    programs_.end(to_string(kMaxTimeValue) + " of simulated time had passed and the experiment sets no stop");
    return upto;
  }
  bool finished() const override { return programs_.finished(); }
  // Those still running are killed, with the reason.
  void after_run(std::string_view reason) override {
    programs_.end(reason == "stop" ? "the experiment's stop time came"
                                   : "the simulation had nothing left to do");
  }
  void results(nlohmann::json& out) const override { out["programs"] = programs_.results(); }

 private:
  ProgramsRun programs_;
  bool stop_set_;
};

}  // namespace

std::unique_ptr<RunExtension> programs_extension(const RunContext& run) {
  if (run.cfg.programs.empty()) return nullptr;
  if (run.split) {
    const ProgramConfig& first = run.cfg.programs.front();
    throw InputError(run.cfg.file.string() + ":" + std::to_string(first.line) + ":" +
                     std::to_string(first.column) +
                     ": programs: a run with programs cannot be split over ranks: run it without mpirun "
                     "(docs/programs.md)");
  }
  return std::make_unique<ProgramsExtension>(run);
}

}  // namespace rdmasim
