#pragma once

// The kinds of concurrency bug of the SCTBench benchmark (P. Thomson, A. F. Donaldson, A. Betts,
// "Concurrency Testing Using Schedule Bounding: an Empirical Study", PPoPP 2014), each written
// anew with the standard library only, as its authors would: std::thread, std::mutex,
// std::condition_variable, std::atomic and plain variables, and no call that exists to help a
// tester (no yield in a window). A bug shows as a failed check (std::logic_error), a deadlock or a
// data race, depending on the kind; each needs a particular interleaving or shows only to race
// detection. Compiled with bubble::instrument, run in intercepting bubbles. The corrected
// programs are in bug_patterns_fixed.hpp.

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace bug_patterns {

// How the bug shows.
enum class Shows { failed_check, deadlock, data_race };

struct Pattern {
  const char* name;
  Shows shows;
  void (*body)();
};

inline void check(bool condition, const char* what) {
  if (!condition) throw std::logic_error(what);
}

// account: a withdrawal checks the balance in one critical section and takes the money in
// another; two withdrawals of the whole balance overdraw it.
inline void account() {
  int balance = 10;
  std::mutex m;
  auto withdraw = [&](int amount) {
    bool enough;
    {
      std::lock_guard lock(m);
      enough = balance >= amount;
    }
    if (enough) {
      std::lock_guard lock(m);
      balance -= amount;
    }
  };
  std::thread a(withdraw, 10);
  std::thread b(withdraw, 10);
  a.join();
  b.join();
  check(balance >= 0, "account: the balance went below zero");
}

// bluetooth_driver (S. Qadeer's driver model): a request checks the stopping flag and counts itself
// in two critical sections, so the device can stop in between and the request then runs on a
// stopped device.
inline void bluetooth_driver() {
  std::mutex m;
  std::condition_variable cv;
  int pending = 1;  // The driver's own reference, dropped by stop().
  bool stopping = false;
  bool stopped = false;
  auto release = [&] {
    std::lock_guard lock(m);
    if (--pending == 0) cv.notify_all();
  };
  std::thread request([&] {
    bool refused;
    {
      std::lock_guard lock(m);
      refused = stopping;
    }
    if (refused) return;
    {
      std::lock_guard lock(m);
      ++pending;
    }
    bool dead;
    {
      std::lock_guard lock(m);
      dead = stopped;
    }
    check(!dead, "bluetooth_driver: a request ran on a stopped device");
    release();
  });
  std::thread stop([&] {
    {
      std::lock_guard lock(m);
      stopping = true;
    }
    release();
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return pending == 0; });
    stopped = true;
  });
  request.join();
  stop.join();
}

// circular_buffer: a "lock-free" ring whose indices are plain ints.
inline void circular_buffer() {
  int slots[4] = {};
  int head = 0;
  int tail = 0;
  std::thread producer([&] {
    for (int i = 1; i <= 3; ++i) {
      slots[tail % 4] = i;
      ++tail;
    }
  });
  std::thread consumer([&] {
    for (int i = 0; i < 3; ++i) {
      if (head != tail) ++head;
    }
  });
  producer.join();
  consumer.join();
  check(head <= tail && slots[0] >= 0, "circular_buffer: impossible indices");
}

// deadlock01: two threads take the same two locks in opposite orders.
inline void deadlock01() {
  std::mutex a;
  std::mutex b;
  int shared = 0;
  std::thread t1([&] {
    std::lock_guard la(a);
    std::lock_guard lb(b);
    ++shared;
  });
  std::thread t2([&] {
    std::lock_guard lb(b);
    std::lock_guard la(a);
    ++shared;
  });
  t1.join();
  t2.join();
}

// din_phil: three philosophers each take their left fork, then their right one.
inline void din_phil() {
  std::mutex forks[3];
  int meals = 0;
  std::vector<std::thread> philosophers;
  for (int i = 0; i < 3; ++i) {
    philosophers.emplace_back([&, i] {
      std::lock_guard left(forks[i]);
      std::lock_guard right(forks[(i + 1) % 3]);
      ++meals;
    });
  }
  for (auto& p : philosophers) p.join();
}

