//! What a sentence of a message does: states something, sets a rule for the
//! assistant, asks, requests, or only keeps the conversation going. Also the clean-up
//! before that: the discourse words people start and end chat lines with ("ok so",
//! "lol"), and clauses that do two things ("i don't eat pork so never suggest it").

use gitloom_model::text::{Word, words};

/// What a sentence does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    /// Says something about the speaker or the world.
    Statement,
    /// Tells the assistant how to behave from now on ("never put merchant names…").
    Rule,
    /// Asks the assistant something.
    Question,
    /// Asks the assistant to do something ("help me draft the postmortem"). Kept as
    /// what the speaker said: what someone asks for says what they want or plan.
    Request,
    /// A remark too short to stand alone ("very dry", "seems fine?", "reliable."): one
    /// word of content, kept with the statement it comments on in its message, since
    /// it is still something the speaker said about it.
    Remark,
    /// Greetings, thanks, acknowledgements: nothing to keep.
    Chatter,
}

/// Words people open a chat line with that say nothing themselves.
const OPENERS: &[&str] = &[
    "oh",
    "ah",
    "aw",
    "um",
    "uh",
    "hmm",
    "so",
    "and",
    "also",
    "but",
    "anyway",
    "anyways",
    "btw",
    "lol",
    "haha",
    "hah",
    "omg",
    "wow",
    "hey",
    "hi",
    "hello",
    "hiya",
    "honestly",
    "basically",
    "plus",
    "then",
];
/// Answers and acknowledgements that open a line only when punctuation follows them
/// ("no, …", "ok.", "yes!!"): "no markdown tables" keeps its "no".
const ANSWERS: &[&str] = &[
    "ok",
    "okay",
    "k",
    "yes",
    "yeah",
    "yep",
    "yup",
    "no",
    "nah",
    "nope",
    "well",
    "right",
    "sure",
    "perfect",
    "great",
    "cool",
    "nice",
    "thanks",
    "thank",
    "cheers",
    "alright",
    "fine",
    "good",
    "brilliant",
    "lovely",
    "awesome",
    "exactly",
    "true",
    "now",
    "non",
    "oui",
    "merci",
    "ja",
    "si",
    "bonjour",
    "morning",
    "evening",
    "gorgeous",
    "amazing",
    "ugh",
    "sad",
];

/// Words that only keep a conversation going.
const ACKS: &[&str] = &[
    "thanks",
    "thank",
    "cheers",
    "ok",
    "okay",
    "yes",
    "yeah",
    "yep",
    "no",
    "nah",
    "great",
    "perfect",
    "cool",
    "nice",
    "lol",
    "haha",
    "good",
    "sounds",
    "brilliant",
    "lovely",
    "awesome",
    "bye",
    "night",
    "later",
    "done",
    "sure",
    "right",
    "exactly",
    "hi",
    "hello",
    "hey",
    "hiya",
    "wow",
    "omg",
    "merci",
    "enough",
    "day",
    "today",
    "that",
    "it",
    "for",
    "all",
    "you",
    "that's",
    "it's",
    "much",
    "so",
    "very",
    "really",
    "again",
    "one",
    "more",
    "thing",
    "now",
    "please",
    "will",
    "do",
    "got",
    "noted",
    "fine",
    "gorgeous",
    "amazing",
    "love",
    "sorted",
    "bless",
];

/// Verbs that open a request to the assistant.
const REQUEST_VERBS: &[&str] = &[
    "help",
    "write",
    "draft",
    "give",
    "show",
    "tell",
    "make",
    "turn",
    "put",
    "find",
    "check",
    "translate",
    "explain",
    "summarise",
    "summarize",
    "list",
    "suggest",
    "create",
    "send",
    "plan",
    "prepare",
    "draw",
    "book",
    "sort",
    "work",
    "add",
    "rewrite",
    "fix",
    "look",
    "remind",
    "keep",
    "note",
    "save",
    "remember",
    "compare",
    "calculate",
    "convert",
    "do",
];

