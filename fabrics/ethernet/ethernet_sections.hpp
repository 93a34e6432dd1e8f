// The sections every Ethernet fabric reads (roce_v1, roce_v2, iwarp):
// `flow_control:`, `pfc:` (802.1Qbb), `ecn:`.
#pragma once

#include <vector>

#include "fabrics/fabric.hpp"

namespace rdmasim {

std::vector<SectionType> ethernet_sections();

}  // namespace rdmasim
