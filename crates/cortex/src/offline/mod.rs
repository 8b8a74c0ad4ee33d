//! The offline extractor: deterministic, no model, no network.
//!
//! Per message of a speaker (the user's messages; in a conversation between named
//! people, everyone's): split into sentences and clauses ([`speech`]); drop what only
//! keeps the conversation going and questions to the assistant (a request is kept: what
//! someone asks for says what they want, plan or do: "remind me in October to post it",
//! a recipe's "add the rice and 2.5 cups of stock"); resolve dates
//! against the session's day; decide each sentence's subject ([`subject`]): a name it
//! is about, the subject before it when it refers back ("she", "it"), else the speaker.
//! Sentences of one message about one subject (and, for the speaker, one topic) make
//! one fact: one memory per message and subject, so a memory cites the message that
//! said it (and, for a reply between people, the turn it quotes whole) and holds one
//! subject's facts. Written in the third person with the speaker named ("User" when
//! the user is not), titled by its first clause ([`title`]), filed under a topic from
//! its words ([`topics`]), with question-shaped cues.
//!
//! A statement that fits no topic is still kept, under [`topics::FALLBACK`]: nothing a
//! person said is dropped because it could not be placed. Nor left unreadable: a memory
//! of one clause that points back ("never book anything near it") starts with the
//! clause said before it in its message, as a reply starts with the question it answers.
//! Between people (named speakers, no assistant), a reply starts with the whole turn it
//! answers, attributed ("In reply to Ana (\"…\"): They were awestruck."): what one
//! person says there is most often read against what the other just said.

mod cues;
mod gender;
mod names;
mod reading;
mod speech;
mod subject;
mod title;
mod topics;

use std::collections::BTreeSet;
use std::sync::LazyLock;

use gitloom_model::{Tier, fold_name};
use regex::Regex;

use crate::dates::Found;
use crate::error::CortexError;
use crate::extract::{Dated, ExtractContext, Extractor, Fact, FactEntity};
use crate::session::Session;
use crate::text::{self, Lexicon, Spotted};

pub use speech::Act;
use subject::{Speaker, Subject};

/// What the offline extractor learns from a run's whole text, the same for each of
/// its sessions (kept in [`crate::extract::RunText`]).
#[derive(Debug)]
pub(crate) struct RunNames {
    /// The words the run capitalises mid-sentence.
    caps: std::collections::HashSet<String>,
    /// The time zones it writes after clock times ([`Lexicon::zones`]).
    zones: std::collections::HashSet<String>,
    /// The names its words give away ([`names::scan`]).
    found: std::collections::BTreeMap<String, Option<String>>,
}

impl RunNames {
    pub(crate) fn scan(text: &str) -> RunNames {
        let mut lex = Lexicon::default();
        lex.learn(text);
        RunNames {
            caps: lex.mid_caps,
            zones: lex.zones,
            found: names::scan(text),
        }
    }
}

/// The offline extractor. Stateless; construct with `OfflineExtractor`.
#[derive(Debug, Clone, Copy, Default)]
pub struct OfflineExtractor;

/// Words that make a statement an incident: something broke or went wrong.
const INCIDENT_WORDS: &[&str] = &[
    "broke",
    "broken",
    "crashed",
    "crash",
    "failed",
    "failure",
    "outage",
    "down",
    "lost",
    "stolen",
    "accident",
    "injured",
    "leak",
    "leaking",
    "flooded",
    "incident",
    "burst",
    "fell",
    "hacked",
    "cancelled",
];

/// Words of a how-to: steps the user wants kept.
const SKILL_WORDS: &[&str] = &[
    "steps",
    "step",
    "runbook",
    "procedure",
    "instructions",
    "recipe",
    "checklist",
    "how-to",
    "howto",
    "first",
    "then",
    "finally",
];

static EMPLOYER_START: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(offer from|start(?:ed|ing)? (?:at|with)|joined|join|(?:new |first |a )?job at|work(?:s|ing)? (?:at|for)|hired (?:at|by)|employed (?:at|by)|came for (?:my|a) (?:first )?job at)\s+(?:the\s+)?$")
        .expect("valid employer pattern")
});
static EMPLOYER_END: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(last day (?:at|with)|left|quit|resigned from|leaving)\s+(?:the\s+)?$")
        .expect("valid end pattern")
});

/// Sentences of one message about one subject: what becomes one fact.
struct Unit {
    subject: Subject,
    speaker: Speaker,
    message: usize,
    act: Act,
    topic: Option<&'static str>,
    /// The topic of the message it was said in: a statement whose own words place
    /// it nowhere ("i'm terrified", after the engagement party and the jollof for 30)
    /// is about what the message around it is about.
    context_topic: Option<&'static str>,
    /// Third person, dates resolved.
    sentences: Vec<String>,
    /// As said (cleaned), for topics and tiers.
    raw: Vec<String>,
    /// Sentences at the start that only lead in to the first statement.
    lead: usize,
    /// The question this unit answers (the message before asked it).
    answers: Option<String>,
    /// Between named people, the turn this unit's message replies to (another's,
    /// just before it), with its speaker's name.
    replying_to: Option<(String, String)>,
    /// The clause said just before its first one, in the same message, as the memory
    /// says it, when that first clause points back ([`points_back`]): what its "it" or
    /// "that" stands for. Used while the unit holds that clause alone.
    said_before: Option<String>,
    entities: Vec<FactEntity>,
    dates: Vec<(Found, String)>,
    unresolved: Vec<String>,
    employer_start: bool,
    employer_end: bool,
    /// Said in a message that is a how-to's steps ([`speech::is_procedure`]).
    procedure: bool,
    start_date: Option<String>,
    end_date: Option<String>,
}

impl Unit {
    fn text(&self) -> String {
        self.raw.join(" ")
    }
}

/// How many messages back (counted in the session, the assistant's included) a "he"
/// or "she" may reach for the person it stands for: the same message and the turns
/// just before it. Beyond that the conversation has moved on, and a name said then is
/// no better a guess than the speaker.
const PRONOUN_REACH: usize = 2;

/// How many turns back a turn with no topic of its own may find the topic it goes
/// on with, between people (an exchange of thanks and praise after a turn about
/// pottery is still about pottery).
const TOPIC_REACH: usize = 2;

/// How many of the persons named lately a pronoun may choose among.
const PERSONS_KEPT: usize = 4;

