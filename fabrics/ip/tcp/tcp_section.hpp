// `tcp:`, the settings of the TCP model (congestion control, delayed ACKs,
// RTO floor, initial window, listening port), for the fabrics that run on it.
#pragma once

#include "fabrics/fabric.hpp"

namespace rdmasim {

SectionType tcp_section();

}  // namespace rdmasim
