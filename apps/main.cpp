// The rdmasim executable: everything is in apps/cli.cpp, so tests can drive it too.
#include <iostream>

#include "apps/cli.hpp"
#include "apps/output_dir.hpp"

int main(int argc, char** argv) {
  rdmasim::clean_up_on_interrupt();
  return rdmasim::cli_main(argc, argv, std::cout, std::cerr);
}
