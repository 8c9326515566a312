#pragma once

#include <bubble/detail/intrusive_list.hpp>
#include <bubble/runtime.hpp>

namespace bubble::detail {

// WaitQueue is a primitive's first-in-first-out queue of blocked Waiters, linked through
// Waiter::queue_hook: an IntrusiveList, so it owns nothing and allocates nothing. The primitive
// that holds it guards it with its own lock. A waiter is in at most one queue at a time;
// Waiter::queued() says whether it is.
using WaitQueue = IntrusiveList<Waiter, &Waiter::queue_hook>;

}  // namespace bubble::detail
