#include "parallel/cluster.hpp"

#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdlib>
#include <memory>
#include <stdexcept>

#ifdef RDMASIM_MPI
#include <mpi.h>
#endif

namespace rdmasim {

namespace {
std::unique_ptr<Cluster>& instance() {
  static std::unique_ptr<Cluster> c;
  return c;
}
std::atomic<int> rank0_pid{0};  // rank0_pid_here()
}  // namespace

int Cluster::rank0_pid_here() { return rank0_pid.load(); }

bool Cluster::built_with_mpi() {
#ifdef RDMASIM_MPI
  return true;
#else
  return false;
#endif
}

int Cluster::requested_ranks() {
  // Open MPI's mpirun, then the PMI of MPICH's and Slurm's launchers.
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (const char* v = std::getenv(var)) {
      const int n = std::atoi(v);
      if (n > 0) return n;
    }
  return 1;
}

int Cluster::launched_rank() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char* v = std::getenv(var)) return std::atoi(v);
  return 0;
}

Cluster& Cluster::init(int& argc, char**& argv) {
  auto& c = instance();
  if (c) return *c;
  c.reset(new Cluster());
#ifdef RDMASIM_MPI
  if (requested_ranks() > 1) {
    MPI_Init(&argc, &argv);
    c->mpi_ = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &c->size_);
    // Rank 0's host and process id: a rank on the same host can tell when
    // it has ended.
    char host[HOST_NAME_MAX + 1] = {};
    gethostname(host, HOST_NAME_MAX);
    const std::string mine = std::string(host) + "\n" + std::to_string(getpid());
    const std::string zero = c->broadcast(mine);
    const size_t nl = zero.find('\n');
    if (c->rank_ != 0 && nl != std::string::npos && zero.substr(0, nl) == host)
      rank0_pid.store(std::atoi(zero.c_str() + nl + 1));
  }
#else
  (void)argc;
  (void)argv;
#endif
  return *c;
}

Cluster& Cluster::get() {
  auto& c = instance();
  if (!c) c.reset(new Cluster());
  return *c;
}

Cluster::~Cluster() {
#ifdef RDMASIM_MPI
  if (mpi_) MPI_Finalize();
#endif
}

#ifdef RDMASIM_MPI

void Cluster::exchange(const std::vector<std::string>& to_each, std::vector<std::string>& from) {
  const size_t n = static_cast<size_t>(size_);
  from.resize(n);
  if (!mpi_) {
    from[0] = to_each[0];
    return;
  }
  std::vector<int> send_counts(n), recv_counts(n);
  for (size_t r = 0; r < n; ++r) {
    if (to_each[r].size() > static_cast<size_t>(INT_MAX))
      throw std::runtime_error(
          "parallel: a window's frames for one rank exceed 2 GiB (shorten the lookahead)");
    send_counts[r] = static_cast<int>(to_each[r].size());
  }
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  // Only the pairs with something to hand over talk (usually a few
  // neighbours, and no one in an idle stretch): no second collective.
  std::vector<MPI_Request> reqs;
  reqs.reserve(2 * n);
  for (size_t r = 0; r < n; ++r) {
    from[r].resize(static_cast<size_t>(recv_counts[r]));
    if (recv_counts[r] > 0)
      MPI_Irecv(from[r].data(), recv_counts[r], MPI_BYTE, static_cast<int>(r), 0, MPI_COMM_WORLD,
                &reqs.emplace_back());
  }
  for (size_t r = 0; r < n; ++r)
    if (send_counts[r] > 0)
      MPI_Isend(to_each[r].data(), send_counts[r], MPI_BYTE, static_cast<int>(r), 0, MPI_COMM_WORLD,
                &reqs.emplace_back());
  MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
}

void Cluster::min(std::vector<int64_t>& v) {
  if (mpi_)
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
}
void Cluster::max(std::vector<int64_t>& v) {
  if (mpi_)
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
}
void Cluster::sum(std::vector<uint64_t>& v) {
  if (mpi_)
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
}

std::vector<std::string> Cluster::gather(const std::string& mine) {
  if (!mpi_) return {mine};
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<size_t>(size_)), at(static_cast<size_t>(size_));
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (size_t r = 0; r < lens.size(); ++r) {
    at[r] = total;
    total += lens[r];
  }
  std::string all(rank_ == 0 ? static_cast<size_t>(total) : 0, '\0');
  MPI_Gatherv(mine.data(), len, MPI_BYTE, all.data(), lens.data(), at.data(), MPI_BYTE, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  if (rank_ == 0)
    for (size_t r = 0; r < lens.size(); ++r)
      out.push_back(all.substr(static_cast<size_t>(at[r]), static_cast<size_t>(lens[r])));
  return out;
}

std::string Cluster::broadcast(const std::string& s, int root) {
  if (!mpi_) return s;
  int len = static_cast<int>(s.size());
  MPI_Bcast(&len, 1, MPI_INT, root, MPI_COMM_WORLD);
  std::string out = rank_ == root ? s : std::string(static_cast<size_t>(len), '\0');
  MPI_Bcast(out.data(), len, MPI_BYTE, root, MPI_COMM_WORLD);
  return out;
}

void Cluster::abort(int code) {
  if (mpi_) MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

#else

void Cluster::exchange(const std::vector<std::string>& to_each, std::vector<std::string>& from) {
  from.assign(to_each.begin(), to_each.begin() + 1);
}
void Cluster::min(std::vector<int64_t>&) {}
void Cluster::max(std::vector<int64_t>&) {}
void Cluster::sum(std::vector<uint64_t>&) {}
std::vector<std::string> Cluster::gather(const std::string& mine) { return {mine}; }
std::string Cluster::broadcast(const std::string& s, int) { return s; }
void Cluster::abort(int code) { std::_Exit(code); }

#endif

}  // namespace rdmasim
