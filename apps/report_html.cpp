#include "apps/report_html.hpp"

#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <cstring>
#include <ostream>
#include <string>

#include "apps/output_dir.hpp"

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

}  // namespace

int write_html_report(const std::vector<fs::path>& dirs, const fs::path& out, const fs::path& shown,
                      std::ostream& out_stream, std::ostream& err) {
  for (const auto& d : dirs) {
    std::error_code ec;
    if (!fs::is_directory(d, ec)) {
      err << d.string() << ": no such directory\n";
      return 2;
    }
  }
  if (std::error_code ec; fs::is_directory(out, ec)) {
    err << shown.string() << ": is a directory; give the page's file name, such as "
        << (shown / "report.html").string() << "\n";
    return 2;
  }
  std::vector<std::string> args{python(), "-c", std::string(report_script()), out.string(), shown.string()};
  for (const auto& d : dirs) args.push_back(d.string());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  out_stream.flush();
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
    return 1;
  }
  int status = 0;
  const bool waited = ::waitpid(pid, &status, 0) == pid;
  child_ended(pid);
  if (!waited || !WIFEXITED(status)) {
    err << "rdmasim report: " << args[0] << " did not finish\n";
    return 1;
  }
  // The script's 2: the folders hold what rdmasim did not write; 4: the
  // page could not be written (kExitOutput); 3 (no matplotlib) and a
  // traceback are the installation's or a bug.
  const int code = WEXITSTATUS(status);
  return code == 0 ? 0 : code == 2 ? 2 : code == 4 ? 3 : 1;
}

}  // namespace rdmasim
