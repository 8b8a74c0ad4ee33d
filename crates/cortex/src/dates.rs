//! Dates in what people say, resolved against the session's date: "yesterday",
//! "next October", "on the 11th", "8 October", "three weeks ago". Relative
//! expressions are rewritten to absolute ones so a memory still means the same
//! thing a year later (improvement plan I9), and every date found is returned for
//! `valid_from` and `timeline`.
//!
//! Hand-written because no maintained Rust crate resolves English relative dates
//! against a reference day (chrono-english is unmaintained and chrono-based).

use std::sync::LazyLock;

use jiff::ToSpan;
use jiff::civil::{Date, Weekday};
use regex::{Captures, Regex};

use gitloom_model::when::MONTHS;

use crate::text::{capitalise, is_past_form};

fn month_of(word: &str) -> Option<i8> {
    let w = word.to_lowercase();
    if w.len() < 3 {
        return None;
    }
    MONTHS
        .iter()
        .position(|m| {
            m.starts_with(&w) && (w.len() >= 3) && (w == *m || w.len() == 3 || (w == "sept"))
        })
        .map(|i| i as i8 + 1)
}

/// Weekdays by name, with the abbreviations people write ("last Fri", "next Tues").
const WEEKDAYS: [(&str, &[&str], Weekday); 7] = [
    ("Monday", &["mon"], Weekday::Monday),
    ("Tuesday", &["tue", "tues"], Weekday::Tuesday),
    ("Wednesday", &["wed"], Weekday::Wednesday),
    ("Thursday", &["thu", "thur", "thurs"], Weekday::Thursday),
    ("Friday", &["fri"], Weekday::Friday),
    ("Saturday", &["sat"], Weekday::Saturday),
    ("Sunday", &["sun"], Weekday::Sunday),
];

fn weekday_of(word: &str) -> Option<Weekday> {
    let w = word.trim_end_matches('.').to_lowercase();
    WEEKDAYS
        .iter()
        .find(|(name, short, _)| name.eq_ignore_ascii_case(&w) || short.contains(&w.as_str()))
        .map(|(_, _, d)| *d)
}

/// A month or a weekday, in full or abbreviated ("may", "Tues"): a word that dates
/// something and names nothing.
pub(crate) fn is_calendar_word(word: &str) -> bool {
    month_of(word).is_some() || weekday_of(word).is_some()
}

/// How a weekday resolved to a date is written: "on Tuesday 28 April 2026".
fn on_weekday(name: &str, date: Date) -> String {
    format!("on {name} {}", spoken(date))
}

/// The weekday's full name, for the text a resolved date is written back into.
fn weekday_name(d: Weekday) -> &'static str {
    WEEKDAYS
        .iter()
        .find(|(_, _, w)| *w == d)
        .map_or("", |(name, _, _)| name)
}

const MONTH_RE: &str = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)";
/// A weekday, in full or abbreviated; "Sat" and "Sun" only capitalised, since "sat"
/// and "sun" are words of their own ("this sun").
const WEEKDAY_RE: &str = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tues?|wed|thu(?:rs?)?|fri|(?-i:Sat|Sun))";

static RE: LazyLock<Regex> = LazyLock::new(|| {
    let num = r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)";
    let pattern = format!(
        r"(?ix)
        \b(?P<iso>\d{{4}}-\d{{2}}-\d{{2}})\b
      | \b(?P<dm_d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<dm_m>{MONTH_RE})\b(?:,?\s+(?P<dm_y>(?:19|20)\d{{2}})|\s+(?P<dm_rel>last|next|this)\s+year)?
      | \b(?P<md_m>{MONTH_RE})\s+(?P<md_d>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<md_y>(?:19|20)\d{{2}})|\s+(?P<md_rel>last|next|this)\s+year)?
      | \b(?P<rel_m>next|last|this|in|since|until|by)\s+(?P<rel_mn>{MONTH_RE})\b(?:\s+(?P<rel_my>(?:19|20)\d{{2}}))?
      | \b(?P<my_m>{MONTH_RE})\s+(?P<my_y>(?:19|20)\d{{2}})\b
      | \b(?P<ago_n>{num})\s+(?P<ago_u>day|week|month|year)s?\s+ago\b
      | \b(?P<rel_w>next|last|this|on)\s+(?P<rel_wd>{WEEKDAY_RE})\b
      | \b(?:(?P<bare_every>every|each)\s+)?(?P<bare_wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b
      | \b(?P<rel_u>next|last|this)\s+(?P<rel_uu>week|month|year|weekend)\b
      | \b(?P<the_d>the\s+(?P<the_n>\d{{1,2}})(?:st|nd|rd|th))\b
      | \b(?P<word>the\s+day\s+before\s+yesterday|yesterday|today|tonight|tomorrow|this\s+morning|this\s+afternoon|this\s+evening|last\s+night)\b
      | \b(?P<yr_p>in|since|from|until)\s+(?P<yr>(?:19|20)\d{{2}})\b
    "
    );
    Regex::new(&pattern).expect("the date pattern is valid")
});

