#include "search_state.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <istream>
#include <stdexcept>

namespace bubble::testing::detail {

std::optional<ScheduleTree> read_checkpoint(const std::string& path, const std::string& key,
                                            std::uint32_t bound, const TreeShard& shard,
                                            Reduction reduction) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  return read_checkpoint(in, path, key, bound, shard, reduction);
}

std::optional<ScheduleTree> read_checkpoint(std::istream& in, const std::string& path,
                                            const std::string& key, std::uint32_t bound,
                                            const TreeShard& shard, Reduction reduction) {
  std::string file_key;
  std::string line;
  std::getline(in, file_key);
  std::getline(in, line);
  try {
    ScheduleTree tree = ScheduleTree::resume(line);
    if (file_key == key && tree.max_preemptions() == bound && tree.shard().index == shard.index &&
        tree.shard().total == shard.total && tree.reduction() == reduction) {
      std::cout << "bubble: resuming the exhaustive search from " << path << " ("
                << tree.schedules() << " schedules done)\n"
                << std::flush;
      return tree;
    }
    std::cout << "bubble: " << path << " holds another search (" << file_key << ", at most "
              << tree.max_preemptions() << " preemptions, shard " << tree.shard().index << "/"
              << tree.shard().total
              << (tree.reduction() == Reduction::dpor ? ", reduced" : ", not reduced")
              << "), not this one: starting over\n"
              << std::flush;
  } catch (const std::invalid_argument& e) {
    std::cout << "bubble: " << path << " is not a checkpoint (" << e.what() << "): starting over\n"
              << std::flush;
  }
  return std::nullopt;
}

bool write_checkpoint(const std::string& path, const std::string& key, const ScheduleTree& tree) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << key << "\n" << tree.checkpoint() << "\n";
  out.close();
  return static_cast<bool>(out);
}

void SearchProgress::show(const ScheduleTree& tree) {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::milliseconds(500)) return;
  last_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  std::fprintf(stderr, "\rbubble: exhaustive search: %llu schedules, %.0f/s, ~%.1f%% of the tree",
               static_cast<unsigned long long>(tree.schedules()),
               seconds > 0 ? static_cast<double>(tree.schedules() - first_) / seconds : 0.0,
               100.0 * tree.estimated_done());
  std::fflush(stderr);
  shown_ = true;
}

void SearchProgress::clear() {
  if (shown_) std::fprintf(stderr, "\r\033[K");
}

}  // namespace bubble::testing::detail