/// Person pronouns whose referent the session may never name.
const PERSON_PRONOUNS: &[&str] = &["he", "him", "his", "she", "her", "hers"];

impl Extractor for OfflineExtractor {
    fn id(&self) -> String {
        format!("offline/{}", crate::EXTRACTOR_VERSION)
    }

    fn extract(&self, session: &Session, ctx: &ExtractContext) -> Result<Vec<Fact>, CortexError> {
        let anchor = session.day()?;
        let lex = session_lexicon(session, ctx);
        let mut reading = reading::Reading::new(session, &lex, anchor);
        for (mi, m) in session.speaking_messages() {
            reading.read(mi, m);
        }
        let (units, named_person) = reading.finish();
        Ok(facts_of(units, named_person, ctx, session))
    }
}

/// The names a session's reading knows: the store's entities, the capitalised words
/// of the whole run and of the session, and the names the run's words give away.
fn session_lexicon(session: &Session, ctx: &ExtractContext) -> Lexicon {
    let mut lex = Lexicon::default();
    for k in &ctx.known {
        lex.add_known(&k.name, k.kind.clone());
    }
    let run = ctx.run_text.names();
    lex.mid_caps.extend(run.caps.iter().cloned());
    lex.zones.extend(run.zones.iter().cloned());
    for (_, m) in session.speaking_messages() {
        lex.learn(&m.content);
    }
    names::teach(&mut lex, run.found.clone());
    lex
}

/// The facts of a session's units. `named_person`: whether the session names any
/// person.
fn facts_of(
    units: Vec<Unit>,
    named_person: bool,
    ctx: &ExtractContext,
    session: &Session,
) -> Vec<Fact> {
    let mut facts = Vec::new();
    for u in units {
        if u.sentences.is_empty() {
            continue;
        }
        // A pronoun for someone the session names is theirs; only a person the
        // session never names is flagged for reconciliation to resolve.
        let unresolved = if named_person {
            Vec::new()
        } else {
            u.unresolved.clone()
        };
        facts.push(build_fact(u, unresolved, ctx, session));
    }
    // Two memories of one message about one subject and topic are kept apart by
    // their order in it: each has a home of its own, found again on re-extraction.
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for f in &mut facts {
        let n = seen.entry(f.subject_key()).or_default();
        if *n > 0 {
            f.group = f.group.take().map(|g| format!("{g}/{n}"));
        }
        *n += 1;
    }
    facts
}

/// `said` as a memory about `subject` keeps it: a pronoun for its person or pet
/// becomes their name.
fn named_in(said: String, subject: &Subject) -> String {
    match subject {
        Subject::Entity(e) if matches!(e.kind.as_deref(), Some("person" | "pet")) => {
            subject::name_pronoun(&said, &e.name)
        }
        _ => said,
    }
}

/// Spots inside a longer spot at the same place are the same name ("Alex" in
/// "Alex Park").
fn dedup_spots(mut spots: Vec<Spotted>) -> Vec<Spotted> {
    spots.sort_by(|a, b| a.at.cmp(&b.at).then(b.name.len().cmp(&a.name.len())));
    let mut out: Vec<Spotted> = Vec::new();
    for s in spots {
        let inside = out.iter().any(|o| {
            fold_name(&o.name)
                .split(' ')
                .any(|w| w == fold_name(&s.name))
                || format!(" {} ", fold_name(&o.name))
                    .contains(&format!(" {} ", fold_name(&s.name)))
        });
        if !inside {
            out.push(s);
        }
    }
    out
}

/// Puts the persons (and pets) `spots` names at the end of `persons`, in the order
/// named, each once: whom a "he" or "she" after them may mean, the last one first.
/// True when it names any.
fn name_persons(persons: &mut Vec<(Spotted, usize)>, spots: &[Spotted], message: usize) -> bool {
    let mut any = false;
    for p in spots.iter().filter(|s| s.is_person()) {
        persons.retain(|(q, _)| fold_name(&q.name) != fold_name(&p.name));
        persons.push((p.clone(), message));
        any = true;
    }
    // A pronoun reaches a few names back at most.
    let excess = persons.len().saturating_sub(PERSONS_KEPT);
    persons.drain(..excess);
    any
}

/// The unit of this message a sentence joins, `None` for a new one. A sentence that
/// goes on about the subject before it ("she's 4.9kg", "the pills are…") joins that
/// subject's unit. A sentence of the speaker's that names them again starts a unit of
/// its own (one statement, one memory) when its words place it under a topic; one whose
/// words place it nowhere ("i got 71%" after the dissertation went in) depends on what
/// was just said and goes on in that unit when the unit's words do say what it is
/// about: cut from it, it loses what it was about. Two statements that both fit no
/// topic stay apart (joined, neither would say more). Rules run on: the sentences after
/// a rule in the same message (its reasons, "use the merchant ID instead") stay with it.
fn place(
    units: &[Unit],
    subj: &Subject,
    act: Act,
    opens: bool,
    topic: Option<&'static str>,
) -> Option<usize> {
    let last = units.len().checked_sub(1)?;
    let u = &units[last];
    if u.subject != *subj && !u.subject.same_person(subj) {
        return None;
    }
    match (u.act, act) {
        (Act::Rule, Act::Rule) => Some(last),
        (Act::Rule, _) => matches!(subj, Subject::Speaker).then_some(last),
        (_, Act::Rule) => None,
        _ if matches!(subj, Subject::Entity(_)) => Some(last),
        _ => (!opens || topic.is_none() && u.topic.is_some()).then_some(last),
    }
}

/// The clause without the names spotted in it: a company called "Tallyline Payments"
/// says nothing about money.
fn without_names(clause: &str, spots: &[Spotted]) -> String {
    let mut out = clause.to_owned();
    for s in spots {
        out = out.replace(&s.name, " ");
    }
    out
}

/// The name an employment phrase ("offer from", "job at", "last day at") stands
/// right before, if any, when the employment is the speaker's own ("she's got a job
/// at the hospital", "Tom left Initech" say someone else's).
fn employer_named(clause: &str, spots: &[Spotted]) -> Option<Spotted> {
    spots
        .iter()
        .filter(|s| !matches!(s.kind.as_deref(), Some("person" | "pet" | "place")))
        .find(|s| {
            clause.find(s.name.as_str()).is_some_and(|pos| {
                let phrase = EMPLOYER_START
                    .find(&clause[..pos])
                    .or_else(|| EMPLOYER_END.find(&clause[..pos]));
                phrase.is_some_and(|m| !someone_else_before(&clause[..m.start()], spots))
            })
        })
        .cloned()
}

