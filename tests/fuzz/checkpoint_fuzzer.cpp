// Fuzzes the checkpoint of an exhaustive search: bubble::ScheduleTree::resume (the line
// "bubble-schedule-tree-1 bound=K shard=i/n schedules=S transit=T path=...", and the reduced
// search's "bubble-schedule-tree-2 ... reduction=dpor ... path=3:1p/221,...") and the testing
// glue's reading of a BUBBLE_CHECKPOINT file (its first line the test's key, its second the
// checkpoint line).
//
// Properties: resume either gives a tree or throws std::invalid_argument; a resumed tree writes a
// checkpoint that resumes to a tree with the same state, which writes itself back identically;
// its next() is a choices strategy (or nullopt once done) and its estimated_done() lies in [0, 1].
// Reading a checkpoint file never throws; a tree it returns is the search asked for, and the file
// written back from it reads back to the same checkpoint.
#include <bubble/schedule_tree.hpp>
#include <bubble/strategy.hpp>

#include <cstddef>
#include <cstdint>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include "fuzz_support.hpp"
#include "search_state.hpp"

namespace {

using bubble::ScheduleTree;
using bubble::fuzz::require;

constexpr const char* kKey = "Suite.Name";
constexpr std::uint32_t kBound = 2;

void check_tree(const ScheduleTree& tree, const std::string& text) {
  const std::string written = tree.checkpoint();
  std::optional<ScheduleTree> again;
  try {
    again = ScheduleTree::resume(written);
  } catch (const std::invalid_argument& e) {
    require(false, "a resumed tree's checkpoint() resumes", written + ": " + e.what());
  }
  require(again->checkpoint() == written, "checkpoint() writes itself back identically",
          text + " -> " + written + " -> " + again->checkpoint());
  require(again->done() == tree.done() && again->schedules() == tree.schedules() &&
              again->transit_runs() == tree.transit_runs() &&
              again->max_preemptions() == tree.max_preemptions() &&
              again->reduction() == tree.reduction() &&
              again->shard().index == tree.shard().index &&
              again->shard().total == tree.shard().total && again->next() == tree.next(),
          "a resumed checkpoint has the same state", written);
  const std::optional<bubble::Strategy> next = tree.next();
  require(next.has_value() != tree.done(), "next() is nullopt exactly when done", written);
  if (next) {
    require(next->kind() == bubble::Strategy::Kind::choices, "next() is a choices strategy",
            written);
  }
  const double done = tree.estimated_done();
  require(done >= 0.0 && done <= 1.0, "estimated_done() in [0, 1]", written);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  // read_checkpoint's notes go to standard output; the fuzzer's reports go to standard error.
  std::cout.rdbuf(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = bubble::fuzz::text_of(data, size);
  try {
    check_tree(ScheduleTree::resume(text), text);
  } catch (const std::invalid_argument&) {
  }

  const bubble::TreeShard shard{};
  for (const bubble::Reduction reduction : {bubble::Reduction::none, bubble::Reduction::dpor}) {
    std::istringstream file(text);
    const std::optional<ScheduleTree> tree =
        bubble::testing::detail::read_checkpoint(file, "fuzz", kKey, kBound, shard, reduction);
    if (!tree) continue;
    require(tree->max_preemptions() == kBound && tree->shard().index == shard.index &&
                tree->shard().total == shard.total && tree->reduction() == reduction,
            "read_checkpoint returns the search asked for", text);
    check_tree(*tree, text);
    std::istringstream written(std::string(kKey) + "\n" + tree->checkpoint() + "\n");
    const std::optional<ScheduleTree> back =
        bubble::testing::detail::read_checkpoint(written, "fuzz", kKey, kBound, shard, reduction);
    require(back && back->checkpoint() == tree->checkpoint(), "a written checkpoint reads back",
            tree->checkpoint());
  }
  return 0;
}
