// The baselines of instrument_bench, compiled without the instrumentation: the same loops as the
// instrumented ones, so that the difference is what bubble::instrument's hooks add.

#include "instrument_loops.hpp"

namespace bench::baseline {
#include "instrument_loops.inc"
}  // namespace bench::baseline