/// Words that may follow a verb used as an imperative ("check the logs", "remind me
/// to…", "look into it", "write up…", "book a table"): the start of its object or a
/// particle. After a noun ("work benefits cover…", "plan is to…", "book club's on
/// Thursday") comes a content word or a verb instead, so a request verb followed by
/// none of these is not read as one.
const OBJECT_OPENERS: &[&str] = &[
    // determiners, quantifiers and clause openers
    "a",
    "an",
    "the",
    "this",
    "that",
    "these",
    "those",
    "some",
    "any",
    "all",
    "every",
    "each",
    "another",
    "both",
    "few",
    "more",
    "what",
    "which",
    "how",
    "whether",
    "if",
    "where",
    "when",
    "who",
    "why",
    // object pronouns and possessives
    "me",
    "us",
    "it",
    "them",
    "him",
    "her",
    "you",
    "my",
    "our",
    "your",
    "his",
    "their",
    "its",
    "something",
    "anything",
    "everything",
    "nothing",
    "one",
    // particles and adverbs
    "down",
    "up",
    "out",
    "through",
    "over",
    "on",
    "off",
    "in",
    "into",
    "back",
    "for",
    "to",
    "with",
    "about",
    "at",
    "from",
    "together",
    "around",
    "again",
    "please",
    "quickly",
    "properly",
];

/// True when the request verb at word `i` of `norms` stands as an imperative: the
/// sentence ends after it ("sort.", "note:") or its object or a particle follows.
/// `tight`: a colon follows the verb ("note: …").
fn imperative_at(norms: &[String], i: usize, tight: bool) -> bool {
    match norms.get(i + 1) {
        None => true,
        Some(_) if tight => true,
        Some(n) => OBJECT_OPENERS.contains(&n.as_str()) || n.chars().all(|c| c.is_ascii_digit()),
    }
}

/// Words that open a question.
const QUESTION_OPENERS: &[&str] = &[
    "what", "when", "where", "who", "whom", "which", "why", "how", "can", "could", "would", "will",
    "should", "shall", "do", "does", "did", "is", "are", "am", "was", "were", "have", "has", "any",
    "whats", "hows", "wheres", "whens",
];

/// Words of sentences about the conversation itself, when they speak to the assistant.
const META: &[&str] = &[
    "background",
    "context",
    "asking",
    "ask",
    "repeat",
    "tell",
    "telling",
    "know",
    "mix",
    "useful",
    "together",
    "setting",
    "set",
    "explain",
    "bore",
    "boring",
    "understand",
];

/// Words that make a sentence a rule for the assistant when it is addressed to it.
const RULE_WORDS: &[&str] = &["always", "never", "dont", "don't", "please", "whenever"];

/// Of [`RULE_WORDS`], those that open a rule's clause wherever they stand after a
/// colon or a joining word ("…: never call before nine", "sorry but always use metric");
/// "please" and "whenever" open requests and time clauses there as often.
const RULE_OPENERS: &[&str] = &["always", "never", "dont", "don't"];

fn norm_of(w: &Word) -> String {
    w.with_clitic()
}

/// Byte offset just past `w` and its clitic (`that's` → after the `s`).
fn end_with_clitic(text: &str, w: &Word) -> usize {
    let mut end = w.end();
    if let Some(c) = &w.clitic {
        let mut it = text[end..].char_indices();
        // The apostrophe, then the clitic's letters.
        if let Some((_, ap)) = it.next() {
            end += ap.len_utf8();
            end += text[end..]
                .chars()
                .take(c.chars().count())
                .map(char::len_utf8)
                .sum::<usize>();
        }
    }
    end
}

/// Whether `word` calls `addressee` by name: their first name, or a short form of it
/// of three letters or more ("Isa" for Isabel), capitalised as a name is.
fn calls(word: &str, addressee: &str) -> bool {
    let first = addressee.split_whitespace().next().unwrap_or_default();
    word.len() >= 3
        && word.chars().next().is_some_and(char::is_uppercase)
        && first
            .get(..word.len())
            .is_some_and(|f| f.eq_ignore_ascii_case(word))
}

