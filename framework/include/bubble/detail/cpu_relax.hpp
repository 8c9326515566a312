#pragma once

// Not part of the API: the processor's spin-wait hint, for the spin loops of the framework and the
// pool.

namespace bubble::detail {

// Tells the processor that the caller is spinning (x86 `pause`, Arm `yield`: saves power and lets
// the other hardware thread of the core run); nothing on other architectures.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace bubble::detail