/// Whether `before` (the start of a clause) has a subject other than the speaker: a
/// third-person pronoun or a person's name.
fn someone_else_before(before: &str, spots: &[Spotted]) -> bool {
    // A spot's `at` counts whitespace-separated tokens, as `Lexicon::spot` does.
    let tokens = before.split_whitespace().count();
    gitloom_model::text::words(before)
        .iter()
        .any(|w| matches!(w.norm.as_str(), "he" | "she" | "they"))
        || spots.iter().any(|s| s.is_person() && s.at < tokens)
}

/// Employment: a start or end phrase right before an org's name.
fn says_start(clause: &str) -> bool {
    gitloom_model::text::words(clause).iter().any(|w| {
        matches!(
            w.norm.as_str(),
            "start" | "starts" | "starting" | "begin" | "begins"
        )
    })
}

fn employment(
    u: &mut Unit,
    clause: &str,
    spots: &[Spotted],
    found: &[Found],
    anchor: jiff::civil::Date,
) {
    let Subject::Entity(sub) = &u.subject else {
        return;
    };
    // "I start on 1 December", after the offer: when the job starts.
    if u.employer_start
        && says_start(clause)
        && let Some(f) = found.iter().find(|f| !f.coarse)
    {
        u.start_date = Some(f.date.to_string());
    }
    let Some(pos) = clause.find(sub.name.split(' ').next().unwrap_or_default()) else {
        return;
    };
    let before = &clause[..pos];
    let own = |m: regex::Match<'_>| !someone_else_before(&before[..m.start()], spots);
    if EMPLOYER_START.find(before).is_some_and(own) {
        u.employer_start = true;
        let start = found.first().map_or(anchor, |f| f.date);
        u.start_date.get_or_insert(start.to_string());
    }
    if EMPLOYER_END.find(before).is_some_and(own) {
        u.employer_end = true;
        let end = found.iter().find(|f| !f.coarse).map_or(anchor, |f| f.date);
        u.end_date = Some(end.to_string());
    }
    let lower = clause.to_lowercase();
    if u.employer_start
        && (lower.contains("start") || lower.contains("begin"))
        && let Some(f) = found.iter().find(|f| !f.coarse)
    {
        u.start_date = Some(f.date.to_string());
    }
}

fn has_word(text: &str, list: &[&str]) -> bool {
    gitloom_model::text::words(text)
        .iter()
        .any(|w| list.contains(&w.norm.as_str()))
}

/// The last question a message asks, if it ends by asking one. A parenthetical the
/// message ends on is an aside, not its last words: "How often do you work out
/// together? (image: three people at a gym)" still ends by asking.
fn last_question(text: &str) -> Option<String> {
    let last = text::sentences(without_closing_aside(text)).pop()?;
    let q = last.trim();
    (q.ends_with('?') && gitloom_model::text::words(q).len() >= 2).then(|| q.to_owned())
}

/// At most this many words of the turn a reply quotes: a chat turn fits whole
/// (LoCoMo's longest of 3,435 is 81 words, 99 % are under 62), while a pasted page
/// would be copied into every memory of the reply.
const QUOTED_WORDS: usize = 80;

/// And at most this many bytes (LoCoMo's longest turn is 434): a pasted blob with
/// no spaces is one word.
const QUOTED_BYTES: usize = 800;

/// How a turn quoted by its end begins.
const QUOTED_CUT: &str = "… ";

/// A turn as a reply quotes it: without the aside it ends on (a shared image's
/// caption), on one line; `None` when nothing is left. A long turn is quoted by its
/// end, what the reply answers: its last sentences within [`QUOTED_WORDS`], or the
/// last words of a sentence longer than that, within [`QUOTED_BYTES`], after an
/// ellipsis.
fn turn_said(turn: &str) -> Option<String> {
    let words: Vec<&str> = without_closing_aside(turn).split_whitespace().collect();
    if words.is_empty() {
        return None;
    }
    let whole = words.join(" ");
    if words.len() <= QUOTED_WORDS && whole.len() <= QUOTED_BYTES {
        return Some(whole);
    }
    let mut kept: Vec<String> = Vec::new();
    let mut n = 0;
    for sentence in text::sentences(&whole).into_iter().rev() {
        let len = sentence.split_whitespace().count();
        if n + len > QUOTED_WORDS {
            break;
        }
        n += len;
        kept.push(sentence);
    }
    let end = if kept.is_empty() {
        words[words.len().saturating_sub(QUOTED_WORDS)..].join(" ")
    } else {
        kept.reverse();
        kept.join(" ")
    };
    Some(format!("{QUOTED_CUT}{}", tail_within(&end, QUOTED_BYTES)))
}

/// The end of `s` in at most `max` bytes: from a word's start when one begins in
/// it, else from a character's.
fn tail_within(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    let tail = &s[start..];
    match tail.find(char::is_whitespace) {
        Some(i) if i + 1 < tail.len() => tail[i..].trim_start(),
        _ => tail,
    }
}

/// `text` without the bracketed aside it ends on, if it ends on one that is not the
/// whole of it (an unbalanced or lone bracket leaves it as it is).
fn without_closing_aside(text: &str) -> &str {
    let t = text.trim_end();
    if !t.ends_with(')') {
        return text;
    }
    let mut depth = 0usize;
    for (i, c) in t.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    let before = t[..i].trim_end();
                    return if before.is_empty() { text } else { before };
                }
            }
            _ => {}
        }
    }
    text
}

/// True for a clause that points back to something it does not say: an "it" or
/// "them" after its first word ("never book anything near it", "Sam thinks it's a
/// good idea"), or a "that" or "this" it ends on ("I'm keeping that"). A first-word
/// "it" is most often no reference ("it's raining again").
fn points_back(clause: &str) -> bool {
    let ws = gitloom_model::text::words(clause);
    ws.iter()
        .skip(1)
        .any(|w| matches!(w.norm.as_str(), "it" | "them"))
        || ws
            .last()
            .is_some_and(|w| matches!(w.norm.as_str(), "that" | "this"))
}

