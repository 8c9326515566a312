#pragma once

// The corrected programs of the SCTBench bug kinds (bug_patterns.hpp): each kind fixed as its
// authors would fix it (the check and the update in one critical section, the locks taken in one
// order, a condition-variable wait on a predicate, a read-modify-write instead of a load and a
// store, a publication after the initialization), with the buggy program's check kept. No
// schedule fails them: no failed check, no deadlock, no data race. Compiled with
// bubble::instrument, run in intercepting bubbles.

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "bug_patterns.hpp"

namespace bug_patterns::fixed {

struct Program {
  const char* name;  // The name of the kind it corrects (Pattern::name).
  void (*body)();
};

// account: the balance is checked and taken in one critical section.
inline void account() {
  int balance = 10;
  std::mutex m;
  auto withdraw = [&](int amount) {
    std::lock_guard lock(m);
    if (balance >= amount) balance -= amount;
  };
  std::thread a(withdraw, 10);
  std::thread b(withdraw, 10);
  a.join();
  b.join();
  check(balance >= 0, "account: the balance went below zero");
}

// bluetooth_driver: a request checks the stopping flag and counts itself in one critical section,
// so the device cannot stop before the request is done with it.
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
    {
      std::lock_guard lock(m);
      if (stopping) return;
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

// circular_buffer: a single-producer single-consumer ring whose indices are atomics; the
// producer publishes a slot with a release store of the tail, the consumer reads it after an
// acquire load of the tail and frees it with a release store of the head.
inline void circular_buffer() {
  int slots[4] = {};
  std::atomic<int> head{0};
  std::atomic<int> tail{0};
  int consumed[3] = {};
  std::thread producer([&] {
    for (int i = 1; i <= 3; ++i) {
      const int t = tail.load(std::memory_order_relaxed);
      if (t - head.load(std::memory_order_acquire) == 4) continue;  // Full.
      slots[t % 4] = i;
      tail.store(t + 1, std::memory_order_release);
    }
  });
  std::thread consumer([&] {
    for (int i = 0; i < 3; ++i) {
      const int h = head.load(std::memory_order_relaxed);
      if (h == tail.load(std::memory_order_acquire)) continue;  // Empty.
      consumed[h] = slots[h % 4];
      head.store(h + 1, std::memory_order_release);
    }
  });
  producer.join();
  consumer.join();
  check(head.load() <= tail.load() && slots[0] >= 0, "circular_buffer: impossible indices");
  for (int i = 0; i < head.load(); ++i) {
    check(consumed[i] == i + 1, "circular_buffer: an item was consumed out of order");
  }
}

// deadlock01: both threads take the two locks in the same order.
inline void deadlock01() {
  std::mutex a;
  std::mutex b;
  int shared = 0;
  auto update = [&] {
    std::lock_guard la(a);
    std::lock_guard lb(b);
    ++shared;
  };
  std::thread t1(update);
  std::thread t2(update);
  t1.join();
  t2.join();
  check(shared == 2, "deadlock01: an update was lost");
}

// din_phil: every philosopher takes the lower-numbered of their forks first, which breaks the
// cycle (the last one takes its right fork, fork 0, first).
inline void din_phil() {
  std::mutex forks[3];
  int meals = 0;
  std::vector<std::thread> philosophers;
  philosophers.reserve(3);
  for (int i = 0; i < 3; ++i) {
    philosophers.emplace_back([&, i] {
      const int left = i;
      const int right = (i + 1) % 3;
      std::lock_guard first(forks[left < right ? left : right]);
      std::lock_guard second(forks[left < right ? right : left]);
      ++meals;
    });
  }
  for (auto& p : philosophers) p.join();
  check(meals == 3, "din_phil: a philosopher did not eat");
}

// lazy01: the order the check assumes is enforced: the updates wait until the check is done.
inline void lazy01() {
  std::mutex m;
  std::condition_variable cv;
  bool checked = false;
  int data = 0;
  std::thread checker([&] {
    std::lock_guard lock(m);
    check(data < 3, "lazy01: both updates happened before the check");
    checked = true;
    cv.notify_all();
  });
  auto add = [&](int amount) {
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return checked; });
    data += amount;
  };
  std::thread add1(add, 1);
  std::thread add2(add, 2);
  checker.join();
  add1.join();
  add2.join();
  check(data == 3, "lazy01: an update was lost");
}

// lost_signal: the signal is a flag under the mutex, and the waiter waits for the flag.
inline void lost_signal() {
  std::mutex m;
  std::condition_variable cv;
  bool signalled = false;
  std::thread waiter([&] {
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return signalled; });
  });
  std::thread signaller([&] {
    std::lock_guard lock(m);
    signalled = true;
    cv.notify_one();
  });
  signaller.join();
  waiter.join();
}

// queue: a consumer tests for emptiness and pops in one critical section.
inline void queue() {
  std::vector<int> items{1};
  std::mutex m;
  int pops = 0;
  auto consume = [&] {
    std::lock_guard lock(m);
    if (!items.empty()) {
      items.pop_back();
      ++pops;
    }
  };
  std::thread a(consume);
  std::thread b(consume);
  a.join();
  b.join();
  check(pops == 1 && items.empty(), "queue: a consumer popped an empty queue");
}

// reorder_3: the two stores are one critical section, and the checker reads both in another.
inline void reorder_3() {
  std::mutex m;
  int a = 0;
  int b = 0;
  auto set = [&] {
    std::lock_guard lock(m);
    a = 1;
    b = -1;
  };
  std::thread s1(set);
  std::thread s2(set);
  std::thread checker([&] {
    std::lock_guard lock(m);
    const int x = a;
    const int y = b;
    check((x == 0 && y == 0) || (x == 1 && y == -1), "reorder_3: a store was seen alone");
  });
  s1.join();
  s2.join();
  checker.join();
}

