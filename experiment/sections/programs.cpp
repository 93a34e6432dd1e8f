// `programs:`, real verbs programs run on the simulated hosts
// (docs/programs.md). Refused here, before anything runs: a host that is
// not one, a fabric with no RDMA device (tcp), a {NAME} that names no host, a program not found on PATH, and
// one that is not a dynamically linked program using libibverbs.so.1 (it
// could not reach the simulated device).
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "experiment/sections/sections.hpp"
#include "fabrics/registry.hpp"

namespace rdmasim {

namespace {

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// `name` as execvp would find it: a path when it has a slash, else the first
// executable file of that name on PATH; empty when none.
std::string find_program(const std::string& name) {
  auto executable = [](const std::string& p) {
    struct stat st {};
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) return executable(name) ? name : std::string();
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string p = (dir.empty() ? "." : dir) + "/" + name;
    if (executable(p)) return p;
  }
  return {};
}

// Why the ELF file at `path` cannot reach the simulated device, or empty:
// it must be a dynamically linked x86-64 program that needs libibverbs.so.1.
std::string not_a_verbs_program(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.size() < sizeof(Elf64_Ehdr) || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0)
    return "is not an ELF program (a script cannot be run: name the binary)";
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes.data(), sizeof eh);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64) return "is not an x86-64 program";
  auto in_file = [&](uint64_t off, uint64_t len) { return off <= bytes.size() && len <= bytes.size() - off; };
  if (!in_file(eh.e_phoff, uint64_t{eh.e_phnum} * sizeof(Elf64_Phdr))) return "has a damaged ELF header";
  const Elf64_Phdr* dyn = nullptr;
  std::vector<Elf64_Phdr> ph(eh.e_phnum);
  std::memcpy(ph.data(), bytes.data() + eh.e_phoff, ph.size() * sizeof(Elf64_Phdr));
  for (const Elf64_Phdr& p : ph)
    if (p.p_type == PT_DYNAMIC) dyn = &p;
  if (!dyn || !in_file(dyn->p_offset, dyn->p_filesz))
    return "is statically linked: rdmasim reaches a program through the libibverbs.so.1 it loads";
  // DT_STRTAB is an address: find the file offset of the segment that holds it.
  std::vector<std::pair<uint64_t, uint64_t>> needed;  // DT_NEEDED string offsets
  uint64_t strtab = 0;
  for (uint64_t off = dyn->p_offset; off + sizeof(Elf64_Dyn) <= dyn->p_offset + dyn->p_filesz;
       off += sizeof(Elf64_Dyn)) {
    Elf64_Dyn d;
    std::memcpy(&d, bytes.data() + off, sizeof d);
    if (d.d_tag == DT_NULL) break;
    if (d.d_tag == DT_NEEDED) needed.push_back({d.d_un.d_val, 0});
    if (d.d_tag == DT_STRTAB) strtab = d.d_un.d_ptr;
  }
  uint64_t str_off = 0;
  for (const Elf64_Phdr& p : ph)
    if (p.p_type == PT_LOAD && strtab >= p.p_vaddr && strtab < p.p_vaddr + p.p_filesz)
      str_off = strtab - p.p_vaddr + p.p_offset;
  for (const auto& [name, unused] : needed) {
    (void)unused;
    if (!in_file(str_off + name, 1)) continue;
    if (std::strcmp(bytes.c_str() + str_off + name, "libibverbs.so.1") == 0) return {};
  }
  return "does not use libibverbs.so.1, so it is not a verbs program rdmasim can attach to";
}

}  // namespace

const KeyTable<ProgramConfig>& program_keys() {
  using P = ProgramConfig;
  static const KeyTable<P> t{
      "programs",
      "a program",
      {
          required(declared<P>("host", "host name", "", "the host it runs on"), "the host it runs on"),
          required(
              declared<P>(
                  "run", "command line", "",
                  "the program and its arguments, split at white space (no shell: no quotes, pipes or "
                  "variables). `{NAME}` becomes the address under which the program reaches host NAME: its "
                  "simulated IPv4 address on `roce_v2` and `iwarp`, a side-channel address elsewhere "
                  "(below)"),
              "the command line, such as \"ibv_rc_pingpong -g 0 {b}\""),
          key("start", &P::start, keys::time(), "0", "when, in simulated time, it starts"),
          key("silence", &P::silence, keys::positive_time(), "20s",
              "real (not simulated) time the program may run without making an intercepted call before it is "
              "killed and reported: a program that waits by reading memory no peer may write cannot be "
              "simulated (below)"),
      }};
  return t;
}

