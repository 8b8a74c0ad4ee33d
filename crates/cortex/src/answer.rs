//! Answering a question from retrieved memories: the model (if any) sees only the
//! evidence and must cite it; when retrieval abstains the answer is "I don't know",
//! and with no model only the evidence is returned.

use gitloom_engine::{Engine, RetrieveRequest};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::error::CortexError;
use crate::llm::{ChatClient, ChatMessage};

/// The answer prompt (system message).
pub const ANSWER_PROMPT: &str = include_str!("../prompts/answer.md");

/// One memory used as evidence.
#[derive(Debug, Clone, Serialize)]
pub struct AnswerEvidence {
    pub path: String,
    pub title: String,
    pub score: f64,
    pub snippet: String,
}

/// An answer with what it rests on.
#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    /// The model's answer; `None` with no model, or when it does not know.
    pub text: Option<String>,
    /// Paths the answer cites (always among `evidence`).
    pub cited: Vec<String>,
    /// Retrieval found no evidence: the honest answer is that we do not know.
    pub abstained: bool,
    pub evidence: Vec<AnswerEvidence>,
}

#[derive(Deserialize)]
struct Reply {
    answer: Option<String>,
    cited: Vec<String>,
}

/// Answers `question` from at most `limit` retrieved memories.
pub fn answer(
    engine: &Engine,
    question: &str,
    llm: Option<&ChatClient>,
    limit: usize,
) -> Result<Answer, CortexError> {
    let r = engine.retrieve(&RetrieveRequest::new(question).with_limit(limit.max(1)))?;
    let evidence: Vec<AnswerEvidence> = r
        .hits
        .iter()
        .map(|h| AnswerEvidence {
            path: h.path.clone(),
            title: h.title.clone(),
            score: h.score,
            snippet: h.snippet.clone(),
        })
        .collect();
    if r.abstained || evidence.is_empty() {
        return Ok(Answer {
            text: llm.map(|_| "I don't know: no stored memory answers that.".to_owned()),
            cited: Vec::new(),
            abstained: true,
            evidence,
        });
    }
    let Some(client) = llm else {
        return Ok(Answer {
            text: None,
            cited: Vec::new(),
            abstained: false,
            evidence,
        });
    };
    let mut memories = String::new();
    for h in &r.hits {
        let body = engine
            .get(&h.path, None)
            .map(|g| g.content)
            .unwrap_or_else(|_| h.snippet.clone());
        memories.push_str(&format!("--- {}\n{}\n", h.path, body.trim()));
    }
    let schema = json!({
        "type": "object", "additionalProperties": false, "required": ["answer", "cited"],
        "properties": {"answer": {"type": ["string", "null"]}, "cited": {"type": "array", "items": {"type": "string"}}}
    });
    let paths: Vec<String> = evidence.iter().map(|e| e.path.clone()).collect();
    let msgs = [
        ChatMessage::system(ANSWER_PROMPT),
        ChatMessage::user(format!("QUESTION: {question}\n\nMEMORIES:\n{memories}")),
    ];
    let reply: Reply = client.complete_json(&msgs, "answer", &schema, |r: &Reply| {
        match r.cited.iter().find(|c| !paths.contains(c)) {
            Some(c) => Err(format!("cites {c:?}, which is not among the memories")),
            None if r.answer.is_some() && r.cited.is_empty() => {
                Err("an answer must cite a memory".into())
            }
            None => Ok(()),
        }
    })?;
    Ok(Answer {
        text: reply.answer,
        cited: reply.cited,
        abstained: false,
        evidence,
    })
}
