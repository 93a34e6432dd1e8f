// The readers of an experiment file's sections, one a file, and the
// validate pass that runs once every section is read. The sections of a
// fabric are its own (fabrics/fabric.hpp, in its folder). Each reader checks
// its section's keys and values and fills its part of ExperimentConfig;
// checks that need several sections (names against the topology, paths
// between hosts, what a fabric's links must hold) are the validate pass's.
// Only the loader includes this (it brings in yaml-cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "fabrics/fabric.hpp"
#include "topologies/experiment_draft.hpp"
#include "topologies/key_table.hpp"

namespace rdmasim {

// The whole file: its top-level keys, each section in turn, then validate().
void read_experiment(ExperimentDraft& d, const YAML::Node& root);

// `link:` and a link's own settings, on top of `base`.
LinkConfig read_link(ExperimentDraft& d, const YAML::Node& v, const std::string& path, LinkConfig base);
// `congestion_control:`; the old top-level `dcqcn:` is an error naming the new place.
void read_congestion_control(ExperimentDraft& d, const Entry& e);
void read_old_dcqcn(ExperimentDraft& d, const Entry& e);
// `loss_recovery:` and `irn:`.
void read_loss_recovery(ExperimentDraft& d, const Entry& e);
void read_irn(ExperimentDraft& d, const Entry& e);
void read_switch(ExperimentDraft& d, const Entry& e);
void read_host(ExperimentDraft& d, const Entry& e);
void read_capture(ExperimentDraft& d, const Entry& e);
void read_topology(ExperimentDraft& d, const Entry& e);
void read_workloads(ExperimentDraft& d, const Entry& e);
// `storage:` (after the topology: its hosts; before the workloads: nvme jobs name its targets).
void read_storage(ExperimentDraft& d, const Entry& e);
void read_faults(ExperimentDraft& d, const Entry& e);
void read_programs(ExperimentDraft& d, const Entry& e);
// `cost:`, and the whole of a --prices file (loader.hpp, load_cost_file).
void read_cost(YamlReader& c, const YAML::Node& v, const std::string& path, std::vector<CostSetting>& out);

// The sections' key tables (topologies/key_table.hpp), each declaring its
// keys once; every table docs/yaml.md shows is in experiment_key_tables()
// (experiment/key_tables.hpp).
const KeyTable<LinkConfig>& link_keys();
const KeyTable<SwitchConfig>& switch_keys();
const KeyTable<IrnConfig>& irn_keys();
const KeyTable<HostConfig>& host_keys();
const KeyTable<CcConfig>& cc_keys();
const KeyTable<CaptureConfig>& capture_keys();
const KeyTable<FaultConfig>& fault_keys();
const KeyTable<ProgramConfig>& program_keys();
const KeyTable<std::vector<CostSetting>>& cost_keys();
const KeyTable<TopologyConfig>& topology_keys();
const KeyTable<StorageConfig>& storage_keys();
const KeyTable<WorkloadConfig>& workload_common_keys();
// The top level, whose rows are the sections (a fabric's among them).
const KeyTable<ExperimentConfig>& experiment_keys();

// Every check that needs more than one section, and every check a run could
// otherwise only make once it has started; `sections` are the fabric
// sections read, whose own checks run first.
void validate(ExperimentDraft& d, const std::vector<std::unique_ptr<Section>>& sections);

}  // namespace rdmasim
