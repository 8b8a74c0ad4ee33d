//! The markdown body: `##` sections (addressable nodes with line spans) and
//! `[[wikilinks]]` (graph edges by path or title). Fenced code is skipped by both.

/// A `##` section. Lines are 1-based in the file and inclusive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub heading: String,
    /// Slug of the heading, unique within the file (`team`, `team-2`).
    pub anchor: String,
    pub start_line: usize,
    pub end_line: usize,
    /// The section's text without its heading line.
    pub text: String,
}

/// `[[target]]`, `[[target|label]]` or `[[target#section]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WikiLink {
    pub target: String,
    pub section: Option<String>,
    pub label: Option<String>,
}

fn is_fence(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("```") || t.starts_with("~~~")
}

/// Splits the body at `## ` headings. Text before the first heading belongs to the
/// file node, not to a section. `body_line` is the file line the body starts on.
pub fn sections(body: &str, body_line: usize) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    let mut in_fence = false;
    let mut current: Option<(String, usize, Vec<&str>)> = None;
    let mut last_line = body_line;
    for (i, line) in body.lines().enumerate() {
        let line_no = body_line + i;
        last_line = line_no;
        if is_fence(line) {
            in_fence = !in_fence;
        }
        let heading = (!in_fence)
            .then(|| line.strip_prefix("## "))
            .flatten()
            .map(|h| h.trim().trim_end_matches('#').trim());
        match heading {
            Some(h) if !h.is_empty() => {
                if let Some((head, start, lines)) = current.take() {
                    push_section(&mut out, head, start, line_no - 1, &lines);
                }
                current = Some((h.to_owned(), line_no, Vec::new()));
            }
            _ => {
                if let Some((_, _, lines)) = current.as_mut() {
                    lines.push(line);
                }
            }
        }
    }
    if let Some((head, start, lines)) = current.take() {
        push_section(&mut out, head, start, last_line, &lines);
    }
    out
}

fn push_section(out: &mut Vec<Section>, heading: String, start: usize, end: usize, lines: &[&str]) {
    let base = crate::path::slugify(&heading, 64);
    let mut anchor = base.clone();
    let mut n = 2;
    while out.iter().any(|s| s.anchor == anchor) {
        anchor = format!("{base}-{n}");
        n += 1;
    }
    let text = lines.join("\n").trim().to_owned();
    out.push(Section {
        heading,
        anchor,
        start_line: start,
        end_line: end.max(start),
        text,
    });
}

/// Every `[[…]]` outside fenced code, in order, duplicates kept.
pub fn wikilinks(body: &str) -> Vec<WikiLink> {
    let mut out = Vec::new();
    let mut in_fence = false;
    for line in body.lines() {
        if is_fence(line) {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let mut rest = line;
        while let Some(open) = rest.find("[[") {
            let after = &rest[open + 2..];
            let Some(close) = after.find("]]") else { break };
            let inner = &after[..close];
            rest = &after[close + 2..];
            if inner.is_empty() || inner.contains('[') {
                continue;
            }
            let (target, label) = match inner.split_once('|') {
                Some((t, l)) => (t, Some(l.trim().to_owned())),
                None => (inner, None),
            };
            let (target, section) = match target.split_once('#') {
                Some((t, s)) => (t, Some(s.trim().to_owned())),
                None => (target, None),
            };
            let target = target.trim();
            if !target.is_empty() {
                out.push(WikiLink {
                    target: target.to_owned(),
                    section,
                    label,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_and_spans() {
        let body = "intro\n## One\na\nb\n```\n## not a heading\n```\n## One\nc\n";
        let s = sections(body, 10);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].start_line, s[0].end_line), (11, 16));
        assert_eq!(s[0].anchor, "one");
        assert_eq!(s[1].anchor, "one-2");
        assert_eq!((s[1].start_line, s[1].end_line), (17, 18));
        assert_eq!(s[1].text, "c");
        assert!(s[0].text.contains("## not a heading"));
    }

    #[test]
    fn links() {
        let l = wikilinks(
            "see [[facts/a.md]] and [[Lena Fischer|Lena]], [[b#Team]] `x` [[]]\n```\n[[code]]\n```\n",
        );
        let targets: Vec<_> = l.iter().map(|w| w.target.as_str()).collect();
        assert_eq!(targets, vec!["facts/a.md", "Lena Fischer", "b"]);
        assert_eq!(l[1].label.as_deref(), Some("Lena"));
        assert_eq!(l[2].section.as_deref(), Some("Team"));
    }
}
