//! Where a memory came from: `source:` and the `sources:` list ingestion writes,
//! each a file and, after `#`, the messages of it (`sessions/d/s.md#m3,m5`).

use serde_json::{Map, Value};

use crate::memory::Frontmatter;

/// The frontmatter key of the cited places (kept among the unknown keys).
pub const SOURCES_KEY: &str = "sources";

/// One cited place: a file and the indexes of the messages cited in it (none when
/// the fragment names no message, or there is no fragment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Citation<'a> {
    pub file: &'a str,
    pub messages: Vec<usize>,
}

impl<'a> Citation<'a> {
    /// `sessions/d/s.md#m3,m5` → the file and messages 3 and 5; parts of the
    /// fragment that are not `m<index>` are skipped.
    pub fn parse(raw: &'a str) -> Citation<'a> {
        let (file, fragment) = raw.split_once('#').unwrap_or((raw, ""));
        Citation {
            file: file.trim(),
            messages: fragment
                .split(',')
                .filter_map(|f| f.trim().strip_prefix('m')?.parse().ok())
                .collect(),
        }
    }
}

/// One message of a transcript as a citation names it: `sessions/d/s.md#m3`.
pub fn message(file: &str, index: usize) -> String {
    format!("{file}#m{index}")
}

/// The `sources:` entries among a frontmatter's unknown keys, as written.
pub fn sources(extra: &Map<String, Value>) -> impl Iterator<Item = &str> {
    extra
        .get(SOURCES_KEY)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

impl Frontmatter {
    /// Every cited place: `source:`, then each entry of `sources:`.
    pub fn citations(&self) -> Vec<Citation<'_>> {
        self.source
            .as_deref()
            .into_iter()
            .chain(sources(&self.extra))
            .map(Citation::parse)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_citation_names_its_file_and_messages() {
        let c = Citation::parse("sessions/2026-01-02/s1.md#m3,m5");
        assert_eq!(c.file, "sessions/2026-01-02/s1.md");
        assert_eq!(c.messages, vec![3, 5]);
        assert_eq!(
            Citation::parse("sessions/a.md").messages,
            Vec::<usize>::new()
        );
        assert_eq!(Citation::parse("x.md#intro,m2").messages, vec![2]);
    }

    #[test]
    fn source_and_sources_are_both_read() {
        let mut f = Frontmatter {
            source: Some("sessions/a.md".into()),
            ..Frontmatter::default()
        };
        f.extra.insert(
            SOURCES_KEY.into(),
            serde_json::json!(["sessions/a.md#m1", "sessions/b.md#m0,m2", 7]),
        );
        let files: Vec<(&str, Vec<usize>)> = f
            .citations()
            .into_iter()
            .map(|c| (c.file, c.messages))
            .collect();
        assert_eq!(
            files,
            vec![
                ("sessions/a.md", vec![]),
                ("sessions/a.md", vec![1]),
                ("sessions/b.md", vec![0, 2])
            ]
        );
    }
}