// lazy01: a check that assumes the other updates have not both happened yet.
inline void lazy01() {
  std::mutex m;
  int data = 0;
  std::thread checker([&] {
    std::lock_guard lock(m);
    check(data < 3, "lazy01: both updates happened before the check");
  });
  std::thread add1([&] {
    std::lock_guard lock(m);
    data += 1;
  });
  std::thread add2([&] {
    std::lock_guard lock(m);
    data += 2;
  });
  checker.join();
  add1.join();
  add2.join();
}

// lost_signal: a notify issued before the waiter waits, with no predicate to catch it.
inline void lost_signal() {
  std::mutex m;
  std::condition_variable cv;
  std::thread waiter([&] {
    std::unique_lock lock(m);
    cv.wait(lock);
  });
  std::thread signaller([&] {
    std::lock_guard lock(m);
    cv.notify_one();
  });
  signaller.join();
  waiter.join();
}

// queue: consumers test for emptiness outside the lock and pop inside it.
inline void queue() {
  std::vector<int> items{1};
  std::mutex m;
  std::atomic<int> popped_empty{0};
  auto consume = [&] {
    bool empty;
    {
      std::lock_guard lock(m);
      empty = items.empty();
    }
    if (!empty) {
      std::lock_guard lock(m);
      if (items.empty()) {
        popped_empty.fetch_add(1);
      } else {
        items.pop_back();
      }
    }
  };
  std::thread a(consume);
  std::thread b(consume);
  a.join();
  b.join();
  check(popped_empty.load() == 0, "queue: a consumer popped an empty queue");
}

// reorder_3: two setters store a = 1 then b = -1; a checker expects to see both or neither.
inline void reorder_3() {
  std::atomic<int> a{0};
  std::atomic<int> b{0};
  auto set = [&] {
    a.store(1);
    b.store(-1);
  };
  std::thread s1(set);
  std::thread s2(set);
  std::thread checker([&] {
    const int x = a.load();
    const int y = b.load();
    check((x == 0 && y == 0) || (x == 1 && y == -1), "reorder_3: a store was seen alone");
  });
  s1.join();
  s2.join();
  checker.join();
}

// sigma: threads claim slots of an array through a plain shared index.
inline void sigma() {
  int sigma[4] = {};
  int next = 0;
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back([&] {
      const int slot = next;
      next = slot + 1;
      sigma[slot] += 1;
    });
  }
  for (auto& t : threads) t.join();
}

// stack: pops check the height outside the lock.
inline void stack() {
  std::mutex m;
  std::vector<int> stack{7};
  std::atomic<int> underflows{0};
  auto pop = [&] {
    std::size_t height;
    {
      std::lock_guard lock(m);
      height = stack.size();
    }
    if (height > 0) {
      std::lock_guard lock(m);
      if (stack.empty()) {
        underflows.fetch_add(1);
      } else {
        stack.pop_back();
      }
    }
  };
  std::thread a(pop);
  std::thread b(pop);
  a.join();
  b.join();
  check(underflows.load() == 0, "stack: a pop found the stack empty");
}

// order_violation: a thread uses an object that another thread creates, assuming the creator
// always runs first (it was started first).
inline void order_violation() {
  std::atomic<int*> config{nullptr};
  std::thread creator([&] { config.store(new int(1)); });
  std::thread user([&] {
    int* c = config.load();
    check(c != nullptr, "order_violation: used before it was created");
  });
  creator.join();
  user.join();
  delete config.load();
}

