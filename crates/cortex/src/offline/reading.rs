//! A session read into units, message by message and clause by clause: the offline
//! extractor's one pass over a conversation ([`Reading`]). Each stage is a method:
//! a message sets up its [`Turn`] (who speaks, to whom, what they were just asked,
//! its clauses and their acts); each clause is then a remark joined to what it
//! remarks on, a lead-in kept for the statement after it, or a statement, whose
//! subject is decided ([`Reading::subject_of`]), whose unit is found or made
//! ([`Reading::unit_for`]) and which is written into that unit ([`record`]); last, a
//! message's units that no words placed under a topic take the message's own.
//!
//! What it is not: titles, cues, topics and tiers of the facts (`build_fact` in the
//! module above, from the finished units).

use jiff::civil::Date;

use super::gender::Genders;
use super::speech::{self, Act};
use super::subject::{self, Link, Speaker, Subject};
use super::{
    PERSON_PRONOUNS, PRONOUN_REACH, TOPIC_REACH, Unit, dedup_spots, employer_named, employment,
    last_question, name_persons, named_in, place, points_back, says_start, topics, turn_said,
    without_names,
};
use crate::dates::{self, Found};
use crate::extract::FactEntity;
use crate::session::{Message, Session};
use crate::text::{self, Lexicon, Spotted, capitalise};
use gitloom_model::fold_name;

/// The state a session's reading carries from message to message.
pub(super) struct Reading<'a> {
    session: &'a Session,
    lex: &'a Lexicon,
    /// The session's day, which relative dates are resolved against.
    anchor: Date,
    speakers: Vec<String>,
    /// With an assistant in the conversation, "you" is the assistant; between named
    /// people, the other one.
    addressed: bool,
    units: Vec<Unit>,
    /// The subject of the last unit, with the message it was said in: a pronoun
    /// reaches back only `PRONOUN_REACH` messages.
    carry: Option<(Subject, usize)>,
    /// The persons named lately, the last one last, each with its message.
    persons: Vec<(Spotted, usize)>,
    genders: Genders,
    /// The first message not yet read for the names the assistant said.
    spoken_before: usize,
    /// Whether the session names any person (its pronouns then need no flag).
    named_person: bool,
}

/// One message being read: what its clauses share.
struct Turn {
    mi: usize,
    speaker: Speaker,
    /// Between two named people, the one spoken to.
    other: Option<String>,
    /// The first unit this message made.
    first_unit: usize,
    /// What the message before asked, if this message answers it.
    asked: Option<String>,
    /// Between named people, another's turn just before this one, as said, with
    /// their name.
    replying_to: Option<(String, String)>,
    clauses: Vec<String>,
    acts: Vec<Act>,
    /// The message is a how-to's steps ([`speech::is_procedure`]).
    procedure: bool,
    /// A short lead-in ("Sad news from Kerry.", "Big news:") waiting for the statement
    /// after it: as said, and as the memory says it.
    lead_in: Option<(String, String)>,
    /// The names of the clause before, for a relative clause after it.
    clause_before: Vec<Spotted>,
    /// The unit the message's last kept clause went to, for a remark on it.
    last_placed: Option<usize>,
}

/// Whether a clause of this act is kept as something said: a request is ("can you do
/// me a revision plan for the drug calcs section" is the only place the section is
/// named, "remind me in October to post it" is a plan, a recipe's imperatives are its
/// steps); chatter, questions to the assistant and remarks alone are not.
fn kept(a: Act) -> bool {
    !matches!(a, Act::Chatter | Act::Question | Act::Remark)
}

