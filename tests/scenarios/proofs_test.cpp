// The proofs suite's searches: each proof holds on the library's code with a certificate, the
// shutdown proof refutes the known-bad pools kept as exhibits, and a search splits into shards
// whose certificates merge into the whole search's.
#include <bubble/scenarios/exhibit_pools.hpp>
#include <bubble/scenarios/proofs.hpp>
#include <bubble/schedule_tree.hpp>

#include <gtest/gtest.h>

#include <string>

namespace bubble::scenarios {
namespace {

TEST(Proofs, RateLimiterHoldsOnEveryWorkloadWithACertificate) {
  const Proof proof = rate_limiter_proof();
  // 1 to 4 calls by one submitter, one call by each of two, and two calls by one and one by
  // another, each a submit or a try_submit (2 + 4 + 8 + 16 + 4 + 8), and the single calls again
  // with a stop: 44. The CTest test cli.run_proofs searches them at the proof's bound; here,
  // without preemptions.
  EXPECT_EQ(proof.workloads, 44U);
  const ProofOutcome outcome = prove(proof, 0, {});
  ASSERT_FALSE(outcome.failed) << outcome.message;
  EXPECT_EQ(outcome.workloads, proof.workloads);
  EXPECT_GT(outcome.schedules, proof.workloads);  // Most workloads have more than one schedule.
  EXPECT_EQ(outcome.certificate, certificate_line({}, outcome.schedules, 0, 0));
}

TEST(Proofs, ShutdownHoldsOnTheExhibitPoolWithoutAFlaw) {
  // The control of the two flawed pools below: the same small pool, without the flaw (without
  // preemptions here; the flaws are refuted within one).
  const ProofOutcome outcome = prove(shutdown_proof(exhibit_pool(PoolFlaw::none)), 0, {});
  EXPECT_FALSE(outcome.failed) << outcome.message;
  EXPECT_EQ(outcome.workloads, shutdown_proof(real_pool()).workloads);
}

TEST(Proofs, ShutdownProofRefutesAPoolThatClosesBeforeDraining) {
  const ProofOutcome outcome =
      prove(shutdown_proof(exhibit_pool(PoolFlaw::closes_before_draining)), 1, {});
  ASSERT_TRUE(outcome.failed) << outcome.certificate;
  EXPECT_FALSE(outcome.message.empty());
}

TEST(Proofs, ShutdownProofRefutesAPoolThatReadsClosedOutsideItsLock) {
  const ProofOutcome outcome =
      prove(shutdown_proof(exhibit_pool(PoolFlaw::reads_closed_outside_lock)), 1, {});
  ASSERT_TRUE(outcome.failed) << outcome.certificate;
  EXPECT_FALSE(outcome.message.empty());
}

TEST(Proofs, ShardsSplitTheWorkloadsAndTheirCertificatesMerge) {
  const Proof proof = rate_limiter_proof();
  const ProofOutcome whole = prove(proof, 0, {});
  const ProofOutcome first = prove(proof, 0, {0, 2});
  const ProofOutcome second = prove(proof, 0, {1, 2});
  ASSERT_FALSE(whole.failed || first.failed || second.failed);
  EXPECT_EQ(first.workloads + second.workloads, whole.workloads);
  EXPECT_EQ(first.schedules + second.schedules, whole.schedules);
  EXPECT_EQ(merge_certificates({second.certificate, first.certificate}), whole.certificate);
}

}  // namespace
}  // namespace bubble::scenarios
