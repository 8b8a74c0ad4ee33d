//! The words a memory's cited messages said, read from the session transcripts of
//! the same tree, for the index to embed beside the memory's own prose.
//!
//! Ingestion cuts a message into atomic memories (one per subject and clause); a
//! question worded like the message may match the message far better than any one
//! fragment, which keeps only a few of its words. The
//! transcript (`sessions/<day>/<id>.md`, one `## m<i> <role>[ <name>]` section per
//! message) is written once by ingestion and never edited, so a memory's cited words
//! are read when the memory is indexed.

use std::collections::HashMap;

/// At most this much of a message is kept (cut at a word): what a person says in a
/// chat turn fits (LongMemEval's user turns: median 184 bytes, 99th percentile about
/// 1,300), while a pasted log of a megabyte would cost thousands of embedding windows
/// for every memory citing it. The memory's own prose is embedded whatever its length.
pub(crate) const MAX_SAID_BYTES: usize = 4096;

use gitloom_index::Said;
use gitloom_model::Memory;
use gitloom_store::{ObjectId, Store};

/// Reads cited messages out of one tree's transcripts, each transcript once.
pub(crate) struct Transcripts<'a> {
    store: &'a Store,
    tree: ObjectId,
    read: HashMap<String, Option<String>>,
}

impl<'a> Transcripts<'a> {
    pub(crate) fn new(store: &'a Store, tree: ObjectId) -> Transcripts<'a> {
        Transcripts {
            store,
            tree,
            read: HashMap::new(),
        }
    }

    /// The messages `memory` cites (`source:` and `sources:`, `sessions/…md#m3,m5`),
    /// in the order cited, each once; a citation that names no message, or a
    /// transcript or message that is not in the tree, gives nothing.
    pub(crate) fn said(&mut self, memory: &Memory) -> Vec<Said> {
        let mut out: Vec<Said> = Vec::new();
        for cited in memory.front.citations() {
            for n in cited.messages {
                let source = gitloom_model::cite::message(cited.file, n);
                if out.iter().any(|s| s.source == source) {
                    continue;
                }
                if let Some(text) = self.transcript(cited.file).and_then(|t| message(t, n)) {
                    out.push(Said {
                        source,
                        text: capped(text).to_owned(),
                    });
                }
            }
        }
        out
    }

    fn transcript(&mut self, path: &str) -> Option<&str> {
        if !self.read.contains_key(path) {
            let text = self
                .store
                .blob_at(self.tree, path)
                .ok()
                .flatten()
                .and_then(|blob| self.store.read_blob(blob).ok())
                .and_then(|bytes| String::from_utf8(bytes).ok());
            self.read.insert(path.to_owned(), text);
        }
        self.read.get(path).and_then(|t| t.as_deref())
    }
}

/// The words of message `n` of a transcript: from its heading's line to the next
/// message's heading (`## m4 `), whatever the words themselves contain.
fn message(transcript: &str, n: usize) -> Option<&str> {
    let start = heading(transcript, n)?;
    let body = &transcript[start..];
    let body = body.split_once('\n').map_or("", |(_, rest)| rest);
    let end = heading(body, n + 1).unwrap_or(body.len());
    let text = body[..end].trim();
    (!text.is_empty()).then_some(text)
}

/// `text` cut to at most [`MAX_SAID_BYTES`], at the last whitespace before the bound
/// (at a character boundary when there is none).
fn capped(text: &str) -> &str {
    if text.len() <= MAX_SAID_BYTES {
        return text;
    }
    let mut end = MAX_SAID_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = &text[..end];
    head.rfind(char::is_whitespace)
        .map_or(head, |i| head[..i].trim_end())
}

/// Where the heading of message `n` starts: a line `## m<n> <role>…`.
fn heading(text: &str, n: usize) -> Option<usize> {
    let mark = format!("## m{n} ");
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.starts_with(&mark) {
            return Some(at);
        }
        at += line.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &str = "# Session s1\n\ndate: 2026-04-24\n\n## m0 user\n\nWE'RE ENGAGED!!! he proposed.\n\n## m1 assistant\n\nCongratulations!\n\n## m2 user Caroline\n\na line\n## m10 is not a heading of m2\n\n## m3 user\n\nlast\n";

    #[test]
    fn a_message_is_read_from_its_heading_to_the_next() {
        assert_eq!(message(T, 0), Some("WE'RE ENGAGED!!! he proposed."));
        assert_eq!(message(T, 1), Some("Congratulations!"));
        assert_eq!(message(T, 2), Some("a line\n## m10 is not a heading of m2"));
        assert_eq!(message(T, 3), Some("last"));
        assert_eq!(message(T, 4), None);
    }

    #[test]
    fn a_long_message_is_cut_at_a_word_within_the_bound() {
        assert_eq!(capped("short words"), "short words");
        let long = "word ".repeat(2000);
        let cut = capped(&long);
        assert!(cut.len() <= MAX_SAID_BYTES && cut.len() > MAX_SAID_BYTES - 10);
        assert!(cut.ends_with("word"), "{:?}", &cut[cut.len() - 10..]);
        // No whitespace at all, and a multi-byte character across the bound.
        let solid = "é".repeat(MAX_SAID_BYTES);
        let cut = capped(&solid);
        assert!(cut.len() <= MAX_SAID_BYTES && cut.chars().all(|c| c == 'é'));
    }
}
