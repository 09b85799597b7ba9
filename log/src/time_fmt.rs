//! Human-readable UTC times for `dump` and `stats`, without a date-time dependency.

use giving::Timestamp;

/// `2024-05-01 12:34:56.789 UTC`.
pub(crate) fn utc(time: Timestamp) -> String {
    let nanos = time.as_nanos();
    let secs = nanos / 1_000_000_000;
    let millis = (nanos / 1_000_000) % 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}.{millis:03} UTC",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to a (year, month, day) of the proleptic Gregorian calendar
/// (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_dates() {
        assert_eq!(utc(Timestamp::from_nanos(0)), "1970-01-01 00:00:00.000 UTC");
        // 2024-02-29 12:00:00.5 UTC
        let t = Timestamp::from_nanos(1_709_208_000_500_000_000);
        assert_eq!(utc(t), "2024-02-29 12:00:00.500 UTC");
    }
}