/// The sentence without the name it calls the person it speaks to by ("Isabel,
/// that looks amazing", "Hey Isa!", "sorry to hear that, Isabel"). A vocative is no
/// mention: kept, it would file what one speaker says as being about the other.
pub fn without_vocative(sentence: &str, addressee: &str) -> String {
    let s = sentence.trim();
    let is_mark = |c: char| matches!(c, ',' | '!' | '.' | ':' | ';' | '-' | '—' | '?');
    // Leading: "Name, …", or one word then the name ("Hey Isa!", "Thanks Ivo, …",
    // "Wow, Isabel, …").
    let mut tokens = s.splitn(3, ' ');
    let (a, b) = (tokens.next().unwrap_or_default(), tokens.next());
    let bare = |t: &str| t.trim_end_matches(is_mark).to_owned();
    let marked = |t: &str| t.ends_with(is_mark);
    let mut out = s.to_owned();
    if marked(a) && calls(&bare(a), addressee) && b.is_some() {
        out = s[a.len()..].trim_start().to_owned();
    } else if let Some(b) = b
        && calls(&bare(b), addressee)
        && (marked(b) || s.len() == a.len() + 1 + b.len())
    {
        let rest = s[a.len() + 1 + b.len()..].trim_start();
        // The word before keeps its own mark, or takes the name's.
        let mark = if marked(a) {
            ""
        } else {
            b.trim_start_matches(|c: char| !is_mark(c))
        };
        out = format!("{a}{mark} {rest}").trim().to_owned();
    }
    // Trailing: "…, Name" with its closing marks.
    let body = out.trim_end_matches(|c: char| is_mark(c) && c != ',');
    let closing = &out[body.len()..];
    if let Some((head, last)) = body.rsplit_once(", ")
        && !last.contains(' ')
        && calls(last, addressee)
        && !head.trim().is_empty()
    {
        out = format!("{}{closing}", head.trim_end());
    }
    out
}

/// The sentence without the discourse words it opens and closes with ("ok so i…",
/// "… lol"), and without runs of `!` or `?`.
pub fn clean(sentence: &str) -> String {
    let mut s = sentence.trim().to_owned();
    loop {
        let ws = words(&s);
        let Some(first) = ws.first() else {
            return String::new();
        };
        let n = norm_of(first);
        let next_starts_clause = ws.len() > 1;
        // "thank you", "no worries" open too.
        let two = ws.get(1).map(|w| format!("{n} {}", w.norm)).filter(|p| {
            matches!(
                p.as_str(),
                "thank you" | "no worries" | "oh and" | "and also"
            )
        });
        let answer = ANSWERS.contains(&n.as_str())
            && (s[end_with_clitic(&s, first)..].starts_with([',', '.', '!', ':', ';', '-', '?'])
                || ws
                    .get(1)
                    .is_some_and(|w| OPENERS.contains(&w.norm.as_str())));
        let cut = if two.is_some() {
            Some(end_with_clitic(&s, &ws[1]))
        } else if next_starts_clause && (OPENERS.contains(&n.as_str()) || answer) {
            Some(end_with_clitic(&s, first))
        } else {
            None
        };
        // "thanks so much, …", "thank you very much": the thanks runs on over its
        // intensifier, which is no part of what follows.
        let thanked = two.as_deref() == Some("thank you") || n == "thanks";
        let at = if two.is_some() { 2 } else { 1 };
        let cut = match (ws.get(at), ws.get(at + 1)) {
            (Some(a), Some(b))
                if thanked
                    && matches!(
                        (a.norm.as_str(), b.norm.as_str()),
                        ("so" | "very", "much") | ("a", "lot" | "million")
                    ) =>
            {
                Some(end_with_clitic(&s, b))
            }
            _ => cut,
        };
        match cut {
            Some(end) if end < s.len() => {
                s = s[end..]
                    .trim_start_matches(|c: char| {
                        c.is_whitespace() || matches!(c, ',' | '.' | '!' | ':' | ';' | '-' | '—')
                    })
                    .to_owned();
            }
            _ => break,
        }
    }
    // Trailing laughter and emoticons.
    loop {
        let t = s.trim_end();
        let lower = t.to_lowercase();
        let cut = [
            "lol", "haha", "ha", "xx", "x", ":)", ":(", ":p", ":d", "tbh", "ugh", "omg",
        ]
        .iter()
        .find(|e| {
            lower.ends_with(*e)
                && lower[..lower.len() - e.len()]
                    .chars()
                    .last()
                    .is_none_or(|c| !c.is_alphanumeric())
        })
        .map(|e| t.len() - e.len());
        match cut {
            Some(at) if at > 0 => {
                s = t[..at]
                    .trim_end_matches(|c: char| c.is_whitespace() || c == ',')
                    .to_owned()
            }
            _ => {
                s = t.to_owned();
                break;
            }
        }
    }
    let mut out = String::with_capacity(s.len());
    let mut last = '\0';
    for c in s.chars() {
        if matches!(c, '!' | '?') && c == last {
            continue;
        }
        out.push(c);
        last = c;
    }
    out.trim().trim_start_matches(['(', ')']).trim().to_owned()
}

