//! The model extractor: any OpenAI-compatible chat-completions endpoint, with the
//! prompts in `prompts/` (versioned, and a stable prefix so servers can cache it)
//! and JSON-schema structured output. Output that does not parse or breaks the
//! rules below is retried and then reported, never written.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::CortexError;
use crate::extract::{Candidate, ExtractContext, Extractor, Fact, Judgement, Verdict};
use crate::llm::{ChatClient, ChatMessage};
use crate::session::Session;

/// The extraction prompt (system message).
pub const EXTRACT_PROMPT: &str = include_str!("../prompts/extract.md");
/// The reconciliation prompt (system message).
pub const RECONCILE_PROMPT: &str = include_str!("../prompts/reconcile.md");

/// Extracts with a model; also judges reconciliation verdicts.
#[derive(Debug)]
pub struct ModelExtractor {
    client: ChatClient,
}

#[derive(Deserialize)]
struct Facts {
    facts: Vec<Fact>,
}

fn nullable(t: &str) -> Value {
    json!({"type": [t, "null"]})
}

/// The schema of the extraction reply. Beyond the shapes it bounds what the checks
/// below would refuse anyway (message indexes, date forms, cue counts), so a server
/// that turns the schema into a grammar (llama.cpp) makes even a small model answer
/// within it. Every string and array is bounded too, well above what a fact needs: a
/// small model under greedy decoding repeats itself ("Engineer at the bank, Engineer
/// at …" in one body, eight identical entities), and a grammar without a bound lets it
/// run to `max_tokens`, where the reply is cut and nothing of it can be used.
fn fact_schema(messages: usize, statements: usize) -> Value {
    let text = |max: usize| json!({"type": "string", "maxLength": max});
    let date = json!({"type": "string",
        "pattern": "^(19|20)[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"});
    // Not blank (minLength, not a `\S` pattern: llama.cpp's schema-to-grammar does
    // not take `\S` and would accept any string).
    let line = |max: usize| json!({"type": "string", "minLength": 1, "maxLength": max});
    // A topic as the store's paths take it.
    let topic = json!({"type": "string",
        "pattern": "^[a-z][a-z0-9-]{0,31}(/[a-z][a-z0-9-]{0,31})?$"});
    let nullable_text = |max: usize| json!({"anyOf": [text(max), {"type": "null"}]});
    let nullable_date = json!({"anyOf": [date, {"type": "null"}]});
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["facts"],
        // A bound on how many facts, so a small model that repeats itself stops.
        "properties": {"facts": {"type": "array", "maxItems": (statements * 4).clamp(4, 40), "items": {
            "type": "object",
            "additionalProperties": false,
            "required": ["subject", "tier", "topic", "title", "body", "entities", "cues", "slot", "ends_slot",
                         "valid_from", "valid_to", "timeline", "confidence", "messages", "unresolved"],
            "properties": {
                "subject": line(100), "topic": topic, "title": line(160), "body": line(1000),
                "tier": {"type": "string", "enum": ["facts", "incidents", "rules", "skills"]},
                "entities": {"type": "array", "maxItems": 12, "items": {"type": "object", "additionalProperties": false,
                    "required": ["name", "kind"], "properties": {"name": text(100), "kind": nullable_text(40)}}},
                "cues": {"type": "array", "items": text(160), "minItems": 1, "maxItems": 6},
                "slot": nullable_text(40),
                "ends_slot": {"type": "boolean"},
                "valid_from": nullable_date,
                "valid_to": nullable_date,
                "timeline": {"type": "array", "maxItems": 8, "items": {"type": "object", "additionalProperties": false,
                    "required": ["date", "text"], "properties": {"date": date, "text": text(300)}}},
                "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                "messages": {"type": "array", "minItems": 1, "maxItems": messages.max(1), "items": {"type": "integer",
                    "minimum": 0, "maximum": messages.saturating_sub(1)}},
                "unresolved": {"type": "array", "maxItems": 6, "items": text(100)}
            }
        }}}
    })
}

fn judge_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["verdict", "target", "resolved"],
        "properties": {
            "verdict": {"type": "string", "enum": ["new", "extends", "corrects", "supersedes", "duplicate"]},
            "target": nullable("string"),
            "resolved": nullable("string")
        }
    })
}

