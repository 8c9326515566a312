// replay_decisions and parse_rate: the engine of `bubble limiter replay`.
#include <bubble/limiter/token_bucket_core.hpp>
#include <bubble/limiter/token_bucket_replay.hpp>

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>

namespace bubble {
namespace {

std::string replay(const std::string& input, double rate, int burst) {
  std::istringstream in(input);
  std::ostringstream out;
  replay_decisions(in, out, rate, burst);
  return out.str();
}

// The error message of a malformed log, and the decisions written before it.
std::pair<std::string, std::string> replay_error(const std::string& input) {
  std::istringstream in(input);
  std::ostringstream out;
  try {
    replay_decisions(in, out, 10, 2);
  } catch (const std::invalid_argument& e) {
    return {e.what(), out.str()};
  }
  return {"no exception", out.str()};
}

// Upstream's TestSimpleReserve and a few allows, as a log: 100 ms = 100000000 ns.
TEST(LimiterReplay, DecisionsMatchTheUpstreamVectors) {
  const std::string log =
      "# rate 10, burst 2\n"
      "0 reserve 2\n"
      "0 reserve 2\n"
      "300000000 reserve 2\n"
      "\n"
      "300000000 allow 1\n"
      "1000000000\tallow 2\n"
      "1000000000 allow 1\n"
      "1000000000 reserve 3\n";
  EXPECT_EQ(replay(log, 10, 2),
            "true 0\n"
            "true 200000000\n"
            "true 100000000\n"
            "false\n"
            "true\n"
            "false\n"
            "false 9223372036854775807\n");
}

TEST(LimiterReplay, TimesMayGoBackwards) {
  // Upstream's TestLimiterJumpBackwards (rate 10, burst 3), from t1 back to t0.
  EXPECT_EQ(replay("100000000 allow 1\n0 allow 1\n0 allow 1\n0 allow 1\n100000000 allow 1\n"
                   "100000000 allow 1\n",
                   10, 3),
            "true\ntrue\ntrue\nfalse\ntrue\nfalse\n");
}

TEST(LimiterReplay, NegativeTimesAndInfiniteRate) {
  EXPECT_EQ(replay("-5 allow 100\n-5 reserve 100\n", kInfiniteRate, 0), "true\ntrue 0\n");
  EXPECT_EQ(replay("-5 allow 1\n-5 allow 1\n", 0, 1), "true\nfalse\n");
}

TEST(LimiterReplay, CountsTheRequests) {
  std::istringstream in("# only a comment\n\n1 allow 0\n2 reserve 0\n");
  std::ostringstream out;
  EXPECT_EQ(replay_decisions(in, out, 1, 1), 2u);
}

TEST(LimiterReplay, BadLinesAreNamedWithTheDecisionsBeforeThemWritten) {
  EXPECT_EQ(replay_error("0 allow 1\nabc allow 1\n"),
            std::make_pair(std::string("line 2: bad time \"abc\": expected an integer number of "
                                       "nanoseconds"),
                           std::string("true\n")));
  EXPECT_EQ(replay_error("0 allow -1\n").first, "line 1: bad n \"-1\": expected an integer >= 0");
  EXPECT_EQ(replay_error("0 allow 1.5\n").first, "line 1: bad n \"1.5\": expected an integer >= 0");
  EXPECT_EQ(replay_error("#\n0 take 1\n").first,
            "line 2: unknown operation \"take\": expected allow or reserve");
  EXPECT_EQ(replay_error("0 allow\n").first,
            "line 1: expected \"<t_ns> allow|reserve <n>\", got \"0 allow\"");
  EXPECT_EQ(replay_error("0 allow 1 2\n").first,
            "line 1: expected \"<t_ns> allow|reserve <n>\", got \"0 allow 1 2\"");
  EXPECT_EQ(replay_error("99999999999999999999 allow 1\n").first,
            "line 1: bad time \"99999999999999999999\": expected an integer number of "
            "nanoseconds");
}

TEST(LimiterReplay, BadBucketParametersThrow) {
  std::istringstream in("");
  std::ostringstream out;
  EXPECT_THROW(replay_decisions(in, out, -1, 1), std::invalid_argument);
  EXPECT_THROW(replay_decisions(in, out, 1, -1), std::invalid_argument);
}

TEST(LimiterReplay, ParseRate) {
  EXPECT_EQ(parse_rate("10"), 10.0);
  EXPECT_EQ(parse_rate("0.5"), 0.5);
  EXPECT_EQ(parse_rate("1e-3"), 1e-3);
  EXPECT_EQ(parse_rate("0"), 0.0);
  EXPECT_EQ(parse_rate("inf"), kInfiniteRate);
  EXPECT_EQ(parse_rate("Inf"), kInfiniteRate);
  EXPECT_EQ(parse_rate("+INF"), kInfiniteRate);
  for (const char* bad : {"", "-1", "abc", "10x", "nan", "-inf", "1e999x"}) {
    try {
      parse_rate(bad);
      ADD_FAILURE() << "no exception for \"" << bad << "\"";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), std::string("bad rate \"") + bad +
                                           "\": expected a number of tokens per second >= 0, "
                                           "or inf");
    }
  }
}

}  // namespace
}  // namespace bubble
