// `rdmasim report DIR... [--out FILE.html]` and `compare --report`: a
// self-contained HTML page with SVG figures, drawn by matplotlib from the
// folders' results (apps/report.py, compiled into the binary and run with
// python3: $RDMASIM_PYTHON, else /usr/bin/python3, else python3 on PATH).
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace rdmasim {

std::string_view report_script();

// Writes `out` from the output folders `dirs` (of run, compare or sweep)
// through a StagedFile, or straight into a FIFO, a character device or a
// descriptor (/dev/stdout, /dev/fd/N); says on stdout that it wrote
// `shown` (the name to print, where `out` is staged), problems on `err`.
// A folder named twice (`run1 ./run1/`, a symbolic link to it) is
// reported once, with a warning; a killed report's temporary of `out` is
// removed first (remove_stale_pages). Returns an exit code: 0; 2 (a folder
// missing or holding no results, or `out` a directory or a file that is
// not a page of rdmasim's); 3 (the page could not be written); 1 (python3
// or matplotlib missing).
int write_html_report(const std::vector<std::filesystem::path>& dirs, const std::filesystem::path& out,
                      const std::filesystem::path& shown, std::ostream& out_stream, std::ostream& err);

}  // namespace rdmasim
