#include "apps/cli.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace rdmasim;
namespace fs = std::filesystem;

namespace {

struct Call {
  int code;
  std::string out, err;
};

Call cli(std::vector<std::string> args) {
  args.insert(args.begin(), "rdmasim");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int code = cli_main(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

}  // namespace

TEST_CASE("cli: --version and --help succeed") {
  const Call v = cli({"--version"});
  CHECK(v.code == kExitOk);
  CHECK(v.out == "rdmasim " + std::string(kVersion) + "\n");
  const Call h = cli({"--help"});
  CHECK(h.code == kExitOk);
  CHECK(h.out.find("validate") != std::string::npos);
  CHECK(cli({"run", "--help"}).out.find("--fabric") != std::string::npos);
}

TEST_CASE("cli: unknown commands, options and bad values exit 2 with a message") {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {},
           {"frobnicate"},
           {"--frobnicate"},
           {"run"},
           {"run", "x.yaml", "--bogus"},
           {"run", "x.yaml", "--fabric", "token_ring"},
           {"run", "x.yaml", "--seed", "-1"},
           {"run", "x.yaml", "--seed", "many"},
           {"run", "x.yaml", "--set", "novalue"},
           {"run", "x.yaml", "--set", "=3"},
           {"compare", "x.yaml", "--fabrics", "ib,token_ring"},
           {"validate", "x.yaml", "--out", "d"},
       }) {
    const Call c = cli(args);
    CAPTURE(c.err);
    CHECK(c.code == kExitBadInput);
    CHECK_FALSE(c.err.empty());
    CHECK(c.out.empty());
  }
  CHECK(cli({"frobnicate"}).err.find("unknown command 'frobnicate'") != std::string::npos);
}

TEST_CASE("cli: a mistyped command or option is named with the one meant") {
  CHECK(cli({"rn", "x.yaml"}).err.find("unknown command 'rn' (did you mean 'run'?)") != std::string::npos);
  const Call set = cli({"run", "x.yaml", "--sed", "link.loss=0"});
  CHECK(set.code == kExitBadInput);
  CHECK(set.err.find("unknown option '--sed' for 'rdmasim run' (did you mean '--set'?); its options are ") !=
        std::string::npos);
  CHECK(cli({"compare", "x.yaml", "--fabric=ib"})
            .err.find("unknown option '--fabric' for 'rdmasim compare' "
                      "(did you mean '--fabrics'?)") != std::string::npos);
  // Nothing like an option: CLI11's own words.
  CHECK(cli({"run", "x.yaml", "extra"}).err.find("not expected: extra") != std::string::npos);
}

TEST_CASE("cli: a missing experiment file is named") {
  const Call c = cli({"validate", "/no/such/experiment.yaml"});
  CHECK(c.code == kExitBadInput);
  CHECK(c.err.find("/no/such/experiment.yaml") != std::string::npos);
}

TEST_CASE("cli: validate prints OK for a good file and file:line:column for a bad one") {
  const fs::path dir = fs::temp_directory_path() / ("rdmasim-cli-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path good = dir / "good.yaml", bad = dir / "bad.yaml";
  std::ofstream(good) << "name: t\nfabric: ib\ntopology:\n  hosts: [a, b]\n  switches: [s1]\n"
                         "  links: [[a, s1], [b, s1]]\nworkloads:\n  - {kind: send, from: a, to: b}\n";
  std::ofstream(bad) << "name: t\nfabric: token_ring\n";
  const Call ok = cli({"validate", good.string()});
  CHECK(ok.code == kExitOk);
  CHECK(ok.out == "OK: " + good.string() + "\n");
  const Call ko = cli({"validate", bad.string()});
  CHECK(ko.code == kExitBadInput);
  CHECK(ko.err.find(bad.string() + ":2:9: fabric") != std::string::npos);
  fs::remove_all(dir);
}
