#include "apps/output_dir.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <mutex>
#include <ostream>
#include <set>
#include <system_error>
#include <thread>
#include <tuple>
#include <utility>

#include "apps/cli.hpp"
#include "parallel/cluster.hpp"

namespace rdmasim {

namespace fs = std::filesystem;

namespace {

fs::path sibling(const fs::path& p, std::string_view tag) {
  return p.parent_path() /
         (p.filename().string() + "." + std::string(tag) + "-" + std::to_string(::getpid()));
}

std::string reason(const std::error_code& ec) { return ec.message(); }

bool all_digits(std::string_view s) {
  return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// True when `entry` is `name` + `tag` + the pid of a process that is no
// longer alive, then a "-<n>" too when `numbered` (StagedFile's clashes).
bool left_by_dead_pid(std::string_view entry, std::string_view name, std::string_view tag, bool numbered) {
  if (!entry.starts_with(name) || entry.substr(name.size()).substr(0, tag.size()) != tag) return false;
  std::string_view pid = entry.substr(name.size() + tag.size());
  if (const size_t dash = pid.find('-'); numbered && dash != std::string_view::npos) {
    if (!all_digits(pid.substr(dash + 1))) return false;
    pid = pid.substr(0, dash);
  }
  if (!all_digits(pid)) return false;
  return ::kill(static_cast<pid_t>(std::stol(std::string(pid))), 0) != 0 && errno == ESRCH;
}

// A run killed while it rewrote DIR's manifest (add_to_manifest) leaves
// .rdmasim-manifest.tmp-<pid>: removed when that pid is gone and the file
// is empty or a manifest (its first line), so the next run is not refused
// for a file of its own.
void remove_stale_manifests(const fs::path& dir) {
  static constexpr std::string_view kHead = "# Every file and directory rdmasim wrote here.";
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string entry = it->path().filename().string();
    if (!left_by_dead_pid(entry, kManifest, ".tmp-", true)) continue;
    std::error_code e2;
    if (!fs::is_regular_file(fs::symlink_status(it->path(), e2))) continue;
    std::ifstream in(it->path(), std::ios::binary);
    std::string head(kHead.size(), '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(in.gcount()));
    if (head.empty() || head == kHead) fs::remove(it->path(), e2);
  }
}

// A run killed while staging (kill -9) leaves DIR.tmp-<pid>, and perhaps
// DIR.old-<pid> with DIR missing. The next run into DIR removes the first
// and puts the second back, for pids no longer alive; and removes the
// pages a killed `report` was writing inside DIR (remove_stale_pages) and
// its manifest's temporary copy (remove_stale_manifests).
void recover_from_killed_runs(const fs::path& dir) {
  std::error_code ec;
  const fs::path parent = dir.has_parent_path() ? dir.parent_path() : fs::path(".");
  const std::string name = dir.filename().string();
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string entry = it->path().filename().string();
    for (const std::string_view tag : {".tmp-", ".old-"}) {
      if (!left_by_dead_pid(entry, name, tag, false)) continue;
      std::error_code e2;
      if (tag == ".old-" && !fs::exists(fs::symlink_status(dir, e2)))
        fs::rename(it->path(), dir, e2);
      else
        fs::remove_all(it->path(), e2);
    }
  }
  if (!fs::is_directory(fs::symlink_status(dir, ec))) return;
  remove_stale_pages(dir);
  remove_stale_manifests(dir);
}

}  // namespace

bool replaceable_page(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(file, ec))) return false;
  if (fs::file_size(file, ec) == 0 && !ec) return true;
  std::ifstream in(file, std::ios::binary);
  std::string head(1024, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return head.starts_with("<!DOCTYPE html>") && head.find(kReportMark) != std::string::npos;
}

