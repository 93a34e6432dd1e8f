// Output directories that are never half-written and never take a user's
// files with them (docs/reliability.md, "Output directories"):
// - a run writes into a temporary sibling (DIR.tmp-<pid>) and only a
//   complete result replaces DIR, by two renames;
// - DIR/.rdmasim-manifest lists every file and directory rdmasim wrote
//   there, and an existing DIR is replaced only if it is empty or holds
//   nothing else: a folder with a file rdmasim did not write is refused;
// - an interrupted run (SIGINT, SIGTERM) removes its temporary directory
//   and says what it kept; a killed one (SIGKILL) is cleaned up by the
//   next run into the same DIR, and so is a killed report's page inside
//   DIR (remove_stale_pages).
#pragma once

#include <spawn.h>
#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/errors.hpp"

namespace rdmasim {

// The manifest's name inside an output directory.
inline constexpr std::string_view kManifest = ".rdmasim-manifest";

// Which command's output a directory holds, told by the file at its top:
// results.json (run), compare.json (compare), sweep.json (sweep). A command
// replaces only its own kind: a later `run` never deletes a comparison or
// a sweep, and no results.json is left beside a compare.json.
enum class OutputKind { any, run, compare, sweep };

// Throws InputError when `dir` holds the output of another command than
// `kind`'s (nothing for OutputKind::any).
void check_output_kind(const std::filesystem::path& dir, OutputKind kind);

class StagedDir {
 public:
  // Checks that `dir` may be (re)placed and creates the empty temporary
  // sibling, and any missing parents. Leftovers of a killed run into `dir`
  // (DIR.tmp-<pid>, DIR.old-<pid> of dead pids) are removed first, or put
  // back when `dir` is missing. Throws InputError when `dir` is not a
  // directory or holds files its manifest does not list, OutputError when
  // the system refuses to create it. With a `kind`, an existing `dir` that
  // holds another command's output is refused too (InputError).
  explicit StagedDir(const std::filesystem::path& dir, OutputKind kind = OutputKind::any);
  // Unless committed: removes the temporary directory and the parents this
  // object created, leaving any previous `dir` untouched.
  ~StagedDir();
  StagedDir(const StagedDir&) = delete;
  StagedDir& operator=(const StagedDir&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  const std::filesystem::path& temp() const { return temp_; }

  // Writes the manifest of the temporary directory, then replaces `dir`
  // with it: renames the old one away, renames the new one in, removes the
  // old one. On failure the old one is put back. Throws OutputError.
  void commit();

  // Removes the temporary directory and the parents this object created.
  void rollback() noexcept;

 private:
  void rollback_locked() noexcept;  // with the live list's lock held

  std::filesystem::path dir_, temp_;
  std::filesystem::path created_root_;  // highest parent this object created, if any
  bool committed_ = false;
  bool existed_ = false;  // `dir` was there before: an interrupted run leaves it as it was
  friend void clean_up_on_interrupt();
  friend std::string stop_and_roll_back_locked(int sig);
};

// A file written whole or not at all: into a temporary sibling,
// FILE.tmp-<pid> (created exclusively, so never a file that was there: on a
// clash a -<n> is added), that commit() renames over FILE. Unless committed
// it is removed, on an interrupt (SIGINT, SIGTERM) too. `file` is the final
// name; a caller that must not replace some file checks it before commit().
class StagedFile {
 public:
  // Creates the temporary file; throws OutputError naming `file` when the
  // system refuses (a missing folder, permission denied).
  explicit StagedFile(const std::filesystem::path& file);
  ~StagedFile();
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;

  const std::filesystem::path& file() const { return file_; }
  const std::filesystem::path& temp() const { return temp_; }

  // Renames the temporary file over `file`. Throws OutputError.
  void commit();
  void rollback() noexcept;

 private:
  void rollback_locked() noexcept;  // with the live list's lock held