/// A date found in a sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    pub date: Date,
    /// Only the month (or year) was said; `date` is its first day.
    pub coarse: bool,
}

fn small_number(s: &str) -> Option<i64> {
    let words = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve",
    ];
    let l = s.to_lowercase();
    if l == "a" || l == "an" {
        return Some(1);
    }
    words
        .iter()
        .position(|w| *w == l)
        .map(|i| i as i64)
        .or_else(|| l.parse().ok())
}

/// The year that puts `month`/`day` closest to `anchor` (people say "8 October"
/// for the coming one and "19 May" for the one just gone).
fn closest_year(anchor: Date, month: i8, day: i8) -> Option<Date> {
    [anchor.year() - 1, anchor.year(), anchor.year() + 1]
        .into_iter()
        .filter_map(|y| Date::new(y, month, day).ok())
        .min_by_key(|d| (*d - anchor).get_days().abs())
}

/// The year of a day and month said without one: as `rel` says ("last year"), else
/// the closest such day, unless the clause is in the future and the closest has
/// gone ("Rose will be 7 on 14 October", said in January, is the coming October,
/// nine months off). A past form says less: "she suggested the 10K on 29 November"
/// is a past suggestion of a coming race.
fn year_shift(
    rel: Option<&str>,
    anchor: Date,
    month: i8,
    day: i8,
    way: Option<Tense>,
) -> Option<Date> {
    let y = match rel.map(str::to_lowercase).as_deref() {
        Some("last") => anchor.year() - 1,
        Some("next") => anchor.year() + 1,
        Some(_) => anchor.year(),
        None => {
            let closest = closest_year(anchor, month, day)?;
            let shift = match way {
                Some(Tense::Coming) if closest < anchor => 1,
                _ => 0,
            };
            return Date::new(closest.year() + shift, month, day).ok();
        }
    };
    Date::new(y, month, day).ok()
}

fn weekday_rel(anchor: Date, which: &str, wd: Weekday) -> Date {
    let which = which.to_lowercase();
    let base = anchor.weekday().to_monday_zero_offset() as i64;
    let target = wd.to_monday_zero_offset() as i64;
    let delta = match which.as_str() {
        "last" => {
            let d = (base - target).rem_euclid(7);
            -(if d == 0 { 7 } else { d })
        }
        "next" => {
            let d = (target - base).rem_euclid(7);
            if d == 0 { 7 } else { d }
        }
        // "this Friday" / "on Friday": the coming one (or today).
        _ => (target - base).rem_euclid(7),
    };
    anchor.checked_add(delta.days()).unwrap_or(anchor)
}

/// A resolved date as people write it, "20 June 2025": the words a question about it
/// uses ("in June", "last summer's trip on the 20th") and an embedder reads, where an
/// ISO date holds none of them. The date itself goes to `valid_from` and `timeline`.
fn spoken(d: Date) -> String {
    let month = capitalise(MONTHS[(d.month() - 1) as usize]);
    format!("{} {month} {}", d.day(), d.year())
}

/// What the words around a date say about it.
#[derive(Debug, Clone, Copy)]
struct Context {
    tense: Tense,
    /// A day of the month follows the match ("Friday, the 20th").
    day_follows: bool,
    /// `Some(Coming)` when the clause is plainly in the future ("will", "going
    /// to"), not a present that may point either way ("my birthday is 3 May").
    way: Option<Tense>,
}

/// The tense of the clause a date is said in, as far as its auxiliaries and
/// verbs show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tense {
    Past,
    /// Present or future: "I'm seeing her on Friday", "it will be on the 27th".
    Coming,
    Unknown,
}

