// Benchmarks of bubble::Channel<int> on the system runtime against a baseline written the usual
// way, a std::mutex + std::condition_variable bounded queue of the same capacity (for capacity 0,
// a rendezvous: the sender waits until the receiver has taken its value), in the same binary.
//
//   BM_*HandOff/<capacity>: one producer thread sends, one consumer thread receives; one
//     iteration = one value through the queue.
//   BM_*SingleThread/<capacity>: one thread sends then receives (never blocks); one iteration =
//     one send + one receive.

#include <bubble/channel.hpp>

#include <benchmark/benchmark.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include "multi_threaded_process.hpp"

namespace {

// The baseline: a bounded FIFO queue with close, on std::mutex + two condition variables.
class CvQueue {
 public:
  explicit CvQueue(std::size_t capacity) : capacity_(capacity) {}

  bool send(int v) {
    std::unique_lock lock(mutex_);
    if (capacity_ == 0) {
      // Rendezvous: wait for the slot, publish, wait until a receiver took it.
      not_full_.wait(lock, [&] { return closed_ || !slot_; });
      if (closed_) return false;
      slot_ = v;
      const std::uint64_t ticket = ++sent_;
      not_empty_.notify_one();
      taken_cv_.wait(lock, [&] { return closed_ || taken_ >= ticket; });
      return taken_ >= ticket;
    }
    not_full_.wait(lock, [&] { return closed_ || items_.size() < capacity_; });
    if (closed_) return false;
    items_.push_back(v);
    not_empty_.notify_one();
    return true;
  }

  std::optional<int> receive() {
    std::unique_lock lock(mutex_);
    if (capacity_ == 0) {
      not_empty_.wait(lock, [&] { return closed_ || slot_; });
      if (!slot_) return std::nullopt;
      const int v = *slot_;
      slot_.reset();
      ++taken_;
      taken_cv_.notify_all();
      not_full_.notify_one();
      return v;
    }
    not_empty_.wait(lock, [&] { return closed_ || !items_.empty(); });
    if (items_.empty()) return std::nullopt;
    const int v = items_.front();
    items_.pop_front();
    not_full_.notify_one();
    return v;
  }

  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    not_full_.notify_all();
    not_empty_.notify_all();
    taken_cv_.notify_all();
  }

 private:
  const std::size_t capacity_;
  std::mutex mutex_;
  std::condition_variable not_full_;
  std::condition_variable not_empty_;
  std::condition_variable taken_cv_;
  std::deque<int> items_;
  std::optional<int> slot_;
  std::uint64_t sent_ = 0;
  std::uint64_t taken_ = 0;
  bool closed_ = false;
};

void BM_ChannelHandOff(benchmark::State& state) {
  bubble::Channel<int> ch(static_cast<std::size_t>(state.range(0)));
  std::thread consumer([&] {
    while (ch.receive()) {
    }
  });
  int i = 0;
  for (auto _ : state) {
    if (ch.send(i++)) state.SkipWithError("send failed");
  }
  ch.close();
  consumer.join();
  state.SetItemsProcessed(state.iterations());
}

void BM_CvQueueHandOff(benchmark::State& state) {
  CvQueue q(static_cast<std::size_t>(state.range(0)));
  std::thread consumer([&] {
    while (q.receive()) {
    }
  });
  int i = 0;
  for (auto _ : state) {
    if (!q.send(i++)) state.SkipWithError("send failed");
  }
  q.close();
  consumer.join();
  state.SetItemsProcessed(state.iterations());
}

void BM_ChannelSingleThread(benchmark::State& state) {
  bubble::Channel<int> ch(static_cast<std::size_t>(state.range(0)));
  int i = 0;
  for (auto _ : state) {
    if (ch.send(i++)) state.SkipWithError("send failed");
    benchmark::DoNotOptimize(ch.receive());
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_CvQueueSingleThread(benchmark::State& state) {
  CvQueue q(static_cast<std::size_t>(state.range(0)));
  int i = 0;
  for (auto _ : state) {
    if (!q.send(i++)) state.SkipWithError("send failed");
    benchmark::DoNotOptimize(q.receive());
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_ChannelHandOff)->Arg(0)->Arg(1)->Arg(64)->UseRealTime();
BENCHMARK(BM_CvQueueHandOff)->Arg(0)->Arg(1)->Arg(64)->UseRealTime();
BENCHMARK(BM_ChannelSingleThread)->Arg(1)->Arg(64);
BENCHMARK(BM_CvQueueSingleThread)->Arg(1)->Arg(64);

}  // namespace
