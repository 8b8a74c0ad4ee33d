//! Relative dates in questions: "four weeks ago", "last Friday", "the past weekend",
//! "yesterday" point at a span of days counted back from the moment the question is
//! asked. The read path favours memories dated inside that span (the `when` prior).
//!
//! Only expressions that name a span of days to a month are read ("in March", "in
//! late October", "the beginning of November 2022"); "last year" or "recently" would
//! favour a large share of any store and pick nothing out.
//!
//! Also here: whether a memory's text says when ([`says_when`]: "yesterday", "last
//! year", "due on 15 January 2026"); the read path's `says_when` prior applies it to
//! a question that asks when (`shape::asks_when`) and names no span of its own.

use jiff::civil::{Date, Weekday};
use jiff::{Timestamp, ToSpan, tz::TimeZone};

/// A span of days, `[start, end)` in seconds since the epoch (UTC days).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub start: i64,
    pub end: i64,
}

/// Folded words, in order, a possessive dropped ("Friday's" is a Friday).
fn words(text: &str) -> Vec<String> {
    gitloom_model::norms(text)
}

/// The span a question points at, asked at `now`, if it names one.
pub fn relative_window(query: &str, now: Timestamp) -> Option<Window> {
    let today = now.to_zoned(TimeZone::UTC).date();
    let ws = words(query);
    let w = |i: usize| ws.get(i).map(String::as_str).unwrap_or("");
    for i in 0..ws.len() {
        if let Some(m) = month_name(w(i))
            && let Some(part) = part_of_month(&ws[..i])
        {
            return part_span(today, m, year_at(w(i + 1)), part);
        }
        match w(i) {
            "yesterday" => return days(today, 1, 1, 0),
            "ago" if i >= 2 => {
                let Some(n) = number(w(i - 2)) else { continue };
                return match w(i - 1) {
                    "day" | "days" => days(today, n, n, (n / 7).max(1)),
                    "week" | "weeks" => days(today, 7 * n, 7 * n, 3 + n),
                    "month" | "months" => days(today, 30 * n, 30 * n, 7 + 3 * n),
                    _ => continue,
                };
            }
            "on" => {
                if let Some(d) = day_date(&ws[i + 1..], today) {
                    // A day either side: a conversation's clock may not be UTC.
                    let start = d.checked_sub(1.days()).ok()?;
                    let end = d.checked_add(2.days()).ok()?;
                    return Some(Window {
                        start: midnight(start)?,
                        end: midnight(end)?,
                    });
                }
            }
            "in" | "during" => {
                if let Some(m) = month(w(i + 1)) {
                    return month_span(today, m, year_at(w(i + 2)));
                }
            }
            "last" | "past" => {
                let next = w(i + 1);
                if next == "weekend" {
                    // The most recent Saturday before today, and the Sunday after it.
                    let sat = before(today, Weekday::Saturday)?;
                    let back = (today - sat).get_days() as i64;
                    return days(today, back, back - 1, 1);
                }
                if next == "week" {
                    return days(today, 13, 1, 0);
                }
                if let Some(day) = weekday(next) {
                    let d = before(today, day)?;
                    let back = (today - d).get_days() as i64;
                    return days(today, back, back, 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// A year as people write one, "2022".
fn year_at(w: &str) -> Option<i16> {
    w.parse::<i16>().ok().filter(|y| (1000..=9999).contains(y))
}

/// Which part of a month the words before its name pick out: "early" or "the
/// beginning of" the first half, "mid" the middle, "late" or "the end of" the
/// second half; `None` when they pick none.
fn part_of_month(before: &[String]) -> Option<PartOfMonth> {
    let back = |k: usize| {
        before
            .len()
            .checked_sub(k)
            .and_then(|j| before.get(j))
            .map_or("", String::as_str)
    };
    let part = match (back(1), back(2), back(3)) {
        ("early", _, _) | ("of", "beginning" | "start", _) | ("of", "half", "first") => {
            PartOfMonth::Early
        }
        ("mid", _, _) | ("of", "middle", _) => PartOfMonth::Middle,
        ("late", _, _) | ("of", "end", _) | ("of", "half", "second") => PartOfMonth::Late,
        _ => return None,
    };
    Some(part)
}

/// A part of a month, in days: the halves overlap the middle by a week either side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PartOfMonth {
    /// Days 1–15.
    Early,
    /// Days 8–23.
    Middle,
    /// Day 16 to the month's end.
    Late,
}

/// Part of month `m`, of `year` or else the latest such month, as [`month_span`].
fn part_span(today: Date, m: i8, year: Option<i16>, part: PartOfMonth) -> Option<Window> {
    let whole = month_span(today, m, year)?;
    let day = 86_400;
    let (from, to) = match part {
        PartOfMonth::Early => (0, Some(15)),
        PartOfMonth::Middle => (7, Some(23)),
        PartOfMonth::Late => (15, None),
    };
    Some(Window {
        start: whole.start + from * day,
        end: to.map_or(whole.end, |t| whole.start + t * day),
    })
}

/// Month `m` (1–12) as a window: of
/// `year`, when the question names it, else the latest such month.
fn month_span(today: Date, m: i8, year: Option<i16>) -> Option<Window> {
    let year = year.unwrap_or(if m > today.month() {
        today.year() - 1
    } else {
        today.year()
    });
    let first = Date::new(year, m, 1).ok()?;
    let next = first.checked_add(1.months()).ok()?;
    Some(Window {
        start: midnight(first)?,
        end: midnight(next)?,
    })
}

/// "October 13, 2023", "13th October 2023", "1 February": a calendar day, of the
/// year named, else the latest such day not after `today`.
fn day_date(ws: &[String], today: Date) -> Option<Date> {
    let w = |i: usize| ws.get(i).map(String::as_str).unwrap_or("");
    let (m, d) = match (month(w(0)), month(w(1))) {
        (Some(m), _) => (m, day_of_month(w(1))?),
        (None, Some(m)) => (m, day_of_month(w(0))?),
        (None, None) => return None,
    };
    match w(2)
        .parse::<i16>()
        .ok()
        .filter(|y| (1000..=9999).contains(y))
    {
        Some(y) => Date::new(y, m, d).ok(),
        None => {
            let this = Date::new(today.year(), m, d).ok();
            match this {
                Some(t) if t <= today => Some(t),
                _ => Date::new(today.year() - 1, m, d).ok(),
            }
        }
    }
}

/// Whether a text says when something happened: relative to when it was said
/// ("yesterday", "last Friday", "two weeks ago", "next month", "in two weeks", "on
/// Saturday") or on the calendar ("due 15 January 2026", "March 2025",
/// "2026-09-24"). Not a duration ("for two weeks"), nor "last day". A stamp in
/// brackets that opens a line
/// ("[8 May 2023] Caroline: …", how a transcript dates every turn) says nothing about
/// an event and is not read.
pub fn says_when(text: &str) -> bool {
    if text.lines().any(|l| has_iso_date(unstamped(l))) {
        return true;
    }
    let ws: Vec<String> = text.lines().flat_map(|l| words(unstamped(l))).collect();
    let unit = |w: &str| {
        matches!(
            w,
            "week"
                | "weeks"
                | "weekend"
                | "weekends"
                | "month"
                | "months"
                | "year"
                | "years"
                | "night"
                | "morning"
                | "evening"
                | "afternoon"
                | "summer"
                | "winter"
                | "spring"
                | "fall"
                | "autumn"
        ) || weekday(w).is_some()
    };
    ws.iter().enumerate().any(|(i, w)| {
        let next = ws.get(i + 1).map(String::as_str).unwrap_or("");
        match w.as_str() {
            "yesterday" | "tomorrow" | "tonight" | "ago" => true,
            "last" | "next" | "past" | "this" => unit(next),
            "in" => number(next).is_some() && ws.get(i + 2).is_some_and(|u| unit(u)),
            "on" => weekday(next).is_some(),
            _ => calendar_at(&ws, i),
        }
    })
}

/// A line without the bracketed stamp it opens with, if any.
fn unstamped(line: &str) -> &str {
    let t = line.trim_start();
    match t.strip_prefix('[').and_then(|r| r.split_once(']')) {
        Some((_, rest)) => rest,
        None => line,
    }
}

/// Whether the words at `i` name a calendar date: a month beside a day of the month
/// ("15 January", "January 15th") or before a year ("March 2025").
fn calendar_at(ws: &[String], i: usize) -> bool {
    if month_name(&ws[i]).is_none() {
        return false;
    }
    let before = i.checked_sub(1).and_then(|j| ws.get(j)).map(String::as_str);
    let after = ws.get(i + 1).map(String::as_str).unwrap_or("");
    before.and_then(day_of_month).is_some()
        || day_of_month(after).is_some()
        || year_at(after).is_some()
}

/// Whether a line holds a date written `YYYY-MM-DD` (a valid one), standing alone.
fn has_iso_date(line: &str) -> bool {
    let b = line.as_bytes();
    (0..b.len().saturating_sub(9)).any(|i| {
        let alone = |j: Option<&u8>| j.is_none_or(|c| !c.is_ascii_alphanumeric());
        alone(i.checked_sub(1).and_then(|j| b.get(j)))
            && alone(b.get(i + 10))
            && line
                .get(i..i + 10)
                .is_some_and(|t| t.parse::<jiff::civil::Date>().is_ok())
    })
}

/// A month by its full name only: "mar", "may" and "jun" are words of their own.
fn month_name(w: &str) -> Option<i8> {
    gitloom_model::when::MONTHS
        .iter()
        .position(|n| *n == w)
        .map(|i| i as i8 + 1)
}

fn day_of_month(w: &str) -> Option<i8> {
    let digits = ["st", "nd", "rd", "th"]
        .iter()
        .find_map(|s| w.strip_suffix(s))
        .unwrap_or(w);
    digits.parse::<i8>().ok().filter(|d| (1..=31).contains(d))
}

fn month(w: &str) -> Option<i8> {
    gitloom_model::when::MONTHS
        .iter()
        .position(|n| *n == w || (w.len() == 3 && n.starts_with(w)))
        .map(|i| i as i8 + 1)
}

/// `from` to `to` days back from today (from ≥ to), widened by `slack` days on both
/// sides: people say "four weeks ago" of something 26 or 31 days back.
fn days(today: Date, from: i64, to: i64, slack: i64) -> Option<Window> {
    let start = today.checked_sub((from + slack).days()).ok()?;
    let end = today.checked_sub((to - slack - 1).days()).ok()?;
    Some(Window {
        start: midnight(start)?,
        end: midnight(end)?.min(midnight(today.checked_add(1.days()).ok()?)?),
    })
}

fn midnight(d: Date) -> Option<i64> {
    d.to_zoned(TimeZone::UTC)
        .ok()
        .map(|z| z.timestamp().as_second())
}

/// The latest `day` strictly before `today`.
fn before(today: Date, day: Weekday) -> Option<Date> {
    let mut d = today.checked_sub(1.days()).ok()?;
    while d.weekday() != day {
        d = d.checked_sub(1.days()).ok()?;
    }
    Some(d)
}

fn weekday(w: &str) -> Option<Weekday> {
    Some(match w {
        "monday" => Weekday::Monday,
        "tuesday" => Weekday::Tuesday,
        "wednesday" => Weekday::Wednesday,
        "thursday" => Weekday::Thursday,
        "friday" => Weekday::Friday,
        "saturday" => Weekday::Saturday,
        "sunday" => Weekday::Sunday,
        _ => return None,
    })
}

fn number(w: &str) -> Option<i64> {
    if let Ok(n) = w.parse::<i64>() {
        return (1..=366).contains(&n).then_some(n);
    }
    Some(match w {
        "a" | "an" | "one" => 1,
        "two" | "couple" => 2,
        "three" | "few" => 3,
        "four" => 4,
        "five" => 5,
        "six" => 6,
        "seven" => 7,
        "eight" => 8,
        "nine" => 9,
        "ten" => 10,
        "eleven" => 11,
        "twelve" => 12,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(date: &str) -> Timestamp {
        format!("{date}T15:00:00Z").parse().expect("test timestamp")
    }

    fn span(q: &str, now: &str) -> Option<(String, String)> {
        relative_window(q, at(now)).map(|w| {
            let d = |s: i64| {
                Timestamp::from_second(s)
                    .expect("in range")
                    .to_zoned(TimeZone::UTC)
                    .date()
                    .to_string()
            };
            (d(w.start), d(w.end - 1))
        })
    }

    #[test]
    fn reads_spans_counted_back() {
        // 2023-05-30 is a Tuesday.
        let p = |a: &str, b: &str| Some((a.to_owned(), b.to_owned()));
        assert_eq!(
            span("what did I buy yesterday", "2023-05-30"),
            p("2023-05-29", "2023-05-29")
        );
        assert_eq!(
            span("what did I mention 5 days ago?", "2023-05-30"),
            p("2023-05-24", "2023-05-26")
        );
        assert_eq!(
            span("the milestone I mentioned four weeks ago", "2023-05-30"),
            p("2023-04-25", "2023-05-09")
        );
        assert_eq!(
            span("the artist I started on last Friday", "2023-05-30"),
            p("2023-05-25", "2023-05-27")
        );
        assert_eq!(
            span("which bike did I service the past weekend", "2023-05-30"),
            p("2023-05-26", "2023-05-29")
        );
        assert_eq!(span("where did I work before Acme", "2023-05-30"), None);
        assert_eq!(
            span("how many appointments did I go to in March?", "2023-05-30"),
            p("2023-03-01", "2023-03-31")
        );
        assert_eq!(
            span("what was i up to in late october", "2026-12-01"),
            p("2026-10-16", "2026-10-31")
        );
        assert_eq!(
            span("what was i up to at the end of august", "2025-12-09"),
            p("2025-08-16", "2025-08-31")
        );
        assert_eq!(
            span(
                "Which tournament did Nate win in the beginning of November 2022?",
                "2023-05-30"
            ),
            p("2022-11-01", "2022-11-15")
        );
        assert_eq!(
            span(
                "was the first half of September 2022 a good month",
                "2023-05-30"
            ),
            p("2022-09-01", "2022-09-15")
        );
        assert_eq!(
            span("the gig in mid june", "2023-05-30"),
            p("2022-06-08", "2022-06-23")
        );
        assert_eq!(
            span("the end of the road in may", "2023-05-30"),
            p("2023-05-01", "2023-05-31")
        );
        assert_eq!(
            span("what happened to my pc in august", "2023-05-30"),
            p("2022-08-01", "2022-08-31"),
            "the latest August, not a future one"
        );
        assert_eq!(
            span("where was I in may 2021", "2023-05-30"),
            p("2021-05-01", "2021-05-31")
        );
        assert_eq!(
            span(
                "What painting did Melanie show on October 13, 2023?",
                "2026-11-29"
            ),
            p("2023-10-12", "2023-10-14"),
            "a day named in full, a day either side"
        );
        assert_eq!(
            span("what did Gina find on 1 February, 2023?", "2026-11-29"),
            p("2023-01-31", "2023-02-02")
        );
        assert_eq!(
            span("what did I decide on the 3rd of March", "2023-05-30"),
            None,
            "\"the 3rd of March\" is not read"
        );
        assert_eq!(
            span("what did I order on march 3rd", "2023-05-30"),
            p("2023-03-02", "2023-03-04"),
            "without a year: the latest such day"
        );
        assert_eq!(
            span("what did I order on june 3", "2023-05-30"),
            p("2022-06-02", "2022-06-04"),
            "not a day still to come"
        );
        assert_eq!(
            span("what did I put on may 2021 list", "2023-05-30"),
            None,
            "a month and year is no day"
        );
        assert_eq!(
            span("how many years ago", "2023-05-30"),
            None,
            "too wide to pick anything out"
        );
    }

    #[test]
    fn texts_that_say_when() {
        for t in [
            "I got mentored by this amazing business dude yesterday!",
            "Here's a pic from last Friday with some veterans.",
            "I won another regional tournament last week!",
            "We had a blast last year at the Pride fest.",
            "Let's do it next month when the weather is nicer.",
            "Took the kids to the museum two days ago.",
            "The recital is in two weeks.",
            "We're meeting on Saturday.",
            "The whole manuscript is now due on 15 January 2026.",
            "Second move, announced in November 2025.",
            "Booked for July 3rd.",
            "Slot: Thursday 2026-09-24, 14:30, room B.",
        ] {
            assert!(says_when(t), "{t}");
        }
        for t in [
            "[8 May 2023] Caroline: I love painting sunsets.",
            "Last day: Friday.",
            "Ref 12026-05-299, order 2026-13-45.",
            "Malt paste once a day for two weeks.",
            "I've been into dancing since I was a kid.",
            "This is the best day ever.",
            "[3 June 2024] Melanie: we may go camping, 2 of us.",
            "Every March the garden wakes up.",
        ] {
            assert!(!says_when(t), "{t}");
        }
    }
}