/// Rules model output must keep beyond the schema.
fn check_facts(f: &Facts, messages: usize) -> Result<(), String> {
    for (i, fact) in f.facts.iter().enumerate() {
        let at = format!("facts[{i}]");
        if fact.title.trim().is_empty() || fact.body.trim().is_empty() {
            return Err(format!("{at}: empty title or body"));
        }
        if !(1..=8).contains(&fact.cues.len()) {
            return Err(format!("{at}: {} cues (3 to 6 asked)", fact.cues.len()));
        }
        if let Some(m) = fact.messages.iter().find(|m| **m >= messages) {
            return Err(format!("{at}: message index {m} does not exist"));
        }
        if !(0.0..=1.0).contains(&fact.confidence) {
            return Err(format!("{at}: confidence {} outside 0..1", fact.confidence));
        }
        for d in [&fact.valid_from, &fact.valid_to]
            .into_iter()
            .flatten()
            .chain(fact.timeline.iter().map(|t| &t.date))
        {
            gitloom_model::When::parse(d).map_err(|e| format!("{at}: {e}"))?;
        }
        gitloom_model::normalise_topic(&fact.topic).map_err(|e| format!("{at}.topic: {e}"))?;
    }
    Ok(())
}

impl ModelExtractor {
    pub fn new(client: ChatClient) -> ModelExtractor {
        ModelExtractor { client }
    }

    /// The client it asks (for what it has spent: [`ChatClient::tokens_used`]).
    pub fn client(&self) -> &ChatClient {
        &self.client
    }
}

impl Extractor for ModelExtractor {
    fn id(&self) -> String {
        format!("model:{}/{}", self.client.model(), crate::EXTRACTOR_VERSION)
    }

    fn extract(&self, session: &Session, ctx: &ExtractContext) -> Result<Vec<Fact>, CortexError> {
        self.extract_reporting(session, ctx, &|_| {})
    }

    fn extract_reporting(
        &self,
        session: &Session,
        ctx: &ExtractContext,
        received: &dyn Fn(usize),
    ) -> Result<Vec<Fact>, CortexError> {
        let mut user = format!(
            "SESSION DATE: {}\nEXISTING TOPICS: {}\nKNOWN ENTITIES: {}\n\nCONVERSATION:\n",
            session.date,
            ctx.topics.join(", "),
            ctx.known
                .iter()
                .map(|k| k.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        for (i, m) in session.messages.iter().enumerate() {
            let who = m.speaker().map(|n| format!(" {n}")).unwrap_or_default();
            user.push_str(&format!("[m{i}] {}{who}: {}\n", m.role, m.content));
        }
        let msgs = [ChatMessage::system(EXTRACT_PROMPT), ChatMessage::user(user)];
        let n = session.messages.len();
        let out: Facts = self.client.complete_json_with(
            &msgs,
            "facts",
            &fact_schema(n, session.user_messages().count()),
            |f: &Facts| check_facts(f, n),
            received,
        )?;
        Ok(out.facts)
    }

    fn judges(&self) -> bool {
        true
    }

    fn judge(
        &self,
        fact: &Fact,
        candidates: &[Candidate],
    ) -> Result<Option<Judgement>, CortexError> {
        if candidates.is_empty() {
            return Ok(None);
        }
        let user = format!(
            "NEW FACT:\n{}\nUNRESOLVED: {:?}\n\nCANDIDATES:\n{}",
            serde_json::to_string(&json!({"subject": fact.subject, "title": fact.title, "body": fact.body, "entities": fact.entities})).unwrap_or_default(),
            fact.unresolved,
            serde_json::to_string_pretty(candidates).unwrap_or_default()
        );
        let msgs = [
            ChatMessage::system(RECONCILE_PROMPT),
            ChatMessage::user(user),
        ];
        let paths: Vec<&str> = candidates.iter().map(|c| c.path.as_str()).collect();
        let j: Judgement = self.client.complete_json(
            &msgs,
            "verdict",
            &judge_schema(),
            |j: &Judgement| match (&j.verdict, &j.target) {
                (Verdict::New, _) => Ok(()),
                (_, Some(t)) if paths.contains(&t.as_str()) => Ok(()),
                (v, t) => Err(format!(
                    "verdict {v:?} names target {t:?}, which is not a candidate"
                )),
            },
        )?;
        Ok(Some(j))
    }
}
