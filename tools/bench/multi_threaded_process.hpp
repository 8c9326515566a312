#pragma once

// Included by every benchmark whose baseline locks a std::mutex (or a pthread mutex).
//
// glibc (2.34 and later) leaves out the atomic instructions of an uncontended pthread_mutex_lock
// and pthread_mutex_unlock for as long as the process has never started a second thread
// (__libc_single_threaded). A program that needs a mutex has threads, so a baseline measured in
// a process that never had one is a mutex no such program runs (mutex_bench's
// BM_StdMutex_Uncontended, run with and without this header, shows the difference). Including
// this header starts and joins one thread before main(), so that every baseline locks as a
// multi-threaded program does.

#include <thread>

namespace bubble_bench {

inline const bool kProcessHasHadASecondThread = [] {
  std::thread([] {}).join();
  return true;
}();

}  // namespace bubble_bench
