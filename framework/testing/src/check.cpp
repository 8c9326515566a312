#include <bubble/detail/demangle.hpp>
#include <bubble/testing/case.hpp>
#include <bubble/testing/check.hpp>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace bubble::testing {

void fail_case(const char* file, int line, const std::string& message) {
  throw CaseFailure(std::string(file) + ":" + std::to_string(line) + ": " + message);
}

namespace detail {
namespace {

// The counterexample of the case being evaluated on this thread (fibers of a bubble share it),
// or nullptr outside evaluate_case.
thread_local std::vector<std::string>* drawn_values = nullptr;

// A case as its reproduce string names it: the seed of the check, the index of the case among
// the generated ones (discards included), its size, and the shrinks taken from it (the index of
// each accepted shrink among the shrinks of the case before it).
struct CaseName {
  std::uint64_t seed = 0;
  std::uint64_t index = 0;
  int size = 0;
  std::vector<std::size_t> path;
};

std::string to_string(const CaseName& c) {
  std::string out =
      std::to_string(c.seed) + ":" + std::to_string(c.index) + ":" + std::to_string(c.size) + ":";
  for (std::size_t i = 0; i < c.path.size(); ++i) {
    if (i > 0) out += '.';
    out += std::to_string(c.path[i]);
  }
  return out;
}

// Parses a decimal number that is all of `text`; nullopt otherwise.
std::optional<std::uint64_t> parse_number(const std::string& text) {
  if (text.empty() || text.size() > 20 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  try {
    return std::stoull(text);
  } catch (const std::out_of_range&) {
    return std::nullopt;
  }
}

CaseName parse_case_name(const std::string& text) {
  auto bad = [&text](const std::string& why) {
    return std::invalid_argument("bubble::testing::check: reproduce string \"" + text +
                                 "\": " + why);
  };
  std::vector<std::string> fields;
  std::size_t from = 0;
  for (;;) {
    const std::size_t colon = text.find(':', from);
    fields.push_back(text.substr(from, colon - from));
    if (colon == std::string::npos) break;
    from = colon + 1;
  }
  if (fields.size() != 4) throw bad("expected <seed>:<case>:<size>:<shrinks>");
  CaseName c;
  const std::optional<std::uint64_t> seed = parse_number(fields[0]);
  const std::optional<std::uint64_t> index = parse_number(fields[1]);
  const std::optional<std::uint64_t> size = parse_number(fields[2]);
  if (!seed || !index || !size || *size > 1'000'000) {
    throw bad("expected <seed>:<case>:<size>:<shrinks>, with numbers");
  }
  c.seed = *seed;
  c.index = *index;
  c.size = static_cast<int>(*size);
  if (!fields[3].empty()) {
    std::size_t at = 0;
    for (;;) {
      const std::size_t dot = fields[3].find('.', at);
      const std::optional<std::uint64_t> step = parse_number(fields[3].substr(at, dot - at));
      if (!step) throw bad("expected shrinks as numbers separated by '.'");
      c.path.push_back(static_cast<std::size_t>(*step));
      if (dot == std::string::npos) break;
      at = dot + 1;
    }
  }
  return c;
}

// The random source of case `index` of a check with `seed`: the (index + 1)-th split of
// rc::Random(seed).
rc::Random case_random(std::uint64_t seed, std::uint64_t index) {
  rc::Random root(seed);
  rc::Random r = root.split();
  for (std::uint64_t i = 0; i < index; ++i) r = root.split();
  return r;
}

void validate(const CheckParams& p) {
  if (p.cases < 1) {
    throw std::invalid_argument("bubble::testing::check: cases must be >= 1, got " +
                                std::to_string(p.cases));
  }
  if (p.max_size < 0) {
    throw std::invalid_argument("bubble::testing::check: max_size must be >= 0, got " +
                                std::to_string(p.max_size));
  }
  if (p.max_discard_ratio < 0) {
    throw std::invalid_argument("bubble::testing::check: max_discard_ratio must be >= 0, got " +
                                std::to_string(p.max_discard_ratio));
  }
}

void record_failure(CheckResult& result, CaseOutcome outcome, const CaseName& name) {
  result.verdict = CheckResult::Verdict::failed;
  result.description = std::move(outcome.description);
  result.counterexample = std::move(outcome.shown);
  result.run = std::move(outcome.run);
  result.reproduce = to_string(name);
}

}  // namespace

void show_drawn(std::string shown) {
  if (drawn_values != nullptr) drawn_values->push_back(std::move(shown));
}

std::string type_name(const char* mangled) {
  return ::bubble::detail::demangle(mangled);
}

CaseOutcome evaluate_case(const std::function<void()>& body) {
  CaseOutcome outcome;
  std::vector<std::string>* const outer = drawn_values;
  drawn_values = &outcome.shown;
  try {
    body();
  } catch (const rc::GenerationFailure& e) {
    outcome.kind = CaseOutcome::Kind::discarded;
    outcome.description = std::string("generation failed: ") + e.what();
  } catch (const CaseFailure& e) {
    outcome.kind = CaseOutcome::Kind::failed;
    outcome.description = e.what();
  } catch (const std::exception& e) {
    outcome.kind = CaseOutcome::Kind::failed;
    outcome.description = std::string("an exception escaped the property: ") + e.what();
  } catch (...) {
    outcome.kind = CaseOutcome::Kind::failed;
    outcome.description =
        "an exception of an unknown type escaped the property (RapidCheck's RC_ASSERT and "
        "RC_FAIL are read only by RapidCheck's own runners: state the property with "
        "BUBBLE_ASSERT or BUBBLE_FAIL)";
  }
  drawn_values = outer;
  if (FailedRunRecorder* recorder = FailedRunRecorder::current()) {
    std::optional<FailedRun> run = recorder->take();
    if (outcome.kind == CaseOutcome::Kind::failed) outcome.run = std::move(run);
  }
  return outcome;
}

CheckResult check_cases(const rc::Gen<CaseOutcome>& cases, const CheckParams& params) {
  validate(params);
  FailedRunRecorder recorder(params.trace);
  CheckResult result;
  auto tick = [&params, &result](int generated) {
    if (params.progress) params.progress(generated, result.shrinks_tried);
  };

  if (params.reproduce) {
    CaseName name = parse_case_name(*params.reproduce);
    rc::Shrinkable<CaseOutcome> shrinkable = cases(case_random(name.seed, name.index), name.size);
    for (const std::size_t step : name.path) {
      rc::Seq<rc::Shrinkable<CaseOutcome>> shrinks = shrinkable.shrinks();
      rc::Maybe<rc::Shrinkable<CaseOutcome>> next;
      for (std::size_t i = 0; i <= step; ++i) {
        next = shrinks.next();
        if (!next) {
          throw std::invalid_argument("bubble::testing::check: reproduce string \"" +
                                      *params.reproduce +
                                      "\": its shrinks name no case of this property");
        }
      }
      shrinkable = std::move(*next);
    }
    CaseOutcome outcome = shrinkable.value();
    tick(1);
    if (outcome.kind == CaseOutcome::Kind::failed) {
      record_failure(result, std::move(outcome), name);
    } else if (outcome.kind == CaseOutcome::Kind::discarded) {
      result.verdict = CheckResult::Verdict::gave_up;
      result.discarded = 1;
      result.description = std::move(outcome.description);
    } else {
      result.cases_passed = 1;
    }
    return result;
  }

  rc::Random root(params.seed);
  const long long most_discards =
      static_cast<long long>(params.cases) * static_cast<long long>(params.max_discard_ratio);
  for (std::uint64_t index = 0; result.cases_passed < params.cases; ++index) {
    const long long ramp =
        static_cast<long long>(result.cases_passed) * (params.max_size + 1) / params.cases +
        result.discarded;
    const int size = static_cast<int>(std::min<long long>(params.max_size, ramp));
    const rc::Shrinkable<CaseOutcome> generated = cases(root.split(), size);
    CaseOutcome outcome = generated.value();
    tick(static_cast<int>(index + 1));
    if (outcome.kind == CaseOutcome::Kind::passed) {
      ++result.cases_passed;
      continue;
    }
    if (outcome.kind == CaseOutcome::Kind::discarded) {
      ++result.discarded;
      if (result.discarded > most_discards) {
        result.verdict = CheckResult::Verdict::gave_up;
        result.description = std::move(outcome.description);
        return result;
      }
      continue;
    }
    // Shrink: take the first shrink that still fails, until none does.
    CaseName name{params.seed, index, size, {}};
    rc::Shrinkable<CaseOutcome> minimal = generated;
    for (bool accepted = true; accepted;) {
      accepted = false;
      rc::Seq<rc::Shrinkable<CaseOutcome>> shrinks = minimal.shrinks();
      std::size_t i = 0;
      while (rc::Maybe<rc::Shrinkable<CaseOutcome>> next = shrinks.next()) {
        CaseOutcome tried = next->value();
        ++result.shrinks_tried;
        tick(static_cast<int>(index + 1));
        if (tried.kind == CaseOutcome::Kind::failed) {
          minimal = std::move(*next);
          outcome = std::move(tried);
          name.path.push_back(i);
          ++result.shrinks;
          accepted = true;
          break;
        }
        ++i;
      }
    }
    record_failure(result, std::move(outcome), name);
    return result;
  }
  return result;
}

}  // namespace detail

std::string CheckResult::case_message() const {
  std::string message;
  for (const std::string& value : counterexample) message += value + "\n\n";
  return message + description;
}

std::string CheckResult::report() const {
  switch (verdict) {
    case Verdict::passed: {
      std::string out = "OK, passed " + std::to_string(cases_passed) + " tests";
      if (discarded > 0) out += " (" + std::to_string(discarded) + " discarded)";
      return out;
    }
    case Verdict::failed:
      return "Falsifiable after " + std::to_string(cases_passed + 1) + " tests and " +
             std::to_string(shrinks) + (shrinks == 1 ? " shrink" : " shrinks") + "\n\n" +
             case_message();
    case Verdict::gave_up:
      break;
  }
  return "Gave up after " + std::to_string(cases_passed) + " tests (" + std::to_string(discarded) +
         " discarded)\n\n" + description;
}

}  // namespace bubble::testing