/// ", the 20th", "nov 29" or "(29 November" right after a weekday: the date says
/// which one.
static DAY_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)^,?\s+(?:the\s+\d{{1,2}}(?:st|nd|rd|th)\b|\(?(?:{MONTH_RE})\s+\d{{1,2}}(?:st|nd|rd|th)?\b|\(?\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{MONTH_RE})\b)"
    ))
    .expect("valid")
});

/// Words that put a clause in the present or future.
const COMING: &[&str] = &[
    "will", "ll", "shall", "going", "gonna", "am", "m", "is", "are", "re", "have", "has", "can",
    "must", "need", "want", "plan", "planning", "hope", "tomorrow",
];

/// The tense of the clause a date sits in: read first in the words before the date
/// (from the clause's start), where the verb of "I picked it up on Friday" is;
/// when those say nothing, in the words after it up to the clause's end, where the
/// verb of "The AGM on Saturday was a circus" is.
fn clause_tense(before: &str, after: &str) -> Tense {
    let start = before
        .rfind(CLAUSE_END)
        .map_or(before, |i| &before[i + 1..]);
    match tense_of(start) {
        Tense::Unknown => tense_of(after.find(CLAUSE_END).map_or(after, |i| &after[..i])),
        known => known,
    }
}

/// Words that put a clause in the future, whatever else it says.
const FUTURE: &[&str] = &["will", "ll", "shall", "gonna"];

/// `Some(Coming)` when the clause a date sits in is in the future ("will", "'ll",
/// "gonna", "going to"); `None` otherwise, a present ("is", "has been … since")
/// pointing either way.
fn clause_way(before: &str, after: &str) -> Option<Tense> {
    let start = before
        .rfind(CLAUSE_END)
        .map_or(before, |i| &before[i + 1..]);
    let end = after.find(CLAUSE_END).map_or(after, |i| &after[..i]);
    let clause = format!("{start} {end}");
    let words: Vec<String> = gitloom_model::words(&clause)
        .into_iter()
        .flat_map(|w| std::iter::once(w.norm).chain(w.clitic))
        .collect();
    let future = words.iter().enumerate().any(|(i, w)| {
        FUTURE.contains(&w.as_str())
            || (w == "going" && words.get(i + 1).is_some_and(|n| n == "to"))
    });
    future.then_some(Tense::Coming)
}

/// What ends a clause for [`clause_tense`]: a sentence break or a semicolon.
const CLAUSE_END: [char; 5] = ['.', '!', '?', ';', '\n'];

/// The tense of a run of words: present or future words win, since a plan often
/// names what was done before it ("I booked it, it is on Friday").
fn tense_of(clause: &str) -> Tense {
    // The workspace's words, each with its clitic as a word of its own: "I'll" says
    // `ll`, "we're" says `re`.
    let words: Vec<String> = gitloom_model::words(clause)
        .into_iter()
        .flat_map(|w| std::iter::once(w.norm).chain(w.clitic))
        .collect();
    if words.iter().any(|w| COMING.contains(&w.as_str())) {
        return Tense::Coming;
    }
    let past = words.iter().any(|w| w == "yesterday" || is_past_form(w));
    if past { Tense::Past } else { Tense::Unknown }
}

/// Rewrites relative dates in `text` against `anchor` and returns the new text and
/// the dates found, in order. Absolute dates are kept as written, with the year
/// added when it was left out.
pub fn resolve(text: &str, anchor: Date) -> (String, Vec<Found>) {
    let mut found = Vec::new();
    // "8 October … the morning of the 9th": a bare day takes the month said before it.
    let mut month: Option<Date> = None;
    let out = RE.replace_all(text, |c: &Captures| {
        let whole = c.get(0).map_or("", |m| m.as_str()).to_owned();
        let start = c.get(0).map_or(0, |m| m.start());
        let end = c.get(0).map_or(0, |m| m.end());
        let context = Context {
            tense: clause_tense(&text[..start], &text[end..]),
            day_follows: DAY_AFTER.is_match(&text[end..]),
            way: clause_way(&text[..start], &text[end..]),
        };
        match interpret(c, anchor, month, context) {
            Some((date, coarse, rewrite)) => {
                if c.name("yr").is_none() && c.name("the_n").is_none() {
                    month = Some(date);
                }
                found.push(Found { date, coarse });
                // "next week's exam", "next year's reunion": a date that qualifies a
                // noun has no rewrite that reads ("in the week after …'s exam").
                let possessive =
                    text[end..].starts_with("'s") || text[end..].starts_with("\u{2019}s");
                match rewrite {
                    Some(r) if !possessive => fitted(&r, &text[..start], &text[end..]),
                    _ => whole,
                }
            }
            None => whole,
        }
    });
    (out.into_owned(), found)
}

