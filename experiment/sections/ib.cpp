// `ib:`, InfiniBand's routing, virtual lanes and service level.
#include "experiment/sections/sections.hpp"

namespace rdmasim {

void read_ib(ExperimentDraft& d, const Entry& e) {
  auto f = d.c.fields(e.value, e.path, "InfiniBand settings", {"routing", "vls", "sl", "roots"});
  if (!f) return;
  d.c.read(*f, "routing", d.x.ib.routing,
           [&](const Entry& v) { return d.c.choice<IbRouting>(v, "IB routing"); });
  if (auto v = f->find("vls")) {
    // PortInfo VLCap: 1, 2, 4, 8 or 15 data VLs.
    if (auto n = d.c.whole(*v, 1, 15)) {
      if (*n == 1 || *n == 2 || *n == 4 || *n == 8 || *n == 15)
        d.x.ib.vls = static_cast<uint8_t>(*n);
      else
        d.c.error(v->value, v->path, "an IB port has 1, 2, 4, 8 or 15 data VLs, got " + std::to_string(*n));
    }
  }
  d.c.read(*f, "sl", d.x.ib.sl, [&](const Entry& v) { return d.c.whole(v, 0, 15); });
  if (auto v = f->find("roots")) {
    d.ib_roots = *v;
    if (!v->value.IsSequence()) {
      d.c.error(v->value, v->path, "expected a list of switch names, got " + describe(v->value));
    } else {
      for (size_t i = 0; i < v->value.size(); ++i)
        if (auto n = d.c.name(v->value[i], index_path(v->path, i), "a switch name"))
          d.x.ib.roots.push_back(*n);
    }
  }
}

}  // namespace rdmasim