/// Splits a sentence that does two things: "i don't eat pork so never suggest it",
/// "the vet says she's chunky, so less treats". A split happens at `so`, `but`,
/// `and`, `;` or ` - ` when what follows starts a clause of its own (a pronoun, a name
/// the caller recognises, or a rule word) and both halves have three words or more.
pub fn clauses(sentence: &str) -> Vec<String> {
    let ws = words(sentence);
    let mut cuts = Vec::new();
    for (i, w) in ws.iter().enumerate() {
        let joins = matches!(w.norm.as_str(), "so" | "but") && w.clitic.is_none()
            || (w.norm == "and" && sentence[..w.start].trim_end().ends_with(','));
        let gap = if i > 0 {
            &sentence[ws[i - 1].end()..w.start]
        } else {
            ""
        };
        // "no hot water since sunday, priya's boiling kettles": after a comma, a word
        // with a verb joined to it ('s, 'll, 'd, 're) starts a clause.
        let comma_clause = gap.contains(',')
            && (matches!(w.clitic.as_deref(), Some("s" | "ll" | "d" | "re" | "ve" | "m"))
                && !matches!(w.norm.as_str(), "it" | "that" | "what" | "there" | "here" | "let")
                // ", he teaches chemistry": a person pronoun with a verb after it.
                || matches!(w.norm.as_str(), "he" | "she" | "they" | "we" | "i")
                    && w.clitic.is_none()
                    && ws.get(i + 1).is_some_and(|n| n.norm.len() > 2));
        let semicolon = i > 0 && (gap.contains([';', '—']) || comma_clause);
        // A rule after a label or a word of lead-in ("quick one before I forget: never
        // call me before nine", "sorry but always use metric") opens a clause of its
        // own, however short what comes before it.
        let opens_rule =
            |n: Option<&Word>| n.is_some_and(|n| RULE_OPENERS.contains(&norm_of(n).as_str()));
        let colon = i > 0 && gap.contains(':') && opens_rule(Some(w));
        let rule_next = colon || (joins && opens_rule(ws.get(i + 1)));
        if !(joins || semicolon || colon) || (i < 3 && !rule_next) || i == 0 || ws.len() - i < 3 {
            continue;
        }
        let next = if semicolon { Some(w) } else { ws.get(i + 1) };
        let starts = colon
            || comma_clause
            || joins
                && next.is_some_and(|n| {
                    n.clitic.is_some() && !matches!(n.norm.as_str(), "it" | "that" | "what")
                })
            || next.is_some_and(|n| {
                let v = norm_of(n);
                matches!(
                    v.as_str(),
                    "i" | "i'm"
                        | "i've"
                        | "i'll"
                        | "i'd"
                        | "we"
                        | "we're"
                        | "we've"
                        | "he"
                        | "he's"
                        | "she"
                        | "she's"
                        | "they"
                        | "they're"
                        | "it's"
                        | "my"
                        | "our"
                        | "never"
                        | "always"
                        | "don't"
                        | "please"
                        | "there's"
                )
            });
        if starts {
            cuts.push(w.start);
        }
    }
    if cuts.is_empty() {
        return vec![sentence.to_owned()];
    }
    let mut out = Vec::new();
    let mut from = 0;
    for c in cuts {
        let part = sentence[from..c]
            .trim()
            .trim_end_matches([',', ';', '—', '-'])
            .trim();
        if !part.is_empty() {
            out.push(part.to_owned());
        }
        from = c;
    }
    let rest = sentence[from..].trim();
    if !rest.is_empty() {
        out.push(rest.to_owned());
    }
    // The joining word stays out of the second clause.
    out.into_iter()
        .map(|p| {
            let ws = words(&p);
            match ws.first() {
                Some(w) if matches!(w.norm.as_str(), "so" | "but" | "and") && ws.len() > 1 => {
                    p[ws[1].start..].to_owned()
                }
                _ => p,
            }
        })
        .collect()
}

