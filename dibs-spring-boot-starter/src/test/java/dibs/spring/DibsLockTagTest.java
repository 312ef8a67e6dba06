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
}
