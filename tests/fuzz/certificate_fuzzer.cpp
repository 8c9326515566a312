// Fuzzes bubble::merge_certificates, the parser and merger of the certificates of an exhaustive
// search's shards (`bubble certificate merge`), in two ways chosen by the input's first byte:
//   - text: the rest of the input, split into lines, is merged as given;
//   - shards: the rest of the input describes a search split into n shards (bound, n, and each
//     shard's schedules and failures, as bytes); the harness writes each shard's certificate with
//     ScheduleTree::certificate and merges them in a shuffled order.
//
// Properties: merging either gives a certificate or throws std::invalid_argument; a merged
// certificate merges (alone) to itself; the merge of a whole set of shards is the certificate of
// one unsharded search with the sums of their schedules and failures, or, when a sum does not
// fit in 64 bits, std::invalid_argument.
#include <bubble/schedule_tree.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"

namespace {

using bubble::ScheduleTree;
using bubble::fuzz::require;

// Reads up to 8 bytes of `in` as a little-endian number; missing bytes are zeros.
std::uint64_t take(std::string_view& in, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes && !in.empty(); ++i) {
    v |= static_cast<std::uint64_t>(static_cast<unsigned char>(in.front())) << (8 * i);
    in.remove_prefix(1);
  }
  return v;
}

// The certificate a search with these numbers writes.
std::string certificate(std::uint32_t bound, std::uint32_t index, std::uint32_t total,
                        std::uint64_t schedules, std::uint64_t failed) {
  const ScheduleTree tree =
      ScheduleTree::resume("bubble-schedule-tree-1 bound=" + std::to_string(bound) +
                           " shard=" + std::to_string(index) + "/" + std::to_string(total) +
                           " schedules=" + std::to_string(schedules) + " transit=0 path=done");
  return tree.certificate(failed);
}

void check_merged(const std::string& whole) {
  std::string again;
  try {
    again = bubble::merge_certificates({whole});
  } catch (const std::invalid_argument& e) {
    require(false, "a merged certificate merges", whole + ": " + e.what());
  }
  require(again == whole, "a merged certificate merges to itself", whole + " -> " + again);
}

void fuzz_text(std::string_view rest) {
  std::vector<std::string> lines;
  while (!rest.empty()) lines.emplace_back(bubble::fuzz::next_part(rest, '\n'));
  std::string whole;
  try {
    whole = bubble::merge_certificates(lines);
  } catch (const std::invalid_argument&) {
    return;
  }
  check_merged(whole);
}

void fuzz_shards(std::string_view in) {
  const auto bound = static_cast<std::uint32_t>(take(in, 1));
  const auto total = static_cast<std::uint32_t>(take(in, 1) % 16 + 1);
  std::vector<std::string> lines;
  std::uint64_t schedules = 0;
  std::uint64_t failed = 0;
  bool overflow = false;
  for (std::uint32_t i = 0; i < total; ++i) {
    // Counts of 1, 2, 4 or 8 bytes, so that sums near 2^64 are as likely as small ones.
    const int width = 1 << (take(in, 1) % 4);
    const std::uint64_t s = take(in, width);
    const std::uint64_t f = std::min(s, take(in, width));
    overflow = overflow || s > std::numeric_limits<std::uint64_t>::max() - schedules ||
               f > std::numeric_limits<std::uint64_t>::max() - failed;
    schedules += s;
    failed += f;
    lines.push_back(certificate(bound, i, total, s, f));
  }
  const std::uint64_t seed = take(in, 8);
  std::rotate(lines.begin(), lines.begin() + static_cast<std::ptrdiff_t>(seed % lines.size()),
              lines.end());
  std::string whole;
  try {
    whole = bubble::merge_certificates(lines);
  } catch (const std::invalid_argument& e) {
    require(overflow, "the certificates of every shard merge", e.what());
    return;
  }
  require(!overflow, "a sum past 2^64 - 1 is rejected, not wrapped", whole);
  const std::string expected = certificate(bound, 0, 1, schedules, failed);
  require(whole == expected, "the merge sums the shards", whole + " != " + expected);
  check_merged(whole);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text = bubble::fuzz::text_of(data, size);
  const std::string_view rest = std::string_view(text).substr(1);
  if (data[0] % 2 == 0) {
    fuzz_text(rest);
  } else {
    fuzz_shards(rest);
  }
  return 0;
}