impl<'a> Reading<'a> {
    pub(super) fn new(session: &'a Session, lex: &'a Lexicon, anchor: Date) -> Reading<'a> {
        Reading {
            session,
            lex,
            anchor,
            speakers: session.speakers(),
            addressed: session
                .messages
                .iter()
                .any(|m| m.role.eq_ignore_ascii_case("assistant")),
            units: Vec::new(),
            carry: None,
            persons: Vec::new(),
            genders: Genders::default(),
            spoken_before: 0,
            named_person: false,
        }
    }

    /// The units read, and whether the session names any person.
    pub(super) fn finish(self) -> (Vec<Unit>, bool) {
        (self.units, self.named_person)
    }

    /// Reads message `mi` of the session, one of its speakers'.
    pub(super) fn read(&mut self, mi: usize, m: &Message) {
        let mut t = self.turn(mi, m);
        self.learn_assistant_names(mi);
        for ci in 0..t.clauses.len() {
            self.read_clause(&mut t, ci);
        }
        self.message_topic(&t, m);
    }

    /// The message's speaker, whom they speak to, what they answer and their clauses.
    fn turn(&self, mi: usize, m: &Message) -> Turn {
        let speaker = match m.speaker() {
            Some(n) => Speaker::Named(n.to_owned()),
            None => Speaker::User,
        };
        let other = match &speaker {
            Speaker::Named(n) if !self.addressed => {
                let others: Vec<&String> = self.speakers.iter().filter(|s| *s != n).collect();
                (others.len() == 1).then(|| others[0].clone())
            }
            _ => None,
        };
        // What the message before asked, if this message answers it ("What did it fail
        // on?" → "corroded brake pipes, …"): a reply means little alone.
        let asked = mi
            .checked_sub(1)
            .and_then(|p| self.session.messages.get(p))
            .filter(|p| p.speaker() != m.speaker() || p.role != m.role)
            .and_then(|p| last_question(&p.content));
        // Between people, a reply says little alone ("They were awestruck."): the
        // turn it answers is its context. To an assistant, the turn before is the
        // assistant's filler or recap, and its questions are quoted by `asked`.
        let replying_to = match &speaker {
            Speaker::Named(n) if !self.addressed => mi
                .checked_sub(1)
                .and_then(|p| self.session.messages.get(p))
                .and_then(|p| Some((p.speaker().filter(|s| s != n)?, turn_said(&p.content)?)))
                .map(|(who, said)| (who.to_owned(), said)),
            _ => None,
        };
        let clauses: Vec<String> = text::sentences(&m.content)
            .iter()
            .map(|s| match &other {
                Some(o) => speech::without_vocative(s, o),
                None => s.clone(),
            })
            .flat_map(|s| speech::clauses(&speech::clean(&s)))
            .collect();
        let mut acts: Vec<Act> = clauses
            .iter()
            .map(|c| speech::act(c, self.addressed))
            .collect();
        // A how-to's "don't stir, just turn it once" is one of its steps.
        let procedure = speech::is_procedure(&clauses);
        if procedure {
            for (a, c) in acts.iter_mut().zip(&clauses) {
                if *a == Act::Rule && !speech::speaks_to_or_of_speaker(c) {
                    *a = Act::Statement;
                }
            }
        }
        Turn {
            mi,
            speaker,
            other,
            first_unit: self.units.len(),
            asked,
            replying_to,
            clauses,
            acts,
            procedure,
            lead_in: None,
            clause_before: Vec::new(),
            last_placed: None,
        }
    }

    /// A person the assistant named since the last message read ("Did Dr Maple give
    /// you exercises?") is who a "she" in the reply may stand for.
    fn learn_assistant_names(&mut self, mi: usize) {
        for (ai, a) in self
            .session
            .messages
            .iter()
            .enumerate()
            .take(mi)
            .skip(self.spoken_before)
            .filter(|(_, a)| a.role.eq_ignore_ascii_case("assistant"))
        {
            let spots = dedup_spots(self.lex.spot(&a.content));
            self.genders.learn(&a.content, &spots);
            self.named_person |= name_persons(&mut self.persons, &spots, ai);
        }
        self.spoken_before = mi + 1;
    }

    /// A lead-in or a remark as the memory says it: in the third person, its dates
    /// resolved.
    fn said_alone(&self, t: &Turn, clause: &str) -> String {
        let said = subject::third_person(
            clause,
            &t.speaker,
            t.other.as_deref(),
            self.addressed,
            false,
        );
        capitalise(&dates::resolve(&said, self.anchor).0)
    }

    /// Whether message `at` is within a pronoun's reach of message `mi`.
    fn in_reach(mi: usize, at: usize) -> bool {
        mi - at.min(mi) <= PRONOUN_REACH
    }

    fn read_clause(&mut self, t: &mut Turn, ci: usize) {
        let act = t.acts[ci];
        if act == Act::Remark {
            self.remark(t, ci);
            return;
        }
        if !kept(act) {
            return;
        }
        let clause = t.clauses[ci].clone();
        let spots = dedup_spots(self.lex.spot(&clause));
        if self.leads_in(t, ci, &clause, &spots) {
            return;
        }
        self.statement(t, ci, &clause, &spots);
    }

    /// "met marcus on teams yesterday. seems fine? very dry.": a remark goes with the
    /// statement before it in the message, else leads into the next.
    fn remark(&mut self, t: &mut Turn, ci: usize) {
        let clause = t.clauses[ci].clone();
        let said = self.said_alone(t, &clause);
        match (t.last_placed, &mut t.lead_in) {
            (Some(i), _) => {
                let u = &mut self.units[i];
                let said = named_in(said, &u.subject);
                if !u.sentences.contains(&said) {
                    u.sentences.push(said);
                    u.raw.push(clause);
                }
            }
            (None, Some((raw, lead))) => {
                raw.push(' ');
                raw.push_str(&clause);
                lead.push(' ');
                lead.push_str(&said);
            }
            (None, None) if t.acts[ci + 1..].iter().any(|a| kept(*a)) => {
                t.lead_in = Some((clause, said));
            }
            (None, None) => {}
        }
    }

    /// Keeps a short clause as the lead-in of the statement after it, and says so.
    fn leads_in(&mut self, t: &mut Turn, ci: usize, clause: &str, spots: &[Spotted]) -> bool {
        let act = t.acts[ci];
        let ws = gitloom_model::text::words(clause);
        // "yusra moved out today" names its subject first: a statement, however
        // short, not a lead-in to the next one.
        let opens_on_name = spots.iter().any(|s| s.at == 0 && s.prep.is_none());
        // A label before a colon ("quick one before I forget:") leads in too, as long
        // as a short sentence would.
        let label = clause.trim_end().ends_with(':') && ws.len() <= 8;
        let short = (ws.len() <= 4 && !clause.contains(|c: char| c.is_ascii_digit()) || label)
            && matches!(act, Act::Statement | Act::Request)
            // Something kept must follow: "three nights starting tonight. how long do i
            // sleep before?" leads into a question, which is dropped.
            && t.acts[ci + 1..].iter().any(|a| kept(*a))
            && ws
                .first()
                .is_some_and(|w| !subject::is_pronoun(&w.with_clitic()))
            && !opens_on_name;
        if !short || t.lead_in.is_some() {
            return false;
        }
        // A lead-in may name the person the next sentences go on about ("Dr Lindgren
        // this morning. She says…").
        self.genders.learn(clause, spots);
        self.named_person |= name_persons(&mut self.persons, spots, t.mi);
        t.clause_before = spots.to_vec();
        t.lead_in = Some((clause.to_owned(), self.said_alone(t, clause)));
        true
    }

    /// A kept clause: its subject decided, then written into its unit.
    fn statement(&mut self, t: &mut Turn, ci: usize, clause: &str, spots: &[Spotted]) {
        let act = t.acts[ci];
        if spots.iter().any(Spotted::is_person) {
            self.named_person = true;
        }
        self.genders.learn(clause, spots);
        let (subj, link) = self.subject_of(t, act, clause, spots);
        // The last person named, for a "he" or "she" further on; none when the clause
        // ends on someone it does not name ("sent mum her money. she's doing better":
        // not the friend named before).
        if subject::ends_on_unnamed_person(clause, spots) {
            self.persons.clear();
        } else {
            name_persons(&mut self.persons, spots, t.mi);
        }
        t.clause_before = spots.to_vec();
        let said = subject::third_person(
            clause,
            &t.speaker,
            t.other.as_deref(),
            self.addressed,
            act == Act::Statement,
        );
        let (resolved, found) = dates::resolve(&said, self.anchor);
        // "my friend Tomo Arai, who's Japanese, is visiting": a relative clause about
        // the one its clause before is about goes on that clause's sentence as said.
        let relative = matches!(link, subject::Link::Pronoun(None))
            && gitloom_model::text::words(clause)
                .first()
                .is_some_and(|w| w.norm == "who");
        let relative_tail = relative.then(|| resolved.clone());
        let resolved = capitalise(&resolved);
        let topic = topics::topic_of(&without_names(clause, spots)).map(|(t, _)| t);
        let opens = link.opens();
        let subj = self.speaker_after_a_turn(t, &subj, link, act, topic);
        let (placed, first_of_message) =
            self.unit_for(t, ci, &subj, act, opens, topic, clause, &found);
        let placed_before = t.last_placed.replace(placed);
        let u = &mut self.units[placed];
        u.procedure |= t.procedure;
        if u.topic.is_none() {
            u.topic = topic;
        }
        // "Marta …. Marta Kowalski …": the memory takes the fuller name.
        if u.subject.same_person(&subj) {
            u.subject = std::mem::replace(&mut u.subject, Subject::Speaker).fuller(subj.clone());
        }
        if u.sentences.contains(&resolved) {
            return;
        }
        let relative_tail =
            relative_tail.filter(|_| placed_before == Some(placed) && !u.sentences.is_empty());
        let said = Said {
            clause,
            spots,
            found: &found,
            resolved,
            answers: (!opens && first_of_message)
                .then(|| t.asked.clone())
                .flatten(),
            relative_tail,
        };
        record(u, said, &mut t.lead_in, self.anchor);
        self.carry = Some((u.subject.clone(), t.mi));
    }

    /// The clause's subject and how the clause reaches it.
    fn subject_of(
        &mut self,
        t: &Turn,
        act: Act,
        clause: &str,
        spots: &[Spotted],
    ) -> (Subject, Link) {
        let mi = t.mi;
        let in_reach_persons: Vec<&Spotted> = self
            .persons
            .iter()
            .filter(|(_, at)| Self::in_reach(mi, *at))
            .map(|(p, _)| p)
            .collect();
        let this_message = self.units[t.first_unit..].last().map(|u| u.subject.clone());
        let (subj, link) = if act == Act::Rule {
            (Subject::Speaker, Link::Named)
        } else if let Some(org) = employer_named(clause, spots) {
            // "I accepted an offer from Northwind", "last day at Northwind": a fact about the
            // employer, which is how its slot is kept.
            (Subject::Entity(org), Link::Named)
        } else {
            let cx = subject::Context {
                before: this_message.as_ref(),
                earlier: self
                    .carry
                    .as_ref()
                    .filter(|(_, at)| Self::in_reach(mi, *at))
                    .map(|(c, _)| c),
                persons: &in_reach_persons,
                antecedents: &t.clause_before,
                genders: &self.genders,
                speaker: &t.speaker,
            };
            subject::of(clause, spots, &cx)
        };
        if let (Link::Pronoun(Some(g)), Subject::Entity(e)) = (link, &subj) {
            // "… he showed me round with Ailsa Kerrigan, she's the deputy": once a "he"
            // is read as a person, a "she" further on is someone else.
            if e.is_person() {
                self.genders.referred(&e.name, g);
            }
            // "mochi had her jabs. she's 6kg": whoever a "she" is, the session names
            // them, so its other pronouns are not flagged for reconciliation to fill
            // from other memories' people.
            self.named_person = true;
        }
        (subj, link)
    }

    /// A sentence with no subject that turns to another topic ("Rent is $2,650" after
    /// the dog's diet) is the speaker's, not the dog's. Only after a person or pet:
    /// steps or notes about a thing go on about it. A pronoun keeps its person whatever
    /// the topic ("he teaches geography" after "my boyfriend's Callan").
    fn speaker_after_a_turn(
        &self,
        t: &Turn,
        subj: &Subject,
        link: Link,
        act: Act,
        topic: Option<&'static str>,
    ) -> Subject {
        match (subj, self.units[t.first_unit..].last()) {
            (Subject::Entity(e), Some(last))
                if link == Link::Continued
                    && matches!(e.kind.as_deref(), Some("person" | "pet"))
                    && matches!(act, Act::Statement | Act::Request)
                    && last.subject == *subj
                    && topic.is_some()
                    && last.topic.is_some()
                    && last.topic != topic =>
            {
                Subject::Speaker
            }
            _ => subj.clone(),
        }
    }

    /// The unit the clause goes to (made when none of the message's takes it), and
    /// whether it is the message's first unit.
    #[allow(clippy::too_many_arguments)]
    fn unit_for(
        &mut self,
        t: &Turn,
        ci: usize,
        subj: &Subject,
        act: Act,
        opens: bool,
        topic: Option<&'static str>,
        clause: &str,
        found: &[Found],
    ) -> (usize, bool) {
        let first_unit = t.first_unit;
        let mut target =
            place(&self.units[first_unit..], subj, act, opens, topic).map(|i| i + first_unit);
        // "I accepted an offer from Initech. I start on 1 December": the start date
        // belongs to the new job.
        if target.is_none()
            && *subj == Subject::Speaker
            && !found.is_empty()
            && let Some(i) = self.units.len().checked_sub(1).filter(|i| *i >= first_unit)
            && self.units[i].employer_start
            && says_start(clause)
        {
            target = Some(i);
        }
        let first_of_message = target.map_or(self.units.len() == first_unit, |i| i == first_unit);
        if let Some(i) = target {
            return (i, first_of_message);
        }
        // Only for a clause that points back: most have no use for it, and saying a
        // clause costs a date pass.
        let said_before = ci
            .checked_sub(1)
            .filter(|b| kept(t.acts[*b]) && points_back(clause))
            .and_then(|b| t.clauses.get(b))
            .map(|b| self.said_alone(t, b));
        self.units.push(Unit {
            subject: subj.clone(),
            speaker: t.speaker.clone(),
            message: t.mi,
            act,
            topic,
            context_topic: None,
            sentences: Vec::new(),
            raw: Vec::new(),
            lead: 0,
            answers: None,
            replying_to: t.replying_to.clone(),
            said_before,
            entities: Vec::new(),
            dates: Vec::new(),
            unresolved: Vec::new(),
            employer_start: false,
            employer_end: false,
            procedure: false,
            start_date: None,
            end_date: None,
        });
        (self.units.len() - 1, first_of_message)
    }

    /// The message's own topic is read only for a statement of the speaker's whose
    /// words fit no topic; its units are final once its clauses are read.
    fn message_topic(&mut self, t: &Turn, m: &Message) {
        if !self.units[t.first_unit..]
            .iter()
            .any(|u| matches!(u.subject, Subject::Speaker) && u.topic.is_none())
        {
            return;
        }
        let topic_of_text = |text: &str| {
            topics::topic_of(&without_names(text, &dedup_spots(self.lex.spot(text))))
                .map(|(t, _)| t)
        };
        // Between people, a turn whose words fit no topic answers the one before it
        // ("that bowl is gorgeous" after a turn about pottery): its topic. Not the
        // assistant's turn: a user who leaves the assistant's topic unnamed as often
        // starts a subject of their own.
        let message_topic = topic_of_text(&m.content).or_else(|| {
            if self.addressed {
                return None;
            }
            (t.mi.saturating_sub(TOPIC_REACH)..t.mi)
                .rev()
                .filter_map(|p| self.session.messages.get(p))
                .find_map(|p| topic_of_text(&p.content))
        });
        for u in &mut self.units[t.first_unit..] {
            u.context_topic = message_topic;
        }
    }
}

