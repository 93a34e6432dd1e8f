// The rdmasim executable: everything is in apps/cli.cpp, so tests can drive it too.
#include <iostream>

#include "apps/cli.hpp"
#include "apps/output_dir.hpp"
#include "parallel/cluster.hpp"

int main(int argc, char** argv) {
  rdmasim::Cluster::init(argc, argv);  // joins mpirun's ranks, if it started this one
  rdmasim::clean_up_on_interrupt();
  return rdmasim::cli_main(argc, argv, std::cout, std::cerr);
}
