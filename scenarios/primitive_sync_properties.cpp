// The Semaphore and CondVar properties of the primitives suite: a sequence of steps, each
// followed by bubble::wait() (every thread settles), checked after every step against a model
// of who holds a permit or has been woken.
#include <bubble/bubble.hpp>
#include <bubble/cond_var.hpp>
#include <bubble/mutex.hpp>
#include <bubble/scenarios/primitive_properties.hpp>
#include <bubble/scenarios/show.hpp>
#include <bubble/semaphore.hpp>
#include <bubble/testing/case.hpp>
#include <bubble/testing/property.hpp>

#include <rapidcheck.h>

#include <algorithm>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace bubble::scenarios {
namespace {

// One step of a Semaphore or CondVar case.
enum class SyncStep {
  arrive,       // a new thread acquires one permit / waits on the CondVar once
  release,      // Semaphore::release(n)
  try_acquire,  // Semaphore::try_acquire from the root
  notify_one,   // CondVar::notify_one, the mutex held or not
  notify_all,   // CondVar::notify_all, the mutex held or not
};

struct SyncOp {
  SyncStep step = SyncStep::arrive;
  int n = 0;               // release(n)
  bool with_lock = false;  // notify with the CondVar's mutex held
};

void showValue(const SyncOp& op, std::ostream& os) {
  switch (op.step) {
    case SyncStep::arrive:
      os << "arrive";
      break;
    case SyncStep::release:
      os << "release(" << op.n << ")";
      break;
    case SyncStep::try_acquire:
      os << "try_acquire";
      break;
    case SyncStep::notify_one:
      os << (op.with_lock ? "notify_one (locked)" : "notify_one");
      break;
    case SyncStep::notify_all:
      os << (op.with_lock ? "notify_all (locked)" : "notify_all");
      break;
  }
}

struct SyncCase {
  int initial = 0;  // the Semaphore's initial permits (unused for a CondVar)
  std::vector<SyncOp> ops;
  StrategyValue strategy;
};

void showValue(const SyncCase& c, std::ostream& os) {
  os << "SyncCase{initial=" << c.initial << ", ops=[";
  for (std::size_t i = 0; i < c.ops.size(); ++i) {
    if (i > 0) os << ", ";
    showValue(c.ops[i], os);
  }
  os << "], strategy=";
  showValue(c.strategy, os);
  os << "}";
}

rc::Gen<SyncOp> semaphore_op() {
  return rc::gen::oneOf(rc::gen::just(SyncOp{SyncStep::arrive}),
                        rc::gen::just(SyncOp{SyncStep::arrive}),
                        rc::gen::map(rc::gen::inRange(0, 4),
                                     [](int n) {
                                       return SyncOp{SyncStep::release, n};
                                     }),
                        rc::gen::map(rc::gen::inRange(0, 4),
                                     [](int n) {
                                       return SyncOp{SyncStep::release, n};
                                     }),
                        rc::gen::just(SyncOp{SyncStep::try_acquire}));
}

rc::Gen<SyncOp> cond_var_op() {
  return rc::gen::oneOf(rc::gen::just(SyncOp{SyncStep::arrive}),
                        rc::gen::just(SyncOp{SyncStep::arrive}),
                        rc::gen::map(rc::gen::arbitrary<bool>(),
                                     [](bool l) {
                                       return SyncOp{SyncStep::notify_one, 0, l};
                                     }),
                        rc::gen::map(rc::gen::arbitrary<bool>(), [](bool l) {
                          return SyncOp{SyncStep::notify_all, 0, l};
                        }));
}

rc::Gen<SyncCase> sync_case(const rc::Gen<SyncOp>& op, int max_initial) {
  return rc::gen::exec([op, max_initial] {
    SyncCase c;
    c.initial = *rc::gen::inRange(0, max_initial + 1);
    const auto steps = static_cast<std::size_t>(*rc::gen::inRange(1, 13));
    c.ops = *rc::gen::container<std::vector<SyncOp>>(steps, op);
    c.strategy = *case_strategy();
    return c;
  });
}

std::string show_ids(std::vector<int> ids) {
  std::sort(ids.begin(), ids.end());
  std::string out = "{";
  for (std::size_t i = 0; i < ids.size(); ++i) {
    out += (i == 0 ? "" : ", ") + std::to_string(ids[i]);
  }
  return out + "}";
}

// Empty when `got` and `expected` hold the same ids; otherwise what differs after `step`.
std::string compare_ids(std::vector<int> got, std::vector<int> expected, const std::string& what,
                        std::size_t step, const SyncOp& op) {
  std::sort(got.begin(), got.end());
  std::sort(expected.begin(), expected.end());
  if (got == expected) return {};
  std::ostringstream shown;
  showValue(op, shown);
  return "after step " + std::to_string(step) + " (" + shown.str() + "), " + what + " " +
         show_ids(got) + ", expected " + show_ids(expected);
}

Options sync_options(const SyncCase& c) {
  Options o;
  o.strategy = c.strategy.value;
  o.max_steps = 100'000;
  return o;
}

}  // namespace

