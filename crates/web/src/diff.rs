//! Line diffs between two versions of a file (the `similar` crate's Myers diff),
//! grouped into hunks with a few lines of context, as `git diff` shows them.

use similar::{ChangeTag, TextDiff};

/// What a diff line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// `@@ -a,b +c,d @@`
    Hunk,
    Context,
    Added,
    Removed,
}

/// One line of a unified diff (its text without the newline).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine {
    pub kind: LineKind,
    pub text: String,
}

/// A diff with its counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileDiff {
    pub lines: Vec<DiffLine>,
    pub added: usize,
    pub removed: usize,
}

/// Lines of context around each change.
const CONTEXT: usize = 3;

/// The unified diff from `old` to `new` (`None` = the file did not exist).
pub fn diff(old: Option<&str>, new: Option<&str>) -> FileDiff {
    let (old, new) = (old.unwrap_or_default(), new.unwrap_or_default());
    let text = TextDiff::from_lines(old, new);
    let mut out = FileDiff::default();
    for group in text.grouped_ops(CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (o, n) = (first.old_range().start, first.new_range().start);
        let (o_end, n_end) = (last.old_range().end, last.new_range().end);
        out.lines.push(DiffLine {
            kind: LineKind::Hunk,
            text: format!("@@ -{},{} +{},{} @@", o + 1, o_end - o, n + 1, n_end - n),
        });
        for op in &group {
            for change in text.iter_changes(op) {
                let kind = match change.tag() {
                    ChangeTag::Equal => LineKind::Context,
                    ChangeTag::Insert => {
                        out.added += 1;
                        LineKind::Added
                    }
                    ChangeTag::Delete => {
                        out.removed += 1;
                        LineKind::Removed
                    }
                };
                let value = change.value();
                out.lines.push(DiffLine {
                    kind,
                    text: value.strip_suffix('\n').unwrap_or(value).to_owned(),
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
    fn an_edit_is_one_hunk_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\n";
        let d = diff(Some(old), Some(new));
        assert_eq!((d.added, d.removed), (1, 1));
        let kinds: Vec<LineKind> = d.lines.iter().map(|l| l.kind).collect();
        use LineKind::*;
        assert_eq!(
            kinds,
            [
                Hunk, Context, Context, Context, Removed, Added, Context, Context, Context
            ]
        );
        assert_eq!(d.lines[0].text, "@@ -2,7 +2,7 @@");
        assert_eq!(d.lines[4].text, "e");
        assert_eq!(d.lines[5].text, "E");
    }

    #[test]
    fn a_new_file_is_all_added_and_an_unchanged_one_is_empty() {
        let d = diff(None, Some("x\ny\n"));
        assert_eq!((d.added, d.removed), (2, 0));
        assert!(diff(Some("same\n"), Some("same\n")).lines.is_empty());
        let gone = diff(Some("x\n"), None);
        assert_eq!((gone.added, gone.removed), (0, 1));
    }
}