// twostage: the producer publishes in two critical sections where it should use one; the
// consumer must never see stage 1 without stage 2.
inline void twostage() {
  std::mutex m;
  int stage = 0;
  std::thread producer([&] {
    {
      std::lock_guard lock(m);
      stage = 1;
    }
    {
      std::lock_guard lock(m);
      stage = 2;
    }
  });
  std::thread consumer([&] {
    std::lock_guard lock(m);
    check(stage != 1, "twostage: the consumer saw the first stage alone");
  });
  producer.join();
  consumer.join();
}

// wronglock: one counter, two mutexes.
inline void wronglock() {
  int counter = 0;
  std::mutex m1;
  std::mutex m2;
  std::thread a([&] {
    std::lock_guard lock(m1);
    ++counter;
  });
  std::thread b([&] {
    std::lock_guard lock(m2);
    ++counter;
  });
  a.join();
  b.join();
}

// double-checked locking on a plain pointer.
inline void double_checked_locking() {
  int* instance = nullptr;
  std::mutex m;
  auto get = [&] {
    if (instance == nullptr) {
      std::lock_guard lock(m);
      if (instance == nullptr) instance = new int(5);
    }
    return *instance;
  };
  std::thread a([&] { check(get() == 5, "double_checked_locking: wrong value"); });
  std::thread b([&] { check(get() == 5, "double_checked_locking: wrong value"); });
  a.join();
  b.join();
  delete instance;
}

// An atomic flag checked and then set: two threads both become the owner.
inline void atomic_check_then_set() {
  std::atomic<int> owner{0};
  std::atomic<int> owners{0};
  auto claim = [&](int id) {
    if (owner.load() == 0) {
      owner.store(id);
      owners.fetch_add(1);
    }
  };
  std::thread a(claim, 1);
  std::thread b(claim, 2);
  a.join();
  b.join();
  check(owners.load() == 1, "atomic_check_then_set: two owners");
}

// An atomic counter incremented with a load and a store instead of a read-modify-write.
inline void atomic_lost_update() {
  std::atomic<int> hits{0};
  auto hit = [&] { hits.store(hits.load() + 1); };
  std::thread a(hit);
  std::thread b(hit);
  a.join();
  b.join();
  check(hits.load() == 2, "atomic_lost_update: an increment was lost");
}

// An object published through an atomic pointer before its initialization is finished.
inline void publish_before_init() {
  struct Node {
    int value = 0;
  };
  std::atomic<Node*> shared{nullptr};
  Node* created = nullptr;
  std::thread writer([&] {
    created = new Node;
    shared.store(created, std::memory_order_release);
    created->value = 42;
  });
  std::thread reader([&] {
    if (Node* n = shared.load(std::memory_order_acquire)) {
      check(n->value == 0 || n->value == 42, "publish_before_init: torn value");
    }
  });
  writer.join();
  reader.join();
  delete created;
}

inline const std::vector<Pattern>& all() {
  static const std::vector<Pattern> patterns = {
      {"account", Shows::failed_check, account},
      {"bluetooth_driver", Shows::failed_check, bluetooth_driver},
      {"circular_buffer", Shows::data_race, circular_buffer},
      {"deadlock01", Shows::deadlock, deadlock01},
      {"din_phil", Shows::deadlock, din_phil},
      {"lazy01", Shows::failed_check, lazy01},
      {"lost_signal", Shows::deadlock, lost_signal},
      {"queue", Shows::failed_check, queue},
      {"reorder_3", Shows::failed_check, reorder_3},
      {"sigma", Shows::data_race, sigma},
      {"stack", Shows::failed_check, stack},
      {"order_violation", Shows::failed_check, order_violation},
      {"twostage", Shows::failed_check, twostage},
      {"wronglock", Shows::data_race, wronglock},
      {"double_checked_locking", Shows::data_race, double_checked_locking},
      {"atomic_check_then_set", Shows::failed_check, atomic_check_then_set},
      {"atomic_lost_update", Shows::failed_check, atomic_lost_update},
      {"publish_before_init", Shows::data_race, publish_before_init},
  };
  return patterns;
}

}  // namespace bug_patterns
