#pragma once

// Private: the schedule a bubble run records, in storage that the OS thread keeps from run to run.

#include <cstddef>
#include <cstdint>
#include <vector>

#include <bubble/schedule.hpp>

namespace bubble::engine {

// PickRecord records a run's decisions among more than one candidate: the Schedule that replays
// the run (Schedule::picks, Schedule::decisions).
//
// Recording. A pick of 0 is only counted (pending); a pick other than 0 is stored after the zeros
// pending. The storage is a zero-filled vector longer than the picks recorded so far, so that the
// pending zeros are already in place and storing a pick is one store, unless the vector has to
// grow (to at least twice its length).
//
// Storage kept from run to run. A long run under a random strategy records millions of picks. A
// vector grown afresh by every run touches fresh pages every time (its growth copies and zero
// fills), and where a page fault is slow those faults are a large part of a random run's time
// (handoff_bench's BM_UserChannelPingPong/1 against Go's, tools/bench/handoff_vs_go.sh). So the
// OS thread keeps
// the vector when its run ends: zeroed again over the part the run used and lent to the next run
// on that thread (a run nested in another, on the same OS thread, gets a vector of its own). The
// run's Schedule is a copy of its picks, exactly as long. As with the stacks of bubble threads,
// what is kept follows the last run: a vector of which the run used less than a quarter is cut
// down, so that the memory of a big run is returned after the next, smaller one.
class PickRecord {
 public:
  // Borrows the vector the calling OS thread keeps (an empty one if it keeps none).
  PickRecord();
  // Gives the vector back to the calling OS thread, zeroed and cut down to what this run needed.
  ~PickRecord();
  PickRecord(const PickRecord&) = delete;
  PickRecord& operator=(const PickRecord&) = delete;

  // Records a decision that picked candidate `idx`. May throw std::bad_alloc (when the vector
  // grows).
  void record(std::uint32_t idx) {
    ++decisions_;
    if (idx == 0) {
      ++zeros_pending_;
      return;
    }
    const std::uint64_t at = end_ + zeros_pending_;  // The zeros before it are in place.
    if (at < picks_.size()) [[likely]] {
      picks_[at] = idx;
      end_ = at + 1;
      zeros_pending_ = 0;
      return;
    }
    record_slow(idx);
  }

  // The schedule recorded so far: its picks up to the last one other than 0 (the zeros pending
  // after it replay as they are, by default), and the count of decisions.
  Schedule schedule() const;

  // How many vector elements the OS thread's kept vector has (0 when it keeps none); for tests.
  static std::size_t kept_size() noexcept;

  // The length of the first vector a run grows.
  static constexpr std::size_t kFirstPicks = 1024;

 private:
  [[gnu::noinline]] void record_slow(std::uint32_t idx);

  std::vector<std::uint32_t> picks_;  // [0, end_) recorded; the rest all zeros.
  std::size_t end_ = 0;
  std::uint64_t zeros_pending_ = 0;
  std::uint64_t decisions_ = 0;
};

}  // namespace bubble::engine