/// A statement as it is written into its unit.
struct Said<'c> {
    clause: &'c str,
    spots: &'c [Spotted],
    found: &'c [Found],
    /// In the third person, dates resolved.
    resolved: String,
    /// The question it answers, when it is the first thing said in reply with no
    /// subject of its own.
    answers: Option<String>,
    /// As said, when it is a relative clause ("who's Japanese, is visiting") about the
    /// subject of the clause before it, which is in the same unit: written onto that
    /// clause's sentence ("…Tomo Arai, who's Japanese, is visiting."), not as a
    /// sentence of its own that would repeat the name.
    relative_tail: Option<String>,
}

/// Writes a statement into its unit: its dates, employment, entities, the pronouns it
/// leaves unresolved, a lead-in waiting for it, and the sentence itself.
fn record(u: &mut Unit, s: Said<'_>, lead_in: &mut Option<(String, String)>, anchor: Date) {
    for f in s.found {
        u.dates.push((*f, s.resolved.clone()));
    }
    employment(u, s.clause, s.spots, s.found, anchor);
    for sp in s.spots {
        if !u
            .entities
            .iter()
            .any(|e| fold_name(&e.name) == fold_name(&sp.name))
        {
            u.entities.push(FactEntity {
                name: sp.name.clone(),
                kind: sp.kind.clone(),
            });
        }
    }
    let about_person = matches!(&u.subject, Subject::Entity(e) if matches!(e.kind.as_deref(), Some("person" | "pet")));
    for w in gitloom_model::text::words(s.clause) {
        if PERSON_PRONOUNS.contains(&w.norm.as_str())
            && !about_person
            && !u.unresolved.contains(&w.norm)
        {
            u.unresolved.push(w.norm.clone());
        }
    }
    let fresh = u.sentences.is_empty();
    if let Some((raw, said)) = lead_in.take() {
        if u.sentences.is_empty() {
            u.lead += 1;
        }
        u.sentences.push(said);
        u.raw.push(raw);
    }
    if fresh && s.answers.is_some() {
        u.answers = s.answers;
    }
    match (s.relative_tail, u.sentences.last_mut()) {
        (Some(tail), Some(last)) => {
            let head = last.trim_end_matches(['.', '!', '?', ',', ' ']).len();
            last.truncate(head);
            last.push_str(", ");
            last.push_str(&tail);
        }
        _ => u.sentences.push(named_in(s.resolved, &u.subject)),
    }
    u.raw.push(s.clause.to_owned());
}
