// The bytes of what ranks hand each other (parallel/): each value as it is
// in memory, every rank being the same build on the same kind of machine.
#pragma once

#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>

namespace rdmasim::message {

template <typename T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// The value at `at`, which moves past it; std::runtime_error past the end.
template <typename T>
T get(const std::string& in, size_t& at) {
  if (at + sizeof(T) > in.size()) throw std::runtime_error("parallel: a truncated message");
  T v;
  std::memcpy(&v, in.data() + at, sizeof v);
  at += sizeof v;
  return v;
}

}  // namespace rdmasim::message