  std::filesystem::path file_, temp_;
  bool committed_ = false;
  bool existed_ = false;  // `file` was there before: an interrupted write leaves it as it was
  friend void clean_up_on_interrupt();
  friend std::string stop_and_roll_back_locked(int sig);
};

// What every report page carries in its <head> (apps/report.py writes it):
// an existing file is written over only when it has it, as a page of
// rdmasim's, or is empty (docs/report.md, "Where the page goes").
inline constexpr std::string_view kReportMark = R"(<meta name="generator" content="rdmasim report">)";

// A regular file that is a page rdmasim wrote (kReportMark in its head) or
// empty (as mktemp makes, or a writer killed before it wrote): nothing of
// a user's is lost when it is replaced or removed.
bool replaceable_page(const std::filesystem::path& file);

// `rdmasim report` killed with SIGKILL, which no handler sees, leaves the
// page's StagedFile temporary, FILE.tmp-<pid> or FILE.tmp-<pid>-<n>.
// Removes those in `dir` (of FILE `only`, else of any FILE named *.html)
// whose pid is no longer alive and that are replaceable_page()s; a file of
// any other name or content, a user's, is left alone.
void remove_stale_pages(const std::filesystem::path& dir, std::string_view only = {});

// The entries of `dir` (relative paths, directories with a trailing '/')
// that its manifest does not list, sorted; all of them when it has none.
std::vector<std::string> foreign_entries(const std::filesystem::path& dir);

// The entries `dir`'s manifest lists; none when it has no manifest.
std::set<std::string> manifest_entries(const std::filesystem::path& dir);

// Adds to `dir`'s manifest the entries under it for which `ours` is true
// (files rdmasim wrote there outside a StagedDir: `sweep --collect`'s tables
// and the runs a batch job made).
void add_to_manifest(const std::filesystem::path& dir, const std::function<bool(const std::string&)>& ours);

// `dir` without a trailing separator or dot segments; throws InputError for
// a path that cannot name an output directory ("", ".", "..", "/").
std::filesystem::path output_path(const std::filesystem::path& dir);

// Writes `content` to `file` through a StagedFile, so readers see the old
// file or the whole new one. Throws OutputError naming
// the file and the system's reason.
void write_file_atomic(const std::filesystem::path& file, std::string_view content);
// The same, the content written by `write` as it goes (a large file is
// never held whole in memory).
void write_file_atomic(const std::filesystem::path& file, const std::function<void(std::ostream&)>& write);

// From now on SIGINT and SIGTERM end the process cleanly: the signal is
// passed on to every child started by spawn_child() and the children are
// waited for (they clean up their own output), every live StagedDir and
// StagedFile is rolled back, a line on stderr says what was kept, and the exit code is
// 128 + the signal's number. Call once, first thing in main(), before any
// thread exists.
void clean_up_on_interrupt();

// From now on a write that passes the file size limit (SIGXFSZ) or goes to
// a pipe nobody reads (SIGPIPE) fails with EFBIG or EPIPE instead of
// killing the process: an output file fails as on a full disk (exit 3, the
// staged output removed), and a closed stdout only loses what was printed
// (docs/reliability.md). Children started by spawn_child() get the default
// actions back.
void fail_writes_instead_of_dying();

// Starts a child process with `spawn` (which returns its pid, or -1) so
// that an interrupt stops it too: a sweep's runs write inside the sweep's
// staged directory, and one left running would outlive the parent that
// removed it. No child starts once an interrupt is being handled. `spawn`
// passes the attributes it is given to posix_spawn: the child starts with
// no signal blocked (this process blocks SIGINT and SIGTERM, and a child
// inheriting that would not end when passed them). child_ended() forgets
// a child the caller has reaped.
pid_t spawn_child(const std::function<pid_t(const posix_spawnattr_t*)>& spawn);
void child_ended(pid_t pid);

// What a run that ran out of memory says (std::bad_alloc, or a host
// memory mapping refused), naming the ulimits that bound it.
std::string out_of_memory_message();
// From now on a std::bad_alloc that no caller can catch (in a coroutine, a
// noexcept function, a thread) ends the process as guarded() ends a run
// that ran out of memory: the children stopped, every live StagedDir
// rolled back, out_of_memory_message() and what was kept on stderr, exit
// 2. Other uncaught exceptions keep the default handler. Call once, from
// main().
void exit_when_out_of_memory();

}  // namespace rdmasim
