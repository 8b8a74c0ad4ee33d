//! Entity mentions in frontmatter: `"Name"`, `"Name (kind)"` or `{name, kind, role}`.

use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EntityRef {
    pub name: String,
    pub kind: Option<String>,
    pub role: Option<String>,
}

impl EntityRef {
    /// Parses the string form: `Orbital AI (org)` or `Berlin`.
    pub fn parse(s: &str) -> EntityRef {
        let s = s.trim();
        if let Some(open) = s.rfind(" (")
            && s.ends_with(')')
        {
            let kind = s[open + 2..s.len() - 1].trim();
            let name = s[..open].trim();
            if !kind.is_empty() && !name.is_empty() && !kind.contains(['(', ')']) {
                return EntityRef {
                    name: name.to_owned(),
                    kind: Some(kind.to_lowercase()),
                    role: None,
                };
            }
        }
        EntityRef {
            name: s.to_owned(),
            kind: None,
            role: None,
        }
    }

    /// The form written back: a string when there is no role and the string reads
    /// back as this very entity, else a map. A name that itself ends in "(…)", or a
    /// kind holding a parenthesis, would be split differently when read again (found
    /// by fuzzing: `fuzz/corpus/memory_parse/entity-parens`).
    pub fn to_value(&self) -> Value {
        let short = match (&self.kind, &self.role) {
            (None, None) => Some(self.name.clone()),
            (Some(k), None) => Some(format!("{} ({k})", self.name)),
            (_, Some(_)) => None,
        };
        if let Some(s) = short.filter(|s| EntityRef::parse(s) == *self) {
            return Value::String(s);
        }
        let mut m = Map::new();
        m.insert("name".into(), Value::String(self.name.clone()));
        if let Some(k) = &self.kind {
            m.insert("kind".into(), Value::String(k.clone()));
        }
        if let Some(role) = &self.role {
            m.insert("role".into(), Value::String(role.clone()));
        }
        Value::Object(m)
    }
}

/// Folds a name for lookup: diacritics stripped, lowercase, single spaces.
pub fn fold_name(name: &str) -> String {
    // Transliterated whole first (names in any script meet their ASCII spelling),
    // then split like any text; a possessive is a word of its own here, so that word
    // positions agree with the query's.
    let ascii = deunicode::deunicode(name);
    let mut out: Vec<String> = Vec::new();
    for w in crate::text::words(&ascii) {
        out.push(w.norm);
        out.extend(w.clitic);
    }
    out.join(" ")
}

impl<'de> Deserialize<'de> for EntityRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Full {
            name: String,
            #[serde(default)]
            kind: Option<String>,
            #[serde(default)]
            role: Option<String>,
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            S(String),
            M(Full),
        }
        Ok(match Either::deserialize(d)? {
            Either::S(s) => EntityRef::parse(&s),
            Either::M(f) => EntityRef {
                name: f.name.trim().to_owned(),
                kind: f
                    .kind
                    .map(|k| k.trim().to_lowercase())
                    .filter(|k| !k.is_empty()),
                role: f
                    .role
                    .map(|r| r.trim().to_owned())
                    .filter(|r| !r.is_empty()),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        assert_eq!(
            EntityRef::parse("Orbital AI (org)").kind.as_deref(),
            Some("org")
        );
        assert_eq!(EntityRef::parse("Orbital AI (org)").name, "Orbital AI");
        assert_eq!(EntityRef::parse("Berlin").kind, None);
        assert_eq!(EntityRef::parse("f(x)").name, "f(x)");
    }

    #[test]
    fn every_entity_reads_back_as_written() {
        let tricky = [
            EntityRef {
                name: "Foo (bar)".into(),
                kind: None,
                role: None,
            },
            EntityRef {
                name: "Sigma 85mm".into(),
                kind: Some("for portraits) x".into()),
                role: None,
            },
            EntityRef {
                name: "Orbital AI".into(),
                kind: Some("org".into()),
                role: None,
            },
            EntityRef {
                name: "Lena".into(),
                kind: None,
                role: Some("manager".into()),
            },
        ];
        for e in tricky {
            let v = e.to_value();
            let back: EntityRef = serde_json::from_value(v.clone()).expect("reads back");
            assert_eq!(back, e, "{v}");
        }
        assert_eq!(
            EntityRef::parse("Orbital AI (org)").to_value(),
            Value::String("Orbital AI (org)".into()),
            "the short form is kept where it reads back"
        );
        assert_eq!(fold_name("  Zoë  O'Neil "), "zoe o neil");
    }
}
