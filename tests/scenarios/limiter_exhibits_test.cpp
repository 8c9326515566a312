// The limiter suite's properties against the known-bad limiters kept as exhibits: each property
// finds its exhibit's bug within a stated number of generated cases, the counterexample shrinks,
// and replaying the shrunk counterexample twice gives byte-identical traces.
#include <bubble/scenarios/limiter_exhibits.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <string>

namespace bubble::scenarios {
namespace {

struct ExhibitCase {
  LimiterExhibit exhibit;
  int max_cases;  // the property must find the bug within this many cases, for every seed tried
};

class LimiterExhibitTest : public ::testing::TestWithParam<ExhibitCase> {};

TEST_P(LimiterExhibitTest, PropertyFindsItShrinksItAndReplaysItIdentically) {
  const ExhibitCase c = GetParam();
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    const ExhibitHunt hunt = hunt_exhibit(c.exhibit, seed, c.max_cases);
    ASSERT_TRUE(hunt.found) << to_string(c.exhibit) << " survived " << c.max_cases
                            << " cases from seed " << seed << "\n"
                            << hunt.report;
    EXPECT_LE(hunt.cases_to_failure, c.max_cases);
    std::cout << to_string(c.exhibit) << ", seed " << seed << ": found after "
              << hunt.cases_to_failure << " cases; shrunk from size " << hunt.first_size << " to "
              << hunt.shrunk_size << ":\n  " << hunt.shrunk_counterexample << "\n";
    // The report is RapidCheck's, with the shrunk counterexample printed with names and units.
    EXPECT_NE(hunt.report.find("Falsifiable after"), std::string::npos) << hunt.report;
    EXPECT_NE(hunt.report.find("ms"), std::string::npos) << hunt.report;
    // Shrinking made the counterexample smaller (fewer calls, limiters or preemptions), or the
    // first failure was already minimal.
    EXPECT_LE(hunt.shrunk_size, hunt.first_size);
    if (hunt.first_size > 3) {
      EXPECT_LT(hunt.shrunk_size, hunt.first_size)
          << "first: " << hunt.first_counterexample << "\nshrunk: " << hunt.shrunk_counterexample;
    }
    const std::string first = hunt.replay();
    const std::string second = hunt.replay();
    EXPECT_FALSE(first.empty());
    EXPECT_EQ(first, second) << "the replay of the shrunk counterexample is not deterministic";
  }
}

INSTANTIATE_TEST_SUITE_P(Exhibits, LimiterExhibitTest,
                         ::testing::Values(ExhibitCase{LimiterExhibit::ticker_booth, 200},
                                           ExhibitCase{LimiterExhibit::refund_into_next_interval,
                                                       1000},
                                           ExhibitCase{LimiterExhibit::forgotten_refund, 300}),
                         [](const ::testing::TestParamInfo<ExhibitCase>& info) {
                           return std::string(to_string(info.param.exhibit));
                         });

TEST(LimiterExhibit, BadCaseCountIsRejected) {
  EXPECT_THROW((void)hunt_exhibit(LimiterExhibit::ticker_booth, 1, 0), std::invalid_argument);
}

}  // namespace
}  // namespace bubble::scenarios
