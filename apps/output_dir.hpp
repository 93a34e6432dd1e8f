// Output directories that are never half-written: a run writes into a
// temporary sibling (DIR.tmp-<pid>) and only a complete result replaces DIR.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

namespace rdmasim {

// The output location cannot be used (bad --out, a file in the way, a
// directory that is not ours to replace). The user can fix it: exit 2.
struct OutputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class StagedDir {
 public:
  // Checks that `dir` may be (re)placed and creates the empty temporary
  // sibling, and any missing parents. An existing `dir` is replaced only if
  // it is empty or holds rdmasim output (results.json or compare.json), so
  // that a mistyped --out never deletes someone's files. Leftovers of a
  // killed run into `dir` (DIR.tmp-<pid>, DIR.old-<pid> of dead pids) are
  // removed first, or put back when `dir` is missing. Throws OutputError.
  explicit StagedDir(const std::filesystem::path& dir);
  // Unless committed: removes the temporary directory and the parents this
  // object created, leaving any previous `dir` untouched.
  ~StagedDir();
  StagedDir(const StagedDir&) = delete;
  StagedDir& operator=(const StagedDir&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  const std::filesystem::path& temp() const { return temp_; }

  // Replaces `dir` with the temporary directory: renames the old one away,
  // renames the new one in, removes the old one. On failure the old one is
  // put back. Throws std::filesystem::filesystem_error.
  void commit();

 private:
  void rollback() noexcept;

  std::filesystem::path dir_, temp_;
  std::filesystem::path created_root_;  // highest parent this object created, if any
  bool committed_ = false;
};

// `dir` without a trailing separator or dot segments; throws OutputError for
// a path that cannot name an output directory ("", ".", "..", "/").
std::filesystem::path output_path(const std::filesystem::path& dir);

// Writes `content` to `file` through a temporary sibling and a rename, so
// readers see the old file or the whole new one. Throws std::filesystem::filesystem_error.
void write_file_atomic(const std::filesystem::path& file, std::string_view content);

}  // namespace rdmasim