// sigma: each thread claims its slot with an atomic fetch_add of the shared index.
inline void sigma() {
  int sigma[4] = {};
  std::atomic<int> next{0};
  std::vector<std::thread> threads;
  threads.reserve(2);
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back([&] {
      const int slot = next.fetch_add(1);
      sigma[slot] += 1;
    });
  }
  for (auto& t : threads) t.join();
  check(sigma[0] == 1 && sigma[1] == 1, "sigma: two threads claimed one slot");
}

// stack: a pop checks the height and pops in one critical section.
inline void stack() {
  std::mutex m;
  std::vector<int> stack{7};
  int pops = 0;
  auto pop = [&] {
    std::lock_guard lock(m);
    if (!stack.empty()) {
      stack.pop_back();
      ++pops;
    }
  };
  std::thread a(pop);
  std::thread b(pop);
  a.join();
  b.join();
  check(pops == 1 && stack.empty(), "stack: a pop found the stack empty");
}

// order_violation: the user waits until the object is created.
inline void order_violation() {
  std::mutex m;
  std::condition_variable cv;
  int* config = nullptr;
  std::thread creator([&] {
    int* c = new int(1);
    std::lock_guard lock(m);
    config = c;
    cv.notify_all();
  });
  std::thread user([&] {
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return config != nullptr; });
    check(*config == 1, "order_violation: used before it was created");
  });
  creator.join();
  user.join();
  delete config;
}

// twostage: the producer publishes both stages in one critical section.
inline void twostage() {
  std::mutex m;
  int stage = 0;
  std::thread producer([&] {
    std::lock_guard lock(m);
    stage = 1;
    stage = 2;
  });
  std::thread consumer([&] {
    std::lock_guard lock(m);
    check(stage != 1, "twostage: the consumer saw the first stage alone");
  });
  producer.join();
  consumer.join();
}

// wronglock: both threads take the counter's one mutex.
inline void wronglock() {
  int counter = 0;
  std::mutex m;
  auto increment = [&] {
    std::lock_guard lock(m);
    ++counter;
  };
  std::thread a(increment);
  std::thread b(increment);
  a.join();
  b.join();
  check(counter == 2, "wronglock: an increment was lost");
}

// double-checked locking on an atomic pointer: an acquire load outside the lock, a release store
// of the initialized object inside it.
inline void double_checked_locking() {
  std::atomic<int*> instance{nullptr};
  std::mutex m;
  auto get = [&] {
    int* i = instance.load(std::memory_order_acquire);
    if (i == nullptr) {
      std::lock_guard lock(m);
      i = instance.load(std::memory_order_relaxed);
      if (i == nullptr) {
        i = new int(5);
        instance.store(i, std::memory_order_release);
      }
    }
    return *i;
  };
  std::thread a([&] { check(get() == 5, "double_checked_locking: wrong value"); });
  std::thread b([&] { check(get() == 5, "double_checked_locking: wrong value"); });
  a.join();
  b.join();
  delete instance.load();
}

// The flag is claimed with a compare-exchange: one thread becomes the owner.
inline void atomic_check_then_set() {
  std::atomic<int> owner{0};
  std::atomic<int> owners{0};
  auto claim = [&](int id) {
    int expected = 0;
    if (owner.compare_exchange_strong(expected, id)) owners.fetch_add(1);
  };
  std::thread a(claim, 1);
  std::thread b(claim, 2);
  a.join();
  b.join();
  check(owners.load() == 1, "atomic_check_then_set: two owners");
}

// The counter is incremented with a read-modify-write.
inline void atomic_lost_update() {
  std::atomic<int> hits{0};
  auto hit = [&] { hits.fetch_add(1); };
  std::thread a(hit);
  std::thread b(hit);
  a.join();
  b.join();
  check(hits.load() == 2, "atomic_lost_update: an increment was lost");
}

// The object is initialized before it is published.
inline void publish_before_init() {
  struct Node {
    int value = 0;
  };
  std::atomic<Node*> shared{nullptr};
  Node* created = nullptr;
  std::thread writer([&] {
    created = new Node;
    created->value = 42;
    shared.store(created, std::memory_order_release);
  });
  std::thread reader([&] {
    if (Node* n = shared.load(std::memory_order_acquire)) {
      check(n->value == 42, "publish_before_init: torn value");
    }
  });
  writer.join();
  reader.join();
  delete created;
}

// The corrected programs, in the order of bug_patterns::all().
inline const std::vector<Program>& all() {
  static const std::vector<Program> programs = {
      {"account", account},
      {"bluetooth_driver", bluetooth_driver},
      {"circular_buffer", circular_buffer},
      {"deadlock01", deadlock01},
      {"din_phil", din_phil},
      {"lazy01", lazy01},
      {"lost_signal", lost_signal},
      {"queue", queue},
      {"reorder_3", reorder_3},
      {"sigma", sigma},
      {"stack", stack},
      {"order_violation", order_violation},
      {"twostage", twostage},
      {"wronglock", wronglock},
      {"double_checked_locking", double_checked_locking},
      {"atomic_check_then_set", atomic_check_then_set},
      {"atomic_lost_update", atomic_lost_update},
      {"publish_before_init", publish_before_init},
  };
  return programs;
}

}  // namespace bug_patterns::fixed
