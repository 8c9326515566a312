// A deadlock with a Pool whose jobs are stuck: the root blocked in Pool::shutdown or in ~Pool
// (reached by a normal return), workers blocked in their jobs. The run must fail with one
// DeadlockError naming every thread, every thread must end before the objects it waits on are
// destroyed, and nothing may abort or touch freed memory (ASan).
//
// Each scenario runs twice: "...AsFirstBubble" alone (CTest runs each test in a process of its
// own: the first bubble of its process) and "...AfterOtherBubbles" after other runs.

#include <bubble/bubble.hpp>
#include <bubble/context.hpp>
#include <bubble/notification.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/thread.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace {

using namespace std::chrono_literals;
using bubble::Context;
using bubble::Pool;
using bubble::Runtime;

struct Probe {
  int jobs_ended = 0;  // Stuck jobs whose stack ended.
  int late = 0;        // Jobs whose wait ended after the Notification they waited on was gone.
};

// A job that waits for a notification that never comes (it ignores its context, as a buggy job
// would). `alive` is false once the notification (and its neighbours on the root's stack) died.
struct StuckJob {
  bubble::Notification* never;
  std::shared_ptr<bool> alive;
  Probe* probe;
  void operator()(const Context&) const {
    struct End {
      const StuckJob& job;
      ~End() {
        ++job.probe->jobs_ended;
        if (!*job.alive) ++job.probe->late;
      }
    } end{*this};
    never->wait();
  }
};

struct Lifetime {
  std::shared_ptr<bool> alive = std::make_shared<bool>(true);
  ~Lifetime() { *alive = false; }
};

std::size_t count(const std::string& s, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t pos = s.find(part); pos != std::string::npos; pos = s.find(part, pos + 1)) ++n;
  return n;
}

constexpr int kWorkers = 2;

void expect_clean_deadlock(const std::function<void(Runtime&, Probe&)>& scenario) {
  Probe probe;
  int deadlocks = 0;
  bool root_ended = false;
  std::string message;
  try {
    bubble::run([&](Runtime& rt) {
      struct End {
        bool& ended;
        ~End() { ended = true; }
      } end{root_ended};
      scenario(rt, probe);
    });
  } catch (const bubble::DeadlockError& err) {
    ++deadlocks;
    message = err.what();
  }
  ASSERT_EQ(deadlocks, 1);
  EXPECT_EQ(count(message, "\n  thread #"), static_cast<std::size_t>(1 + kWorkers)) << message;
  EXPECT_NE(message.find("thread #1 \"root\": blocked on CondVar::wait"), std::string::npos)
      << message;
  EXPECT_EQ(count(message, "/worker-"), static_cast<std::size_t>(kWorkers)) << message;
  EXPECT_EQ(message.find("abandoned"), std::string::npos) << message;
  EXPECT_TRUE(root_ended);
  EXPECT_EQ(probe.jobs_ended, kWorkers);
  EXPECT_EQ(probe.late, 0) << "a job's wait ended after its notification was destroyed";
}

void run_other_bubbles() {
  for (int i = 0; i < 3; ++i) {
    bubble::run([](Runtime& rt) {
      Pool pool({.workers = kWorkers}, rt);
      ASSERT_FALSE(pool.submit(Context::background(), [&] { rt.sleep_for(1s); }));
    });
  }
  EXPECT_THROW(bubble::run([](Runtime& rt) {
                 bubble::Notification never(rt);
                 bubble::Thread t(
                     "t", [&] { never.wait(); }, rt);
                 never.wait();
               }),
               bubble::DeadlockError);
}

// Fills every worker with a job that never ends.
void submit_stuck_jobs(Pool& pool, bubble::Notification& never, const Lifetime& life, Probe& p) {
  for (int i = 0; i < kWorkers; ++i) {
    ASSERT_FALSE(pool.submit(Context::background(), StuckJob{&never, life.alive, &p}));
  }
}

// The root calls shutdown() and waits for workers that never finish.
void root_in_shutdown(Runtime& rt, Probe& p) {
  bubble::Notification never(rt);
  Lifetime life;
  Pool pool({.workers = kWorkers}, rt);
  submit_stuck_jobs(pool, never, life, p);
  (void)pool.shutdown();
}

// The root leaves the scope of a Pool: ~Pool cancels the pool and waits for the stuck workers.
void root_in_pool_destructor(Runtime& rt, Probe& p) {
  bubble::Notification never(rt);
  Lifetime life;
  Pool pool({.workers = kWorkers}, rt);
  submit_stuck_jobs(pool, never, life, p);
}

// A component owning a pool, whose shutdown() is called from its destructor.
void root_in_component_destructor(Runtime& rt, Probe& p) {
  struct Component {
    bubble::Notification never;
    Lifetime life;
    Pool pool;
    explicit Component(Runtime& rt) : never(rt), pool({.workers = kWorkers}, rt) {}
    ~Component() { (void)pool.shutdown(); }
  };
  Component c(rt);
  submit_stuck_jobs(c.pool, c.never, c.life, p);
}

TEST(PoolTeardown, RootInShutdownAsFirstBubble) {
  expect_clean_deadlock(root_in_shutdown);
}
TEST(PoolTeardown, RootInShutdownAfterOtherBubbles) {
  run_other_bubbles();
  expect_clean_deadlock(root_in_shutdown);
}
TEST(PoolTeardown, RootInPoolDestructorAsFirstBubble) {
  expect_clean_deadlock(root_in_pool_destructor);
}
TEST(PoolTeardown, RootInPoolDestructorAfterOtherBubbles) {
  run_other_bubbles();
  expect_clean_deadlock(root_in_pool_destructor);
}
TEST(PoolTeardown, RootInComponentDestructorAsFirstBubble) {
  expect_clean_deadlock(root_in_component_destructor);
}
TEST(PoolTeardown, RootInComponentDestructorAfterOtherBubbles) {
  run_other_bubbles();
  expect_clean_deadlock(root_in_component_destructor);
}

}  // namespace
