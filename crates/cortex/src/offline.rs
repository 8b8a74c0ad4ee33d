//! The offline extractor: deterministic, no model, no network.
//!
//! Per user message: split into sentences; resolve dates against the session day;
//! spot names (capitalised runs, names the store already knows); decide each
//! sentence's subject — a name it is about, else the subject of the sentence before
//! when it refers back ("It consumes…", fragments), else the user — and group
//! sentences by subject, so two things said in one breath become two facts (I1).
//! Each fact gets a tier and topic from keyword templates, cues from templates, and
//! a flag on a person pronoun the session never names.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use gitloom_model::{Tier, fold_name};
use regex::Regex;

use crate::dates::{self, Found};
use crate::error::CortexError;
use crate::extract::{Dated, ExtractContext, Extractor, Fact, FactEntity};
use crate::session::Session;
use crate::text::{self, Lexicon, Spotted};

/// The offline extractor. Stateless; construct with `OfflineExtractor`.
#[derive(Debug, Clone, Copy, Default)]
pub struct OfflineExtractor;

struct Category {
    topic: &'static str,
    keywords: &'static [&'static str],
    cues: &'static [&'static str],
}

const CATEGORIES: &[Category] = &[
    Category {
        topic: "work",
        keywords: &[
            "job",
            "work",
            "works",
            "employer",
            "offer",
            "hired",
            "joined",
            "engineer",
            "manager",
            "team",
            "office",
            "colleague",
            "company",
            "career",
            "role",
            "position",
            "salary",
            "promotion",
            "resigned",
            "quit",
            "interview",
            "last day",
            "startup",
            "intern",
            "boss",
            "client",
            "customer",
        ],
        cues: &["what is my job", "what do I do at my job"],
    },
    Category {
        topic: "home",
        keywords: &[
            "live",
            "lives",
            "living",
            "flat",
            "apartment",
            "house",
            "moved",
            "landlord",
            "neighbour",
            "neighbor",
            "room",
            "lift",
            "floor",
            "street",
            "building",
            "roommate",
            "home",
        ],
        cues: &["where do I live", "what is my home like"],
    },
    Category {
        topic: "diet",
        keywords: &[
            "vegetarian",
            "vegan",
            "pescatarian",
            "meat",
            "fish",
            "eat",
            "eating",
            "ate",
            "food",
            "diet",
            "gluten",
            "dairy",
            "chicken",
            "recipe",
            "allergic",
            "cook",
        ],
        cues: &["what do I eat", "what is my diet", "do I eat meat or fish"],
    },
    Category {
        topic: "pets",
        keywords: &[
            "cat", "dog", "pet", "vet", "kitten", "puppy", "litter", "breed", "groomer",
        ],
        cues: &[
            "do I have a pet",
            "what is my pet called",
            "who looks after my pet",
        ],
    },
    Category {
        topic: "people",
        keywords: &[
            "sister",
            "brother",
            "mother",
            "father",
            "mum",
            "dad",
            "parents",
            "family",
            "friend",
            "wife",
            "husband",
            "partner",
            "son",
            "daughter",
            "neighbour",
            "cousin",
        ],
        cues: &["who are the people in my life", "who is in my family"],
    },
    Category {
        topic: "travel",
        keywords: &[
            "trip", "travel", "flight", "fly", "flying", "booked", "visa", "e-visa", "passport",
            "hotel", "vacation", "holiday", "abroad", "airport", "stay",
        ],
        cues: &[
            "what are my travel plans",
            "when is my trip",
            "where am I travelling",
        ],
    },
    Category {
        topic: "purchases",
        keywords: &[
            "bought",
            "buy",
            "purchase",
            "purchases",
            "ordered",
            "euros",
            "price",
            "lens",
            "camera",
            "bundle",
            "kit",
        ],
        cues: &["what did I buy", "how much did it cost"],
    },
    Category {
        topic: "hardware",
        keywords: &[
            "gpu",
            "pc",
            "psu",
            "cpu",
            "ram",
            "watts",
            "laptop",
            "computer",
            "nvme",
            "ssd",
            "power",
            "shutdown",
            "installed",
            "graphics",
            "monitor",
            "keyboard",
        ],
        cues: &["what hardware do I have", "what is my computer setup"],
    },
    Category {
        topic: "health",
        keywords: &[
            "allergy",
            "allergic",
            "hay fever",
            "doctor",
            "medication",
            "sick",
            "pain",
            "injury",
            "mg",
            "symptoms",
            "hospital",
            "insurance",
            "dentist",
        ],
        cues: &["what health issues do I have", "do I take any medication"],
    },
    Category {
        topic: "education",
        keywords: &[
            "degree",
            "msc",
            "bsc",
            "btech",
            "phd",
            "university",
            "studied",
            "study",
            "school",
            "graduated",
            "masters",
            "bachelor",
        ],
        cues: &["what did I study", "where did I study"],
    },
    Category {
        topic: "languages",
        keywords: &[
            "language",
            "languages",
            "speak",
            "fluent",
            "tongue",
            "lesson",
            "grammar",
            "vocabulary",
            "fluently",
            "course",
            "certificate",
            "learning",
        ],
        cues: &["what languages do I speak", "which language am I learning"],
    },
    Category {
        topic: "hobbies",
        keywords: &[
            "climb",
            "bouldering",
            "photography",
            "hobby",
            "running",
            "gym",
            "guitar",
            "sport",
            "hiking",
            "painting",
            "drawing",
            "gaming",
            "shoot",
            "street",
        ],
        cues: &["what are my hobbies", "what do I do in my free time"],
    },
    Category {
        topic: "finance",
        keywords: &[
            "rent",
            "cost",
            "costs",
            "bill",
            "contract",
            "tariff",
            "a month",
            "pension",
            "bank",
            "tax",
            "standing order",
            "electricity",
            "internet",
        ],
        cues: &["how much do I pay", "what are my monthly costs"],
    },
    Category {
        topic: "events",
        keywords: &[
            "talk",
            "conference",
            "meeting",
            "appointment",
            "wedding",
            "birthday",
            "party",
            "deadline",
            "presentation",
            "slides",
            "concert",
        ],
        cues: &["what events do I have coming up", "what is on my calendar"],
    },
    Category {
        topic: "personal",
        keywords: &[
            "born",
            "grew up",
            "name",
            "age",
            "years old",
            "moved to",
            "background",
            "citizen",
        ],
        cues: &["where am I from", "what do I know about myself"],
    },
];

