#include "apps/output_dir.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace rdmasim;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    static int n = 0;
    path = fs::temp_directory_path() /
           ("rdmasim-outdir-test-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

void put(const fs::path& p, const std::string& s) { std::ofstream(p) << s; }
std::string get(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
// Names in `dir`, sorted.
std::string listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  std::string out;
  for (const auto& n : names) out += n + " ";
  return out;
}

}  // namespace

TEST_CASE("a committed stage becomes the output directory, replacing the previous one") {
  TempDir t;
  const fs::path dir = t.path / "out" / "exp";
  {
    StagedDir s(dir);
    CHECK(s.temp() == t.path / "out" / ("exp.tmp-" + std::to_string(::getpid())));
    CHECK(fs::is_directory(s.temp()));
    CHECK_FALSE(fs::exists(dir));
    put(s.temp() / "results.json", "one");
    s.commit();
  }
  CHECK(get(dir / "results.json") == "one");
  {
    StagedDir s(dir);
    put(s.temp() / "results.json", "two");
    fs::create_directory(s.temp() / "pcap");
    s.commit();
  }
  CHECK(get(dir / "results.json") == "two");
  CHECK(listing(t.path / "out") == "exp ");  // no tmp or old siblings left
  CHECK(listing(dir) == ".rdmasim-manifest pcap results.json ");
  CHECK(get(dir / ".rdmasim-manifest").ends_with("\npcap/\nresults.json\n"));
}

TEST_CASE("a directory holding a file rdmasim did not write is refused and left whole") {
  TempDir t;
  const fs::path dir = t.path / "exp";
  {
    StagedDir s(dir);
    fs::create_directory(s.temp() / "pcap");
    put(s.temp() / "pcap" / "a-0.pcap", "frames");
    put(s.temp() / "results.json", "one");
    s.commit();
  }
  CHECK(foreign_entries(dir).empty());
  put(dir / "thesis.txt", "precious");
  put(dir / "pcap" / "notes.txt", "mine");
  CHECK(foreign_entries(dir) == std::vector<std::string>{"pcap/notes.txt", "thesis.txt"});
  try {
    StagedDir s(dir);
    FAIL("not refused");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("pcap/notes.txt, thesis.txt, which rdmasim did not write") !=
          std::string::npos);
  }
  CHECK(get(dir / "thesis.txt") == "precious");
  CHECK(get(dir / "results.json") == "one");
  CHECK(listing(t.path) == "exp ");
  // Without its manifest, nothing in it is rdmasim's: results.json included.
  fs::remove(dir / "thesis.txt");
  fs::remove(dir / "pcap" / "notes.txt");
  CHECK_NOTHROW(StagedDir{dir});
  fs::remove(dir / ".rdmasim-manifest");
  CHECK_THROWS_AS(StagedDir{dir}, InputError);
}

TEST_CASE("an abandoned stage leaves no trace and the previous output untouched") {
  TempDir t;
  const fs::path dir = t.path / "exp";
  fs::create_directory(dir);
  put(dir / "results.json", "old");
  put(dir / ".rdmasim-manifest", "results.json\n");
  {
    StagedDir s(dir);
    put(s.temp() / "results.json", "half");
  }  // no commit: a failed run
  CHECK(get(dir / "results.json") == "old");
  CHECK(listing(t.path) == "exp ");
  CHECK(listing(dir) == ".rdmasim-manifest results.json ");
}

TEST_CASE("parents created for an abandoned stage are removed again") {
  TempDir t;
  { StagedDir s(t.path / "a" / "b" / "exp"); }
  CHECK(listing(t.path) == "");
  fs::create_directory(t.path / "keep");
  { StagedDir s(t.path / "keep" / "new" / "exp"); }
  CHECK(listing(t.path) == "keep ");
  CHECK(listing(t.path / "keep") == "");
}

