package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dibs.Dibs;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The meters' default tag is the job the run history records a call under: one rule, Rust's
 * ({@code dibs::job_of}), asked through {@link Dibs#jobOf}; no copy of it in Java.
 */
class DibsLockTagTest {
    @Test
    void theDefaultIsTheJobOfTheRunHistory() {
        for (String name : List.of(
                "report-2026-12-01",
                "tick-1764547200",
                "billing.invoice_run:2026W48",
                "shard-7",
                "cleanup-2026-12-01T03",
                "nightly-report",
                "s3-sync",
                "s3-sync-42",
                "job-",
                "2026-12-01",
                "42",
                "a.b:c/d",
                "x__1",
                "Bericht für März-2026-12-01",
                "日本語-١٢",
                "-",
                "--1",
                "v2",
                "report-²",
                "report-Ⅻ",
                "report-𝟘",
                "backup-db1",
                "nightly-report@2026-12-02T02:00")) {
            assertThat(DibsLockTag.DEFAULT.apply(name)).as(name).isEqualTo(Dibs.jobOf(name));
        }
    }

    @Test
    void aNameIsCutOnlyWhereItSurelyEndsInATick() {
        assertThat(DibsLockTag.DEFAULT.apply("report-2026-12-01")).isEqualTo("report");
        assertThat(DibsLockTag.DEFAULT.apply("tick-1764547200")).isEqualTo("tick");
        assertThat(DibsLockTag.DEFAULT.apply("nightly-report@2026-12-02T02:00")).isEqualTo("nightly-report");
        // Not ticks: shards, hosts, digits of other scripts.
        for (String whole : List.of(
                "backup-db1", "shard-7", "s3-sync-42", "report-²", "report-Ⅻ", "report-𝟘", "2026-12-01", "42")) {
            assertThat(DibsLockTag.DEFAULT.apply(whole)).as(whole).isEqualTo(whole);
        }
    }
}
