// The names of JobStatus values (see <bubble/pool/job_outcome.hpp>).

#include <bubble/pool/job_outcome.hpp>

namespace bubble {

const char* to_string(JobStatus status) noexcept {
  switch (status) {
    case JobStatus::done:
      return "done";
    case JobStatus::canceled:
      return "canceled";
    case JobStatus::too_late:
      return "too_late";
    case JobStatus::failed:
      return "failed";
  }
  return "unknown";
}

}  // namespace bubble
