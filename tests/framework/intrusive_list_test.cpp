// detail::IntrusiveList: order, O(1) removal anywhere, an element on two lists through two
// hooks, and the check that refuses to link an element twice.

#include <bubble/detail/intrusive_list.hpp>

#include <vector>

#include <gtest/gtest.h>

namespace {

using bubble::detail::IntrusiveList;
using bubble::detail::ListHook;

// A record on two lists at once, like a thread that is both live and waiting.
struct Item {
  explicit Item(int v) : value(v) {}
  int value;
  ListHook<Item> first_hook;
  ListHook<Item> second_hook;
};

using FirstList = IntrusiveList<Item, &Item::first_hook>;
using SecondList = IntrusiveList<Item, &Item::second_hook>;

template <class List>
std::vector<int> values(const List& list) {
  std::vector<int> out;
  for (const Item& item : list) out.push_back(item.value);
  return out;
}

// Walks the list through next(), the way a loop that removes elements does.
template <class List>
std::vector<int> values_by_next(const List& list) {
  std::vector<int> out;
  for (const Item* e = list.front(); e != nullptr; e = List::next(*e)) out.push_back(e->value);
  return out;
}

TEST(IntrusiveList, StartsEmpty) {
  FirstList list;
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.size(), 0u);
  EXPECT_EQ(list.front(), nullptr);
  EXPECT_EQ(list.pop_front(), nullptr);
  EXPECT_EQ(list.begin(), list.end());
}

TEST(IntrusiveList, PushBackAndPopFrontAreFirstInFirstOut) {
  Item a(1), b(2), c(3);
  FirstList list;
  list.push_back(a);
  list.push_back(b);
  list.push_back(c);
  EXPECT_EQ(list.size(), 3u);
  EXPECT_EQ(values(list), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(list.pop_front(), &a);
  EXPECT_FALSE(a.first_hook.linked());
  EXPECT_EQ(list.pop_front(), &b);
  EXPECT_EQ(list.pop_front(), &c);
  EXPECT_EQ(list.pop_front(), nullptr);
  EXPECT_TRUE(list.empty());
}

TEST(IntrusiveList, PushFrontPutsTheElementFirst) {
  Item a(1), b(2), c(3);
  FirstList list;
  list.push_front(a);  // Into an empty list: both first and last.
  list.push_back(b);
  list.push_front(c);
  EXPECT_EQ(values(list), (std::vector<int>{3, 1, 2}));
  EXPECT_EQ(list.front(), &c);
  list.remove(b);  // The last one: push_front set the links a needs as the new tail.
  list.push_back(b);
  EXPECT_EQ(values_by_next(list), (std::vector<int>{3, 1, 2}));
  list.remove(a);  // The old head: push_front linked it back to c.
  EXPECT_EQ(values(list), (std::vector<int>{3, 2}));
  EXPECT_EQ(list.size(), 2u);
}

TEST(IntrusiveList, RemovesFromTheFrontTheMiddleAndTheBack) {
  Item a(1), b(2), c(3), d(4);
  FirstList list;
  for (Item* e : {&a, &b, &c, &d}) list.push_back(*e);
  list.remove(b);
  EXPECT_EQ(values(list), (std::vector<int>{1, 3, 4}));
  list.remove(d);
  EXPECT_EQ(values(list), (std::vector<int>{1, 3}));
  list.push_back(d);  // After the tail moved back to c.
  EXPECT_EQ(values(list), (std::vector<int>{1, 3, 4}));
  list.remove(a);
  EXPECT_EQ(list.front(), &c);
  EXPECT_EQ(values(list), (std::vector<int>{3, 4}));
  EXPECT_EQ(list.size(), 2u);
  list.remove(c);
  list.remove(d);
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.front(), nullptr);
  // Empty again: a push makes the element both first and last.
  list.push_back(b);
  EXPECT_EQ(values(list), (std::vector<int>{2}));
  EXPECT_EQ(list.pop_front(), &b);
}

// Walks the list from the back through prev(), the way the teardown picks the youngest thread.
template <class List>
std::vector<int> values_backwards(const List& list) {
  std::vector<int> out;
  for (const Item* e = list.back(); e != nullptr; e = List::prev(*e)) out.push_back(e->value);
  return out;
}