/// Words after which a date needs no preposition of its own: "from this month"
/// is "from July 2026", not "from in July 2026"; "on the tuesday" is "on the
/// Tuesday 21 April 2026". Not "in", "on", "over" or "through", which are as often
/// a verb's particle: "a stent put in last November" is put in in November 2024.
const GOVERNS_A_DATE: &[&str] = &[
    "from", "till", "til", "until", "since", "by", "for", "at", "during", "to", "before", "after",
    "of", "the", "this", "that", "every",
];

/// `rewrite` as it fits between `before` and `after`: its own leading "in" or "on"
/// goes where a word before it already governs the date, or where the date is the
/// subject of its clause ("Tomorrow is my last day" → "29 May 2026 is my last day").
fn fitted(rewrite: &str, before: &str, after: &str) -> String {
    // "about five years ago" is "about 28 August 2018", not "about around …".
    if let Some(rest) = rewrite.strip_prefix("around ")
        && last_word(before).is_some_and(|w| APPROXIMATELY.contains(&w.as_str()))
    {
        return rest.to_owned();
    }
    let Some(rest) = rewrite
        .strip_prefix("in ")
        .or_else(|| rewrite.strip_prefix("on "))
    else {
        return rewrite.to_owned();
    };
    let before = before.trim_end();
    let governed = last_word(before).is_some_and(|w| {
        GOVERNS_A_DATE.contains(&w.as_str()) || APPROXIMATELY.contains(&w.as_str())
    });
    let opens_clause = before.is_empty() || before.ends_with(CLAUSE_END);
    let is_subject = opens_clause && {
        let next = after.trim_start();
        ["is ", "was ", "will "].iter().any(|v| next.starts_with(v))
    };
    match (governed, is_subject) {
        (_, true) => capitalise(rest),
        (true, false) => rest.to_owned(),
        (false, false) => rewrite.to_owned(),
    }
}

/// Words that already say a date is approximate.
const APPROXIMATELY: &[&str] = &[
    "about",
    "around",
    "roughly",
    "approximately",
    "nearly",
    "almost",
];

/// The word `text` ends on, lower-cased; `None` when it ends on punctuation.
fn last_word(text: &str) -> Option<String> {
    let text = text.trim_end();
    text.ends_with(|c: char| c.is_alphanumeric()).then(|| {
        text.rsplit(|c: char| !c.is_alphanumeric())
            .next()
            .unwrap_or_default()
            .to_lowercase()
    })
}

/// What a matched date says: the date, whether it is coarse (a month, a week, a
/// year), and how the text says it now (`None`: as written).
type Interpreted = (Date, bool, Option<String>);

/// The date one match of [`RE`] says, by which of its forms matched; `None` when it
/// says none (a weekday in a habit, a day of the month that does not exist).
fn interpret(
    c: &Captures,
    anchor: Date,
    month: Option<Date>,
    context: Context,
) -> Option<Interpreted> {
    let g = |n: &str| c.name(n).map(|m| m.as_str());
    if let Some(iso) = g("iso") {
        return iso.parse::<Date>().ok().map(|d| (d, false, None));
    }
    if let (Some(d), Some(m)) = (g("dm_d"), g("dm_m")) {
        return day_in_month(d, m, g("dm_y"), g("dm_rel"), anchor, context, |y| {
            format!("{d} {} {y}", capitalise(m))
        });
    }
    if let (Some(m), Some(d)) = (g("md_m"), g("md_d")) {
        return day_in_month(d, m, g("md_y"), g("md_rel"), anchor, context, |y| {
            format!("{} {d}, {y}", capitalise(m))
        });
    }
    if let (Some(rel), Some(m)) = (g("rel_m"), g("rel_mn")) {
        return relative_month(rel, m, g("rel_my"), anchor);
    }
    if let (Some(m), Some(y)) = (g("my_m"), g("my_y")) {
        return Some((
            Date::new(y.parse().ok()?, month_of(m)?, 1).ok()?,
            true,
            None,
        ));
    }
    if let (Some(n), Some(u)) = (g("ago_n"), g("ago_u")) {
        return ago(n, u, anchor);
    }
    if let (Some(rel), Some(wd)) = (g("rel_w"), g("rel_wd")) {
        return relative_weekday(rel, wd, anchor, context);
    }
    if let Some(wd) = g("bare_wd") {
        return bare_weekday(wd, g("bare_every").is_some(), anchor, context);
    }
    if let (Some(rel), Some(u)) = (g("rel_u"), g("rel_uu")) {
        return relative_unit(rel, u, anchor);
    }
    if let Some(n) = g("the_n") {
        return day_of_month(n, month, anchor, context);
    }
    if let Some(w) = g("word") {
        return day_word(w, anchor);
    }
    if let Some(y) = g("yr") {
        let date = Date::new(y.parse().ok()?, 1, 1).ok()?;
        return Some((date, true, None));
    }
    None
}

