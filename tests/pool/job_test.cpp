// bubble::Job, the pool's move-only type-erased callable. No runtime involved.

#include <memory>
#include <stdexcept>
#include <utility>

#include <gtest/gtest.h>

#include <bubble/context.hpp>
#include <bubble/pool/job.hpp>

namespace {

using bubble::Context;
using bubble::Job;

TEST(Job, EmptyJobsAreFalseAndThrowWhenCalled) {
  Job a;
  Job b = nullptr;
  void (*fp)() = nullptr;
  Job c = fp;
  EXPECT_FALSE(a);
  EXPECT_FALSE(b);
  EXPECT_FALSE(c);
  EXPECT_THROW(a(Context::background()), std::logic_error);
}

TEST(Job, AcceptsBothSignaturesAndReceivesTheContext) {
  int calls = 0;
  Job without([&] { ++calls; });
  const Context ctx = Context::with_cancel(Context::background()).first;
  Job with([&](const Context& c) { calls += c == ctx ? 10 : 100; });
  without(ctx);
  with(ctx);
  EXPECT_EQ(calls, 11);
}

TEST(Job, MoveOnlyCallablesSmallAndLargeMoveAndDestroyOnce) {
  auto small = std::make_shared<int>(0);
  std::weak_ptr<int> small_watch = small;
  Job a([p = std::make_unique<std::shared_ptr<int>>(std::move(small))] { ++**p; });
  struct Big {
    std::shared_ptr<int> p;
    char pad[200] = {};
    void operator()() { ++*p; }
  };
  auto big = std::make_shared<int>(0);
  std::weak_ptr<int> big_watch = big;
  Job b(Big{std::move(big)});
  Job a2 = std::move(a);
  Job b2;
  b2 = std::move(b);
  EXPECT_FALSE(a);  // NOLINT: moved-from jobs are empty by contract.
  EXPECT_FALSE(b);  // NOLINT
  a2(Context::background());
  b2(Context::background());
  EXPECT_EQ(*small_watch.lock(), 1);
  EXPECT_EQ(*big_watch.lock(), 1);
  a2 = nullptr;
  b2.reset();
  EXPECT_TRUE(small_watch.expired());
  EXPECT_TRUE(big_watch.expired());
}

TEST(Job, ExceptionsPropagateFromTheCallable) {
  Job j([] { throw std::runtime_error("x"); });
  EXPECT_THROW(j(Context::background()), std::runtime_error);
}

}  // namespace