TEST(IntrusiveList, BackAndPrevWalkFromTheLastElementToTheFirst) {
  Item a(1), b(2), c(3);
  FirstList list;
  EXPECT_EQ(list.back(), nullptr);
  for (Item* e : {&a, &b, &c}) list.push_back(*e);
  EXPECT_EQ(values_backwards(list), (std::vector<int>{3, 2, 1}));
  list.remove(c);  // The back moves to b.
  EXPECT_EQ(list.back(), &b);
  list.push_front(c);
  EXPECT_EQ(values_backwards(list), (std::vector<int>{2, 1, 3}));
  list.remove(a);  // prev links skip the removed element.
  EXPECT_EQ(values_backwards(list), (std::vector<int>{2, 3}));
  while (list.pop_front() != nullptr) {
  }
  EXPECT_EQ(list.back(), nullptr);
}

TEST(IntrusiveList, ContainsSaysWhichListHoldsTheElement) {
  Item a(1);
  FirstList one;
  FirstList other;
  EXPECT_FALSE(one.contains(a));
  one.push_back(a);
  EXPECT_TRUE(one.contains(a));
  EXPECT_FALSE(other.contains(a));
  EXPECT_TRUE(a.first_hook.linked());
  one.remove(a);
  EXPECT_FALSE(one.contains(a));
  other.push_back(a);  // Free again: it may join another list.
  EXPECT_TRUE(other.contains(a));
  other.remove(a);
}

TEST(IntrusiveList, TwoHooksPutOneElementOnTwoListsIndependently) {
  Item a(1), b(2), c(3);
  FirstList first;
  SecondList second;
  for (Item* e : {&a, &b, &c}) first.push_back(*e);
  for (Item* e : {&c, &a}) second.push_back(*e);
  EXPECT_EQ(values(first), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(values(second), (std::vector<int>{3, 1}));
  first.remove(a);
  EXPECT_EQ(values(first), (std::vector<int>{2, 3}));
  EXPECT_EQ(values(second), (std::vector<int>{3, 1}));
  EXPECT_TRUE(second.contains(a));
  EXPECT_FALSE(a.first_hook.linked());
  EXPECT_TRUE(a.second_hook.linked());
  second.remove(c);
  EXPECT_EQ(values(second), (std::vector<int>{1}));
  EXPECT_EQ(values(first), (std::vector<int>{2, 3}));
  second.remove(a);
  first.remove(b);
  first.remove(c);
}

TEST(IntrusiveList, RemovingTheVisitedElementAfterTakingTheNextOneIsSafe) {
  Item a(1), b(2), c(3), d(4);
  FirstList list;
  for (Item* e : {&a, &b, &c, &d}) list.push_back(*e);
  for (Item* e = list.front(); e != nullptr;) {
    Item* const next = FirstList::next(*e);
    if (e->value % 2 == 0) list.remove(*e);
    e = next;
  }
  EXPECT_EQ(values(list), (std::vector<int>{1, 3}));
  list.remove(a);
  list.remove(c);
}

using IntrusiveListDeathTest = ::testing::Test;

TEST_F(IntrusiveListDeathTest, PushingALinkedElementAborts) {
  EXPECT_DEATH(
      {
        Item a(1);
        FirstList list;
        list.push_back(a);
        list.push_back(a);
      },
      "IntrusiveList: push_back of an element that is already linked");
  EXPECT_DEATH(
      {
        Item a(1);
        FirstList one;
        FirstList other;
        one.push_back(a);
        other.push_front(a);
      },
      "IntrusiveList: push_front of an element that is already linked");
}

TEST_F(IntrusiveListDeathTest, RemovingAnElementOfAnotherListAborts) {
  EXPECT_DEATH(
      {
        Item a(1);
        FirstList one;
        FirstList other;
        one.push_back(a);
        other.remove(a);
      },
      "IntrusiveList: remove of an element that is not on this list");
  EXPECT_DEATH(
      {
        Item a(1);
        FirstList list;
        list.remove(a);
      },
      "IntrusiveList: remove of an element that is not on this list");
}

}  // namespace
