#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <rapidcheck.h>

// Finding and shrinking a counterexample with RapidCheck's public generator API (rc::Gen,
// rc::Shrinkable, rc::Random), for tests that need the counterexample itself: how many cases it
// took, what it shrank to, and the value to replay.
namespace bubble::scenarios {

template <class T>
struct Counterexample {
  T original;           // the first failing value generated
  T minimal;            // what it shrank to
  int cases = 0;        // generated values tried until the first failure, that one included
  int shrinks = 0;      // shrink steps taken (each one a smaller value that still fails)
  std::string failure;  // the failure message of `minimal`
};

// Generates up to `max_cases` values of `gen` from `seed` (sizes 0, 1, ... 100, 0, 1, ... as
// RapidCheck grows them) until `fails` returns a message, then shrinks greedily, as RapidCheck
// does: the first shrink of the current value that still fails becomes the current value, until
// none fails. Returns nothing if no value failed.
template <class T>
std::optional<Counterexample<T>> find_counterexample(
    const rc::Gen<T>& gen, std::uint64_t seed, int max_cases,
    const std::function<std::optional<std::string>(const T&)>& fails) {
  rc::Random random(seed);
  for (int i = 0; i < max_cases; ++i) {
    rc::Shrinkable<T> current = gen(random.split(), i % 101);
    std::optional<std::string> failure = fails(current.value());
    if (!failure) continue;
    Counterexample<T> out{current.value(), current.value(), i + 1, 0, *failure};
    for (bool smaller = true; smaller;) {
      smaller = false;
      auto shrinks = current.shrinks();
      while (auto candidate = shrinks.next()) {
        if (std::optional<std::string> f = fails(candidate->value())) {
          current = *candidate;
          out.failure = *f;
          ++out.shrinks;
          smaller = true;
          break;
        }
      }
    }
    out.minimal = current.value();
    return out;
  }
  return std::nullopt;
}

}  // namespace bubble::scenarios
