#include <bubble/errc.hpp>

namespace bubble {
namespace {

class BubbleCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "bubble"; }

  std::string message(int value) const override {
    switch (static_cast<errc>(value)) {
      case errc::canceled:
        return "operation canceled";
      case errc::deadline_exceeded:
        return "context deadline exceeded";
      case errc::closed:
        return "closed";
      case errc::full:
        return "queue full";
      case errc::empty:
        return "nothing to receive";
      case errc::rate_limited:
        return "rate limited";
      case errc::limiter_stopped:
        return "limiter stopped";
      case errc::tenant_limit:
        return "tenant over its limit";
      case errc::too_late:
        return "deadline too near to start the job";
      case errc::job_failed:
        return "job threw an exception";
      case errc::exceeds_burst:
        return "request exceeds the limiter's burst";
      case errc::would_exceed_deadline:
        return "waiting would exceed the context's deadline";
      case errc::timed_out:
        return "timed out";
    }
    return "unknown bubble error " + std::to_string(value);
  }
};

}  // namespace

const std::error_category& bubble_category() noexcept {
  static const BubbleCategory category;
  return category;
}

std::error_code make_error_code(errc e) noexcept {
  return {static_cast<int>(e), bubble_category()};
}

const char* to_string(errc e) noexcept {
  switch (e) {
    case errc::canceled:
      return "canceled";
    case errc::deadline_exceeded:
      return "deadline_exceeded";
    case errc::closed:
      return "closed";
    case errc::full:
      return "full";
    case errc::empty:
      return "empty";
    case errc::rate_limited:
      return "rate_limited";
    case errc::limiter_stopped:
      return "limiter_stopped";
    case errc::tenant_limit:
      return "tenant_limit";
    case errc::too_late:
      return "too_late";
    case errc::job_failed:
      return "job_failed";
    case errc::exceeds_burst:
      return "exceeds_burst";
    case errc::would_exceed_deadline:
      return "would_exceed_deadline";
    case errc::timed_out:
      return "timed_out";
  }
  return "unknown";
}

}  // namespace bubble
