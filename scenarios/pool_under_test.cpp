#include <bubble/pool/pool.hpp>
#include <bubble/scenarios/pool_under_test.hpp>

namespace bubble::scenarios {

const char* to_string(SubmitKind kind) noexcept {
  switch (kind) {
    case SubmitKind::submit:
      return "submit";
    case SubmitKind::try_submit:
      return "try_submit";
    case SubmitKind::submit_within:
      return "submit_within";
  }
  return "unknown";
}

namespace {

class RealPool final : public PoolUnderTest {
 public:
  RealPool(const PoolOptions& options, Runtime& rt) : pool_(options, rt) {}
  std::error_code submit(SubmitKind kind, const Context& ctx, Job job, Duration max_wait,
                         JobOptions opts) override {
    switch (kind) {
      case SubmitKind::submit:
        return pool_.submit(ctx, std::move(job), std::move(opts));
      case SubmitKind::try_submit:
        return pool_.try_submit(ctx, std::move(job), std::move(opts));
      case SubmitKind::submit_within:
        return pool_.submit_within(ctx, std::move(job), max_wait, std::move(opts));
    }
    return {};
  }
  std::error_code shutdown(const Context& ctx) override { return pool_.shutdown(ctx); }
  PoolStats stats() const override { return pool_.stats(); }

 private:
  Pool pool_;
};

}  // namespace

PoolImplementation real_pool() {
  return {"bubble::Pool",
          [](const PoolOptions& options, Runtime& rt) -> std::unique_ptr<PoolUnderTest> {
            return std::make_unique<RealPool>(options, rt);
          }};
}

}  // namespace bubble::scenarios
