#include <bubble/errc.hpp>
#include <bubble/version.hpp>

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace {

TEST(Errc, ComparesWithErrorCodes) {
  const std::error_code ec = bubble::errc::full;
  EXPECT_EQ(ec, bubble::errc::full);
  EXPECT_NE(ec, bubble::errc::closed);
  EXPECT_TRUE(static_cast<bool>(ec));
  EXPECT_STREQ(ec.category().name(), "bubble");
}

TEST(Errc, EveryValueHasItsOwnMessageAndName) {
  std::set<std::string> messages;
  std::set<std::string> names;
  for (int v = static_cast<int>(bubble::errc::canceled);
       v <= static_cast<int>(bubble::errc::timed_out); ++v) {
    const auto e = static_cast<bubble::errc>(v);
    const std::error_code ec = e;
    EXPECT_EQ(ec.message().find("unknown"), std::string::npos) << v;
    EXPECT_STRNE(bubble::to_string(e), "unknown") << v;
    messages.insert(ec.message());
    names.insert(bubble::to_string(e));
  }
  const auto count = static_cast<std::size_t>(bubble::errc::timed_out);
  EXPECT_EQ(messages.size(), count);
  EXPECT_EQ(names.size(), count);
}

TEST(Errc, UnknownValuesSayWhatTheyAre) {
  const std::error_code ec(999, bubble::bubble_category());
  EXPECT_EQ(ec.message(), "unknown bubble error 999");
}

TEST(Version, MatchesTheProjectVersion) {
  EXPECT_EQ(bubble::kVersion, BUBBLE_VERSION_STRING);
  EXPECT_EQ(std::to_string(BUBBLE_VERSION_MAJOR) + "." + std::to_string(BUBBLE_VERSION_MINOR) +
                "." + std::to_string(BUBBLE_VERSION_PATCH),
            std::string(bubble::kVersion));
}

}  // namespace
