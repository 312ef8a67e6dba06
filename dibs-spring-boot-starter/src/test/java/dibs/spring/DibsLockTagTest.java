package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class DibsLockTagTest {
    @Test
    void theDefaultDropsTrailingSegmentsThatHoldADigit() {
        assertThat(DibsLockTag.DEFAULT.apply("report-2026-12-01")).isEqualTo("report");
        assertThat(DibsLockTag.DEFAULT.apply("report-2026-12-02")).isEqualTo("report");
        assertThat(DibsLockTag.DEFAULT.apply("tick-1764547200")).isEqualTo("tick");
        assertThat(DibsLockTag.DEFAULT.apply("billing.invoice_run:2026W48")).isEqualTo("billing.invoice_run");
        assertThat(DibsLockTag.DEFAULT.apply("shard-7")).isEqualTo("shard");
        assertThat(DibsLockTag.DEFAULT.apply("cleanup-2026-12-01T03")).isEqualTo("cleanup");
    }

    @Test
    void theDefaultKeepsStableNamesAndDigitsInsideThem() {
        assertThat(DibsLockTag.DEFAULT.apply("nightly-report")).isEqualTo("nightly-report");
        assertThat(DibsLockTag.DEFAULT.apply("s3-sync")).isEqualTo("s3-sync");
        assertThat(DibsLockTag.DEFAULT.apply("s3-sync-42")).isEqualTo("s3-sync");
        assertThat(DibsLockTag.DEFAULT.apply("job-")).isEqualTo("job");
    }

    @Test
    void aNameWithNoStablePartBecomesOther() {
        assertThat(DibsLockTag.DEFAULT.apply("2026-12-01")).isEqualTo("other");
        assertThat(DibsLockTag.DEFAULT.apply("42")).isEqualTo("other");
    }

    /**
     * The meters' tag and the run history's job are one rule ({@code dibs::job_of}, Rust's, which
     * the history uses): the tag's Java copy, kept so that a meter event costs no native call,
     * must agree with it on every name.
     */
    @Test
    void theDefaultIsTheRunHistorysJob() {
        for (String name : java.util.List.of("report-2026-12-01", "tick-1764547200", "billing.invoice_run:2026W48",
                "shard-7", "cleanup-2026-12-01T03", "nightly-report", "s3-sync", "s3-sync-42", "job-", "2026-12-01",
                "42", "a.b:c/d", "x__1", "Bericht für März-2026", "日本語-١٢", "-", "--1", "v2")) {
            assertThat(DibsLockTag.DEFAULT.apply(name)).as(name).isEqualTo(dibs.Dibs.jobOf(name));
        }
    }
}
