#include <bubble/testing.hpp>

#include <bubble/testing/hosted_test.hpp>

#include "googletest_host.hpp"

namespace bubble::testing {

ExploreOutcome run_test(const std::function<void(Runtime&)>& body, const EnvLookup& env) {
  return run_test(body, Options{}, env);
}

ExploreOutcome run_test(const std::function<void(Runtime&)>& body, const Options& run_options,
                        const EnvLookup& env) {
  detail::GoogleTestHost host;
  return run_hosted_test(host, body, run_options, env);
}

}  // namespace bubble::testing