/// The fact a finished unit makes: its body, tier, topic, subject and entities,
/// title, cues, timeline, tags and the messages it cites, each from its own stage.
fn build_fact(u: Unit, unresolved: Vec<String>, ctx: &ExtractContext, session: &Session) -> Fact {
    let body = body_of(&u);
    let tier = tier_of(&u);
    let kind = match &u.subject {
        Subject::Entity(s) => s.kind.clone(),
        Subject::Speaker => None,
    };
    let topic = reuse_topic(topic_of(&u, tier, kind.as_deref()), &ctx.topics);
    let (subject, subject_kind) = match (&u.subject, &u.speaker) {
        (Subject::Entity(s), _) => (s.name.clone(), s.kind.clone()),
        (Subject::Speaker, Speaker::Named(n)) => (n.clone(), Some("person".to_owned())),
        (Subject::Speaker, Speaker::User) => ("User".to_owned(), None),
    };
    let entities = entities_of(&u, &subject, subject_kind.as_deref());
    // Titled by its first statement, not by a lead-in ("Sad news from Kerry.").
    let first = u.sentences.get(u.lead).unwrap_or(&u.sentences[0]);
    let title = title::title(first);
    let cues = cues::cues(&cues::CueInput {
        subject: &subject,
        subject_kind: subject_kind.as_deref(),
        about_speaker: matches!(u.subject, Subject::Speaker),
        named_speaker: matches!(u.speaker, Speaker::Named(_)),
        topic: topic.rsplit('/').next().unwrap_or_default(),
        tier,
        sentences: &u.sentences,
        employer: u.employer_start || u.employer_end,
        asked: u.answers.as_deref(),
    });
    let mut tags = vec![
        topic
            .rsplit('/')
            .next()
            .unwrap_or(topics::FALLBACK)
            .to_owned(),
    ];
    let slot = u.employer_start.then(|| "employer".to_owned());
    if slot.is_some() || u.employer_end {
        tags.push("employer".into());
    }
    tags.dedup();
    Fact {
        subject,
        tier,
        topic,
        title,
        body,
        entities,
        cues,
        tags,
        slot,
        ends_slot: u.employer_end,
        valid_from: u.start_date.clone(),
        valid_to: u.end_date.clone(),
        timeline: timeline_of(&u),
        confidence: if unresolved.is_empty() { 0.7 } else { 0.5 },
        messages: cited(&u),
        unresolved,
        group: Some(format!("{}/m{}", session.id, u.message)),
    }
}

/// The unit's sentences, after what they are read against: the turn a reply between
/// people answers, the question a reply to an assistant answers, or the clause said
/// before a lone clause that points back.
fn body_of(u: &Unit) -> String {
    let body = joined(&u.sentences);
    if let Some((who, said)) = &u.replying_to {
        // The whole turn, its question included: between people, what a reply says
        // is read against all of what it answers.
        format!("In reply to {who} (\"{said}\"): {body}")
    } else if let Some(q) = &u.answers {
        format!("In answer to \"{q}\": {body}")
    } else if let Some(before) = u.said_before.as_deref().filter(|_| u.raw.len() == 1) {
        // "the dentist is on Tuesday so never book anything near it": the rule alone
        // says "never book anything near it"; with what was said before, what it is.
        let stop = if ends_sentence(before) { "" } else { "." };
        format!("{before}{stop} {body}")
    } else {
        body
    }
}

/// Sentences one after another, each but the last closed with a full stop where it
/// has no end of its own: a clause cut from a longer sentence ("Blue calms me, so I
/// wanted…") lost its comma, and "Blue calms Maren Maren wanted…" reads as one.
fn joined(sentences: &[String]) -> String {
    let mut out = String::new();
    for (n, s) in sentences.iter().enumerate() {
        if n > 0 {
            if !ends_sentence(&out) {
                out.push('.');
            }
            out.push(' ');
        }
        out.push_str(s);
    }
    out
}

/// Whether `s` ends as a sentence does (a stop, "!", "?", an ellipsis, a colon or a
/// semicolon, before any closing quote or bracket).
fn ends_sentence(s: &str) -> bool {
    s.trim_end_matches(['"', '\'', ')', '\u{201d}', '\u{2019}'])
        .ends_with(['.', '!', '?', '\u{2026}', ':', ';'])
}

/// Rules are rules; the speaker's steps of a how-to are a skill; something that broke
/// or went wrong, unless it is about a person or pet, an incident; the rest facts.
fn tier_of(u: &Unit) -> Tier {
    let raw = u.text();
    let steps = raw.matches(['\n', ';']).count() >= 2
        || raw.contains(':') && raw.matches(',').count() >= 3
        || raw
            .split_whitespace()
            .any(|w| w.ends_with(')') && w.len() <= 3);
    match u.act {
        Act::Rule => Tier::Rules,
        _ if matches!(u.subject, Subject::Speaker)
            && (u.procedure || has_word(&raw, SKILL_WORDS) && steps) =>
        {
            Tier::Skills
        }
        _ if has_word(&raw, INCIDENT_WORDS)
            && !matches!(u.subject, Subject::Entity(ref e) if matches!(e.kind.as_deref(), Some("person" | "pet"))) =>
        {
            Tier::Incidents
        }
        _ => Tier::Facts,
    }
}

/// The topic the unit's words (or its message's, or its subject's kind) place it under.
fn topic_of(u: &Unit, tier: Tier, kind: Option<&str>) -> &'static str {
    if u.employer_start || u.employer_end {
        "work"
    } else if tier == Tier::Rules {
        "preferences"
    } else {
        match (&u.subject, u.topic) {
            // A person's facts are about them: filed with people unless their words
            // say family or work.
            (Subject::Entity(_), Some(t)) => t,
            (Subject::Entity(_), None) => topics::of_kind(kind).unwrap_or(topics::FALLBACK),
            (Subject::Speaker, Some(t)) => t,
            (Subject::Speaker, None) => u.context_topic.unwrap_or(topics::FALLBACK),
        }
    }
}

