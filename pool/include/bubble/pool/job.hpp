#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <bubble/context.hpp>

namespace bubble {

// Job is the unit of work a Pool runs: a move-only, type-erased callable taking the context the
// job runs with (`void(const Context&)`). C++20 has no std::move_only_function, so this is a small
// one: callables up to kInlineSize bytes that are nothrow-move-constructible are stored inline (no
// allocation); larger ones are stored on the heap.
//
// Any callable invocable as `f(const Context&)` or, for convenience, as `f()` converts to a Job.
// A default-constructed Job, a Job made from nullptr or from a null function pointer, and a Job
// that has been moved from are empty: `static_cast<bool>(job)` is false.
//
// A job should watch its context: if the context is already done when the job starts (its
// submitter gave up, or the pool was cancelled at its shutdown deadline), it should return at once.
//
// Thread safety: like any value type; a Job is used by one thread at a time.
//
// (clang-tidy's member-init check wants every member of the storage union initialized; the union
// is, through heap_.)
// NOLINTBEGIN(cppcoreguidelines-pro-type-member-init)
class Job {
 public:
  // Bytes of inline storage; callables that fit (and are nothrow-move-constructible) never
  // allocate.
  static constexpr std::size_t kInlineSize = 4 * sizeof(void*);

  Job() noexcept = default;
  Job(std::nullptr_t) noexcept {}  // NOLINT: implicit, like std::function

  template <class F, class D = std::decay_t<F>>
  requires(!std::is_same_v<D, Job> &&
           (std::is_invocable_v<D&, const Context&> || std::is_invocable_v<D&>))
      Job(F&& f) {  // NOLINT: implicit, like std::function
    if constexpr (std::is_pointer_v<D> || std::is_member_pointer_v<D>) {
      if (f == nullptr) return;
    }
    if constexpr (fits_inline<D>()) {
      ::new (static_cast<void*>(storage_)) D(std::forward<F>(f));
      ops_ = inline_ops<D>();
    } else {
      heap_ = new D(std::forward<F>(f));
      ops_ = heap_ops<D>();
    }
  }

  Job(Job&& other) noexcept { take(other); }
  Job& operator=(Job&& other) noexcept {
    if (this != &other) {
      reset();
      take(other);
    }
    return *this;
  }
  Job& operator=(std::nullptr_t) noexcept {
    reset();
    return *this;
  }
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;
  ~Job() { reset(); }

  // True when the job holds a callable.
  explicit operator bool() const noexcept { return ops_ != nullptr; }

  // Runs the callable with `ctx`. Throws std::logic_error if the job is empty; exceptions thrown
  // by the callable propagate.
  void operator()(const Context& ctx) {
    if (ops_ == nullptr) throw std::logic_error("bubble::Job: called an empty job");
    ops_->invoke(this, ctx);
  }

  // Destroys the callable; the job becomes empty.
  void reset() noexcept {
    if (ops_ != nullptr) {
      ops_->destroy(this);
      ops_ = nullptr;
    }
  }

 private:
  struct Ops {
    void (*invoke)(Job*, const Context&);
    // Moves the callable of `from` into the empty `to` and leaves `from` without a callable.
    void (*relocate)(Job* from, Job* to) noexcept;
    void (*destroy)(Job*) noexcept;
  };

  union {
    alignas(std::max_align_t) unsigned char storage_[kInlineSize];
    void* heap_ = nullptr;
  };
  const Ops* ops_ = nullptr;

  template <class D>
  static constexpr bool fits_inline() {
    // NOLINTNEXTLINE(misc-redundant-expression): constant for a given D, as it should be.
    return sizeof(D) <= kInlineSize && alignof(D) <= alignof(std::max_align_t) &&
           std::is_nothrow_move_constructible_v<D>;
  }

  template <class D>
  static void call(D& f, const Context& ctx) {
    if constexpr (std::is_invocable_v<D&, const Context&>) {
      std::invoke(f, ctx);
    } else {
      std::invoke(f);
    }
  }

  template <class D>
  static D* inline_ptr(Job* j) noexcept {
    return std::launder(reinterpret_cast<D*>(j->storage_));
  }

  // The operations of a callable of type D stored inline or on the heap. Function bodies (unlike
  // static data member initialisers) see the complete class.
  template <class D>
  static const Ops* inline_ops() noexcept {
    static constexpr Ops kOps = {
        [](Job* j, const Context& ctx) { call(*inline_ptr<D>(j), ctx); },
        [](Job* from, Job* to) noexcept {
          D* src = inline_ptr<D>(from);
          ::new (static_cast<void*>(to->storage_)) D(std::move(*src));
          src->~D();
        },
        [](Job* j) noexcept { inline_ptr<D>(j)->~D(); },
    };
    return &kOps;
  }

  template <class D>
  static const Ops* heap_ops() noexcept {
    static constexpr Ops kOps = {
        [](Job* j, const Context& ctx) { call(*static_cast<D*>(j->heap_), ctx); },
        [](Job* from, Job* to) noexcept {
          to->heap_ = from->heap_;
          from->heap_ = nullptr;
        },
        [](Job* j) noexcept { delete static_cast<D*>(j->heap_); },
    };
    return &kOps;
  }

  void take(Job& other) noexcept {
    if (other.ops_ != nullptr) {
      other.ops_->relocate(&other, this);
      ops_ = other.ops_;
      other.ops_ = nullptr;
    }
  }
};
// NOLINTEND(cppcoreguidelines-pro-type-member-init)

}  // namespace bubble