/// "8 May", "May 8th" (with a year, or the year the clause means: `year_shift`),
/// written back with its year by `written`.
fn day_in_month(
    d: &str,
    m: &str,
    year: Option<&str>,
    rel: Option<&str>,
    anchor: Date,
    context: Context,
    written: impl Fn(i16) -> String,
) -> Option<Interpreted> {
    let (day, month) = (d.parse::<i8>().ok()?, month_of(m)?);
    Some(match year.and_then(|y| y.parse::<i16>().ok()) {
        Some(y) => (Date::new(y, month, day).ok()?, false, None),
        None => {
            let date = year_shift(rel, anchor, month, day, context.way)?;
            (date, false, Some(written(date.year())))
        }
    })
}

/// "in May", "next March", "since January", "by June 2026": the month's first day,
/// coarse.
fn relative_month(rel: &str, m: &str, year: Option<&str>, anchor: Date) -> Option<Interpreted> {
    let month = month_of(m)?;
    // "may" is also a verb: "in may" is a month, "I may" is not matched here.
    if let Some(y) = year.and_then(|y| y.parse::<i16>().ok()) {
        return Some((Date::new(y, month, 1).ok()?, true, None));
    }
    let rel_l = rel.to_lowercase();
    let year = match rel_l.as_str() {
        "next" if month <= anchor.month() => anchor.year() + 1,
        "next" => anchor.year(),
        "last" if month >= anchor.month() => anchor.year() - 1,
        "last" => anchor.year(),
        "since" if month > anchor.month() => anchor.year() - 1,
        "in" | "this" | "by" | "until" if month < anchor.month() && anchor.month() - month > 6 => {
            anchor.year() + 1
        }
        _ => anchor.year(),
    };
    let date = Date::new(year, month, 1).ok()?;
    let prep = match rel_l.as_str() {
        "since" | "until" | "by" => rel.to_owned(),
        _ => "in".to_owned(),
    };
    Some((date, true, Some(format!("{prep} {} {year}", capitalise(m)))))
}

/// "three days ago", "2 weeks ago": coarse unless counted in days.
fn ago(n: &str, u: &str, anchor: Date) -> Option<Interpreted> {
    let n = small_number(n)?;
    let date = match u.to_lowercase().as_str() {
        "day" => anchor.checked_sub(n.days()).ok()?,
        "week" => anchor.checked_sub((7 * n).days()).ok()?,
        "month" => anchor.checked_sub(n.months()).ok()?,
        _ => anchor.checked_sub(n.years()).ok()?,
    };
    let coarse = !u.eq_ignore_ascii_case("day");
    let text = if coarse {
        format!("around {}", spoken(date))
    } else {
        format!("on {}", spoken(date))
    };
    Some((date, coarse, Some(text)))
}

/// "on Friday", "next Tuesday", "last Sunday".
fn relative_weekday(rel: &str, wd: &str, anchor: Date, context: Context) -> Option<Interpreted> {
    // "on Friday, the 20th": the day of the month says which Friday; it is resolved
    // next, by itself.
    if context.day_follows {
        return None;
    }
    // "on Friday" is the coming one, unless the clause is told in the past ("I picked
    // it up on Friday", "he died on Saturday"): then the last one.
    let rel = match (rel.to_lowercase().as_str(), context.tense) {
        ("on", Tense::Past) => "last",
        _ => rel,
    };
    let day = weekday_of(wd)?;
    let date = weekday_rel(anchor, rel, day);
    let name = weekday_name(day);
    let wd = if name.eq_ignore_ascii_case(wd) {
        wd
    } else {
        name
    };
    Some((date, false, Some(on_weekday(wd, date))))
}