TEST_CASE("a directory that is not rdmasim output, or a file, is never replaced") {
  TempDir t;
  fs::create_directory(t.path / "home");
  put(t.path / "home" / "thesis.tex", "precious");
  CHECK_THROWS_AS(StagedDir(t.path / "home"), InputError);
  put(t.path / "file", "x");
  CHECK_THROWS_AS(StagedDir(t.path / "file"), InputError);
  CHECK_THROWS_AS(StagedDir(t.path / "file" / "sub"), InputError);  // a file where a parent should be
  CHECK(get(t.path / "home" / "thesis.tex") == "precious");
  CHECK(listing(t.path) == "file home ");
  // Empty: ours to fill. Holding a compare.json rdmasim did not list: not ours.
  fs::create_directory(t.path / "empty");
  CHECK_NOTHROW(StagedDir(t.path / "empty"));
  fs::create_directory(t.path / "cmp");
  put(t.path / "cmp" / "compare.json", "{}");
  CHECK_THROWS_AS(StagedDir(t.path / "cmp"), InputError);
}

TEST_CASE("a command replaces only its own kind of output") {
  TempDir t;
  const fs::path dir = t.path / "exp";
  auto make = [&](OutputKind kind, const char* marker) {
    StagedDir s(dir, kind);
    put(s.temp() / marker, "{}");
    s.commit();
  };
  make(OutputKind::compare, "compare.json");
  CHECK_THROWS_WITH_AS(StagedDir(dir, OutputKind::run),
                       doctest::Contains("holds the output of `rdmasim compare` (compare.json)"), InputError);
  CHECK_THROWS_AS(StagedDir(dir, OutputKind::sweep), InputError);
  CHECK_NOTHROW(StagedDir(dir, OutputKind::compare));
  CHECK_NOTHROW(StagedDir{dir});  // any: no kind asked
  CHECK(listing(dir) == ".rdmasim-manifest compare.json ");
  make(OutputKind::compare, "compare.json");
  CHECK_THROWS_AS(check_output_kind(dir, OutputKind::run), InputError);
  CHECK_NOTHROW(check_output_kind(dir, OutputKind::compare));
  CHECK_NOTHROW(check_output_kind(t.path / "missing", OutputKind::run));
}

TEST_CASE("output paths are normalised; the current, parent and root directories are refused") {
  CHECK(output_path("out/x/") == fs::path("out/x"));
  CHECK(output_path("out/./x") == fs::path("out/x"));
  CHECK(output_path("x") == fs::path("x"));
  CHECK_THROWS_AS(output_path(""), InputError);
  CHECK_THROWS_AS(output_path("."), InputError);
  CHECK_THROWS_AS(output_path("./"), InputError);
  CHECK_THROWS_AS(output_path(".."), InputError);
  CHECK_THROWS_AS(output_path("a/.."), InputError);
  CHECK_THROWS_AS(output_path("/"), InputError);
}

TEST_CASE("write_file_atomic replaces a file whole") {
  TempDir t;
  write_file_atomic(t.path / "compare.json", "first");
  write_file_atomic(t.path / "compare.json", "second");
  CHECK(get(t.path / "compare.json") == "second");
  CHECK(listing(t.path) == "compare.json ");
  CHECK_THROWS_AS(write_file_atomic(t.path / "missing" / "x.json", "y"), OutputError);
}

TEST_CASE("leftovers of a killed run into the same directory are cleaned up") {
  TempDir t;
  const fs::path dir = t.path / "exp";
  // pid 999999999 is above any pid_max: no such process.
  fs::create_directories(t.path / "exp.tmp-999999999" / "pcap");
  fs::create_directory(t.path / "exp.old-999999999");
  put(t.path / "exp.old-999999999" / "results.json", "previous");
  put(t.path / "exp.old-999999999" / ".rdmasim-manifest", "results.json\n");
  fs::create_directory(t.path / "exp.tmp-1");  // pid 1 is alive: not ours to touch
  fs::create_directory(t.path / "exp.tmp-x");  // not a pid
  {
    StagedDir s(dir);
    // The killed run had renamed exp away: it is back.
    CHECK(get(dir / "results.json") == "previous");
  }
  CHECK(listing(t.path) == "exp exp.tmp-1 exp.tmp-x ");
  fs::create_directory(t.path / "exp.old-999999999");
  { StagedDir s(dir); }  // exp exists: the stale old copy goes
  CHECK(listing(t.path) == "exp exp.tmp-1 exp.tmp-x ");
}

