#pragma once

// The planted bugs of the Catch2 and doctest glue tests, written once for both: each fails its
// check only under some interleavings (never under fifo), so exploration has to find it.

#include <bubble/mutex.hpp>
#include <bubble/runtime.hpp>
#include <bubble/thread.hpp>

#include <mutex>
#include <thread>

namespace glue_test {

// Two clients each book the last seat with bubble's own threads and Mutex: each checks under the
// lock that a seat is left, releases the lock, and books it under the lock again. A schedule that
// runs the second check between the first check and its booking sells the seat twice. Returns the
// number of seats sold (1 is right).
inline int book_the_last_seat_twice() {
  bubble::Runtime& rt = bubble::current_runtime();
  bubble::Mutex m(rt);
  int seats = 1;
  int sold = 0;
  auto book = [&] {
    bool available = false;
    {
      const std::lock_guard<bubble::Mutex> lock(m);
      available = seats > 0;
    }
    if (available) {
      const std::lock_guard<bubble::Mutex> lock(m);
      --seats;
      ++sold;
    }
  };
  {
    bubble::Thread a("client-a", book, rt);
    bubble::Thread b("client-b", book, rt);
  }
  return sold;
}

// The same check-then-act on unmodified standard C++: std::thread and a std::mutex (a bubble's
// when the run intercepts the standard library).
inline int book_the_last_seat_twice_std() {
  std::mutex m;
  int seats = 1;
  int sold = 0;
  auto book = [&] {
    bool available = false;
    {
      const std::lock_guard<std::mutex> lock(m);
      available = seats > 0;
    }
    if (available) {
      const std::lock_guard<std::mutex> lock(m);
      --seats;
      ++sold;
    }
  };
  std::thread a(book);
  std::thread b(book);
  a.join();
  b.join();
  return sold;
}

}  // namespace glue_test
