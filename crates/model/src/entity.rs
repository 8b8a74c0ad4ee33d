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

    /// The form written back: a string when there is no role, else a map.
    pub fn to_value(&self) -> Value {
        match (&self.kind, &self.role) {
            (None, None) => Value::String(self.name.clone()),
            (Some(k), None) => Value::String(format!("{} ({k})", self.name)),
            (kind, Some(role)) => {
                let mut m = Map::new();
                m.insert("name".into(), Value::String(self.name.clone()));
                if let Some(k) = kind {
                    m.insert("kind".into(), Value::String(k.clone()));
                }
                m.insert("role".into(), Value::String(role.clone()));
                Value::Object(m)
            }
        }
    }
}

/// Folds a name for lookup: diacritics stripped, lowercase, single spaces.
pub fn fold_name(name: &str) -> String {
    deunicode::deunicode(name)
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
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
        assert_eq!(fold_name("  Zoë  O'Neil "), "zoe o neil");
    }
}
