// rdmasim-keys: the key reference of the experiment file, from the key
// tables (topologies/key_table.hpp).
//
//   rdmasim-keys                  every table, as Markdown, on stdout
//   rdmasim-keys --markdown F...  fill the `<!-- keys: NAME -->` marks of each file in place
//   rdmasim-keys --check F...     exit 1 when a file is not what the tables make
//
// `cmake --build build --target yaml_docs` runs --markdown on the docs; the
// yaml_docs test runs --check.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

#include "experiment/key_docs.hpp"

using namespace rdmasim;

int main(int argc, char** argv) {
  const std::vector<KeyDoc> docs = key_docs();
  if (argc < 2) {
    std::cout << key_docs_markdown(docs);
    return 0;
  }
  const std::string mode = argv[1];
  if (mode != "--markdown" && mode != "--check") {
    std::cerr << "usage: rdmasim-keys [--markdown|--check FILE.md...]\n";
    return 2;
  }
  std::vector<std::string> filled;
  int status = 0;
  for (int i = 2; i < argc; ++i) {
    std::ifstream in(argv[i]);
    std::stringstream text;
    text << in.rdbuf();
    std::string error;
    const std::string made = fill_key_docs(text.str(), docs, filled, error);
    if (!in || !error.empty()) {
      std::cerr << argv[i] << ": " << (in ? error : "cannot read it") << "\n";
      return 2;
    }
    if (made == text.str()) continue;
    if (mode == "--markdown") {
      std::ofstream(argv[i]) << made;
      std::cout << "rewrote " << argv[i] << "\n";
    } else {
      std::cerr << argv[i]
                << ": its key tables are not what the key tables in the code make; regenerate them with\n"
                   "  cmake --build build --target yaml_docs\n"
                   "(after a merge, too: never edit between the '<!-- keys: -->' marks by hand)\n";
      status = 1;
    }
  }
  for (const KeyDoc& d : docs)
    if (std::find(filled.begin(), filled.end(), d.name) == filled.end() && argc > 2) {
      std::cerr << "the key table '" << d.name << "' is in no document: add '<!-- keys: " << d.name
                << " -->' and '<!-- /keys -->' where it goes\n";
      status = 1;
    }
  return status;
}