/// How many of a message's clauses must open on an imperative for the message to be
/// a how-to (a recipe, a procedure): one or two imperatives are requests or rules.
const PROCEDURE_STEPS: usize = 3;

/// Whether `clauses` (one message's) are the steps of a how-to: at least
/// [`PROCEDURE_STEPS`] of them open on a bare verb with its object or particle
/// after it ("blend 4 plum tomatoes", "add the rice", "cover with foil"). Its "don't
/// stir" is then a step like the others, not a rule for the assistant.
pub fn is_procedure(clauses: &[String]) -> bool {
    clauses
        .iter()
        .filter(|c| opens_on_a_step(c))
        .nth(PROCEDURE_STEPS - 1)
        .is_some()
}

/// Whether `clause` opens on a verb in the imperative: a word that is no function
/// word, number, past form or -ing form, with an object opener (a determiner, a
/// pronoun, a particle) or a number right after it.
fn opens_on_a_step(clause: &str) -> bool {
    let ws = words(clause);
    let Some(first) = ws.first() else {
        return false;
    };
    // `imperative_at` reads the word after the verb only.
    let norms: Vec<String> = ws.iter().take(2).map(norm_of).collect();
    first.clitic.is_none()
        && crate::text::may_be_plain_verb(&first.norm)
        && ws.len() > 1
        && imperative_at(&norms, 0, false)
}

/// Whether a rule word's clause speaks of the assistant or the speaker ("don't
/// message me…", "never suggest…to me", "always give you…"): a rule asks something
/// of the one it is said to; a step of a how-to ("don't stir") does not.
pub fn speaks_to_or_of_speaker(clause: &str) -> bool {
    words(clause).iter().any(|w| {
        matches!(
            w.norm.as_str(),
            "i" | "me" | "my" | "mine" | "we" | "us" | "our" | "you" | "your" | "u"
        )
    })
}

