// `rdmasim report DIR... [--out FILE.html]` and `compare --report`: a
// self-contained HTML page with SVG figures, drawn by matplotlib from the
// folders' results (apps/report.py, compiled into the binary and run with
// python3: $RDMASIM_PYTHON, else /usr/bin/python3, else python3 on PATH).
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string_view>
#include <vector>

namespace rdmasim {

std::string_view report_script();

// Writes `out` from the output folders `dirs` (of run, compare or sweep);
// says on stdout that it wrote `shown` (where `out` is staged), problems on `err`. Returns an exit
// code: 0, 2 (a folder holds no results), 1 (python3 or matplotlib missing,
// or the page could not be written).
int write_html_report(const std::vector<std::filesystem::path>& dirs, const std::filesystem::path& out,
                      const std::filesystem::path& shown, std::ostream& out_stream, std::ostream& err);

}  // namespace rdmasim
