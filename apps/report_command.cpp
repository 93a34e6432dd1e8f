// rdmasim report: an HTML page with figures from output folders (apps/report_html.hpp).
#include "apps/commands.hpp"
#include "apps/output_dir.hpp"
#include "apps/report_html.hpp"

namespace rdmasim::cli {

namespace fs = std::filesystem;
using nlohmann::json;

int do_report(const Options& o, std::ostream& out, std::ostream& err) {
  std::vector<fs::path> dirs(o.dirs.begin(), o.dirs.end());
  const fs::path file = o.out.empty() ? dirs.front() / "report.html" : fs::path(o.out);
  const int code = write_html_report(dirs, file, file, out, err);
  // Written into an output folder of rdmasim's: the page is rdmasim's too,
  // so a later run into that folder replaces it instead of refusing.
  const fs::path parent = file.has_parent_path() ? file.parent_path() : fs::path(".");
  std::error_code ec;
  if (code == kExitOk && fs::exists(parent / kManifest, ec)) {
    const Outcome listed = guarded([&] {
      add_to_manifest(parent, [&](const std::string& rel) { return rel == file.filename().string(); });
      return json();
    });
    if (listed.code != kExitOk) {
      err << listed.message << "\n";
      return listed.code;
    }
  }
  return code;
}

}  // namespace rdmasim::cli
