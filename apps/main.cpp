// The rdmasim executable: everything is in apps/cli.cpp, so tests can drive it too.
#include <malloc.h>

#include <iostream>

#include "apps/cli.hpp"
#include "apps/output_dir.hpp"
#include "parallel/cluster.hpp"

int main(int argc, char** argv) {
  // One malloc arena: a thread's own reserves 64 MiB of address space (128
  // MiB while it aligns it), which counts against ulimit -v as much as the
  // run's memory does (apps/commands.cpp compares the estimate with it).
  mallopt(M_ARENA_MAX, 1);
  rdmasim::exit_when_out_of_memory();
  // Then: it blocks SIGINT and SIGTERM for every thread started later,
  // MPI's among them (mpirun ends a job with SIGTERM to every rank, and a
  // thread that did not block it would die of it, leaving the staged
  // output behind).
  rdmasim::clean_up_on_interrupt();
  // A file size limit or a closed stdout: failed writes, not a death that
  // would leave the staged output behind.
  rdmasim::fail_writes_instead_of_dying();
  rdmasim::Cluster::init(argc, argv);  // joins mpirun's ranks, if it started this one
  return rdmasim::cli_main(argc, argv, std::cout, std::cerr);
}