/// What `sentence` (cleaned) does. `addressed`: the conversation has an assistant (a
/// `you` is the assistant); in a conversation between people a `you` is the other.
pub fn act(sentence: &str, addressed: bool) -> Act {
    let ws = words(sentence);
    if ws.is_empty() {
        return Act::Chatter;
    }
    let norms: Vec<String> = ws.iter().map(norm_of).collect();
    let has = |w: &str| norms.iter().any(|n| n == w);
    let first = norms[0].as_str();
    // "note: the deploy key rotates monthly": punctuation right after the first word.
    let first_tight = sentence[end_with_clitic(sentence, &ws[0])..]
        .trim_start()
        .starts_with(':');
    let content = norms
        .iter()
        .filter(|n| !ACKS.contains(&n.as_str()) && !gitloom_model::text::is_stopword(n))
        .count();
    let you = has("you") || has("you're") || has("your") || has("you'll") || has("u");
    if content == 0 {
        return Act::Chatter;
    }
    if norms.len() <= 3 && content <= 1 && !sentence.contains(char::is_numeric) {
        // "you sure?", "see you": said to the assistant, not about anything.
        return if you { Act::Chatter } else { Act::Remark };
    }
    let question = sentence.trim_end().ends_with('?');
    // A rule: opens with a rule word or an imperative of one ("never put…", "don't
    // message me…", "always remind me…, will you?"), or says "from now on".
    // "never met him", "always been a night owl": a rule word before a past form
    // tells what was, it asks nothing of the assistant.
    let told = matches!(first, "always" | "never")
        && norms
            .get(1)
            .is_some_and(|n| n == "been" || crate::text::is_past_form(n));
    let rule_open = (RULE_WORDS.contains(&first) && !told)
        || first == "rule"
        || (you
            && matches!(
                first,
                "when" | "whenever" | "if" | "anything" | "every" | "any"
            ))
        || (you
            && [
                "must",
                "every",
                "no exceptions",
                "make sure",
                "should always",
            ]
            .iter()
            .any(|w| sentence.to_lowercase().contains(w)))
        || (first == "do" && norms.get(1).is_some_and(|n| n == "not"))
        || sentence.to_lowercase().contains("from now on")
        || sentence.to_lowercase().contains("make sure you")
        || (matches!(first, "when" | "whenever" | "if" | "anything" | "for")
            && you
            && (has("always") || has("never") || has("don't")))
        || (addressed && (has("always") || has("never")) && you);
    if addressed && rule_open {
        return Act::Rule;
    }
    // A subject of its own ("work news: i'm switching teams") makes it a statement.
    let speaks_of_self = norms.iter().any(|n| {
        matches!(
            n.as_str(),
            "i" | "i'm" | "i've" | "i'll" | "i'd" | "we" | "we're" | "we've" | "we'll" | "my"
        )
    });
    let request_open = addressed
        && !speaks_of_self
        && ((REQUEST_VERBS.contains(&first) && imperative_at(&norms, 0, first_tight))
            || (matches!(first, "can" | "could" | "would" | "will") && has("you"))
            || (first == "let's" || (first == "let" && norms.get(1).is_some_and(|n| n == "me"))));
    // About the conversation itself ("some background so you don't keep asking",
    // "giving you my work context"): nothing about the speaker's life.
    let meta = addressed
        && you
        && !sentence.contains(|c: char| c.is_ascii_digit())
        && !sentence.chars().skip(1).any(char::is_uppercase)
        && META.iter().any(|m| norms.iter().any(|n| n == m));
    if meta && !rule_open {
        return Act::Chatter;
    }
    if question && QUESTION_OPENERS.contains(&first) && !request_open {
        return Act::Question;
    }
    if request_open {
        return Act::Request;
    }
    if question && addressed && you && !has("i") && !has("my") {
        return Act::Question;
    }
    Act::Statement
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vocative_is_no_part_of_what_is_said() {
        let v = |s: &str| without_vocative(s, "Caroline Smith");
        assert_eq!(v("Caroline, that looks amazing!"), "that looks amazing!");
        assert_eq!(
            v("Man, sorry to hear that, Caroline."),
            "Man, sorry to hear that."
        );
        assert_eq!(v("Hey Caro! Good to see you"), "Hey! Good to see you");
        assert_eq!(v("Thanks Caroline, it was fun"), "Thanks, it was fun");
        assert_eq!(v("Congrats Caroline"), "Congrats");
        assert_eq!(
            v("Wow, Caroline, that looks awesome"),
            "Wow, that looks awesome"
        );
        // A mention is kept: the name does a sentence's work there.
        assert_eq!(v("Caroline is coming over"), "Caroline is coming over");
        assert_eq!(
            v("I saw Caroline, she was fine"),
            "I saw Caroline, she was fine"
        );
        assert_eq!(v("Caroline."), "Caroline.");
        // Another person's name is no vocative of this one.
        assert_eq!(
            v("Melanie, that looks amazing"),
            "Melanie, that looks amazing"
        );
        // Lower case, or too short a form, is not taken for the name.
        assert_eq!(v("ca, that looks amazing"), "ca, that looks amazing");
    }

    #[test]
    fn cleaning() {
        assert_eq!(clean("ok so i'm moving in may lol"), "i'm moving in may");
        assert_eq!(clean("Yes!! ollie brennan, 31"), "ollie brennan, 31");
        assert_eq!(clean("oh and i don't eat pork"), "i don't eat pork");
        // The thanks and its intensifier go together.
        assert_eq!(
            clean("Thanks so much, the glaze took ages"),
            "the glaze took ages"
        );
        assert_eq!(
            clean("thank you very much! the vet was great"),
            "the vet was great"
        );
        assert_eq!(clean("Merci."), "Merci.");
    }

    #[test]
    fn clauses_split_where_a_new_clause_starts() {
        assert_eq!(
            clauses("i don't eat pork so never suggest recipes with it"),
            vec!["i don't eat pork", "never suggest recipes with it"]
        );
        assert_eq!(
            clauses("no hot water since sunday night, priya's boiling kettles"),
            vec!["no hot water since sunday night", "priya's boiling kettles"]
        );
        assert_eq!(
            clauses("i'm on nights wed and thurs so priya's letting him in"),
            vec!["i'm on nights wed and thurs", "priya's letting him in"]
        );
        assert_eq!(
            clauses("we've been together since 2019, he teaches high school chemistry"),
            vec![
                "we've been together since 2019",
                "he teaches high school chemistry"
            ]
        );
        assert_eq!(
            clauses("we went to sintra and had lunch there"),
            vec!["we went to sintra and had lunch there"]
        );
        // A rule after a label or a word of lead-in, however short.
        assert_eq!(
            clauses("One more thing while I think of it: never book anything on a Thursday"),
            vec![
                "One more thing while I think of it:",
                "never book anything on a Thursday"
            ]
        );
        assert_eq!(
            clauses("random but always give drug doses in mg"),
            vec!["random", "always give drug doses in mg"]
        );
        // A colon before anything else is no cut ("work news: i'm switching teams"
        // is one statement), nor is a short start before a plain clause.
        assert_eq!(
            clauses("work news: i'm switching teams"),
            vec!["work news: i'm switching teams"]
        );
        assert_eq!(
            clauses("ok but we went to sintra"),
            vec!["ok but we went to sintra"]
        );
    }

    #[test]
    fn acts() {
        assert_eq!(act("never put merchant names in anything", true), Act::Rule);
        assert_eq!(
            act("don't message me before 2pm after a night shift", true),
            Act::Rule
        );
        assert_eq!(
            act(
                "Always remind me of the pill box on Sundays, will you?",
                true
            ),
            Act::Rule
        );
        // A rule word before a past form tells what was.
        assert_eq!(act("never met him", true), Act::Statement);
        assert_eq!(act("always been a night owl", true), Act::Statement);
        assert_eq!(act("never booked a cruise before", true), Act::Statement);
        assert_eq!(act("never feed the cat after six", true), Act::Rule);
        assert_eq!(act("help me draft the postmortem", true), Act::Request);
        assert_eq!(act("work news: i'm switching teams.", true), Act::Statement);
        assert_eq!(act("can you make me a revision plan?", true), Act::Request);
        assert_eq!(
            act("what time did i say the movers come?", true),
            Act::Question
        );
        assert_eq!(act("thanks!", true), Act::Chatter);
        assert_eq!(act("ok cool", true), Act::Chatter);
        // One word of content, too little to stand alone: kept with what it remarks on.
        assert_eq!(act("very dry.", true), Act::Remark);
        assert_eq!(act("seems fine?", true), Act::Remark);
        assert_eq!(act("reliable.", true), Act::Remark);
        assert_eq!(act("you sure?", true), Act::Chatter);
        assert_eq!(
            act(
                "before we start working together, some background so you don't keep asking",
                true
            ),
            Act::Chatter
        );
        assert_eq!(act("I've never met him", true), Act::Statement);
        // A request verb counts only as an imperative: its object or a particle
        // follows, or nothing does. Read as a noun, it opens a statement.
        assert_eq!(act("check the logs for me", true), Act::Request);
        assert_eq!(act("book a table for two on friday", true), Act::Request);
        assert_eq!(act("remind me to call the bank", true), Act::Request);
        assert_eq!(act("look into why the build is slow", true), Act::Request);
        assert_eq!(act("note: the gate code is 4471", true), Act::Request);
        assert_eq!(
            act("work benefits cover $900 a year for dental", true),
            Act::Statement
        );
        assert_eq!(act("plan is to leave at six", true), Act::Statement);
        assert_eq!(act("book club moved to thursdays", true), Act::Statement);
        assert_eq!(act("list price was 40k", true), Act::Statement);
        assert_eq!(
            act("I taught history at the Lycée for 31 years.", true),
            Act::Statement
        );
    }
}
