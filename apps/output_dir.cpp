#include "apps/output_dir.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <system_error>

namespace rdmasim {

namespace fs = std::filesystem;

namespace {

fs::path sibling(const fs::path& p, std::string_view tag) {
  return p.parent_path() /
         (p.filename().string() + "." + std::string(tag) + "-" + std::to_string(::getpid()));
}

bool is_rdmasim_output(const fs::path& dir) {
  std::error_code ec;
  return fs::is_empty(dir, ec) || fs::exists(dir / "results.json", ec) ||
         fs::exists(dir / "compare.json", ec);
}

// A run killed while staging (Ctrl-C, kill -9) leaves DIR.tmp-<pid>, and
// perhaps DIR.old-<pid> with DIR missing. The next run into DIR removes the
// first and puts the second back, for pids no longer alive.
void recover_from_killed_runs(const fs::path& dir) {
  std::error_code ec;
  const fs::path parent = dir.has_parent_path() ? dir.parent_path() : fs::path(".");
  const std::string name = dir.filename().string();
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string entry = it->path().filename().string();
    for (const std::string_view tag : {".tmp-", ".old-"}) {
      if (!entry.starts_with(name) || entry.compare(name.size(), tag.size(), tag) != 0) continue;
      const std::string pid = entry.substr(name.size() + tag.size());
      if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos || pid.size() > 9) continue;
      if (::kill(static_cast<pid_t>(std::stol(pid)), 0) == 0 || errno != ESRCH) continue;  // alive
      std::error_code e2;
      if (tag == ".old-" && !fs::exists(fs::symlink_status(dir, e2)))
        fs::rename(it->path(), dir, e2);
      else
        fs::remove_all(it->path(), e2);
    }
  }
}

}  // namespace

fs::path output_path(const fs::path& dir) {
  fs::path p = dir.lexically_normal();
  if (!p.has_filename() && p.has_relative_path()) p = p.parent_path();  // "out/x/" -> "out/x"
  if (p.empty() || !p.has_relative_path() || p.filename() == "." || p.filename() == "..")
    throw OutputError("'" + dir.string() + "' cannot be an output directory");
  return p;
}

StagedDir::StagedDir(const fs::path& dir) : dir_(output_path(dir)) {
  recover_from_killed_runs(dir_);
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(dir_, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st)) throw OutputError(dir_.string() + ": exists and is not a directory");
    if (!is_rdmasim_output(dir_))
      throw OutputError(dir_.string() +
                        ": exists and holds no results.json or compare.json; refusing to replace it");
  }

  const fs::path parent = dir_.has_parent_path() ? dir_.parent_path() : fs::path(".");
  for (fs::path p = dir_.parent_path(); !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    created_root_ = p;
    if (p == p.parent_path()) break;
  }
  try {
    fs::create_directories(parent);
    temp_ = sibling(dir_, "tmp");
    fs::remove_all(temp_);  // a leftover of a killed run that had our pid
    fs::create_directory(temp_);
  } catch (const fs::filesystem_error& e) {
    rollback();
    throw OutputError(dir_.string() + ": cannot create output: " + e.code().message());
  }
}

StagedDir::~StagedDir() { rollback(); }

void StagedDir::rollback() noexcept {
  if (committed_) return;
  std::error_code ec;
  if (!temp_.empty()) fs::remove_all(temp_, ec);
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
  std::error_code ec;
  fs::path old;
  if (fs::exists(fs::symlink_status(dir_, ec))) {
    old = sibling(dir_, "old");
    fs::remove_all(old);
    fs::rename(dir_, old);
  }
  try {
    fs::rename(temp_, dir_);
  } catch (...) {
    if (!old.empty()) fs::rename(old, dir_, ec);
    throw;
  }
  committed_ = true;
  if (!old.empty()) fs::remove_all(old, ec);
}

void write_file_atomic(const fs::path& file, std::string_view content) {
  const fs::path tmp = sibling(file, "tmp");
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) {
      const std::error_code code(errno ? errno : EIO, std::generic_category());
      std::error_code ec;
      fs::remove(tmp, ec);
      throw fs::filesystem_error("cannot write", tmp, code);
    }
  }
  try {
    fs::rename(tmp, file);
  } catch (...) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw;
  }
}

}  // namespace rdmasim