/// A weekday with no word before it ("we had a leaving curry on the curry mile
/// tuesday") is a date only in a clause told in the past: the last one. Else it is as
/// often a habit or a schedule ("office days are tuesday and wednesday"), as is "every
/// tuesday" in any tense; only the full name, since "wed" and "sat" are words of
/// their own.
fn bare_weekday(wd: &str, every: bool, anchor: Date, context: Context) -> Option<Interpreted> {
    if context.day_follows || context.tense != Tense::Past || every {
        return None;
    }
    let day = weekday_of(wd)?;
    let date = weekday_rel(anchor, "last", day);
    Some((date, false, Some(on_weekday(weekday_name(day), date))))
}

/// "next year", "last month", "this weekend", "next week".
fn relative_unit(rel: &str, u: &str, anchor: Date) -> Option<Interpreted> {
    let sign: i64 = match rel.to_lowercase().as_str() {
        "next" => 1,
        "last" => -1,
        _ => 0,
    };
    Some(match u.to_lowercase().as_str() {
        "year" => {
            let y = anchor.year() as i64 + sign;
            (
                Date::new(y as i16, 1, 1).ok()?,
                true,
                Some(format!("in {y}")),
            )
        }
        "month" => {
            let d = anchor.checked_add((sign).months()).ok()?.first_of_month();
            let name = capitalise(MONTHS[(d.month() - 1) as usize]);
            (d, true, Some(format!("in {name} {}", d.year())))
        }
        "weekend" => {
            let d = weekday_rel(
                anchor,
                if sign > 0 {
                    "next"
                } else if sign < 0 {
                    "last"
                } else {
                    "this"
                },
                Weekday::Saturday,
            );
            (d, false, Some(format!("on the weekend of {}", spoken(d))))
        }
        _ => {
            let d = anchor.checked_add((7 * sign).days()).ok()?;
            let text = match sign {
                1 => format!("in the week after {}", spoken(anchor)),
                -1 => format!("in the week before {}", spoken(anchor)),
                _ => format!("in the week of {}", spoken(anchor)),
            };
            (d, true, Some(text))
        }
    })
}

/// "the 27th": in the month said before it if any; else the coming one in a clause
/// about what is coming, otherwise the one just gone.
fn day_of_month(
    n: &str,
    month: Option<Date>,
    anchor: Date,
    context: Context,
) -> Option<Interpreted> {
    let day: i8 = n.parse().ok()?;
    if let Some(m) = month {
        let date = Date::new(m.year(), m.month(), day).ok()?;
        return Some((date, false, Some(spoken(date))));
    }
    let this_month = Date::new(anchor.year(), anchor.month(), day).ok();
    let date = match this_month {
        // "my scan is on the 27th": the coming one.
        Some(d) if context.tense == Tense::Coming && d >= anchor => d,
        Some(_) if context.tense == Tense::Coming => {
            let next = anchor.checked_add(1.month()).ok()?;
            Date::new(next.year(), next.month(), day).ok()?
        }
        // Otherwise the one just gone, as a day said alone most often is.
        Some(d) if d <= anchor => d,
        _ => {
            let prev = anchor.checked_sub(1.month()).ok()?;
            Date::new(prev.year(), prev.month(), day).ok()?
        }
    };
    Some((date, false, Some(spoken(date))))
}

