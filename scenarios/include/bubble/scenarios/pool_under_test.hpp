#pragma once

#include <functional>
#include <memory>
#include <string>
#include <system_error>

#include <bubble/context.hpp>
#include <bubble/pool/job.hpp>
#include <bubble/pool/job_options.hpp>
#include <bubble/pool/metrics.hpp>
#include <bubble/pool/options.hpp>
#include <bubble/runtime.hpp>
#include <bubble/time.hpp>

// The pool a property runs against: bubble::Pool, or a known-bad variant (an exhibit) that must
// make the same property fail. The properties only see this interface, so every implementation
// runs exactly the same checks.
namespace bubble::scenarios {

// How a generated job is handed to the pool.
enum class SubmitKind { submit, try_submit, submit_within };
const char* to_string(SubmitKind kind) noexcept;

// The Pool interface of a pool implementation, with the meaning bubble::Pool documents
// (<bubble/pool/pool.hpp>). Destroying it without shutdown is the Pool destructor.
class PoolUnderTest {
 public:
  virtual ~PoolUnderTest() = default;
  // submit (kind submit), try_submit, or submit_within(ctx, job, max_wait, opts).
  virtual std::error_code submit(SubmitKind kind, const Context& ctx, Job job, Duration max_wait,
                                 JobOptions opts) = 0;
  virtual std::error_code shutdown(const Context& ctx) = 0;
  virtual PoolStats stats() const = 0;
};

// Builds a pool with the given options on `rt` (inside a bubble); the runtime comes last, as in
// Pool's constructor.
using PoolFactory =
    std::function<std::unique_ptr<PoolUnderTest>(const PoolOptions& options, Runtime& rt)>;

// A named implementation for properties and their reports.
struct PoolImplementation {
  std::string name;
  PoolFactory make;
  // Which options it honours; a property's generator leaves the others at their defaults.
  bool tenants = true;             // max_queued_per_tenant, max_running_per_tenant
  bool priorities = true;          // priority, aging_step
  bool expected_durations = true;  // JobOptions::expected_duration (too_late)
  bool room_to_resume = true;      // PoolOptions::room_to_resume (submitters resumed in batches)
};

// bubble::Pool itself.
PoolImplementation real_pool();

}  // namespace bubble::scenarios