/// The unit's entities, the named speaker among them, the subject first.
fn entities_of(u: &Unit, subject: &str, subject_kind: Option<&str>) -> Vec<FactEntity> {
    let mut entities = u.entities.clone();
    if let Speaker::Named(n) = &u.speaker
        && !entities.iter().any(|e| fold_name(&e.name) == fold_name(n))
    {
        entities.push(FactEntity {
            name: n.clone(),
            kind: Some("person".into()),
        });
    }
    // The subject is the first entity, whether or not the sentences name it ("he's
    // been in Lisbon since 2023" is about Alex).
    if subject != "User" {
        let e = match entities
            .iter()
            .position(|e| fold_name(&e.name) == fold_name(subject))
        {
            Some(i) => entities.remove(i),
            None => FactEntity {
                name: subject.to_owned(),
                kind: subject_kind.map(str::to_owned),
            },
        };
        entities.insert(0, e);
    }
    entities
}

/// The dates the unit's sentences say, each with its sentence as a title, in date
/// order, each once.
fn timeline_of(u: &Unit) -> Vec<Dated> {
    let mut timeline: Vec<Dated> = u
        .dates
        .iter()
        .map(|(f, s)| Dated {
            date: f.date.to_string(),
            text: title::title(s),
        })
        .collect();
    timeline.sort_by(|a, b| a.date.cmp(&b.date));
    timeline.dedup();
    timeline
}

/// The messages the memory cites: its own, and for a reply between people the turn it
/// quotes whole, whose words it holds too. A long turn quoted by its end, or an
/// assistant's turn whose one question an answer quotes, is not cited: citing it would
/// claim (and embed beside the memory) a whole message the memory does not hold.
fn cited(u: &Unit) -> Vec<usize> {
    let mut messages = BTreeSet::new();
    messages.insert(u.message);
    if u.replying_to
        .as_ref()
        .is_some_and(|(_, said)| !said.starts_with(QUOTED_CUT))
        && let Some(before) = u.message.checked_sub(1)
    {
        messages.insert(before);
    }
    messages.into_iter().collect()
}

