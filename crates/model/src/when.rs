//! Dates in frontmatter: a calendar date (`2026-07-30`) or an instant
//! (`2026-07-30T10:00:00Z`). Both forms occur in real files; both are kept as written.

use std::fmt;

use jiff::{Timestamp, civil::Date, tz::TimeZone};

/// English month names, lower case, January first: one table for everything that
/// reads dates out of text (query shapes, relative dates, ingestion).
pub const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum When {
    Date(Date),
    Instant(Timestamp),
}

impl When {
    /// Parses `YYYY-MM-DD`, RFC 3339 (`…T…Z`, `…+02:00`) or `YYYY-MM-DD HH:MM[:SS]` (read as UTC).
    pub fn parse(s: &str) -> Result<When, String> {
        let s = s.trim();
        if s.len() == 10 {
            return s
                .parse::<Date>()
                .map(When::Date)
                .map_err(|e| format!("{s:?} is not a date (YYYY-MM-DD): {e}"));
        }
        if let Ok(ts) = s.parse::<Timestamp>() {
            return Ok(When::Instant(ts));
        }
        // A civil date-time with no offset: take it as UTC rather than refuse it.
        s.parse::<jiff::civil::DateTime>()
            .ok()
            .and_then(|dt| dt.to_zoned(TimeZone::UTC).ok())
            .map(|z| When::Instant(z.timestamp()))
            .ok_or_else(|| format!("{s:?} is not a date (YYYY-MM-DD) or timestamp (RFC 3339)"))
    }

    /// The UTC calendar day.
    pub fn date(&self) -> Date {
        match self {
            When::Date(d) => *d,
            When::Instant(t) => t.to_zoned(TimeZone::UTC).date(),
        }
    }

    /// Seconds since the epoch; a bare date counts from its UTC midnight.
    pub fn unix_seconds(&self) -> i64 {
        match self {
            When::Date(d) => d
                .to_zoned(TimeZone::UTC)
                .map(|z| z.timestamp().as_second())
                .unwrap_or_default(),
            When::Instant(t) => t.as_second(),
        }
    }
}

impl fmt::Display for When {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            When::Date(d) => write!(f, "{d}"),
            // Fractional seconds only when there are any (`%.f`): dropping them
            // changed `…:07.3Z` (or `…:07,30`) into `…:07Z` in a round trip (found
            // by the memory_parse fuzzer, input kept in its corpus).
            When::Instant(t) => write!(f, "{}", t.strftime("%Y-%m-%dT%H:%M:%S%.fZ")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_round_trip() {
        for s in [
            "2026-07-30",
            "2026-07-30T10:00:00Z",
            "2026-07-30T10:00:07.3Z",
            "2026-07-30T10:00:07.000000001Z",
        ] {
            assert_eq!(When::parse(s).expect("valid").to_string(), s);
        }
        // A comma as the decimal sign (ISO 8601) reads as the same instant and is
        // written with a dot.
        let comma = When::parse("2026-07-30T10:00:07,30Z").expect("valid");
        assert_eq!(comma.to_string(), "2026-07-30T10:00:07.3Z");
        assert_eq!(When::parse(&comma.to_string()), Ok(comma));
        assert_eq!(
            When::parse("2026-07-30T12:00:00+02:00")
                .expect("valid")
                .to_string(),
            "2026-07-30T10:00:00Z"
        );
        assert_eq!(
            When::parse("2026-07-30 10:00").expect("valid").to_string(),
            "2026-07-30T10:00:00Z"
        );
        assert!(When::parse("2026-13-01").is_err());
        assert!(When::parse("next tuesday").is_err());
        assert_eq!(
            When::parse("2026-07-30T23:30:00Z")
                .expect("valid")
                .date()
                .to_string(),
            "2026-07-30"
        );
    }
}