namespace {

// host: a host of the topology.
bool read_program_host(ExperimentDraft& d, const Entry& he, ProgramConfig& p) {
  auto h = d.c.name(he.value, he.path, "a host name");
  if (!h) return false;
  p.host = *h;
  const auto n = d.graph ? d.graph->find(*h) : std::nullopt;
  if (d.graph && (!n || !d.graph->is_host(*n))) {
    d.c.error(he.value, he.path, n ? "'" + *h + "' is a switch, not a host" : d.unknown_node(*h));
    return false;
  }
  return true;
}

// {NAME} in the command line: a host's address (the program's out-of-band exchange reaches it there).
bool host_references(ExperimentDraft& d, const Entry& re, const std::vector<std::string>& argv) {
  bool ok = true;
  for (const std::string& w : argv) {
    for (size_t at = w.find('{'); at != std::string::npos; at = w.find('{', at + 1)) {
      const size_t end = w.find('}', at);
      if (end == std::string::npos) {
        d.c.error(re.value, re.path, "'{' without '}' in '" + w + "'; {NAME} stands for host NAME's address");
        ok = false;
        break;
      }
      const std::string name = w.substr(at + 1, end - at - 1);
      const auto n = d.graph ? d.graph->find(name) : std::nullopt;
      if (d.graph && (!n || !d.graph->is_host(*n))) {
        d.c.error(re.value, re.path, "{" + name + "}: " + d.unknown_node(name));
        ok = false;
      }
    }
  }
  return ok;
}

// run: the command line, whose program must be a dynamically linked verbs
// program on PATH. False: the program cannot run (`ok` says whether the
// rest of the line was good).
bool read_run(ExperimentDraft& d, const Entry& re, ProgramConfig& p, bool& ok) {
  auto run = d.c.scalar(re.value, re.path, "a command line");
  if (!run) return false;
  p.run = *run;
  p.argv = split_words(*run);
  if (p.argv.empty()) {
    d.c.error(re.value, re.path, "the command line is empty");
    return false;
  }
  // No shell runs the line: a quote, pipe, redirection or variable would reach the program as written.
  if (const size_t at = run->find_first_of("'\"|;&<>$`"); at != std::string::npos) {
    d.c.error(re.value, re.path,
              std::string("shell syntax (") + (*run)[at] +
                  ") is not interpreted: the command line is split at white space and run with no shell (no "
                  "quotes, pipes, redirections or variables); write the arguments bare (its output is in "
                  "programs/<host>-<index>.out)");
    return false;
  }
  ok = host_references(d, re, p.argv) && ok;
  const std::string path = find_program(p.argv[0]);
  if (path.empty()) {
    d.c.error(re.value, re.path,
              "program '" + p.argv[0] + "' not found" +
                  (p.argv[0].find('/') == std::string::npos ? " on PATH" : "") +
                  " (ibverbs-utils and perftest provide the usual ones: scripts/setup.sh installs them)");
    return false;
  }
  if (const std::string why = not_a_verbs_program(path); !why.empty()) {
    d.c.error(re.value, re.path, "program '" + path + "' " + why);
    return false;
  }
  p.path = path;
  return true;
}

}  // namespace

void read_programs(ExperimentDraft& d, const Entry& list) {
  const YAML::Node& v = list.value;
  if (!v.IsSequence()) {
    d.c.error(
        v, list.path,
        "expected a list of programs such as [{host: b, run: \"ibv_rc_pingpong -g 0\"}], got " + describe(v));
    return;
  }
  if (!fabric_of(d.x).host_nic().verbs) {
    d.c.error(v, list.path,
              "fabric " + d.x.fabric +
                  " has no RDMA device for a verbs program to open (its hosts have plain NICs)");
    return;
  }
  for (size_t i = 0; i < v.size(); ++i) {
    ProgramConfig p;
    const auto f = program_keys().read(d.c, v[i], index_path(list.path, i), p);
    if (!f) continue;
    const YAML::Mark m = mark_of(v[i]);
    p.line = m.line + 1;
    p.column = m.column + 1;
    // start and silence read, and the host given and a host.
    bool ok = f->read_ok("host") && (!f->find("start") || f->read_ok("start")) &&
              (!f->find("silence") || f->read_ok("silence"));
    if (const Entry* he = f->find("host")) ok = read_program_host(d, *he, p) && ok;
    const Entry* re = f->find("run");
    if (re && read_run(d, *re, p, ok) && ok) d.x.programs.push_back(std::move(p));
  }
}

}  // namespace rdmasim