const RULE_CUES: &[&str] = &[
    "always",
    "never",
    "from now on",
    "make that a rule",
    "don't ever",
    "no emojis",
    "ever,",
    "do not ever",
    "i prefer",
    "i'd rather",
];
const INCIDENT_CUES: &[&str] = &[
    "broke",
    "broken",
    "crashed",
    "switched off",
    "failed",
    "outage",
    "lost",
    "threw up",
    "accident",
    "shut down",
    "shutdown",
    "stolen",
    "injured",
    "went wrong",
];
const SKILL_CUES: &[&str] = &["steps", "how to", "procedure", "instructions", "recipe"];
const ACK_START: &[&str] = &[
    "thanks", "thank", "perfect", "great", "ok", "okay", "cool", "nice", "sure", "yes", "no",
    "yeah", "yep", "done", "will", "later", "hmm", "maybe", "got", "sounds", "good", "awesome",
    "exactly", "right", "that's", "lol", "haha", "wow", "bye",
];
const REQUEST_START: &[&str] = &[
    "can",
    "could",
    "would",
    "please",
    "help",
    "write",
    "give",
    "show",
    "tell",
    "save",
    "remind",
    "let's",
    "let",
    "check",
    "make",
    "find",
    "draft",
    "translate",
    "explain",
    "summarise",
    "summarize",
    "list",
    "suggest",
    "create",
    "send",
];
const LEAD_ADVERBS: &[&str] = &[
    "also", "and", "but", "so", "then", "now", "actually", "oh", "well", "btw",
];
const BACK_PRONOUNS: &[&str] = &[
    "it", "it's", "its", "they", "they're", "their", "them", "he", "he's", "his", "him", "she",
    "she's", "her", "this", "that", "these", "those", "there", "both",
];
const PERSON_PRONOUNS: &[&str] = &[
    "he", "him", "his", "he's", "he'll", "she", "her", "hers", "she's", "she'll",
];
const FIRST_PERSON: &[&str] = &[
    "i", "i'm", "i've", "i'll", "i'd", "my", "me", "mine", "we", "we're", "we'll", "our", "us",
    "myself",
];

static EMPLOYER_START: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(offer from|start(?:ed|ing)? (?:at|with)|joined|join|(?:new |first |a )?job at|work(?:s|ing)? (?:at|for)|hired (?:at|by)|employed (?:at|by)|came for (?:my|a) (?:first )?job at)\s+(?:the\s+)?$")
        .expect("valid employer pattern")
});
static EMPLOYER_END: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(last day (?:at|with)|left|quit|resigned from|leaving)\s+(?:the\s+)?$")
        .expect("valid end pattern")
});

