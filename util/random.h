// Deterministic pseudo-random numbers (splitmix64): the same sequence for a seed on every
// platform and compiler, so outputs made with --seed are byte-identical everywhere.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fbkit::util {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform enough in [0, n) for sampling; 0 when n is 0.
  uint64_t Below(uint64_t n) { return n == 0 ? 0 : Next() % n; }

 private:
  uint64_t state_;
};

}  // namespace fbkit::util
