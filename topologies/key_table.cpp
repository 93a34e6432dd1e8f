#include "topologies/key_table.hpp"

namespace rdmasim {

Entry default_entry(const std::string& key, const std::string& text) {
  return {YAML::Node(key), YAML::Load(text), key};
}

void order_error(YamlReader& c, const Fields& f, std::string_view first, const std::string& a,
                 std::string_view second, const std::string& b, bool strict) {
  const Entry* at = f.find(first) ? f.find(first) : f.find(second);
  const YAML::Node& where = at ? at->value : f.node;
  c.error(where, at ? at->path : f.path,
          std::string(first) + " (" + a + ") must " + (strict ? "be below " : "not exceed ") +
              std::string(second) + " (" + b + ")");
}

namespace keys {

namespace {
ValueType<Bytes> bounded_size(Bytes lo, Bytes hi, std::string range,
                              std::function<std::string(Bytes)> wrong) {
  return {"size", std::move(range), "",
          [lo, hi, wrong = std::move(wrong)](YamlReader& c, const Entry& e) -> std::optional<Bytes> {
            auto b = c.bytes(e);
            if (b && (*b < lo || *b > hi)) {
              c.error(e.value, e.path, wrong(*b));
              return std::nullopt;
            }
            return b;
          }};
}
}  // namespace

ValueType<Bytes> size_in(Bytes lo, Bytes hi, std::string what) {
  return bounded_size(lo, hi, to_string(lo) + ".." + to_string(hi), [=](Bytes b) {
    return what + " must be from " + to_string(lo) + " to " + to_string(hi) + ", got " + to_string(b);
  });
}

ValueType<Bytes> size_at_most(Bytes hi, std::string what) {
  return bounded_size(Bytes(1), hi, "above 0, at most " + to_string(hi), [=](Bytes b) {
    return "at most " + to_string(hi) + " of " + what + ", got " + to_string(b);
  });
}

ValueType<Time> time_from(Time lo, std::string why) {
  return refusing<Time>(
      time(), "at least " + to_string(lo), [lo](const Time& t) { return t < lo; },
      [lo, why](const Entry& e) {
        return "at least " + to_string(lo) + " (" + why + "), got " + describe(e.value);
      });
}

ValueType<DataRate> rate_or_zero() {
  return {"rate or `0`", "", "", [](YamlReader& c, const Entry& e) -> std::optional<DataRate> {
            if (e.value.IsScalar() && e.value.Scalar() == "0") return DataRate(0);
            return c.rate(e);
          }};
}

ValueType<double> number(double lo, double hi, bool open_lo) {
  auto text = [](double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
    return s;
  };
  return {"number", (open_lo ? "(" : "[") + text(lo) + ", " + text(hi) + "]", "",
          [lo, hi, open_lo](YamlReader& c, const Entry& e) { return c.number(e, lo, hi, open_lo); }};
}

std::string choices(std::span<const std::string_view> names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += "`" + std::string(names[i]) + "`";
  }
  return out;
}

}  // namespace keys

}  // namespace rdmasim
