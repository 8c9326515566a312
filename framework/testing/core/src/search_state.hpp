#pragma once

// Private to bubble::testing: what an exhaustive search keeps outside its tree, its checkpoint
// file and its progress line on a terminal (see BUBBLE_CHECKPOINT in test_plan.hpp).

#include <bubble/schedule_tree.hpp>

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

namespace bubble::testing::detail {

// The search a checkpoint file holds for `key`, `bound`, `shard` and `reduction`: its first line is
// the key, its
// second a ScheduleTree::checkpoint(). nullopt when the file does not exist; a note on standard
// output and nullopt when it holds something else.
std::optional<ScheduleTree> read_checkpoint(const std::string& path, const std::string& key,
                                            std::uint32_t bound, const TreeShard& shard,
                                            Reduction reduction);

// The same for the content of the checkpoint file `path`, read from `in` (`path` is named in the
// notes only).
std::optional<ScheduleTree> read_checkpoint(std::istream& in, const std::string& path,
                                            const std::string& key, std::uint32_t bound,
                                            const TreeShard& shard, Reduction reduction);

// Writes `tree`'s checkpoint under `key` to `path`; false if the file cannot be written.
bool write_checkpoint(const std::string& path, const std::string& key, const ScheduleTree& tree);

// The progress line of an exhaustive search on a terminal (standard error), redrawn at most
// every half second of real time: schedules run, their rate, and the tree's estimated part done.
class SearchProgress {
 public:
  // `from`: the schedules recorded before this process began (a resumed search).
  explicit SearchProgress(std::uint64_t from) : first_(from) {}
  void show(const ScheduleTree& tree);
  // Erases the line, if one was shown.
  void clear();

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_ = start_;
  std::uint64_t first_;
  bool shown_ = false;
};

}  // namespace bubble::testing::detail
