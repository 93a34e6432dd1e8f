// The rdmasim executable: everything is in apps/cli.cpp, so tests can drive it too.
#include <iostream>

#include "apps/cli.hpp"

int main(int argc, char** argv) { return rdmasim::cli_main(argc, argv, std::cout, std::cerr); }
