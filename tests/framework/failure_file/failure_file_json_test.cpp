// The failure file a failing BUBBLE_TEST writes (bubble::testing::failure_file_json) is JSON that
// `bubble replay` reads back, whatever bytes the test's name, command and message hold. Parsed
// here with nlohmann-json, the parser `bubble replay` uses.
#include <bubble/strategy.hpp>
#include <bubble/testing/explore.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace bubble::testing {
namespace {

nlohmann::json written(const std::string& test, const std::string& command,
                       const std::string& message) {
  ExploreOutcome outcome;
  outcome.failed = true;
  outcome.failed_strategy = Strategy::random(17);
  outcome.replay_line = "replay: " + command;
  outcome.message = message;
  const std::string text = failure_file_json(test, outcome);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << "not JSON:\n" << text;
  return j;
}

TEST(FailureFileJson, KeepsEveryFieldExactly) {
  const std::string test = "Suite.Name";
  const std::string command = "BUBBLE_STRATEGY=random:17 './a b' --gtest_filter=Suite.Name";
  const std::string message =
      "quote \" backslash \\ tab \t newline \n bell \a del \x7f "
      "UTF-8 \xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80 end";
  const nlohmann::json j = written(test, command, message);
  EXPECT_EQ(j["format"], "bubble-failure-1");
  EXPECT_EQ(j["kind"], "test");
  EXPECT_EQ(j["test"], test);
  EXPECT_EQ(j["strategy"], "random:17");
  EXPECT_EQ(j["command"], command);
  EXPECT_EQ(j["message"], message);
}

// Found by tests/fuzz/failure_file_fuzzer.cpp: bytes that are not UTF-8 were written as they
// were, and the file was not JSON (JSON text is UTF-8), so `bubble replay` refused it.
TEST(FailureFileJson, ReplacesEachByteThatIsNotUtf8WithTheReplacementCharacter) {
  const std::string r = "\xef\xbf\xbd";  // U+FFFD
  struct Case {
    std::string in;
    std::string out;
  };
  const std::string b = "b";
  const Case cases[] = {
      {"a\xff" + b, "a" + r + b},           // never in UTF-8
      {"a\x80" + b, "a" + r + b},           // a lone continuation byte
      {"a\xe2\x82", "a" + r + r},           // cut short
      {"\xc0\xaf", r + r},                  // overlong '/'
      {"\xe0\x80\xaf", r + r + r},          // overlong '/'
      {"\xed\xa0\x80", r + r + r},          // a UTF-16 surrogate
      {"\xf4\x90\x80\x80", r + r + r + r},  // past U+10FFFF
      {"\xf0\x9f\x98\x80\xff\xc3\xa9", "\xf0\x9f\x98\x80" + r + "\xc3\xa9"},  // between good ones
  };
  for (const Case& c : cases) {
    const nlohmann::json j = written("Suite." + c.in, c.in, c.in);
    ASSERT_FALSE(j.is_discarded());
    EXPECT_EQ(j["test"], "Suite." + c.out);
    EXPECT_EQ(j["command"], c.out);
    EXPECT_EQ(j["message"], c.out);
  }
}

}  // namespace
}  // namespace bubble::testing
