#include <bubble/thread.hpp>

#include <stdexcept>

namespace bubble {

void Thread::join(SourceLocation where) {
  if (!joinable()) {
    throw std::logic_error("bubble::Thread::join: thread '" + name_ + "' is not joinable");
  }
  handle_->join(where);  // Throws, leaving the object joinable, if called from the thread itself.
  handle_.reset();
}

}  // namespace bubble