/// "yesterday", "last night", "the day before yesterday", "tomorrow", and the words
/// for today ("tonight", "this morning").
fn day_word(w: &str, anchor: Date) -> Option<Interpreted> {
    let w = w.to_lowercase();
    let offset: i64 = if w.starts_with("the day before") {
        -2
    } else if w == "yesterday" || w == "last night" {
        -1
    } else if w == "tomorrow" {
        1
    } else {
        0
    };
    let date = anchor.checked_add(offset.days()).ok()?;
    Some((date, false, Some(format!("on {}", spoken(date)))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Date {
        s.parse().expect("date")
    }

    #[test]
    fn relative_dates_are_resolved_against_the_session() {
        let a = d("2026-05-28");
        let (t, f) = resolve("I start on 10 June. Tomorrow is my last day.", a);
        assert_eq!(t, "I start on 10 June 2026. 29 May 2026 is my last day.");
        assert_eq!(f[0].date, d("2026-06-10"));
        assert_eq!(f[1].date, d("2026-05-29"));
        let (t, f) = resolve("we fly next October", d("2026-07-02"));
        assert_eq!(t, "we fly in October 2026");
        assert!(f[0].coarse);
        let (_, f) = resolve("next October", d("2026-11-02"));
        assert_eq!(f[0].date, d("2027-10-01"));
        let (t, _) = resolve("I installed it on the 11th", d("2026-06-18"));
        assert_eq!(t, "I installed it on 11 June 2026");
        let (_, f) = resolve("the intercom broke on 19 May", d("2026-06-02"));
        assert_eq!(f[0].date, d("2026-05-19"));
        let (_, f) = resolve("I got her on 8 November last year", d("2026-05-20"));
        assert_eq!(f[0].date, d("2025-11-08"));
        let (t, _) = resolve(
            "out 8 October, landing the morning of the 9th",
            d("2026-07-02"),
        );
        assert_eq!(
            t,
            "out 8 October 2026, landing the morning of 9 October 2026"
        );
        let (t, _) = resolve("two weeks ago", d("2026-06-15"));
        assert_eq!(t, "around 1 June 2026");
        let (_, f) = resolve("born 14 March 1994, in Berlin since March 2022", a);
        assert_eq!(f[0].date, d("1994-03-14"));
        assert_eq!(f[1].date, d("2022-03-01"));
        let (t, f) = resolve("I may come", a);
        assert_eq!((t.as_str(), f.len()), ("I may come", 0));
        // Chat's lower-case month is written back with its capital.
        let (t, _) = resolve("i start june 8, back in sept", a);
        assert_eq!(t, "i start June 8, 2026, back in Sept 2026");
    }

    #[test]
    fn a_resolved_date_takes_no_second_preposition() {
        let a = d("2026-07-06");
        for (said, written) in [
            (
                "i've put the transfer up from this month",
                "i've put the transfer up from July 2026",
            ),
            (
                "we went to Ghent on the tuesday",
                "we went to Ghent on the Tuesday 30 June 2026",
            ),
            (
                "the fee stays at 45 for this year",
                "the fee stays at 45 for 2026",
            ),
            (
                "the dose halves from tomorrow",
                "the dose halves from 7 July 2026",
            ),
            (
                "Next week is the audit.",
                "The week after 6 July 2026 is the audit.",
            ),
            // Where nothing governs it, the date keeps its own.
            ("we fly next month", "we fly in August 2026"),
            (
                "i started about five years ago",
                "i started about 6 July 2021",
            ),
            ("we met about three days ago", "we met about 3 July 2026"),
            // "in" after a verb is its particle.
            ("a stent put in last month", "a stent put in in June 2026"),
        ] {
            assert_eq!(resolve(said, a).0, written, "{said}");
        }
    }

    #[test]
    fn a_date_that_qualifies_a_noun_is_found_and_kept_as_written() {
        let a = d("2026-05-28");
        for (said, date) in [
            ("moving after next week's exam", "2026-06-04"),
            ("Next year's reunion is on a Saturday", "2027-01-01"),
            ("tomorrow\u{2019}s opening went well", "2026-05-29"),
        ] {
            let (t, f) = resolve(said, a);
            assert_eq!(t, said);
            assert_eq!(f.first().map(|f| f.date), Some(d(date)), "{said}");
        }
    }

    #[test]
    fn a_day_said_without_its_year_lies_the_way_the_clause_says() {
        let jan = d("2025-01-21");
        // The closest 14 October is last year's; "will be" says the coming one.
        let (t, f) = resolve("Rose is 6 and will be 7 on 14 October.", jan);
        assert_eq!(f[0].date, d("2025-10-14"));
        assert_eq!(t, "Rose is 6 and will be 7 on 14 October 2025.");
        let (_, f) = resolve("we're going to visit on October 14", jan);
        assert_eq!(f[0].date, d("2025-10-14"));
        // A past form may be another verb's: the closest, as before.
        let (_, f) = resolve("she suggested the 10K on 29 November", d("2025-06-24"));
        assert_eq!(f[0].date, d("2025-11-29"));
        // A present says nothing of its way: the closest, as before.
        let (_, f) = resolve("my birthday is 14 October", jan);
        assert_eq!(f[0].date, d("2024-10-14"));
        let (_, f) = resolve("it has been broken since 19 May", d("2026-06-02"));
        assert_eq!(f[0].date, d("2026-05-19"));
    }

    #[test]
    fn a_weekday_told_in_the_past_is_the_last_one() {
        // 2025-06-24 is a Tuesday.
        let tue = d("2025-06-24");
        let (_, f) = resolve("I picked it up on Friday.", tue);
        assert_eq!(f[0].date, d("2025-06-20"));
        let (_, f) = resolve("My cousin died on Saturday in Galway.", tue);
        assert_eq!(f[0].date, d("2025-06-21"));
        let (_, f) = resolve("The meeting was on Saturday.", tue);
        assert_eq!(f[0].date, d("2025-06-21"));
        let (_, f) = resolve("A young man came on Saturday and paid cash.", tue);
        assert_eq!(f[0].date, d("2025-06-21"));
        // Present or future, or no tense at all: the coming one, as before.
        let (_, f) = resolve("I'm seeing her on Friday.", tue);
        assert_eq!(f[0].date, d("2025-06-27"));
        let (_, f) = resolve("I sold the old one. The new one comes on Friday", tue);
        assert_eq!(f[0].date, d("2025-06-27"));
        let (_, f) = resolve("Dinner on Friday", tue);
        assert_eq!(f[0].date, d("2025-06-27"));
        let (_, f) = resolve("I booked it, it is on Friday", tue);
        assert_eq!(f[0].date, d("2025-06-27"));
        // The verb after the date, when the words before it have none.
        let (_, f) = resolve("The match on Saturday was a washout.", tue);
        assert_eq!(f[0].date, d("2025-06-21"));
        let (_, f) = resolve("On Sunday we went to the coast. Next is Friday", tue);
        assert_eq!(f[0].date, d("2025-06-22"));
        let (_, f) = resolve("The match on Saturday will be rained off.", tue);
        assert_eq!(f[0].date, d("2025-06-28"));
        // Only to the end of the clause: the next sentence's verb is not the date's.
        let (_, f) = resolve("Dinner on Friday. It was lovely last time", tue);
        assert_eq!(f[0].date, d("2025-06-27"));
        // With no word before it, only in the past, and never a habit.
        let (t, f) = resolve("We had a leaving curry on the curry mile tuesday", tue);
        assert_eq!(f[0].date, d("2025-06-17"));
        assert!(t.ends_with("curry mile on Tuesday 17 June 2025"), "{t}");
        let (t, f) = resolve("Office days are tuesday and wednesday", tue);
        assert!(f.is_empty(), "{t}");
        let (_, f) = resolve("I swam every friday", tue);
        assert!(f.is_empty());
        let (_, f) = resolve("Book club moved to thursdays", tue);
        assert!(f.is_empty());
    }

    #[test]
    fn an_abbreviated_weekday_is_that_weekday() {
        let tue = d("2025-06-24");
        let (t, f) = resolve("Caroline went to a poetry reading last Fri.", tue);
        assert_eq!(f[0].date, d("2025-06-20"));
        assert_eq!(
            t,
            "Caroline went to a poetry reading on Friday 20 June 2025."
        );
        let (_, f) = resolve("The plumber comes next Thurs", tue);
        assert_eq!(f[0].date, d("2025-06-26"));
        let (_, f) = resolve("We met on Sat and it rained", tue);
        assert_eq!(f[0].date, d("2025-06-21"));
        // "sat" and "sun" in lower case are words of their own.
        let (_, f) = resolve("this sun is brutal, I sat on the porch", tue);
        assert!(f.is_empty(), "{f:?}");
    }

    #[test]
    fn a_weekday_with_its_day_of_the_month_is_that_day() {
        let tue = d("2025-06-24");
        let (t, f) = resolve("I picked it up on Friday, the 20th, at the dealer.", tue);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].date, d("2025-06-20"));
        assert_eq!(t, "I picked it up on Friday, 20 June 2025, at the dealer.");
        // A day said alone in a clause about what is to come is the coming one.
        let (_, f) = resolve("My scan is on the 27th", tue);
        assert_eq!(f[0].date, d("2025-06-27"));
        let (_, f) = resolve("My scan will be on the 3rd", tue);
        assert_eq!(f[0].date, d("2025-07-03"));
        // Told in the past, or with no tense, the one just gone (as before).
        let (_, f) = resolve("I installed it on the 11th", tue);
        assert_eq!(f[0].date, d("2025-06-11"));
        // A weekday with its month and day: the date says which one.
        let (t, f) = resolve("she suggested the harbour 10K on sunday nov 29", tue);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].date, d("2025-11-29"));
        assert_eq!(t, "she suggested the harbour 10K on sunday Nov 29, 2025");
        let (_, f) = resolve("the party's on Saturday 12 July", tue);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].date, d("2025-07-12"));
    }
}
