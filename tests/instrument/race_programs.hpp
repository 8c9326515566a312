#pragma once

// Small programs written with the standard library only, as their authors would, half with a data
// race and half without: the flags, publications, lazy initializations, reference counts and
// locking mistakes that data races come from, and the correct versions of the same. Each runs as
// the body of an intercepting bubble (std::thread is a bubble thread), compiled with
// bubble::instrument. The racy ones make their racing accesses under every schedule (a thread that
// must come second waits for the first with a relaxed flag, which orders nothing), so that every
// run has a race to report.

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <queue>
#include <string>
#include <thread>
#include <vector>

#include <bubble/channel.hpp>

namespace race_programs {

// Uses `v`, so that the compiler keeps the read that produced it.
inline void use(std::size_t v) {
  asm volatile("" : : "r"(v));
}

struct Program {
  const char* name;
  bool racy;
  void (*body)();
};

// --- With a data race ---------------------------------------------------------------------------

// Two threads increment a plain int.
inline void counter_without_lock() {
  int counter = 0;
  std::thread a([&] { ++counter; });
  std::thread b([&] { ++counter; });
  a.join();
  b.join();
}

// A plain bool as the "ready" flag of a publication.
inline void plain_flag() {
  int data = 0;
  bool ready = false;
  std::thread writer([&] {
    data = 42;
    ready = true;
  });
  std::thread reader([&] {
    if (ready) use(data);
  });
  writer.join();
  reader.join();
}

// A publication through a relaxed store and load: the flag is atomic, the data is not ordered.
inline void relaxed_publication() {
  int data = 0;
  std::atomic<bool> ready{false};
  std::thread writer([&] {
    data = 42;
    ready.store(true, std::memory_order_relaxed);
  });
  std::thread reader([&] {
    while (!ready.load(std::memory_order_relaxed)) std::this_thread::yield();
    use(data);
  });
  writer.join();
  reader.join();
}

// Double-checked locking whose first check reads the plain pointer outside the lock.
inline void double_checked_plain_pointer() {
  struct Config {
    int value = 7;
  };
  Config* instance = nullptr;
  std::mutex m;
  auto get = [&] {
    if (instance == nullptr) {
      std::lock_guard lock(m);
      if (instance == nullptr) instance = new Config;
    }
    return instance->value;
  };
  std::thread a([&] { use(get()); });
  std::thread b([&] { use(get()); });
  a.join();
  b.join();
  delete instance;
}

// A hand-made reference count kept in a plain int.
inline void plain_reference_count() {
  struct Shared {
    int refs = 1;
    int payload = 0;
  };
  auto* s = new Shared;
  auto acquire = [&] { ++s->refs; };
  auto release = [&] { --s->refs; };
  std::thread a([&] {
    acquire();
    release();
  });
  std::thread b([&] {
    acquire();
    release();
  });
  a.join();
  b.join();
  delete s;
}

// The same data guarded by two different mutexes. (The lines of the two accesses, for the test of
// the report.)
inline constexpr int kWrongLockDepositLine = __LINE__ + 8;
inline constexpr int kWrongLockWithdrawalLine = __LINE__ + 11;
inline void wrong_lock() {
  int balance = 100;
  std::mutex deposits;
  std::mutex withdrawals;
  std::thread a([&] {
    std::lock_guard lock(deposits);
    balance += 10;
  });
  std::thread b([&] {
    std::lock_guard lock(withdrawals);
    balance -= 10;
  });
  a.join();
  b.join();
}

// A thread reads the shared value after it has released the lock that guards it, while another
// thread, which waits until that unlock, writes it under the lock.
inline void read_after_unlock() {
  int total = 0;
  std::mutex m;
  std::atomic<bool> unlocked{false};
  std::thread a([&] {
    {
      std::lock_guard lock(m);
      total += 1;
    }
    unlocked.store(true, std::memory_order_relaxed);
    use(total);  // Outside the lock.
  });
  std::thread b([&] {
    while (!unlocked.load(std::memory_order_relaxed)) std::this_thread::yield();
    std::lock_guard lock(m);
    total += 2;
  });
  a.join();
  b.join();
}

// The result of a worker read before the worker is joined (a relaxed "done" flag is no join).
inline void result_before_join() {
  int result = 0;
  std::atomic<bool> done{false};
  std::thread worker([&] {
    result = 6 * 7;
    done.store(true, std::memory_order_relaxed);
  });
  while (!done.load(std::memory_order_relaxed)) std::this_thread::yield();
  use(result);
  worker.join();
}

// Two threads append to one std::vector.
inline void vector_push_back() {
  std::vector<int> values;
  values.reserve(16);
  std::thread a([&] { values.push_back(1); });
  std::thread b([&] { values.push_back(2); });
  a.join();
  b.join();
}

// A release fence placed after the flag's store orders nothing the reader can see, even once the
// reader has seen the flag.
inline void fence_after_the_flag() {
  int data = 0;
  std::atomic<int> flag{0};
  std::thread writer([&] {
    data = 1;
    flag.store(1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
  });
  std::thread reader([&] {
    while (flag.load(std::memory_order_relaxed) != 1) std::this_thread::yield();
    std::atomic_thread_fence(std::memory_order_acquire);
    use(data);
  });
  writer.join();
  reader.join();
}

// --- Without a data race ------------------------------------------------------------------------

inline void counter_with_lock() {
  int counter = 0;
  std::mutex m;
  std::thread a([&] {
    std::lock_guard lock(m);
    ++counter;
  });
  std::thread b([&] {
    std::lock_guard lock(m);
    ++counter;
  });
  a.join();
  b.join();
}

inline void release_acquire_publication() {
  int data = 0;
  std::atomic<bool> ready{false};
  std::thread writer([&] {
    data = 42;
    ready.store(true, std::memory_order_release);
  });
  std::thread reader([&] {
    while (!ready.load(std::memory_order_acquire)) std::this_thread::yield();
    use(data);
  });
  writer.join();
  reader.join();
}

// A release fence before a relaxed store, an acquire fence after a relaxed load: the fences
// synchronize through the flag.
inline void fence_publication() {
  int data = 0;
  std::atomic<int> flag{0};
  std::thread writer([&] {
    data = 1;
    std::atomic_thread_fence(std::memory_order_release);
    flag.store(1, std::memory_order_relaxed);
  });
  std::thread reader([&] {
    while (flag.load(std::memory_order_relaxed) != 1) std::this_thread::yield();
    std::atomic_thread_fence(std::memory_order_acquire);
    use(data);
  });
  writer.join();
  reader.join();
}

inline void double_checked_atomic_pointer() {
  struct Config {
    int value = 7;
  };
  std::atomic<Config*> instance{nullptr};
  std::mutex m;
  auto get = [&] {
    Config* c = instance.load(std::memory_order_acquire);
    if (c == nullptr) {
      std::lock_guard lock(m);
      c = instance.load(std::memory_order_relaxed);
      if (c == nullptr) {
        c = new Config;
        instance.store(c, std::memory_order_release);
      }
    }
    return c->value;
  };
  std::thread a([&] { use(get()); });
  std::thread b([&] { use(get()); });
  a.join();
  b.join();
  delete instance.load();
}

struct Registry {
  std::vector<int> entries{1, 2, 3};
};
inline Registry& registry() {
  static Registry r;  // Initialized once, whichever thread comes first.
  return r;
}
inline void function_local_static() {
  std::thread a([] { use(registry().entries.size()); });
  std::thread b([] { use(registry().entries.size()); });
  a.join();
  b.join();
}

inline void shared_ptr_copies() {
  auto payload = std::make_shared<std::vector<int>>(4, 1);
  std::thread a([p = payload] {
    auto copy = p;
    use(copy->size());
  });
  std::thread b([p = payload] {
    auto copy = p;
    use(copy->size());
  });
  payload.reset();
  a.join();
  b.join();
}

// Strings handed from one thread to another through a channel.
inline void strings_through_a_channel() {
  bubble::Channel<std::string> messages(1);
  std::thread producer([&] {
    for (int i = 0; i < 3; ++i) {
      std::string s = "message number " + std::to_string(i) + " with some length to it";
      (void)messages.send(std::move(s));
    }
    messages.close();
  });
  std::thread consumer([&] {
    while (auto s = messages.receive()) use(s->size());
  });
  producer.join();
  consumer.join();
}

inline void result_after_join() {
  int result = 0;
  std::thread worker([&] { result = 6 * 7; });
  worker.join();
  use(result);
}

inline void producer_consumer_queue() {
  std::queue<int> items;
  std::mutex m;
  std::condition_variable cv;
  bool closed = false;
  std::thread producer([&] {
    for (int i = 0; i < 4; ++i) {
      {
        std::lock_guard lock(m);
        items.push(i);
      }
      cv.notify_one();
    }
    {
      std::lock_guard lock(m);
      closed = true;
    }
    cv.notify_all();
  });
  std::thread consumer([&] {
    std::unique_lock lock(m);
    for (;;) {
      cv.wait(lock, [&] { return !items.empty() || closed; });
      if (items.empty()) return;
      items.pop();
    }
  });
  producer.join();
  consumer.join();
}

inline void atomic_counter() {
  std::atomic<int> counter{0};
  std::thread a([&] { counter.fetch_add(1, std::memory_order_relaxed); });
  std::thread b([&] { counter.fetch_add(1, std::memory_order_relaxed); });
  a.join();
  b.join();
}

// Data written before a thread starts is visible to it.
inline void data_before_spawn() {
  std::vector<int> input{1, 2, 3};
  int sum = 0;
  std::thread worker([&] {
    for (int v : input) sum += v;
  });
  worker.join();
  use(sum);
}

inline const std::vector<Program>& all() {
  static const std::vector<Program> programs = {
      {"counter_without_lock", true, counter_without_lock},
      {"plain_flag", true, plain_flag},
      {"relaxed_publication", true, relaxed_publication},
      {"double_checked_plain_pointer", true, double_checked_plain_pointer},
      {"plain_reference_count", true, plain_reference_count},
      {"wrong_lock", true, wrong_lock},
      {"read_after_unlock", true, read_after_unlock},
      {"result_before_join", true, result_before_join},
      {"vector_push_back", true, vector_push_back},
      {"fence_after_the_flag", true, fence_after_the_flag},
      {"counter_with_lock", false, counter_with_lock},
      {"release_acquire_publication", false, release_acquire_publication},
      {"fence_publication", false, fence_publication},
      {"double_checked_atomic_pointer", false, double_checked_atomic_pointer},
      {"function_local_static", false, function_local_static},
      {"shared_ptr_copies", false, shared_ptr_copies},
      {"strings_through_a_channel", false, strings_through_a_channel},
      {"result_after_join", false, result_after_join},
      {"producer_consumer_queue", false, producer_consumer_queue},
      {"atomic_counter", false, atomic_counter},
      {"data_before_spawn", false, data_before_spawn},
  };
  return programs;
}

}  // namespace race_programs
