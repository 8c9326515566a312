#pragma once

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <iterator>

namespace bubble::detail {

template <class T>
class ListHook;

// IntrusiveList is a doubly linked list of T objects that it neither owns nor allocates: each
// element carries the links in a ListHook<T> member, named by `Hook`, so that pushing, popping and
// removing a given element are O(1) and never allocate. An object that must be on two lists at
// once has two hooks, one per list (IntrusiveList<Thread, &Thread::live_hook> and
// IntrusiveList<Thread, &Thread::dead_hook>).
//
// Contracts:
// - An element is on at most one list per hook. Pushing an element whose hook is already linked
//   (on this list or another), or removing one that is not on this list, is a programmer error:
//   the list prints what happened and aborts the process, before changing anything. The check
//   costs one comparison per call, so it stays on in every build.
// - The list does not manage lifetimes: an element must stay alive while it is linked, and must
//   be removed before it is destroyed (a linked hook's destructor does not unlink it). The list
//   must be empty when it is destroyed.
// - Not thread-safe: the list's owner guards it (and its elements' hooks) with its own lock.
// - Neither copyable nor movable: every linked hook knows its list's address.
//
// Iteration (begin/end, or front and next) visits the elements from front to back; back and prev
// visit them from back to front. Removing the element an iterator points at invalidates that
// iterator only; take the next one first.
template <class T, ListHook<T> T::*Hook>
class IntrusiveList {
 public:
  IntrusiveList() noexcept = default;
  IntrusiveList(const IntrusiveList&) = delete;
  IntrusiveList& operator=(const IntrusiveList&) = delete;

  bool empty() const noexcept { return head_ == nullptr; }
  // The number of linked elements (kept as a count: O(1)).
  std::size_t size() const noexcept { return size_; }
  // The first element, or nullptr when the list is empty.
  T* front() const noexcept { return head_; }
  // The last element, or nullptr when the list is empty.
  T* back() const noexcept { return tail_; }
  // The element after `e` (which must be on this list), or nullptr if `e` is the last.
  static T* next(const T& e) noexcept { return (e.*Hook).next_; }
  // The element before `e` (which must be on this list), or nullptr if `e` is the first.
  static T* prev(const T& e) noexcept { return (e.*Hook).prev_; }
  // True if `e` is on this list.
  bool contains(const T& e) const noexcept { return (e.*Hook).list_ == this; }

  // Appends `e`, which must not be linked through this hook.
  void push_back(T& e) noexcept {
    ListHook<T>& h = e.*Hook;
    if (h.list_ != nullptr) [[unlikely]]
      fail("push_back of an element that is already linked");
    h.list_ = this;
    h.prev_ = tail_;
    h.next_ = nullptr;
    if (tail_ != nullptr) {
      (tail_->*Hook).next_ = &e;
    } else {
      head_ = &e;
    }
    tail_ = &e;
    ++size_;
  }

  // Puts `e`, which must not be linked through this hook, first.
  void push_front(T& e) noexcept {
    ListHook<T>& h = e.*Hook;
    if (h.list_ != nullptr) [[unlikely]]
      fail("push_front of an element that is already linked");
    h.list_ = this;
    h.prev_ = nullptr;
    h.next_ = head_;
    if (head_ != nullptr) {
      (head_->*Hook).prev_ = &e;
    } else {
      tail_ = &e;
    }
    head_ = &e;
    ++size_;
  }

  // Removes and returns the first element, or returns nullptr when the list is empty.
  T* pop_front() noexcept {
    T* const e = head_;
    if (e != nullptr) unlink(*e);
    return e;
  }

  // Removes `e`, which must be on this list.
  void remove(T& e) noexcept {
    if ((e.*Hook).list_ != this) [[unlikely]]
      fail("remove of an element that is not on this list");
    unlink(e);
  }

  // A forward iterator over the elements, front to back.
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = T*;
    using reference = T&;

    iterator() noexcept = default;
    explicit iterator(T* e) noexcept : e_(e) {}
    T& operator*() const noexcept { return *e_; }
    T* operator->() const noexcept { return e_; }
    iterator& operator++() noexcept {
      e_ = IntrusiveList::next(*e_);
      return *this;
    }
    iterator operator++(int) noexcept {
      iterator before = *this;
      ++*this;
      return before;
    }
    friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.e_ == b.e_; }

   private:
    T* e_ = nullptr;
  };

  iterator begin() const noexcept { return iterator(head_); }
  iterator end() const noexcept { return iterator(); }

 private:
  void unlink(T& e) noexcept {
    ListHook<T>& h = e.*Hook;
    if (h.prev_ != nullptr) {
      (h.prev_->*Hook).next_ = h.next_;
    } else {
      head_ = h.next_;
    }
    if (h.next_ != nullptr) {
      (h.next_->*Hook).prev_ = h.prev_;
    } else {
      tail_ = h.prev_;
    }
    h.prev_ = h.next_ = nullptr;
    h.list_ = nullptr;
    --size_;
  }

  [[noreturn]] static void fail(const char* what) noexcept {
    std::fprintf(stderr, "bubble: IntrusiveList: %s. Aborting.\n", what);
    std::abort();
  }

  T* head_ = nullptr;
  T* tail_ = nullptr;
  std::size_t size_ = 0;
};

// The links an IntrusiveList keeps in each of its elements: one ListHook member per list the
// element can be on. Only the list touches them; a hook's owner can ask whether it is linked.
// Copying an element does not copy its links (a copy is not on any list): a hook is not
// copyable.
template <class T>
class ListHook {
 public:
  ListHook() noexcept = default;
  ListHook(const ListHook&) = delete;
  ListHook& operator=(const ListHook&) = delete;

  // True while the element is on a list through this hook.
  bool linked() const noexcept { return list_ != nullptr; }

 private:
  template <class U, ListHook<U> U::*>
  friend class IntrusiveList;
  T* prev_ = nullptr;
  T* next_ = nullptr;
  const void* list_ = nullptr;  // The list the element is on, or nullptr.
};

}  // namespace bubble::detail