/// Picks an existing topic equal to (or ending in) `wanted`, singular or plural.
fn reuse_topic(wanted: &str, topics: &[String]) -> String {
    let stem = wanted.trim_end_matches('s');
    topics
        .iter()
        .find(|t| {
            let last = t.rsplit('/').next().unwrap_or_default();
            last == wanted || last.trim_end_matches('s') == stem
        })
        .cloned()
        .unwrap_or_else(|| wanted.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Message;

    fn extract(content: &str) -> Vec<Fact> {
        extract_turns(&[("user", content)])
    }

    /// A session of several turns: (role, content).
    fn extract_turns(turns: &[(&str, &str)]) -> Vec<Fact> {
        extract_messages(turns.iter().map(|(role, content)| Message {
            role: (*role).into(),
            name: None,
            content: (*content).into(),
        }))
    }

    /// A conversation between named people: (speaker, content), all of role `user`.
    fn extract_named(turns: &[(&str, &str)]) -> Vec<Fact> {
        extract_messages(turns.iter().map(|(name, content)| Message {
            role: "user".into(),
            name: Some((*name).into()),
            content: (*content).into(),
        }))
    }

    /// One session of `messages`, extracted with the run's text made of its users'.
    fn extract_messages(messages: impl Iterator<Item = Message>) -> Vec<Fact> {
        let session = Session {
            id: "s1".into(),
            date: "2026-08-15".into(),
            messages: messages.collect(),
        };
        let run_text = session
            .user_messages()
            .map(|(_, m)| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let ctx = ExtractContext {
            topics: Vec::new(),
            known: Vec::new(),
            run_text: std::sync::Arc::new(crate::RunText::new(run_text)),
        };
        OfflineExtractor
            .extract(&session, &ctx)
            .expect("the offline extractor reads any session")
    }

    #[test]
    fn a_how_to_s_steps_are_one_skill_and_its_don_t_is_a_step_not_a_rule() {
        // Said to an assistant, where a "don't" opens a rule.
        let told = |content: &str| extract_turns(&[("user", content), ("assistant", "Noted.")]);
        let facts = told(
            "this is how my gran made pancakes. whisk 2 eggs into 250 ml of milk. \
             sift 120 g of flour into a bowl. pour the milk in slowly. \
             don't overmix, a few lumps are fine. rest the batter for 30 mins",
        );
        assert!(facts.iter().all(|f| f.tier != Tier::Rules), "{facts:#?}");
        let steps = facts
            .iter()
            .find(|f| f.body.contains("overmix"))
            .expect("the step is kept");
        assert_eq!(steps.tier, Tier::Skills, "{facts:#?}");
        assert!(steps.body.contains("Sift 120 g"), "{facts:#?}");
        // A rule beside a request or two is still a rule: they are no how-to.
        let facts = told(
            "never book anything for me on mondays. write me a plan for the week. \
             send it over tonight",
        );
        assert!(facts.iter().any(|f| f.tier == Tier::Rules), "{facts:#?}");
        // Nor is a "don't" in a how-to that speaks to the assistant one of its steps.
        let facts = told(
            "whisk 2 eggs into 250 ml of milk. sift 120 g of flour into a bowl. \
             pour the milk in slowly. don't ever suggest a recipe with pork to me",
        );
        assert!(
            facts
                .iter()
                .any(|f| f.tier == Tier::Rules && f.body.contains("pork")),
            "{facts:#?}"
        );
    }

    #[test]
    fn clauses_cut_from_one_sentence_are_written_back_as_sentences() {
        let facts = extract_named(&[
            ("Maren", "What colours did you pick for the mural?"),
            (
                "Oskar",
                "Blue calms me, so I wanted the mural to feel serene.",
            ),
        ]);
        let mural = facts
            .iter()
            .find(|f| f.body.contains("serene"))
            .expect("the statement is kept");
        assert!(
            mural.body.contains("Blue calms Oskar. Oskar wanted"),
            "{facts:#?}"
        );
        assert_eq!(
            joined(&["It rained".into(), "We stayed in.".into()]),
            "It rained. We stayed in."
        );
        assert_eq!(joined(&["Done!".into(), "Next.".into()]), "Done! Next.");
    }

    #[test]
    fn a_statement_with_no_topic_of_its_own_takes_its_message_s() {
        let facts = extract(
            "the loan repayments went up and the credit card bill is huge this month. \
             i'm terrified",
        );
        let terrified = facts
            .iter()
            .find(|f| f.body.contains("terrified"))
            .expect("the statement is kept");
        assert_eq!(terrified.topic, "money", "{facts:#?}");
        // Alone, it still fits nowhere, and is kept under the fallback.
        let alone = extract("i'm terrified");
        assert_eq!(alone.len(), 1);
        assert_eq!(alone[0].topic, topics::FALLBACK);
    }

    #[test]
    fn a_statement_of_the_speaker_s_that_fits_no_topic_goes_on_with_the_one_before() {
        // "i got 71%" says nothing of what was marked; it stays with the dissertation.
        let facts = extract("my dissertation went in on friday, a week early. i got 71%");
        assert_eq!(facts.len(), 1, "{facts:#?}");
        assert!(facts[0].body.contains("dissertation"), "{facts:#?}");
        assert!(facts[0].body.contains("71%"), "{facts:#?}");
        // A statement on a topic of its own is a memory of its own.
        let facts = extract("my dissertation went in on friday. i paid the credit card bill");
        assert_eq!(facts.len(), 2, "{facts:#?}");
        // Two statements that both fit no topic stay apart: joined, neither says more.
        let facts = extract("i was nervous the whole time. i felt relieved at the end");
        assert_eq!(facts.len(), 2, "{facts:#?}");
    }

    #[test]
    fn between_people_a_turn_with_no_topic_answers_the_one_before() {
        let facts = extract_named(&[
            (
                "Ana",
                "I went to my pottery class on Saturday and made a blue bowl.",
            ),
            ("Ben", "That looks gorgeous, well done!"),
            (
                "Ana",
                "I was so nervous about how the glaze would turn out.",
            ),
        ]);
        assert_eq!(about(&facts, "gorgeous").topic, "hobbies", "{facts:#?}");
        // The thanks for the praise is still about pottery: the exchange goes on.
        assert_eq!(about(&facts, "glaze").topic, "hobbies", "{facts:#?}");
        // Said to an assistant, the assistant's words are no topic of the user's.
        let facts = extract_turns(&[
            ("assistant", "How did the pottery class go?"),
            ("user", "the glaze came out a lovely deep blue in the end"),
        ]);
        assert_eq!(about(&facts, "glaze").topic, topics::FALLBACK, "{facts:#?}");
    }

    fn about<'a>(facts: &'a [Fact], words: &str) -> &'a Fact {
        facts
            .iter()
            .find(|f| f.body.contains(words))
            .unwrap_or_else(|| panic!("{words:?} is kept: {facts:#?}"))
    }

    #[test]
    fn a_pronoun_stands_for_a_person_named_in_reach() {
        // Named in a lead-in, the person is who "she" is, in the reply after it too.
        let facts = extract_turns(&[
            ("user", "Dr Lindgren this morning. She says my iron is low."),
            ("assistant", "Noted, low iron."),
            ("user", "She wrote a new prescription for the tablets."),
        ]);
        assert_eq!(about(&facts, "prescription").subject, "Dr Lindgren");
        // Named by the assistant, just before the reply.
        let facts = extract_turns(&[
            ("user", "my knee is sore again after the run."),
            ("assistant", "Did Dr Maple give you exercises for it?"),
            ("user", "she gave me three stretches, twice a day."),
        ]);
        assert_eq!(about(&facts, "stretches").subject, "Dr Maple");
    }

    #[test]
    fn a_pronoun_does_not_reach_a_person_named_long_before() {
        // Gráinne was named five turns back; "she" is no longer her. The statement is
        // kept, under the speaker.
        let facts = extract_turns(&[
            ("user", "my viva is on the 10th with my supervisor Gráinne."),
            ("assistant", "Good luck."),
            ("user", "the flat needs a new boiler, it is freezing."),
            ("assistant", "Annoying."),
            ("user", "we're getting a green sofa next month."),
            ("assistant", "Lovely."),
            ("user", "she's settling in really well at the new place."),
        ]);
        assert_eq!(about(&facts, "settling in").subject, "User");
    }

    #[test]
    fn a_pronoun_after_someone_unnamed_is_not_the_person_named_before() {
        // "she" is the aunt the message speaks of, not Gráinne of the turn before.
        let facts = extract_turns(&[
            ("user", "my viva is on the 10th with my supervisor Gráinne."),
            ("assistant", "Good luck."),
            (
                "user",
                "visited my aunt in the hospital. she's doing better now.",
            ),
        ]);
        assert_eq!(about(&facts, "doing better").subject, "User");
        // With no one unnamed in between, "she" is still Gráinne.
        let facts = extract_turns(&[
            ("user", "my viva is on the 10th with my supervisor Gráinne."),
            ("assistant", "Good luck."),
            ("user", "she's the toughest examiner in the department."),
        ]);
        assert_eq!(about(&facts, "toughest").subject, "Gráinne");
    }

    #[test]
    fn she_is_the_person_the_text_makes_a_woman_and_he_a_man() {
        // Invented names; the kin words say who is who.
        let facts = extract(
            "My sister Ines is 35. She lives in Aarhus with her husband Halvard Lind. \
             She's a pharmacist at the city hospital.",
        );
        assert_eq!(about(&facts, "pharmacist").subject, "Ines");
        let facts = extract(
            "My brother Kasper is 30. He lives in Aarhus with his wife Mette. \
             He's a carpenter at a boatyard.",
        );
        assert_eq!(about(&facts, "carpenter").subject, "Kasper");
    }

    #[test]
    fn a_relative_clause_is_about_the_name_it_follows() {
        let facts = extract(
            "My daughter Ines lives in Aarhus with her husband Halvard Lind, who's Swedish \
             and works in shipping.",
        );
        let f = about(&facts, "Swedish");
        assert_eq!(f.subject, "Halvard Lind", "{facts:#?}");
        assert!(f.body.starts_with("Halvard Lind's Swedish"), "{facts:#?}");
        // About the one its clause before is about, it stays on that clause's sentence
        // as said, not a sentence of its own that repeats the name.
        let facts = extract("My friend Tomo Arai, who's Japanese, is staying with me.");
        let f = about(&facts, "Japanese");
        assert_eq!(f.subject, "Tomo Arai", "{facts:#?}");
        assert_eq!(
            f.body, "User's friend Tomo Arai, who's Japanese, is staying with User.",
            "{facts:#?}"
        );
    }

    #[test]
    fn a_pronoun_keeps_its_person_whatever_the_topic() {
        // "he teaches geography" turns from family to work, and is still about Callan.
        let facts =
            extract("also my boyfriend's Callan. he teaches geography at a secondary school.");
        assert_eq!(about(&facts, "geography").subject, "Callan", "{facts:#?}");
    }

    #[test]
    fn a_short_statement_that_names_its_subject_is_no_lead_in() {
        // "yusra moved out today" is four words and a statement about Yusra, not a
        // lead-in to what the speaker says next.
        let facts = extract_turns(&[
            ("user", "my flatmate Yusra is a pharmacist."),
            ("assistant", "Nice."),
            ("user", "yusra moved out today. i miss her already."),
        ]);
        assert_eq!(about(&facts, "moved out").subject, "Yusra", "{facts:#?}");
    }

    #[test]
    fn a_person_named_twice_in_a_row_is_one_subject() {
        // A first name, then the full name: one person, one memory, the fuller name.
        let facts = extract_turns(&[
            (
                "user",
                "Yvette downstairs will feed the cat. Yvette Girardin, on the ground floor, has my key.",
            ),
            ("assistant", "Good."),
        ]);
        let f = about(&facts, "feed the cat");
        assert!(f.body.contains("has User's key"), "{facts:#?}");
        assert_eq!(f.subject, "Yvette Girardin", "{facts:#?}");
        // Two people who only share a word that is neither's whole name stay apart.
        let facts = extract_turns(&[
            ("user", "Anna Berg is my dentist. Anna Kowalski is my boss."),
            ("assistant", "Noted."),
        ]);
        assert_eq!(about(&facts, "dentist").subject, "Anna Berg", "{facts:#?}");
        assert_eq!(about(&facts, "boss").subject, "Anna Kowalski", "{facts:#?}");
    }

    #[test]
    fn a_rule_after_a_label_or_a_word_of_lead_in_is_a_rule() {
        let facts = extract_turns(&[
            (
                "user",
                "Good. One more thing while I think of it: never book anything for me on a Thursday morning. Thursday is market day.",
            ),
            ("assistant", "Noted."),
            ("user", "random but always give drug doses in mg"),
            ("assistant", "Will do."),
        ]);
        let thursday = about(&facts, "ever book anything");
        assert_eq!(thursday.tier, Tier::Rules, "{facts:#?}");
        assert!(
            thursday.title.starts_with("Never book anything"),
            "{facts:#?}"
        );
        let doses = about(&facts, "drug doses");
        assert_eq!(doses.tier, Tier::Rules, "{facts:#?}");
        assert!(!doses.title.contains("andom"), "{facts:#?}");
    }

    #[test]
    fn a_pronoun_read_as_one_person_is_not_another_of_the_other_gender() {
        // "he" is Piotr; the "she" after the comma is Ailsa, not Piotr again.
        let facts = extract_turns(&[
            (
                "user",
                "Piotr Nowak, one of the senior porters. He showed me round with Ailsa Kerrigan, she's the deputy manager.",
            ),
            ("assistant", "Good luck."),
        ]);
        assert_eq!(
            about(&facts, "deputy manager").subject,
            "Ailsa Kerrigan",
            "{facts:#?}"
        );
    }

    #[test]
    fn a_pronoun_for_someone_the_session_names_is_not_flagged() {
        // Mochi (a cat, but nothing here says so) is the "she"; the "her" of the next
        // message is not left for reconciliation to give to a person of another memory.
        let facts = extract_turns(&[
            ("user", "hiya. i live in a flat with Mochi."),
            ("assistant", "Nice."),
            (
                "user",
                "mochi had her jabs monday at the vets. she's 6kg and a bit chunky",
            ),
            ("assistant", "Poor Mochi."),
            (
                "user",
                "also the vet showed me a trick for her worming tablet: give her a bit of chicken first",
            ),
            ("assistant", "Saved."),
        ]);
        let f = about(&facts, "worming tablet");
        assert!(f.unresolved.is_empty(), "{facts:#?}");
    }

    #[test]
    fn a_lead_in_with_nothing_kept_after_it_is_kept_alone() {
        // The question after it is dropped; the fragment is all the speaker said.
        let facts = extract_turns(&[
            (
                "user",
                "three nights starting tonight. how long should i sleep before?",
            ),
            ("assistant", "About four hours."),
        ]);
        about(&facts, "Three nights starting");
        assert!(
            !facts.iter().any(|f| f.body.contains("sleep")),
            "{facts:#?}"
        );
    }

    #[test]
    fn a_request_is_kept_as_what_the_speaker_said() {
        // What someone asks for says what they want or plan, and may be the only place
        // a thing is named.
        let facts = extract_turns(&[
            (
                "user",
                "can you do me a revision plan for the drug calcs section? you know the rule",
            ),
            ("assistant", "Here it is."),
            (
                "user",
                "Rose wants a real art set. Remind me at the start of October to post it.",
            ),
        ]);
        about(&facts, "drug calcs section");
        about(&facts, "start of October");
    }

    #[test]
    fn a_clause_that_points_back_says_what_it_points_to() {
        // "never suggest recipes with it" alone does not say what "it" is; the clause
        // before it in the message does. (Invented examples.)
        let rule = |content: &str| {
            let facts = extract_turns(&[("user", content), ("assistant", "Noted.")]);
            facts
                .iter()
                .find(|f| f.tier == Tier::Rules)
                .unwrap_or_else(|| panic!("no rule in {facts:?}"))
                .body
                .clone()
        };
        let body = rule("oh and i'm allergic to shellfish so never suggest recipes with it");
        assert!(
            body.contains("shellfish") && body.ends_with("with it"),
            "{body}"
        );
        // A rule that names what it is about stands alone.
        let body = rule("i'm allergic to shellfish so never suggest recipes with prawns");
        assert!(!body.contains("shellfish"), "{body}");
        // Chatter before it is nothing to point to.
        let body = rule("thanks! never book anything on it");
        assert!(!body.contains("Thanks"), "{body}");
    }

    #[test]
    fn a_short_remark_stays_with_what_it_remarks_on() {
        // After a statement: with it. First in the message: leading into the next.
        let facts = extract_turns(&[
            ("assistant", "How was the new supervisor?"),
            (
                "user",
                "met marcus on teams yesterday. seems fine? very dry. we're doing \
                 fortnightly catch ups",
            ),
            ("assistant", "What matters most in the next car?"),
            ("user", "reliable. buses to the hospital at 7pm are grim"),
        ]);
        let marcus = about(&facts, "Met marcus");
        assert!(marcus.body.contains("Seems fine? Very dry."), "{facts:#?}");
        let buses = about(&facts, "Buses to the hospital");
        assert!(buses.body.contains("Reliable."), "{facts:#?}");
        assert!(buses.title.starts_with("Buses"), "{facts:#?}");
        // Said alone, or with only chatter, a remark is not kept by itself.
        assert!(extract("very dry. thanks!").is_empty());
    }

    #[test]
    fn a_reply_quotes_the_question_before_an_aside_the_message_ends_on() {
        for asked in [
            "How often do you all work out together?",
            "How often do you all work out together? (image: three people at a gym)",
        ] {
            let facts = extract_turns(&[
                ("assistant", asked),
                ("user", "three times a week, usually at the climbing wall"),
            ]);
            assert!(
                facts.iter().any(|f| f
                    .body
                    .starts_with("In answer to \"How often do you all work out together?\"")),
                "{asked}: {facts:#?}"
            );
            // Between people the reply quotes the whole turn, its caption left out.
            let facts = extract_named(&[
                ("Alice", asked),
                ("Bob", "Three times a week, usually at the climbing wall."),
            ]);
            assert!(
                facts.iter().any(|f| f.body.starts_with(
                    "In reply to Alice (\"How often do you all work out together?\"): "
                )),
                "{asked}: {facts:#?}"
            );
        }
        assert_eq!(without_closing_aside("Coming? (no pressure)"), "Coming?");
        assert_eq!(without_closing_aside("(a picture)"), "(a picture)");
        assert_eq!(without_closing_aside("odd) end)"), "odd) end)");
        assert_eq!(without_closing_aside("f(x (y))"), "f");
        assert_eq!(without_closing_aside("no aside here"), "no aside here");
    }

    #[test]
    fn between_people_a_reply_keeps_the_turn_it_answers() {
        // "They were awestruck." says nothing of what awed them: the turn before does.
        let facts = extract_named(&[
            (
                "Ana",
                "I took my kids to the military memorial last weekend. What did yours think of it?",
            ),
            ("Ben", "They were awestruck and humbled."),
            ("Ana", "Mine too."),
        ]);
        let reply = about(&facts, "awestruck");
        assert!(
            reply.body.starts_with(
                "In reply to Ana (\"I took my kids to the military memorial last weekend. \
                 What did yours think of it?\"): "
            ),
            "{facts:#?}"
        );
        // Its words come from both turns, so it cites both; Ana's first turn, which
        // quotes nothing, cites its own message only.
        assert_eq!(reply.messages, vec![0, 1], "{facts:#?}");
        assert_eq!(about(&facts, "military memorial").messages, vec![0]);
        // A turn too long to quote whole is quoted by its end, and not cited: the reply
        // does not hold it.
        let long = format!(
            "{} What did yours think of it?",
            "We walked along the old harbour wall for hours.".repeat(12)
        );
        let facts = extract_named(&[("Ana", &long), ("Ben", "They were awestruck and humbled.")]);
        let reply = about(&facts, "awestruck");
        assert!(
            reply.body.starts_with("In reply to Ana (\"… "),
            "{facts:#?}"
        );
        assert_eq!(reply.messages, vec![1], "{facts:#?}");
        // Three people: the turn before is whoever spoke last, not one fixed other.
        let facts = extract_named(&[
            ("Ana", "The new bakery on Elm Street opened on Friday."),
            ("Ben", "I had no idea!"),
            ("Cleo", "I bought their sourdough there, it was excellent."),
        ]);
        let sourdough = about(&facts, "sourdough");
        assert!(
            sourdough
                .body
                .starts_with("In reply to Ben (\"I had no idea!\"): "),
            "{facts:#?}"
        );
        // Nobody's reply to themselves, and no turn before the first.
        let facts = extract_named(&[
            ("Ana", "I adopted a greyhound called Pip."),
            ("Ana", "He sleeps twenty hours a day."),
        ]);
        assert!(
            facts.iter().all(|f| !f.body.contains("In reply to")),
            "{facts:#?}"
        );
        assert!(facts.iter().all(|f| f.messages.len() == 1), "{facts:#?}");
        // To an assistant, the turn before is the assistant's and is not quoted whole.
        let facts = extract_turns(&[
            ("assistant", "Great to hear about the memorial trip."),
            ("user", "the kids were awestruck and humbled"),
        ]);
        assert!(
            facts.iter().all(|f| !f.body.contains("In reply to")),
            "{facts:#?}"
        );
        assert!(facts.iter().all(|f| f.messages == vec![1]), "{facts:#?}");
    }

    #[test]
    fn a_long_turn_is_quoted_by_its_end() {
        assert_eq!(
            turn_said("  Coming   to the\nparty? (image: a cake) "),
            Some("Coming to the party?".into())
        );
        assert_eq!(turn_said("(image: a cake)"), Some("(image: a cake)".into()));
        assert_eq!(turn_said("   "), None);
        // Sentences: the last ones that fit, whole.
        let filler = "This is one more sentence of ten words to pad it. ".repeat(9);
        let quoted = turn_said(&format!("{filler}So what did you think of it?")).expect("quoted");
        assert!(
            quoted.starts_with("… This is") && quoted.ends_with("think of it?"),
            "{quoted}"
        );
        assert!(
            quoted.split_whitespace().count() <= QUOTED_WORDS + 1,
            "{quoted}"
        );
        // One sentence longer than the bound: its last words.
        let long = format!("{} end", "word ".repeat(500));
        let quoted = turn_said(&long).expect("quoted");
        assert_eq!(quoted.split_whitespace().count(), QUOTED_WORDS + 1);
        assert!(
            quoted.starts_with("… word") && quoted.ends_with(" end"),
            "{quoted}"
        );
        // A blob with no spaces: its last bytes, at a character's boundary.
        let blob = "é".repeat(5000);
        let quoted = turn_said(&blob).expect("quoted");
        assert!(quoted.len() <= QUOTED_BYTES + 4, "{}", quoted.len());
        assert!(quoted.starts_with("… é") && quoted.ends_with('é'));
        // Long words: the bound in bytes holds, cut at a word.
        let long_words = format!("{} the end", "abcdefghijklmnopqrstuvwxyz ".repeat(60));
        let quoted = turn_said(&long_words).expect("quoted");
        assert!(
            quoted.len() <= QUOTED_BYTES + 4 && quoted.starts_with("… abc"),
            "{quoted}"
        );
        assert!(quoted.ends_with(" the end"), "{quoted}");
    }
}