void semaphore_hands_permits_in_fifo_order() {
  const SyncCase c = testing::draw(sync_case(semaphore_op(), 2));
  testing::run_property(sync_options(c), [&](Runtime& rt) {
    Semaphore sem("sem", c.initial, rt);
    std::vector<int> acquired;  // the arrivals whose acquire returned
    std::vector<std::unique_ptr<ThreadHandle>> threads;
    // The model: free permits, and the arrivals still waiting, longest-waiting first.
    std::ptrdiff_t count = c.initial;
    std::deque<int> queue;
    std::vector<int> model_acquired;
    int arrivals = 0;
    // The first broken promise. Reported once every thread has been released and joined: the
    // threads wait on `sem`, which must outlive their waits.
    std::string broken;
    for (std::size_t i = 0; i < c.ops.size() && broken.empty(); ++i) {
      const SyncOp& op = c.ops[i];
      switch (op.step) {
        case SyncStep::arrive: {
          const int id = arrivals++;
          threads.push_back(rt.spawn("arrival-" + std::to_string(id), [&, id] {
            sem.acquire();
            acquired.push_back(id);
          }));
          if (queue.empty() && count > 0) {
            --count;
            model_acquired.push_back(id);
          } else {
            queue.push_back(id);
          }
          break;
        }
        case SyncStep::release: {
          sem.release(op.n);
          int n = op.n;
          while (n > 0 && !queue.empty()) {
            model_acquired.push_back(queue.front());
            queue.pop_front();
            --n;
          }
          count += n;
          break;
        }
        case SyncStep::try_acquire: {
          const bool got = sem.try_acquire();
          const bool expected = queue.empty() && count > 0;
          if (got != expected) {
            broken = "step " + std::to_string(i) + ": try_acquire returned " +
                     (got ? "true" : "false") + " with " + std::to_string(count) +
                     " permits free and " + std::to_string(queue.size()) + " waiting";
          }
          if (got) --count;
          break;
        }
        default:
          break;
      }
      bubble::wait();
      if (broken.empty()) {
        broken = compare_ids(acquired, model_acquired, "the arrivals holding a permit are", i, op);
      }
      if (broken.empty() && (sem.available() != count || sem.waiters() != queue.size())) {
        broken = "after step " + std::to_string(i) +
                 ", available() = " + std::to_string(sem.available()) +
                 " and waiters() = " + std::to_string(sem.waiters()) + ", expected " +
                 std::to_string(count) + " and " + std::to_string(queue.size());
      }
    }
    // At most one permit per arrival: a semaphore that never wakes its waiters then deadlocks,
    // which the bubble reports after unwinding the waiters, before `sem` goes away.
    for (int k = 0; k < arrivals && sem.waiters() > 0; ++k) {
      sem.release();
      bubble::wait();
    }
    for (auto& t : threads) t->join();
    if (!broken.empty()) BUBBLE_FAIL(broken);
  });
}

void cond_var_wakes_exactly_whom_it_should() {
  const SyncCase c = testing::draw(sync_case(cond_var_op(), 0));
  testing::run_property(sync_options(c), [&](Runtime& rt) {
    Mutex mu("mu", rt);
    CondVar cv("cv", rt);
    std::vector<int> woken;  // the arrivals whose wait returned
    std::vector<std::unique_ptr<ThreadHandle>> threads;
    std::deque<int> queue;  // the model: waiting arrivals, longest-waiting first
    std::vector<int> model_woken;
    int arrivals = 0;
    std::string broken;  // reported once every waiter has been released and joined
    for (std::size_t i = 0; i < c.ops.size() && broken.empty(); ++i) {
      const SyncOp& op = c.ops[i];
      switch (op.step) {
        case SyncStep::arrive: {
          const int id = arrivals++;
          threads.push_back(rt.spawn("waiter-" + std::to_string(id), [&, id] {
            std::unique_lock<Mutex> lk(mu);
            cv.wait(lk);
            woken.push_back(id);
          }));
          queue.push_back(id);
          break;
        }
        case SyncStep::notify_one:
        case SyncStep::notify_all: {
          std::unique_lock<Mutex> lk(mu, std::defer_lock);
          if (op.with_lock) lk.lock();
          if (op.step == SyncStep::notify_one) {
            cv.notify_one();
            if (!queue.empty()) {
              model_woken.push_back(queue.front());
              queue.pop_front();
            }
          } else {
            cv.notify_all();
            model_woken.insert(model_woken.end(), queue.begin(), queue.end());
            queue.clear();
          }
          break;
        }
        default:
          break;
      }
      bubble::wait();
      broken = compare_ids(woken, model_woken, "the woken waiters are", i, op);
      if (broken.empty() && cv.waiters() != queue.size()) {
        broken = "after step " + std::to_string(i) +
                 ", waiters() = " + std::to_string(cv.waiters()) + ", expected " +
                 std::to_string(queue.size());
      }
    }
    cv.notify_all();
    bubble::wait();
    for (auto& t : threads) t->join();
    if (!broken.empty()) BUBBLE_FAIL(broken);
  });
}

}  // namespace bubble::scenarios
