#pragma once

#include <stdexcept>
#include <string>
#include <typeinfo>
#include <utility>

#include <rapidcheck.h>

// How a case of a property fails, and what its counterexample shows.
//
// A property checked by bubble::testing::check() (the scenario runner's checker) states what must
// hold with BUBBLE_ASSERT and BUBBLE_FAIL, which throw bubble::testing::CaseFailure. Being a
// std::runtime_error, a CaseFailure also fails the case of a RapidCheck property
// (RC_GTEST_PROP, rc::check), whose report then shows its message. RapidCheck's own RC_ASSERT,
// RC_FAIL and RC_PRE throw a type RapidCheck does not publish, so check() cannot read them: it
// reports them as an exception of an unknown type (rc::state's preconditions, which RapidCheck
// handles itself, keep using RC_PRE).
namespace bubble::testing {

// The failure of the current case, with its description.
class CaseFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws CaseFailure("<file>:<line>: <message>").
[[noreturn]] void fail_case(const char* file, int line, const std::string& message);

namespace detail {
// Adds `shown` ("<type>:\n<value>") to the counterexample of the case check() is evaluating on
// this thread; does nothing outside check().
void show_drawn(std::string shown);
// The readable name of the type `mangled` (typeid(T).name()).
std::string type_name(const char* mangled);
}  // namespace detail

// Draws a value from `gen` (`*gen`: it is part of the case, and shrinks with it) and shows it in
// the counterexample of check()'s report of a failure, as "<type>:\n<value>" (rc::toString, so
// a showValue overload prints it). Call it where `*gen` works: inside a property, on its thread
// or on a bubble thread of a run the property started.
template <class T>
T draw(const rc::Gen<T>& gen) {
  T value = *gen;
  detail::show_drawn(detail::type_name(typeid(T).name()) + ":\n" + rc::toString(value));
  return value;
}

}  // namespace bubble::testing

// BUBBLE_ASSERT(condition): fails the current case unless `condition` is true, with the message
// "<file>:<line>: BUBBLE_ASSERT(<condition>)".
#define BUBBLE_ASSERT(condition)                                                  \
  do {                                                                            \
    if (!static_cast<bool>(condition)) {                                          \
      ::bubble::testing::fail_case(__FILE__, __LINE__,                            \
                                   std::string("BUBBLE_ASSERT(" #condition ")")); \
    }                                                                             \
  } while (false)

// BUBBLE_FAIL(message): fails the current case with "<file>:<line>: <message>" (a std::string).
#define BUBBLE_FAIL(message) ::bubble::testing::fail_case(__FILE__, __LINE__, (message))