fn words_lower(s: &str) -> Vec<String> {
    s.split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-'))
                .replace('\u{2019}', "'")
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

fn has_phrase(lower_text: &str, phrases: &[&str]) -> bool {
    let padded = format!(" {lower_text} ");
    phrases.iter().any(|p| {
        if p.contains(' ') || p.contains(',') {
            padded.contains(p)
        } else {
            padded
                .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-' || c == ':'))
                .any(|w| w == *p)
        }
    })
}

/// A group of sentences about one subject.
struct Unit {
    subject: Option<Spotted>,
    user_topic: Option<&'static str>,
    rule: bool,
    skill: bool,
    sentences: Vec<String>,
    raw: Vec<String>,
    messages: BTreeSet<usize>,
    entities: Vec<FactEntity>,
    dates: Vec<(Found, String)>,
    unresolved: Vec<String>,
    employer_start: bool,
    employer_end: bool,
    start_date: Option<String>,
    end_date: Option<String>,
    /// Rules and how-tos are grouped per message, not per topic: each is its own memory.
    group: Option<usize>,
}

impl Unit {
    fn new(subject: Option<Spotted>, user_topic: Option<&'static str>) -> Unit {
        Unit {
            subject,
            user_topic,
            rule: false,
            skill: false,
            sentences: Vec::new(),
            raw: Vec::new(),
            messages: BTreeSet::new(),
            entities: Vec::new(),
            dates: Vec::new(),
            unresolved: Vec::new(),
            employer_start: false,
            employer_end: false,
            start_date: None,
            end_date: None,
            group: None,
        }
    }

    fn key(&self) -> String {
        match &self.subject {
            Some(s) => fold_name(&s.name),
            None => {
                format!(
                    "user/{}/{}",
                    if self.rule {
                        "r"
                    } else if self.skill {
                        "s"
                    } else {
                        "f"
                    },
                    self.user_topic.unwrap_or("general")
                ) + &self.group.map(|m| format!("/m{m}")).unwrap_or_default()
            }
        }
    }
}

fn categorise(text: &str) -> Option<&'static Category> {
    let lower = text.to_lowercase();
    let mut best: Option<(usize, &Category)> = None;
    for c in CATEGORIES {
        let n = c
            .keywords
            .iter()
            .filter(|k| has_phrase(&lower, &[**k]))
            .count();
        if n > 0 && best.is_none_or(|(b, _)| n > b) {
            best = Some((n, c));
        }
    }
    best.map(|(_, c)| c)
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

fn title_of(sentence: &str) -> String {
    let s = sentence.trim().trim_end_matches(['.', '!', ',', ';', ':']);
    if s.chars().count() <= 100 {
        return s.to_owned();
    }
    let mut out = String::new();
    for w in s.split_whitespace() {
        if out.chars().count() + w.chars().count() + 1 > 97 {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    out.trim_end_matches([',', ';', ':', '-']).to_owned() + "…"
}

fn entity_cues(name: &str, kind: Option<&str>) -> Vec<String> {
    match kind {
        Some("person") => vec![
            format!("who is {name}"),
            format!("what do I know about {name}"),
        ],
        Some("pet") => vec![format!("who is {name}"), "what is my pet called".into()],
        Some("org") => vec![
            format!("what is {name}"),
            format!("what do I know about {name}"),
        ],
        Some("place") => vec![
            format!("what about {name}"),
            format!("when was I in {name}"),
        ],
        Some("product") => vec![
            format!("what do I know about my {name}"),
            format!("when did I get the {name}"),
        ],
        _ => vec![format!("what do I know about {name}")],
    }
}

impl Extractor for OfflineExtractor {
    fn id(&self) -> String {
        format!("offline/{}", crate::EXTRACTOR_VERSION)
    }

    fn extract(&self, session: &Session, ctx: &ExtractContext) -> Result<Vec<Fact>, CortexError> {
        let anchor = session.day()?;
        let mut lex = Lexicon::default();
        for k in &ctx.known {
            lex.add_known(&k.name, k.kind.clone());
        }
        lex.learn(&ctx.run_text);
        for (_, m) in session.user_messages() {
            lex.learn(&m.content);
        }
        let mut units: Vec<Unit> = Vec::new();
        let mut last: Option<usize> = None;
        let mut session_has_person = false;
        for (mi, m) in session.user_messages() {
            let mut last_in_msg: Option<usize> = None;
            for sentence in text::sentences(&m.content) {
                let lower = sentence.to_lowercase().replace('\u{2019}', "'");
                let words = words_lower(&sentence);
                let Some(first) = words.iter().find(|w| !LEAD_ADVERBS.contains(&w.as_str())) else {
                    continue;
                };
                let is_rule = has_phrase(&lower, RULE_CUES);
                let addresses_assistant = has_phrase(&lower, &["you", "your", "you're", "you'll"]);
                let is_question = sentence.trim_end().ends_with('?');
                let spots = lex.spot(&sentence);
                // "Perfect, thanks." / "Maybe later, he'll know better than both of us."
                let is_ack = ACK_START.contains(&first.as_str())
                    && (words.len() <= 5
                        || (words.len() <= 10
                            && spots.is_empty()
                            && !sentence.chars().any(|c| c.is_ascii_digit())));
                let is_save = matches!(first.as_str(), "save" | "remember" | "note")
                    && sentence.contains(':');
                let is_request = REQUEST_START.contains(&first.as_str()) && !is_save;
                if !is_rule && (is_question || is_ack || is_request || addresses_assistant) {
                    continue;
                }
                if spots
                    .iter()
                    .any(|s| matches!(s.kind.as_deref(), Some("person" | "pet")))
                {
                    session_has_person = true;
                }
                // A lone short acronym ("ML", "PSU") is a term, not what a sentence is about.
                let term = |s: &Spotted| {
                    !s.name.contains(' ')
                        && s.name.len() <= 4
                        && s.name.chars().all(|c| !c.is_lowercase())
                        && s.kind.is_none()
                };
                let strong = spots.iter().find(|s| s.prep.is_none() && !term(s));
                let weak = spots.iter().find(|s| {
                    s.prep
                        .as_deref()
                        .is_some_and(|p| matches!(p, "at" | "from" | "with" | "by" | "of"))
                });
                let pronoun_start = BACK_PRONOUNS.contains(&first.as_str());
                let first_person = words.iter().any(|w| FIRST_PERSON.contains(&w.as_str()));
                // A pronoun refers back only if it comes before any name the sentence gives
                // ("…first job at Helio Vision, they make drones": "they" is Helio Vision).
                let first_name_at = spots.first().map_or(usize::MAX, |s| s.at);
                let back_ref = words
                    .iter()
                    .take(first_name_at)
                    .any(|w| BACK_PRONOUNS.contains(&w.as_str()))
                    || lower.contains("each other");
                let carry = last_in_msg.or(if pronoun_start { last } else { None });

                let sentence_topic = categorise(&sentence).map(|c| c.topic);
                let we = words
                    .iter()
                    .any(|w| matches!(w.as_str(), "we" | "we're" | "we'll" | "us" | "our"));
                // A name is what the sentence is about when it opens the sentence, when the
                // user says something about it, or when there is nothing to continue.
                let strong = strong.filter(|s| {
                    s.at <= 1
                        || first_person
                        || carry.is_none()
                        || s.kind.as_deref() == Some("person")
                });
                // After "at"/"from"/"with" only a named org, person or pet, or an
                // employer phrase ("offer from X", "last day at X"), makes a subject.
                let weak = weak.filter(|s| {
                    let employment = sentence.find(s.name.as_str()).is_some_and(|pos| {
                        EMPLOYER_START.is_match(&sentence[..pos])
                            || EMPLOYER_END.is_match(&sentence[..pos])
                    });
                    (employment || matches!(s.kind.as_deref(), Some("org" | "person" | "pet")))
                        && (carry.is_none() || (first_person && !back_ref))
                });
                let continues = |c: usize| {
                    let u = &units[c];
                    let person = u
                        .subject
                        .as_ref()
                        .is_some_and(|s| matches!(s.kind.as_deref(), Some("person" | "pet")));
                    !first_person
                        || back_ref
                        || (we && person)
                        || sentence_topic.is_none()
                        || sentence_topic == categorise(&u.raw.join(" ")).map(|c| c.topic)
                };

                let target = if is_rule || is_save {
                    let topic = if is_save { "procedures" } else { "preferences" };
                    let mut u = Unit::new(None, Some(topic));
                    u.rule = is_rule && !is_save;
                    u.skill = is_save;
                    u.group = Some(mi);
                    find_or_push(&mut units, u)
                } else if let Some(s) = strong {
                    find_or_push(&mut units, Unit::new(Some(s.clone()), None))
                } else if let (true, Some(c)) = (pronoun_start, carry) {
                    c
                } else if let Some(s) = weak {
                    find_or_push(&mut units, Unit::new(Some(s.clone()), None))
                } else if let Some(c) = carry.filter(|c| continues(*c)) {
                    c
                } else if first_person || !spots.is_empty() {
                    let topic = sentence_topic.unwrap_or("general");
                    let mut u = Unit::new(None, Some(topic));
                    u.group = Some(mi);
                    find_or_push(&mut units, u)
                } else {
                    // Nothing to attach it to and nobody in it: chatter.
                    continue;
                };
                let u = &mut units[target];
                let (resolved, found) = dates::resolve(&sentence, anchor);
                let body_sentence = if u.skill {
                    let after = resolved
                        .split_once(':')
                        .map_or(resolved.as_str(), |(_, a)| a)
                        .trim();
                    text::third_person(after)
                } else {
                    text::third_person(&resolved)
                };
                // "on 2026-05-29 is my last day" reads as a sentence again.
                let body_sentence = if sentence.starts_with(char::is_uppercase) {
                    capitalise(&body_sentence)
                } else {
                    body_sentence
                };
                if u.sentences.contains(&body_sentence) {
                    continue;
                }
                for f in &found {
                    u.dates.push((*f, body_sentence.clone()));
                }
                // Employment: a start or end phrase right before the subject's name.
                if let Some(sub) = &u.subject {
                    if let Some(pos) = sentence.find(sub.name.split(' ').next().unwrap_or_default())
                    {
                        let before = &sentence[..pos];
                        if EMPLOYER_START.is_match(before) {
                            u.employer_start = true;
                            let start = found.first().map_or(anchor, |f| f.date);
                            u.start_date.get_or_insert(start.to_string());
                        }
                        if EMPLOYER_END.is_match(before) {
                            u.employer_end = true;
                            let end = found.iter().find(|f| !f.coarse).map_or(anchor, |f| f.date);
                            u.end_date = Some(end.to_string());
                        }
                    }
                    if u.employer_start
                        && u.start_date.is_some()
                        && has_phrase(&lower, &["start", "starting", "begin"])
                        && let Some(f) = found.iter().find(|f| !f.coarse)
                    {
                        u.start_date = Some(f.date.to_string());
                    }
                }
                for s in &spots {
                    if !u
                        .entities
                        .iter()
                        .any(|e| fold_name(&e.name) == fold_name(&s.name))
                    {
                        u.entities.push(FactEntity {
                            name: s.name.clone(),
                            kind: s.kind.clone(),
                        });
                    }
                }
                let subject_is_person = u
                    .subject
                    .as_ref()
                    .is_some_and(|s| matches!(s.kind.as_deref(), Some("person" | "pet")));
                for w in &words {
                    if PERSON_PRONOUNS.contains(&w.as_str())
                        && !subject_is_person
                        && !u.unresolved.contains(w)
                    {
                        u.unresolved.push(w.clone());
                    }
                }
                u.sentences.push(body_sentence);
                u.raw.push(sentence.clone());
                u.messages.insert(mi);
                last_in_msg = Some(target);
                last = Some(target);
            }
        }
        let mut facts = Vec::new();
        for u in units {
            if u.sentences.is_empty() {
                continue;
            }
            let unresolved = if session_has_person {
                Vec::new()
            } else {
                u.unresolved.clone()
            };
            facts.push(build_fact(u, unresolved, ctx, &session.id));
        }
        Ok(facts)
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) if f.is_lowercase() => f.to_uppercase().chain(c).collect(),
        _ => s.to_owned(),
    }
}

fn find_or_push(units: &mut Vec<Unit>, u: Unit) -> usize {
    let key = u.key();
    if let Some(i) = units.iter().position(|x| x.key() == key) {
        return i;
    }
    units.push(u);
    units.len() - 1
}

fn build_fact(u: Unit, unresolved: Vec<String>, ctx: &ExtractContext, session_id: &str) -> Fact {
    let body = u.sentences.join(" ");
    let raw = u.raw.join(" ");
    let category = categorise(&raw);
    let lower = raw.to_lowercase();
    let tier = if u.rule {
        Tier::Rules
    } else if u.skill || (has_phrase(&lower, SKILL_CUES) && raw.contains(':')) {
        Tier::Skills
    } else if u.subject.is_none() && has_phrase(&lower, INCIDENT_CUES) {
        Tier::Incidents
    } else {
        Tier::Facts
    };
    let topic = match (u.user_topic, u.employer_start || u.employer_end) {
        (_, true) => "work",
        (Some(t), _) if t != "general" => t,
        _ => match (&u.subject, category) {
            (Some(s), _)
                if s.kind.as_deref() == Some("person")
                    && category.is_none_or(|c| c.topic == "people") =>
            {
                "people"
            }
            (Some(s), _) if s.kind.as_deref() == Some("pet") => "pets",
            (_, Some(c)) => c.topic,
            _ => "general",
        },
    };
    let topic = reuse_topic(topic, &ctx.topics);
    let (subject, kind) = match &u.subject {
        Some(s) => (s.name.clone(), s.kind.clone()),
        // A rule or how-to is its own subject, named by its first content words, so
        // "metric units" and "Python style" are two memories, each stable across runs.
        None if u.rule || u.skill => {
            let words: Vec<String> = text::content_words_ordered(&raw)
                .into_iter()
                .take(5)
                .collect();
            (
                format!(
                    "{} {}",
                    if u.rule { "rule" } else { "howto" },
                    words.join(" ")
                ),
                None,
            )
        }
        None => ("User".to_owned(), None),
    };
    let mut cues: Vec<String> = Vec::new();
    if u.employer_start || u.employer_end {
        cues.extend(
            [
                "where do I work",
                "who is my employer",
                "what company do I work for",
            ]
            .map(String::from),
        );
    }
    if u.subject.is_some() {
        cues.extend(entity_cues(&subject, kind.as_deref()));
    }
    let subject_is_label = u.subject.is_none() && (u.rule || u.skill);
    if let Some(c) = CATEGORIES
        .iter()
        .find(|c| c.topic == topic.rsplit('/').next().unwrap_or_default())
        .or(category)
    {
        cues.extend(c.cues.iter().map(|s| s.to_string()));
    }
    if u.rule {
        cues.extend(
            [
                "how should answers be written",
                "what are my preferences",
                "what rules should you follow",
            ]
            .map(String::from),
        );
    }
    if u.skill {
        cues.extend(["how do I do this", "what are the steps"].map(String::from));
    }
    // At least three keys: pad with generic questions about the topic.
    let t = topic
        .rsplit('/')
        .next()
        .unwrap_or("general")
        .replace('-', " ");
    let mut seen = BTreeSet::new();
    cues.retain(|c| seen.insert(c.to_lowercase()));
    // With no topic, the fact's own first content words stand in for one.
    let t = if t == "general" {
        text::content_words_ordered(&u.sentences[0])
            .into_iter()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        t
    };
    for pad in [
        format!("what do I know about my {t}"),
        format!("what did I say about {t}"),
        if subject_is_label {
            "what are my preferences".to_owned()
        } else {
            format!("what do I know about {subject}")
        },
        format!("tell me about {subject}"),
        format!("what did I tell you about {subject}"),
    ] {
        if cues.len() < 3 && !pad.ends_with(' ') && seen.insert(pad.to_lowercase()) {
            cues.push(pad);
        }
    }
    cues.truncate(6);
    let mut timeline: Vec<Dated> = u
        .dates
        .iter()
        .map(|(f, s)| Dated {
            date: f.date.to_string(),
            text: title_of(s),
        })
        .collect();
    timeline.sort_by(|a, b| a.date.cmp(&b.date));
    timeline.dedup();
    let mut tags = vec![topic.rsplit('/').next().unwrap_or("general").to_owned()];
    let slot = u.employer_start.then(|| "employer".to_owned());
    if slot.is_some() || u.employer_end {
        tags.push("employer".into());
    }
    tags.dedup();
    let mut entities = u.entities;
    if let Some(s) = &u.subject
        && let Some(i) = entities
            .iter()
            .position(|e| fold_name(&e.name) == fold_name(&s.name))
    {
        let e = entities.remove(i);
        entities.insert(0, e);
    }
    let group = (u.subject.is_none() && !u.rule && !u.skill)
        .then(|| u.group.map(|m| format!("{session_id}/m{m}")))
        .flatten();
    Fact {
        subject,
        tier,
        topic,
        title: title_of(&u.sentences[0]),
        body,
        entities,
        cues,
        tags,
        slot,
        ends_slot: u.employer_end,
        valid_from: u.start_date,
        valid_to: u.end_date,
        timeline,
        confidence: if unresolved.is_empty() { 0.7 } else { 0.5 },
        messages: u.messages.into_iter().collect(),
        unresolved,
        group,
    }
}
