#include <bubble/cond_var.hpp>
#include <bubble/context.hpp>
#include <bubble/mutex.hpp>
#include <bubble/scenarios/pool_properties.hpp>
#include <bubble/scenarios/timing_exhibits.hpp>
#include <bubble/thread.hpp>

#include <mutex>
#include <string>
#include <vector>

namespace bubble::scenarios {

void showValue(const RaceCase& c, std::ostream& os) {
  os << "RaceCase{threads=" << c.threads << ", capacity=" << c.capacity
     << ", producer_delay=" << show_duration(c.producer_delay) << ", strategy=";
  showValue(c.strategy, os);
  os << "}";
}

rc::Gen<RaceCase> race_case() {
  return rc::gen::exec([] {
    RaceCase c;
    c.threads = *rc::gen::inRange(1, 5);
    c.capacity = *rc::gen::inRange(1, 4);
    c.producer_delay = *rc::gen::oneOf(milliseconds_in(0, 0), milliseconds_in(0, 2));
    c.strategy = *case_strategy();
    return c;
  });
}

namespace {
constexpr Duration kPatience = std::chrono::seconds(1);
}  // namespace

std::function<void(Runtime&)> lost_wakeup_body(bool predicate_loop, const RaceCase& c) {
  return [predicate_loop, c](Runtime& rt) {
    Mutex mu(rt);
    CondVar cv(rt);
    bool ready = false;
    int woke = 0;
    {
      std::vector<Thread> threads;
      threads.reserve(c.threads);
      for (int i = 0; i < c.threads; ++i) {
        threads.emplace_back(
            "consumer-" + std::to_string(i),
            [&] {
              // A consumer gives up after kPatience: far longer than the producer ever takes, so a
              // consumer still waiting then has missed its wake-up.
              auto [patience, cancel] = Context::with_timeout(Context::background(), kPatience, rt);
              std::unique_lock<Mutex> lk(mu);
              bool missed = false;
              if (predicate_loop) {
                while (!ready && !missed) missed = static_cast<bool>(cv.wait(lk, patience));
              } else {
                missed = static_cast<bool>(cv.wait(lk, patience));  // the flaw: waits for the
                                                                    // broadcast, not for the flag
              }
              cancel();
              if (!missed && ready) ++woke;
            },
            rt);
      }
      threads.emplace_back(
          "producer",
          [&] {
            rt.sleep_for(c.producer_delay);
            std::lock_guard<Mutex> lk(mu);
            ready = true;
            cv.notify_all();
          },
          rt);
    }
    if (woke != c.threads) {
      throw PropertyViolation("lost wake-up: " + std::to_string(c.threads - woke) + " of " +
                              std::to_string(c.threads) + " consumers still waited after " +
                              show_duration(kPatience));
    }
  };
}

std::function<void(Runtime&)> check_then_act_body(bool locked, const RaceCase& c) {
  return [locked, c](Runtime& rt) {
    Mutex mu(rt);
    int sold = 0;
    {
      std::vector<Thread> threads;
      threads.reserve(c.threads);
      for (int i = 0; i < c.threads; ++i) {
        threads.emplace_back(
            "buyer-" + std::to_string(i),
            [&] {
              std::unique_lock<Mutex> lk(mu, std::defer_lock);
              if (locked) lk.lock();
              if (sold < c.capacity) {
                rt.schedule_point({"between check and act", 0, SourceLocation::current()});
                ++sold;  // the flaw, when unlocked: another buyer may have sold it meanwhile
              }
            },
            rt);
      }
    }
    if (sold > c.capacity) {
      throw PropertyViolation(std::to_string(sold) + " tickets sold of " +
                              std::to_string(c.capacity));
    }
  };
}

}  // namespace bubble::scenarios
