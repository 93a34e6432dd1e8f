// Seeded random streams. Each component draws from its own stream, derived
// from the experiment seed and a stable name, so adding a component does not
// change the numbers another one sees.
#pragma once

#include <cstdint>
#include <string_view>

namespace rdmasim {

// splitmix64's finalizer (Steele, Lea and Flood): every output bit depends
// on every input bit, so a value's low bits alone are well spread too.
inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// xoshiro256** (Blackman and Vigna), seeded through splitmix64.
class Rng {
  uint64_t s_[4];

  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t splitmix(uint64_t& x) { return mix64(x += 0x9e3779b97f4a7c15ull); }

 public:
  explicit Rng(uint64_t seed = 1) {
    for (auto& s : s_) s = splitmix(seed);
  }
  // A stream for `name` under the experiment `seed` (FNV-1a of the name).
  static Rng stream(uint64_t seed, std::string_view name) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (char c : name) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
    return Rng(seed ^ h);
  }

  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [lo, hi].
  uint64_t between(uint64_t lo, uint64_t hi) {
    const unsigned __int128 m = static_cast<unsigned __int128>(next()) * (hi - lo + 1);
    return lo + static_cast<uint64_t>(m >> 64);
  }
  bool chance(double p) { return p > 0 && uniform() < p; }
};

}  // namespace rdmasim
