// The ranks of a run started by mpirun, and the few collective operations
// the parallel run needs, over MPI (Open MPI). Only cluster.cpp includes
// mpi.h; a build without MPI compiles the same interface as a single rank
// that knows when it was asked for more (docs/parallel.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rdmasim {

class Cluster {
 public:
  // Joins the ranks when started by a launcher with more than one (or when
  // `force`); otherwise this process is rank 0 of 1 and MPI stays untouched.
  static Cluster& init(int& argc, char**& argv);
  static Cluster& get();
  ~Cluster();

  // Whether this binary was built with MPI.
  static bool built_with_mpi();
  // The ranks a launcher asked for (its environment), whether or not MPI
  // is here to use them; 1 when not started by one.
  static int requested_ranks();
  // This process's rank as its launcher numbered it (its environment),
  // readable before MPI starts and from any thread; 0 when not started by one.
  static int launched_rank();
  // Rank 0's process id when it runs on this host and this is another
  // rank of a run over MPI, else 0; readable from any thread (an
  // interrupted rank waits for rank 0 to end: output_dir.cpp).
  static int rank0_pid_here();

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool parallel() const { return size_ > 1; }

  // Collectives: every rank calls them, in the same order.
  // to_each[r] goes to rank r; from[r] becomes what rank r sent this
  // one. Both keep their strings' capacity from call to call: a run
  // exchanges every window, and fresh buffers each time cost more in page
  // faults than the copying (docs/parallel.md, Figures).
  void exchange(const std::vector<std::string>& to_each, std::vector<std::string>& from);
  void min(std::vector<int64_t>& v);
  void max(std::vector<int64_t>& v);
  void sum(std::vector<uint64_t>& v);
  // Rank 0 gets every rank's string; the others an empty vector.
  std::vector<std::string> gather(const std::string& mine);
  // `root`'s string, on every rank.
  std::string broadcast(const std::string& s, int root = 0);
  // Ends every rank at once (a rank that cannot go on by itself).
  [[noreturn]] void abort(int code);

 private:
  Cluster() = default;
  int rank_ = 0;
  int size_ = 1;
  bool mpi_ = false;
};

}  // namespace rdmasim
