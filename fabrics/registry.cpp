#include "fabrics/registry.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace rdmasim {

// Each fabric folder defines one of these (its *_network.cpp).
const Fabric& ib_fabric();
const Fabric& roce_v1_fabric();
const Fabric& roce_v2_fabric();
const Fabric& iwarp_fabric();
const Fabric& tcp_fabric();

const std::vector<const Fabric*>& fabrics() {
  // A fabric is its folder and a line here, in the order `fabric:` lists them.
  static const std::vector<const Fabric*> all{
      &ib_fabric(), &roce_v1_fabric(), &roce_v2_fabric(), &iwarp_fabric(), &tcp_fabric(),
  };
  return all;
}

std::vector<std::string_view> fabric_names() {
  std::vector<std::string_view> names;
  for (const Fabric* f : fabrics()) names.push_back(f->name());
  return names;
}

std::string fabric_list(const std::function<bool(const Fabric&)>& pick) {
  std::vector<std::string_view> names;
  for (const Fabric* f : fabrics())
    if (pick(*f)) names.push_back(f->name());
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " and " : ", ";
    out += names[i];
  }
  return out;
}

const Fabric* find_fabric(std::string_view name) {
  for (const Fabric* f : fabrics())
    if (f->name() == name) return f;
  return nullptr;
}

const Fabric& fabric_of(const ExperimentConfig& cfg) {
  if (const Fabric* f = find_fabric(cfg.fabric)) return *f;
  throw std::logic_error("unknown fabric '" + cfg.fabric + "' (the loader checks the name)");
}

std::vector<SectionType> fabric_sections() {
  std::vector<SectionType> out;
  for (const Fabric* f : fabrics())
    for (const SectionType& s : f->sections())
      if (std::none_of(out.begin(), out.end(), [&](const SectionType& o) { return o.key == s.key; }))
        out.push_back(s);
  return out;
}

}  // namespace rdmasim
