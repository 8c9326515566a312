// bubble::instrument's hooks themselves: outside a bubble they perform each atomic operation with
// its result unchanged; in a bubble every atomic operation and fence of instrumented code is one
// scheduling point (traced with its memory order), bubble::Atomic stays one point per operation,
// and memory that a new allocation or a new thread reuses starts without history.

#include <gtest/gtest.h>

#include <bubble/atomic.hpp>
#include <bubble/bubble.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

template <class T>
void check_operations() {
  std::atomic<T> a{5};
  EXPECT_EQ(a.load(std::memory_order_relaxed), T{5});
  a.store(7, std::memory_order_release);
  EXPECT_EQ(a.exchange(9, std::memory_order_acq_rel), T{7});
  EXPECT_EQ(a.fetch_add(3), T{9});
  EXPECT_EQ(a.fetch_sub(2, std::memory_order_relaxed), T{12});
  EXPECT_EQ(a.fetch_and(6), T{10});
  EXPECT_EQ(a.fetch_or(1), T{2});
  EXPECT_EQ(a.fetch_xor(7), T{3});
  T expected = 0;
  EXPECT_FALSE(a.compare_exchange_strong(expected, 1));
  EXPECT_EQ(expected, T{4});
  EXPECT_TRUE(
      a.compare_exchange_weak(expected, 11, std::memory_order_acq_rel, std::memory_order_acquire));
  EXPECT_EQ(a.load(), T{11});
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

TEST(InstrumentHooks, OutsideABubbleEveryOperationHasItsUsualResult) {
  check_operations<std::uint8_t>();
  check_operations<std::int16_t>();
  check_operations<std::uint32_t>();
  check_operations<std::int64_t>();
}

// Property: real threads' fetch_adds through the hooks lose nothing.
TEST(InstrumentHooks, OutsideABubbleConcurrentIncrementsLoseNothing) {
  std::atomic<long> counter{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10'000; ++i) counter.fetch_add(1, std::memory_order_relaxed);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter.load(), 40'000);
}

std::string traced_run(const std::function<void()>& body) {
  bubble::Options options;
  options.trace = true;
  options.intercept_std = true;
  return bubble::run(options, [&](bubble::Runtime&) { body(); }).trace_text();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// In a bubble each atomic operation of instrumented code is one scheduling point, named with its
// memory order and the place of the call.
TEST(InstrumentHooks, InABubbleEachAtomicOperationIsOneSchedulingPoint) {
  const std::string text = traced_run([] {
    std::atomic<int> a{0};
    a.fetch_add(1, std::memory_order_acq_rel);
    (void)a.load(std::memory_order_acquire);
    a.store(2, std::memory_order_release);
    std::atomic_thread_fence(std::memory_order_seq_cst);
  });
  EXPECT_EQ(count(text, "op atomic fetch_add(acq_rel) #"), 1u) << text;
  EXPECT_EQ(count(text, "op atomic load(acquire) #"), 1u) << text;
  EXPECT_EQ(count(text, "op atomic store(release) #"), 1u) << text;
  EXPECT_EQ(count(text, "op atomic thread_fence(seq_cst)"), 1u) << text;
  // A report gives the place of the call as the instrumented code's module and offset.
  bubble::Options options;
  options.intercept_std = true;
  try {
    bubble::run(options, [](bubble::Runtime&) {
      std::atomic<int> a{0};
      a.fetch_add(1, std::memory_order_acq_rel);
      throw std::runtime_error("stop");
    });
    FAIL() << "the run did not fail";
  } catch (const bubble::RunFailure& failure) {
    EXPECT_NE(std::string(failure.what())
                  .find("last at atomic fetch_add(acq_rel) atomic fetch_add called from "
                        "instrument_tests+0x"),
              std::string::npos)
        << failure.what();
  }
}

// bubble::Atomic compiled with the instrumentation is still one scheduling point per operation
// (its own), not two.
TEST(InstrumentHooks, BubbleAtomicIsOneSchedulingPointPerOperation) {
  const std::string text = traced_run([] {
    bubble::Atomic<int> a("a", 0);
    a.fetch_add(1);
    (void)a.load();
  });
  EXPECT_EQ(count(text, " op "), 2u) << text;
  EXPECT_EQ(count(text, "op Atomic::fetch_add(seq_cst) \"a\""), 1u) << text;
}

// Property: exploration finds the lost update of two threads incrementing a std::atomic with a
// load and a store (no yield in the window), which it cannot see without the instrumentation.
TEST(InstrumentHooks, ExplorationSeesAWindowBetweenTwoAtomicOperations) {
  bool lost = false;
  for (std::uint64_t seed = 1; seed <= 100 && !lost; ++seed) {
    bubble::Options options;
    options.intercept_std = true;
    options.strategy = bubble::Strategy::random(seed);
    bubble::run(options, [&](bubble::Runtime&) {
      std::atomic<int> hits{0};
      auto hit = [&] { hits.store(hits.load() + 1); };
      std::thread a(hit);
      std::thread b(hit);
      a.join();
      b.join();
      lost = hits.load() != 2;
    });
  }
  EXPECT_TRUE(lost);
}

// A block freed by one thread and allocated again by another is new memory: the second thread's
// writes do not race with the first's, which nothing orders with them.
TEST(InstrumentHooks, ReallocatedMemoryStartsWithoutHistory) {
  for (std::uint64_t seed = 0; seed <= 10; ++seed) {
    bubble::Options options;
    options.intercept_std = true;
    options.strategy = seed == 0 ? bubble::Strategy::fifo() : bubble::Strategy::random(seed);
    EXPECT_NO_THROW(
        bubble::run(options,
                    [&](bubble::Runtime&) {
                      auto churn = [] {
                        for (int i = 0; i < 4; ++i) {
                          auto block = std::make_unique<std::uint64_t[]>(8);
                          for (int k = 0; k < 8; ++k) block[k] = static_cast<std::uint64_t>(k);
                          asm volatile("" : : "r"(block.get()) : "memory");  // The writes stay.
                        }
                      };
                      std::thread a(churn);
                      std::thread b(churn);
                      a.join();
                      b.join();
                    }))
        << "seed " << seed;
  }
}

// A thread's stack, reused for a later thread, starts without history; and the thread_local
// variables the fibers of a run share are not taken for races between them.
thread_local int per_thread_counter = 0;

// Writes through a pointer, as code that fills a caller's buffer does: an access the
// instrumentation cannot prove thread-local.
[[gnu::noinline]] void fill(int* values, int n, int base) {
  for (int i = 0; i < n; ++i) values[i] = base + i;
}

void write_locals(int depth) {
  int locals[64];
  fill(locals, 64, depth);
  asm volatile("" : : "r"(locals) : "memory");
  ++per_thread_counter;
  if (depth > 0) write_locals(depth - 1);
}

TEST(InstrumentHooks, ReusedStacksAndSharedThreadLocalsAreNoRaces) {
  bubble::Options options;
  options.intercept_std = true;
  EXPECT_NO_THROW(bubble::run(options, [](bubble::Runtime&) {
    for (int round = 0; round < 3; ++round) {
      std::thread a([] { write_locals(4); });
      a.detach();  // Its stack goes back to the pool when it ends, unjoined.
      std::thread b([] { write_locals(4); });
      b.join();
    }
  }));
}

}  // namespace
