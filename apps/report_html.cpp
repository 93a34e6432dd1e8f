#include "apps/report_html.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <ostream>
#include <string>

#include "apps/output_dir.hpp"
#include "core/errors.hpp"

extern char** environ;

namespace rdmasim {

namespace fs = std::filesystem;

namespace {

std::string python() {
  if (const char* p = std::getenv("RDMASIM_PYTHON"); p && *p) return p;
  std::error_code ec;
  if (fs::exists("/usr/bin/python3", ec)) return "/usr/bin/python3";  // Debian's, with python3-matplotlib
  return "python3";
}

// A descriptor of this process (`--out /dev/stdout > page.html`): written
// as it is, whatever it leads to.
bool names_descriptor(const fs::path& p) {
  const std::string s = p.lexically_normal().string();
  return s == "/dev/stdout" || s == "/dev/stderr" || s.starts_with("/dev/fd/") ||
         s.starts_with("/proc/self/fd/");
}

std::string not_ours(const fs::path& shown) {
  return shown.string() + ": exists and is not a page rdmasim wrote (its head has no " +
         std::string(kReportMark) +
         "); refusing to write over it: move it away, or name another file with --out";
}

enum class PageTarget { file, stream };

// How the page may go to `out`, or why it may not (InputError, naming it as
// `shown`): a file (new, or one that is replaceable_page(); `real` is the file
// to replace, a symbolic link's target) is staged and renamed over it; a
// FIFO, a character device (/dev/null) or a descriptor is written as it is,
// since renaming a file over it would replace the device itself.
PageTarget page_target(const fs::path& out, const fs::path& shown, fs::path& real) {
  real = out;
  if (names_descriptor(out)) return PageTarget::stream;
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(out, ec);
  if (!fs::exists(link)) return PageTarget::file;
  const fs::file_status st = fs::status(out, ec);
  if (!fs::exists(st))
    throw InputError(shown.string() + ": a symbolic link to a missing file; give the page's own file name");
  if (fs::is_directory(st))
    throw InputError(shown.string() + ": is a directory; give the page's file name, such as " +
                     (shown / "report.html").string());
  if (fs::is_fifo(st) || fs::is_character_file(st)) return PageTarget::stream;
  if (!fs::is_regular_file(st))
    throw InputError(shown.string() + ": is " +
                     (fs::is_block_file(st) ? "a block device" : "not a regular file") +
                     "; give the page's file name");
  if (fs::is_symlink(link)) real = fs::canonical(out, ec);
  if (ec || !replaceable_page(real)) throw InputError(not_ours(shown));
  return PageTarget::file;
}

// Runs the report script with `args` (the interpreter first) and returns
// its exit status, or -1 once `err` says why it did not run or finish.
int run_report_script(std::vector<std::string>& args, std::ostream& err) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int rc = 0;
  // Through spawn_child: an interrupt (compare --report) stops it too.
  const pid_t pid = spawn_child([&](const posix_spawnattr_t* attr) {
    pid_t p = 0;
    rc = ::posix_spawnp(&p, argv[0], nullptr, attr, argv.data(), environ);
    return rc == 0 ? p : pid_t{-1};
  });
  if (rc != 0) {
    err << "rdmasim report: cannot run " << args[0] << ": " << std::strerror(rc)
        << " (the report needs python3 and python3-matplotlib)\n";
    return -1;
  }
  int status = 0;
  const bool waited = ::waitpid(pid, &status, 0) == pid;
  child_ended(pid);
  if (!waited || !WIFEXITED(status)) {
    err << "rdmasim report: " << args[0] << " did not finish\n";
    return -1;
  }
  return WEXITSTATUS(status);
}

// The folders `dirs` names, each once in the order first given: a second
// name of one (`run1 ./run1/`, a symbolic link to it) would count its runs
// twice, so it is left out with a warning naming both. Throws InputError
// naming a path that is not a folder.
std::vector<fs::path> distinct_folders(const std::vector<fs::path>& dirs, std::ostream& err) {
  std::vector<fs::path> kept, real;
  for (const auto& d : dirs) {
    std::error_code ec;
    if (d.empty())
      throw InputError("rdmasim report: an empty path; give the output folder of a run, compare or sweep");
    const fs::file_status st = fs::status(d, ec);
    if (!fs::exists(st)) throw InputError(d.string() + ": no such directory");
    if (!fs::is_directory(st))
      throw InputError(d.string() + ": not a directory; give the output folder of a run, compare or sweep" +
                       (d.has_parent_path() ? " (" + d.parent_path().string() + "?)" : std::string()));
    const fs::path id = fs::canonical(d, ec);
    const auto seen = std::find(real.begin(), real.end(), id);
    if (!ec && seen != real.end()) {
      err << "rdmasim report: warning: " << d.string() << " is the folder "
          << kept[static_cast<size_t>(seen - real.begin())].string() << " again; its runs are counted once\n";
      continue;
    }
    kept.push_back(d);
    real.push_back(ec ? d : id);
  }
  return kept;
}

}  // namespace

int write_html_report(const std::vector<fs::path>& dirs, const fs::path& out, const fs::path& shown,
                      std::ostream& out_stream, std::ostream& err) {
  fs::path real;
  std::unique_ptr<StagedFile> staged;
  PageTarget target{};
  std::vector<fs::path> folders;
  try {
    folders = distinct_folders(dirs, err);
    target = page_target(out, shown, real);
    if (target == PageTarget::file) {
      remove_stale_pages(real.parent_path(), real.filename().string());
      staged = std::make_unique<StagedFile>(real);
    }
  } catch (const InputError& e) {
    err << e.what() << "\n";
    return 2;
  } catch (const OutputError& e) {
    err << "error: " << e.what() << "\n";
    return 3;
  }
  // A page written to a stream (stdout, say) keeps the script's "wrote ..." line out of it.
  const bool stream = target == PageTarget::stream;
  std::vector<std::string> args{python(),
                                "-c",
                                std::string(report_script()),
                                std::to_string(::getpid()),
                                stream ? out.string() : staged->temp().string(),
                                shown.string(),
                                stream ? "stderr" : "stdout"};
  for (const auto& d : folders) args.push_back(d.string());
  out_stream.flush();
  const int code = run_report_script(args, err);
  if (code < 0) return 1;
  // The script's 2: the folders hold what rdmasim did not write; 4: the
  // page could not be written (kExitOutput); 3 (no matplotlib) and a
  // traceback are the installation's or a bug.
  if (code != 0) return code == 2 ? 2 : code == 4 ? 3 : 1;  // `staged` removes its file
  if (!staged) return 0;
  // Someone may have put a file there while the page was drawn.
  if (std::error_code ec; fs::exists(fs::symlink_status(real, ec)) && !replaceable_page(real)) {
    err << not_ours(shown) << "\n";
    return 2;
  }
  try {
    staged->commit();
  } catch (const OutputError& e) {
    err << "error: " << e.what() << "\n";
    return 3;
  }
  return 0;
}

}  // namespace rdmasim