void remove_stale_pages(const fs::path& dir, std::string_view only) {
  std::error_code ec;
  for (fs::directory_iterator it(dir.empty() ? fs::path(".") : dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string entry = it->path().filename().string();
    const size_t tag = entry.rfind(".tmp-");
    if (tag == std::string::npos || tag == 0) continue;
    const std::string_view name = std::string_view(entry).substr(0, tag);
    if (only.empty() ? !name.ends_with(".html") : name != only) continue;
    std::error_code e2;
    if (left_by_dead_pid(entry, name, ".tmp-", true) && replaceable_page(it->path()))
      fs::remove(it->path(), e2);
  }
}

namespace {

// Every entry under `dir` as the manifest names it: the path relative to
// `dir` with '/' separators, a directory with a trailing '/'. Symbolic
// links are entries, never followed. Stops after `limit` entries for
// which `keep` is true.
template <typename Keep>
std::vector<std::string> entries(const fs::path& dir, Keep keep, size_t limit = SIZE_MAX) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end && out.size() < limit;
       it.increment(ec)) {
    std::string rel = it->path().lexically_relative(dir).generic_string();
    if (it->is_directory(ec) && !it->is_symlink(ec)) rel += '/';
    if (keep(rel)) out.push_back(std::move(rel));
  }
  if (ec) throw OutputError(dir.string() + ": cannot list: " + reason(ec));
  std::sort(out.begin(), out.end());
  return out;
}

template <typename Entries>
void write_manifest_of(const fs::path& dir, const Entries& listed) {
  std::string text =
      "# Every file and directory rdmasim wrote here. rdmasim replaces this directory\n"
      "# only while it holds nothing else.\n";
  for (const auto& e : listed) text += e + "\n";
  write_file_atomic(dir / kManifest, text);
}

void write_manifest(const fs::path& dir) {
  write_manifest_of(dir, entries(dir, [](const std::string& rel) { return rel != kManifest; }));
}

// The live staged directories, for the interrupt handler's thread. Held
// while a stage commits, so that an interrupt sees it before or after.
std::mutex live_mutex;
std::vector<StagedDir*> live;
std::vector<StagedFile*> live_files;
std::vector<pid_t> children;  // spawn_child()'s, until child_ended(); under live_mutex

