//! Writing generated memory files: YAML frontmatter by hand, every string double-quoted.

/// `s` as a YAML double-quoted scalar. Escapes `\`, `"`, control characters, C1 controls,
/// the byte-order mark and the Unicode line/paragraph separators, so the result is a valid
/// single-line scalar under YAML 1.1 and 1.2.
pub fn yaml_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() || matches!(c, '\u{feff}' | '\u{2028}' | '\u{2029}') => {
                out.push_str(&format!("\\u{:04x}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A one-line title: `prefix` + the start of `text` (whitespace collapsed, at most `max` chars,
/// cut at a word boundary with `…` when longer).
pub fn title(prefix: &str, text: &str, max: usize) -> String {
    let flat: Vec<&str> = text.split_whitespace().collect();
    let flat = flat.join(" ");
    let short = if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max).collect();
        let cut = match cut.rfind(' ') {
            Some(i) if i > max / 2 => cut[..i].to_owned(),
            _ => cut,
        };
        format!("{}…", cut.trim_end())
    };
    let t = format!("{prefix}{short}");
    if t.trim().is_empty() {
        "(empty)".to_owned()
    } else {
        t
    }
}

/// Frontmatter fields of a generated memory, in output order.
#[derive(Debug, Default)]
pub struct Front<'a> {
    pub title: String,
    pub entities: Vec<String>,
    /// RFC 3339 UTC timestamp, e.g. `2023-05-08T13:56:00Z`; used for `created` and `valid_from`.
    pub created: Option<&'a str>,
    pub source: String,
}

/// A whole memory file: frontmatter then body.
pub fn render(front: &Front<'_>, body: &str) -> String {
    let mut s = String::from("---\n");
    s.push_str(&format!("title: {}\n", yaml_str(&front.title)));
    if !front.entities.is_empty() {
        s.push_str("entities:\n");
        for e in &front.entities {
            s.push_str(&format!("  - {}\n", yaml_str(e)));
        }
    }
    if let Some(t) = front.created {
        // Unquoted, as in hand-written stores; an RFC 3339 timestamp needs no quoting.
        s.push_str(&format!("created: {t}\nvalid_from: {t}\n"));
    }
    s.push_str(&format!("source: {}\n", yaml_str(&front.source)));
    s.push_str("---\n");
    s.push_str(body.trim_end());
    s.push('\n');
    s
}

/// Splits a rendered file into (frontmatter, body); for tests.
pub fn split(content: &str) -> Option<(&str, &str)> {
    let rest = content.strip_prefix("---\n")?;
    let end = rest.find("\n---\n")?;
    Some((&rest[..end + 1], &rest[end + 5..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct Fm {
        title: String,
        entities: Vec<String>,
        created: String,
        valid_from: String,
        source: String,
    }

    #[test]
    fn escaping_round_trips_through_yaml() {
        let nasty = "He said \"hi\"\\ \n\ttab: - [x] {y} # not a comment \u{1} \u{85} \u{feff} \u{2028} émoji 🎉 'q'";
        let f = Front {
            title: title("Caroline: ", nasty, 60),
            entities: vec!["Caroline (person)".into(), nasty.into()],
            created: Some("2023-05-08T13:56:00Z"),
            source: "locomo:conv-26:D1:3".into(),
        };
        let doc = render(&f, "body");
        let (fm, body) = split(&doc).expect("split");
        assert_eq!(body, "body\n");
        let parsed: Fm = serde_saphyr::from_str(fm).expect("valid yaml");
        assert_eq!(parsed.entities[1], nasty);
        assert_eq!(parsed.title, f.title);
        assert_eq!(parsed.source, "locomo:conv-26:D1:3");
        assert_eq!(parsed.created, "2023-05-08T13:56:00Z");
        assert_eq!(parsed.valid_from, parsed.created);
        assert!(parsed.created.parse::<jiff::Timestamp>().is_ok());
    }

    #[test]
    fn titles() {
        assert_eq!(title("A: ", "  short\n text ", 60), "A: short text");
        let t = title("", "one two three four five six seven", 20);
        assert!(t.ends_with('…') && t.chars().count() <= 21, "{t}");
        assert_eq!(title("", "   ", 10), "(empty)");
    }
}
