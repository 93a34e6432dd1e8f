// `ip:`, the IP version of the IP fabrics (roce_v2, iwarp).
#pragma once

#include "fabrics/fabric.hpp"

namespace rdmasim {

SectionType ip_section();

}  // namespace rdmasim