// Passes `sig` on to the children and waits for them to end (they roll back
// their own staged directories), giving each a few seconds before SIGKILL.
// A child the main thread reaps meanwhile is gone: waitpid says ECHILD.
void stop_children(int sig) {
  for (pid_t pid : children) ::kill(pid, sig);
  for (pid_t pid : children) {
    for (int i = 0;; ++i) {
      const pid_t r = ::waitpid(pid, nullptr, WNOHANG);
      if (r != 0) break;  // ended, or not ours to wait for any more
      if (i == 500) ::kill(pid, SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  children.clear();
}

// An interrupted rank other than 0 waits for rank 0 to end before it ends.
// Open MPI's launcher interrupts a job by sending each rank SIGTERM and,
// a second later, SIGKILL to what is left; but a rank that ends in that
// second cuts the wait short (the launcher's sleep ends at its SIGCHLD with
// no whole second left), so a rank with nothing to clean up that ended at
// once had rank 0 killed in the middle of removing its staged output,
// before it said so. Only a rank 0 on this host can be cut short (another
// host's launcher keeps its own second); at most kRank0Wait.
constexpr auto kRank0Wait = std::chrono::seconds(10);

// Whether process `pid` exists and has not ended (a zombie has).
bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t paren = line.rfind(')');  // the name may hold spaces and parentheses
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

void wait_for_rank0() {
  const pid_t rank0 = Cluster::rank0_pid_here();
  if (rank0 <= 0) return;
  const auto until = std::chrono::steady_clock::now() + kRank0Wait;
  while (std::chrono::steady_clock::now() < until && running(rank0))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

struct KindInfo {
  OutputKind kind;
  const char* marker;   // the file at the top of such a directory
  const char* command;  // what writes it
};
constexpr KindInfo kKinds[] = {{OutputKind::run, "results.json", "rdmasim run"},
                               {OutputKind::compare, "compare.json", "rdmasim compare"},
                               {OutputKind::sweep, "sweep.json", "rdmasim sweep"}};

}  // namespace

void check_output_kind(const fs::path& dir, OutputKind kind) {
  if (kind == OutputKind::any) return;
  const KindInfo* mine = nullptr;
  for (const auto& k : kKinds)
    if (k.kind == kind) mine = &k;
  std::error_code ec;
  for (const auto& k : kKinds)
    if (k.kind != kind && fs::exists(dir / k.marker, ec))
      throw InputError(dir.string() + ": holds the output of `" + k.command + "` (" + k.marker +
                       "), which `" + mine->command +
                       "` does not replace: give --out another folder, or remove it first");
}

std::set<std::string> manifest_entries(const fs::path& dir) {
  std::set<std::string> listed;
  std::ifstream in(dir / kManifest);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') listed.insert(line);
  return listed;
}

void add_to_manifest(const fs::path& dir, const std::function<bool(const std::string&)>& ours) {
  std::set<std::string> listed = manifest_entries(dir);
  for (auto& e : entries(dir, [&](const std::string& rel) {
         return rel != kManifest && !listed.contains(rel) && ours(rel);
       }))
    listed.insert(std::move(e));
  write_manifest_of(dir, listed);
}

std::vector<std::string> foreign_entries(const fs::path& dir) {
  const std::set<std::string> listed = manifest_entries(dir);
  constexpr size_t kEnough = 4;  // to name in a message; a large foreign tree is not walked whole
  return entries(
      dir, [&](const std::string& rel) { return rel != kManifest && !listed.contains(rel); }, kEnough);
}

fs::path output_path(const fs::path& dir) {
  fs::path p = dir.lexically_normal();
  if (!p.has_filename() && p.has_relative_path()) p = p.parent_path();  // "out/x/" -> "out/x"
  if (p.empty() || !p.has_relative_path() || p.filename() == "." || p.filename() == "..")
    throw InputError("'" + dir.string() + "' cannot be an output directory");
  return p;
}

StagedDir::StagedDir(const fs::path& dir, OutputKind kind) : dir_(output_path(dir)) {
  recover_from_killed_runs(dir_);
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(dir_, ec);
  existed_ = fs::exists(st);
  if (existed_) {
    if (!fs::is_directory(st)) throw InputError(dir_.string() + ": exists and is not a directory");
    const std::vector<std::string> foreign = foreign_entries(dir_);
    if (!foreign.empty()) {
      std::string names;
      for (size_t i = 0; i < foreign.size() && i < 3; ++i) names += (i ? ", " : "") + foreign[i];
      throw InputError(dir_.string() + ": holds " + names + (foreign.size() > 3 ? " and more" : "") +
                       ", which rdmasim did not write (not in its " + std::string(kManifest) +
                       "); refusing to replace it: move them away, or give --out another folder");
    }
    check_output_kind(dir_, kind);
  }

  const fs::path parent = dir_.has_parent_path() ? dir_.parent_path() : fs::path(".");
  for (fs::path p = dir_.parent_path(); !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    created_root_ = p;
    if (p == p.parent_path()) break;
  }
  std::lock_guard lock(live_mutex);
  try {
    if (fs::exists(parent, ec) && !fs::is_directory(parent, ec))
      throw InputError(parent.string() + ": exists and is not a directory");
    fs::create_directories(parent);
    temp_ = sibling(dir_, "tmp");
    fs::remove_all(temp_);  // a leftover of a killed run that had our pid
    fs::create_directory(temp_);
  } catch (const fs::filesystem_error& e) {
    rollback_locked();
    if (e.code() == std::errc::not_a_directory)
      throw InputError(dir_.string() + ": a parent is not a directory");
    throw OutputError(dir_.string() + ": cannot create: " + reason(e.code()));
  } catch (...) {
    rollback_locked();
    throw;
  }
  live.push_back(this);
}

StagedDir::~StagedDir() { rollback(); }

void StagedDir::rollback() noexcept {
  std::lock_guard lock(live_mutex);
  rollback_locked();
}

void StagedDir::rollback_locked() noexcept {
  live.erase(std::remove(live.begin(), live.end(), this), live.end());
  if (committed_) return;
  std::error_code ec;
  // The run may still be creating files in it (an interrupt): try again.
  for (int i = 0; i < 10 && !temp_.empty() && fs::exists(temp_, ec); ++i) fs::remove_all(temp_, ec);
  temp_.clear();
  if (created_root_.empty()) return;
  // Remove the parents we created, deepest first; remove() leaves a non-empty one alone.
  for (fs::path p = dir_.parent_path(); !p.empty(); p = p.parent_path()) {
    fs::remove(p, ec);
    if (p == created_root_) break;
  }
  created_root_.clear();
}

void StagedDir::commit() {
  write_manifest(temp_);
  std::lock_guard lock(live_mutex);
  std::error_code ec;
  fs::path old;
  if (fs::exists(fs::symlink_status(dir_, ec))) {
    old = sibling(dir_, "old");
    fs::remove_all(old, ec);
    fs::rename(dir_, old, ec);
    if (ec) throw OutputError(dir_.string() + ": cannot replace: " + reason(ec));
  }
  fs::rename(temp_, dir_, ec);
  if (ec) {
    std::error_code ignored;
    if (!old.empty()) fs::rename(old, dir_, ignored);
    throw OutputError(dir_.string() + ": cannot replace: " + reason(ec));
  }
  committed_ = true;
  live.erase(std::remove(live.begin(), live.end(), this), live.end());
  if (!old.empty()) fs::remove_all(old, ec);
}

void write_file_atomic(const fs::path& file, std::string_view content) {
  write_file_atomic(file, [&](std::ostream& out) {
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
  });
}

void write_file_atomic(const fs::path& file, const std::function<void(std::ostream&)>& write) {
  StagedFile staged(file);
  errno = 0;
  std::ofstream out(staged.temp(), std::ios::binary | std::ios::trunc);
  write(out);
  out.close();
  if (!out) throw OutputError(file.string() + ": cannot write: " + std::strerror(errno ? errno : EIO));
  staged.commit();
}

StagedFile::StagedFile(const fs::path& file) : file_(file) {
  std::error_code ec;
  existed_ = fs::exists(fs::symlink_status(file_, ec));
  std::lock_guard lock(live_mutex);
  // O_EXCL: a file of that name that is there already (the user's, or a
  // killed writer's) is never written over; the next name is tried.
  const std::string base = sibling(file_, "tmp").string();
  for (int n = 0;; ++n) {
    const std::string name = n == 0 ? base : base + "-" + std::to_string(n);
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::close(fd);
      temp_ = name;
      break;
    }
    if (errno != EEXIST || n == 100)
      throw OutputError(file_.string() + ": cannot write: " + std::strerror(errno));
  }
  live_files.push_back(this);
}

StagedFile::~StagedFile() { rollback(); }

void StagedFile::commit() {
  std::lock_guard lock(live_mutex);
  std::error_code ec;
  fs::rename(temp_, file_, ec);
  if (ec) {
    rollback_locked();
    throw OutputError(file_.string() + ": cannot write: " + reason(ec));
  }
  committed_ = true;
  std::erase(live_files, this);
}

void StagedFile::rollback() noexcept {
  std::lock_guard lock(live_mutex);
  rollback_locked();
}

void StagedFile::rollback_locked() noexcept {
  std::erase(live_files, this);
  std::error_code ec;
  if (!committed_ && !temp_.empty()) fs::remove(temp_, ec);
  temp_.clear();
}

pid_t spawn_child(const std::function<pid_t(const posix_spawnattr_t*)>& spawn) {
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  // This process ignores them (fail_writes_instead_of_dying); a child
  // starts with the default actions, as from a shell.
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGXFSZ);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::lock_guard lock(live_mutex);
  const pid_t pid = spawn(&attr);
  posix_spawnattr_destroy(&attr);
  if (pid > 0) children.push_back(pid);
  return pid;
}

void child_ended(pid_t pid) {
  std::lock_guard lock(live_mutex);
  std::erase(children, pid);
}

void fail_writes_instead_of_dying() {
  ::signal(SIGPIPE, SIG_IGN);
  ::signal(SIGXFSZ, SIG_IGN);
}

// Stops the children with `sig` and rolls back every live StagedFile and
// StagedDir, with live_mutex held; says what became of each.
std::string stop_and_roll_back_locked(int sig) {
  std::string said;
  if (!children.empty())
    said += "; stopped the " + std::to_string(children.size()) + " process(es) it had started";
  stop_children(sig);
  if (live.empty() && live_files.empty()) said += "; no output was being written";
  while (!live_files.empty()) {
    StagedFile* f = live_files.back();
    // One inside a staged directory goes with it, said once for the directory.
    const bool in_dir = std::any_of(live.begin(), live.end(), [&](const StagedDir* d) {
      return f->file().string().starts_with(d->temp().string() + "/");
    });
    const std::string file = f->file().string();
    const bool existed = f->existed_;
    f->rollback_locked();
    if (!in_dir)
      said += existed ? "; " + file + " keeps its previous content" : "; " + file + " was not written";
  }
  while (!live.empty()) {
    StagedDir* s = live.back();
    const std::string dir = s->dir().string();
    const bool existed = s->existed_;
    s->rollback_locked();
    said += existed ? "; " + dir + " keeps its previous output" : "; " + dir + " was not written";
  }
  return said;
}

namespace {

// Given back when memory runs out where no caller can catch it, so that
// the clean-up and its message have what they allocate.
char* oom_reserve = nullptr;

}  // namespace

std::string out_of_memory_message() {
  std::string limits;
  for (const auto& [resource, flag, what] :
       {std::tuple{RLIMIT_AS, "-v", "its address space"}, std::tuple{RLIMIT_DATA, "-d", "its data"}}) {
    rlimit r{};
    if (getrlimit(resource, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
      limits += std::string(limits.empty() ? " (" : ", ") + "ulimit " + flag + " " +
                std::to_string(r.rlim_cur / 1024) + " limits " + what;
  }
  if (!limits.empty()) limits += ")";
  return "out of memory: an allocation failed while the run went on" + limits +
         "; the estimate checked before it started (rdmasim validate FILE --memory-limit 1KiB prints it) "
         "did not foresee it. Ask for less (message sizes, outstanding, counts, hosts) or give it more "
         "memory";
}

void exit_when_out_of_memory() {
  oom_reserve = new char[1 << 20];
  static const std::terminate_handler otherwise = std::get_terminate();
  std::set_terminate([] {
    bool out_of_memory = false;
    if (const std::exception_ptr e = std::current_exception()) {
      try {
        std::rethrow_exception(e);
      } catch (const std::bad_alloc&) {
        out_of_memory = true;
      } catch (...) {
      }
    }
    if (!out_of_memory) otherwise();
    delete[] std::exchange(oom_reserve, nullptr);
    // The lock is held when memory ran out while a staged folder was being
    // rolled back, or by the interrupt's clean-up: the staged folder is then
    // left, as a kill -9 leaves it, for the next run into DIR to remove.
    const std::string cleaned =
        live_mutex.try_lock() ? stop_and_roll_back_locked(SIGTERM) : "; its staged folder may be left behind";
    const std::string msg = "rdmasim: " + out_of_memory_message() + cleaned + "\n";
    if (Cluster::launched_rank() == 0) {
      [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, msg.data(), msg.size());
    }
    ::_exit(kExitBadInput);
  });
}

void clean_up_on_interrupt() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  // Blocked here, and so in every thread started later: only sigwait sees them.
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) return;
    std::lock_guard lock(live_mutex);  // never released: the process ends here
    const std::string msg = std::string("rdmasim: interrupted (") + (sig == SIGINT ? "SIGINT" : "SIGTERM") +
                            ")" + stop_and_roll_back_locked(sig) + "\n";
    // Under mpirun every rank gets the signal; rank 0 holds the staged
    // output and says what became of it, the others stay quiet and end
    // after it. (The launched rank: from the environment, as Cluster may
    // still be joining the ranks on the main thread.)
    if (Cluster::launched_rank() == 0) {
      [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, msg.data(), msg.size());
    } else {
      wait_for_rank0();
    }
    ::_exit(128 + sig);
  }).detach();
}

}  // namespace rdmasim