TEST_CASE("a killed run's temporary manifest is removed, never a file that is not one") {
  TempDir t;
  const fs::path dir = t.path / "exp";
  fs::create_directory(dir);
  put(dir / ".rdmasim-manifest",
      "# Every file and directory rdmasim wrote here. rdmasim replaces\nresults.json\n");
  put(dir / "results.json", "{}");
  // pid 999999999 is above any pid_max: no such process; pid 1 is alive.
  put(dir / ".rdmasim-manifest.tmp-999999999", "# Every file and directory rdmasim wrote here. rdm");
  put(dir / ".rdmasim-manifest.tmp-999999999-2", "");
  put(dir / ".rdmasim-manifest.tmp-999999998", "my notes");                                // not a manifest
  put(dir / ".rdmasim-manifest.tmp-1", "# Every file and directory rdmasim wrote here.");  // alive
  CHECK_THROWS_AS(StagedDir{dir}, InputError);  // the last two are not ours: refused
  fs::remove(dir / ".rdmasim-manifest.tmp-999999998");
  fs::remove(dir / ".rdmasim-manifest.tmp-1");
  put(dir / ".rdmasim-manifest.tmp-999999999", "# Every file and directory rdmasim wrote here. rdm");
  put(dir / ".rdmasim-manifest.tmp-999999999-2", "");
  { StagedDir s(dir); }
  CHECK(!fs::exists(dir / ".rdmasim-manifest.tmp-999999999"));
  CHECK(!fs::exists(dir / ".rdmasim-manifest.tmp-999999999-2"));
}

TEST_CASE("a staged file never takes the name of a file that is there, and is gone unless committed") {
  TempDir t;
  const fs::path file = t.path / "page.html";
  const fs::path taken = t.path / ("page.html.tmp-" + std::to_string(::getpid()));
  put(taken, "mine");
  {
    StagedFile s(file);
    CHECK(s.temp() == t.path / ("page.html.tmp-" + std::to_string(::getpid()) + "-1"));
    put(s.temp(), "page");
  }  // not committed: removed
  CHECK(listing(t.path) == taken.filename().string() + " ");
  write_file_atomic(file, "page");
  CHECK(get(file) == "page");
  CHECK(get(taken) == "mine");
  CHECK(listing(t.path) == "page.html " + taken.filename().string() + " ");
  // A folder that is not there: the file named, the system's reason.
  try {
    StagedFile s(t.path / "missing" / "page.html");
    FAIL("created in a missing folder");
  } catch (const OutputError& e) {
    CHECK(std::string(e.what()) ==
          (t.path / "missing" / "page.html").string() + ": cannot write: No such file or directory");
  }
}

TEST_CASE("a killed report's temporary page is removed, never a file that is not one") {
  TempDir t;
  const std::string page = "<!DOCTYPE html>\n<html><head>" + std::string(kReportMark) + "<title>cut";
  // pid 999999999 is above any pid_max: no such process; pid 1 is alive.
  put(t.path / "report.html.tmp-999999999", "");            // killed before it wrote
  put(t.path / "report.html.tmp-999999999-3", page);        // killed while it wrote
  put(t.path / "report.html.tmp-999999999-x", "");          // not a clash's number
  put(t.path / "report.html.tmp-1", page);                  // alive
  put(t.path / "other.html.tmp-999999999", "");             // another page
  put(t.path / "report.html.tmp-999999998", "the user's");  // not a page
  put(t.path / "notes.tmp-999999999", "");                  // not a page's name
  remove_stale_pages(t.path, "report.html");
  CHECK(listing(t.path) ==
        "notes.tmp-999999999 other.html.tmp-999999999 report.html.tmp-1 report.html.tmp-999999998 "
        "report.html.tmp-999999999-x ");
  // A run into the folder removes every page's (it then refuses the folder
  // for the user's files, which stay).
  fs::create_directory(t.path / "sub");
  put(t.path / "sub" / "a.html.tmp-999999999", "");  // not at the top: left
  CHECK_THROWS_AS(StagedDir(t.path), InputError);
  CHECK(listing(t.path) ==
        "notes.tmp-999999999 report.html.tmp-1 report.html.tmp-999999998 report.html.tmp-999999999-x sub ");
  CHECK(listing(t.path / "sub") == "a.html.tmp-999999999 ");
}
