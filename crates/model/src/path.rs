//! Store paths: the only file names a store may hold.
//!
//! Every path that reaches git goes through [`StorePath::parse`], so a path that
//! leaves the store (`..`, absolute, a drive prefix), names a file outside the
//! four tiers, `sessions/` and `vocab/`, or is not a `.md` file cannot be written
//! (improvement plan G1: nothing else ever lands in history).

use std::fmt;

/// The four retrieved tiers of a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tier {
    Facts,
    Incidents,
    Rules,
    Skills,
}

impl Tier {
    pub const ALL: [Tier; 4] = [Tier::Facts, Tier::Incidents, Tier::Rules, Tier::Skills];

    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Facts => "facts",
            Tier::Incidents => "incidents",
            Tier::Rules => "rules",
            Tier::Skills => "skills",
        }
    }

    /// The tier named by a top-level directory, if it is one.
    pub fn from_dir(name: &str) -> Option<Tier> {
        Tier::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Tier {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim().trim_end_matches('/');
        Tier::from_dir(s)
            .or_else(|| Tier::from_dir(&format!("{s}s")))
            .ok_or_else(|| {
                format!("unknown tier {s:?} (expected facts, incidents, rules or skills)")
            })
    }
}

impl serde::Serialize for Tier {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Tier {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <String as serde::Deserialize>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Which part of the store a path lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Area {
    /// A retrieved memory.
    Tier(Tier),
    /// A raw transcript: kept, never retrieved.
    Sessions,
    /// Term aliases used to expand lexical queries.
    Vocab,
}

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("path is empty")]
    Empty,
    #[error("path {0:?} is not valid UTF-8")]
    NotUtf8(String),
    #[error("path {0:?} is absolute; store paths are relative to the store root")]
    Absolute(String),
    #[error("path {0:?} leaves the store or has an empty, `.` or `..` component")]
    BadComponent(String),
    #[error("path {0:?} contains a backslash, NUL or control character")]
    BadCharacter(String),
    #[error(
        "path {0:?} is outside the store's areas (facts/, incidents/, rules/, skills/, sessions/, vocab/)"
    )]
    OutsideAreas(String),
    #[error("path {0:?} must name a file below its area, e.g. facts/<topic>/<slug>.md")]
    NoFileName(String),
    #[error("path {0:?} does not end in .md")]
    NotMarkdown(String),
    #[error("path {0:?} is longer than {1} bytes")]
    TooLong(String, usize),
    #[error(
        "path {path:?}: the name {component:?}… is {bytes} bytes; a file or directory name may be at most {MAX_COMPONENT_BYTES}"
    )]
    ComponentTooLong {
        path: String,
        component: String,
        bytes: usize,
    },
    #[error("path {path:?}: the name {component:?} is not allowed: {reason}")]
    Reserved {
        path: String,
        component: String,
        reason: String,
    },
    #[error(
        "path {path:?} contains U+{code:04X}, an invisible or direction-changing character (the name would not read as it is)"
    )]
    Invisible { path: String, code: u32 },
    #[error(
        "path {path:?}: the name {component:?} mixes scripts (e.g. Latin and Cyrillic letters), so it can pass for another name"
    )]
    MixedScript { path: String, component: String },
    #[error(
        "path {0:?} is not in Unicode normal form C (the same name can be spelt with other code points); write it composed"
    )]
    NotNfc(String),
}

/// Longest path accepted; git allows more, file systems commonly don't.
pub const MAX_PATH_BYTES: usize = 1024;

/// Longest file or directory name: `NAME_MAX` of the common file systems.
pub const MAX_COMPONENT_BYTES: usize = 255;

/// A validated, normalised, `/`-separated path of a file in a store.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StorePath(String);

impl StorePath {
    /// Validates `s`. A leading `./` is accepted and dropped; nothing else is rewritten.
    pub fn parse(s: &str) -> Result<StorePath, PathError> {
        let s = s.strip_prefix("./").unwrap_or(s);
        if s.is_empty() {
            return Err(PathError::Empty);
        }
        if s.len() > MAX_PATH_BYTES {
            return Err(PathError::TooLong(
                s.chars().take(80).collect(),
                MAX_PATH_BYTES,
            ));
        }
        if s.starts_with('/') || s.as_bytes().get(1) == Some(&b':') {
            return Err(PathError::Absolute(s.to_owned()));
        }
        if s.chars().any(|c| c == '\\' || c.is_control()) {
            return Err(PathError::BadCharacter(s.to_owned()));
        }
        let parts: Vec<&str> = s.split('/').collect();
        if parts
            .iter()
            .any(|p| p.is_empty() || *p == "." || *p == "..")
        {
            return Err(PathError::BadComponent(s.to_owned()));
        }
        let area = match parts[0] {
            "sessions" => Area::Sessions,
            "vocab" => Area::Vocab,
            other => Area::Tier(
                Tier::from_dir(other).ok_or_else(|| PathError::OutsideAreas(s.to_owned()))?,
            ),
        };
        let _ = area;
        if parts.len() < 2 {
            return Err(PathError::NoFileName(s.to_owned()));
        }
        let file = parts[parts.len() - 1];
        if !file.ends_with(".md") || file.len() <= 3 {
            return Err(PathError::NotMarkdown(s.to_owned()));
        }
        Ok(StorePath(s.to_owned()))
    }

    /// Checks what a path must also be to be *written* (given new content), beyond
    /// [`StorePath::parse`], which stays lenient so that files already in git keep
    /// being read and reported: every name at most [`MAX_COMPONENT_BYTES`]; none that
    /// git refuses to check out or that names the repository itself on some file
    /// system (`.git`, and its NTFS and HFS+ spellings such as `.GIT`, `git~1`,
    /// `.g\u{200c}it`), no Windows device names or characters Windows forbids (a
    /// clone there would fail); no invisible or direction-changing characters (bidi
    /// controls, zero-width and other format characters, unassigned or private-use
    /// code points, spaces other than U+0020); names in Unicode NFC, each in a single
    /// script (UTS #39), so no name can pass for another. (Look-alikes of names
    /// already in the store are the store's to refuse: it knows them.)
    pub fn check_new(&self) -> Result<(), PathError> {
        let path = self.0.as_str();
        if let Some(c) = path.chars().find(|c| invisible(*c)) {
            return Err(PathError::Invisible {
                path: path.to_owned(),
                code: u32::from(c),
            });
        }
        if !unicode_normalization::is_nfc(path) {
            return Err(PathError::NotNfc(path.to_owned()));
        }
        for component in path.split('/') {
            if component.len() > MAX_COMPONENT_BYTES {
                return Err(PathError::ComponentTooLong {
                    path: path.chars().take(80).collect(),
                    component: component.chars().take(40).collect(),
                    bytes: component.len(),
                });
            }
            let options = gix_validate::path::component::Options::default();
            if let Err(e) =
                gix_validate::path::component(component.as_bytes().into(), None, options)
            {
                return Err(PathError::Reserved {
                    path: path.to_owned(),
                    component: component.to_owned(),
                    reason: e.to_string(),
                });
            }
            // `.md` is the same for every name: the stem is what must read as one.
            let stem = component.strip_suffix(".md").unwrap_or(component);
            if !plausible_script_mix(stem) {
                return Err(PathError::MixedScript {
                    path: path.to_owned(),
                    component: component.to_owned(),
                });
            }
        }
        Ok(())
    }

    /// Validates raw bytes as they come from git or a file system.
    pub fn from_bytes(b: &[u8]) -> Result<StorePath, PathError> {
        let s = std::str::from_utf8(b)
            .map_err(|_| PathError::NotUtf8(String::from_utf8_lossy(b).into_owned()))?;
        StorePath::parse(s)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn area(&self) -> Area {
        let first = self.0.split('/').next().unwrap_or_default();
        match first {
            "sessions" => Area::Sessions,
            "vocab" => Area::Vocab,
            // parse() admitted only tiers besides the two above
            other => Area::Tier(Tier::from_dir(other).unwrap_or(Tier::Facts)),
        }
    }

    /// The tier, for a retrieved memory.
    pub fn tier(&self) -> Option<Tier> {
        match self.area() {
            Area::Tier(t) => Some(t),
            _ => None,
        }
    }

    /// True for a file in one of the four tiers.
    pub fn is_memory(&self) -> bool {
        self.tier().is_some()
    }

    /// The topic: directories between the area and the file name (`database/replication`),
    /// empty when the file sits directly under its area.
    pub fn topic(&self) -> &str {
        let after_area = self
            .0
            .split_once('/')
            .map(|(_, rest)| rest)
            .unwrap_or_default();
        match after_area.rfind('/') {
            Some(i) => &after_area[..i],
            None => "",
        }
    }

    /// The file name without `.md`.
    pub fn slug(&self) -> &str {
        let file = self.0.rsplit('/').next().unwrap_or_default();
        file.strip_suffix(".md").unwrap_or(file)
    }
}

impl fmt::Display for StorePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for StorePath {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for StorePath {
    type Err = PathError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        StorePath::parse(s)
    }
}

/// A character that does not show as itself: format characters (bidi controls such
/// as U+202E, zero-width joiners and spaces, the BOM), private-use, unassigned and
/// surrogate code points, line and paragraph separators, and spaces other than
/// U+0020 (which would pass for it). Control characters are refused by
/// [`StorePath::parse`] already.
fn invisible(c: char) -> bool {
    use unicode_general_category::{GeneralCategory as G, get_general_category};
    match get_general_category(c) {
        G::Format | G::PrivateUse | G::Unassigned | G::Surrogate => true,
        G::LineSeparator | G::ParagraphSeparator => true,
        G::SpaceSeparator => c != ' ',
        _ => false,
    }
}

/// True when the letters of a name (and the marks on them) are of one script, or
/// one of the mixes UTS #39 calls *highly restrictive* (Latin with Han and kana,
/// Han with Bopomofo, Han with Hangul), and each is allowed in identifiers (so no
/// full-width or mathematical look-alike letters). Digits and punctuation are
/// common to every script and not judged.
fn plausible_script_mix(name: &str) -> bool {
    use unicode_general_category::{GeneralCategory as G, get_general_category};
    use unicode_security::{RestrictionLevel, RestrictionLevelDetection};
    let letters: String = name
        .chars()
        .filter(|c| {
            c.is_alphanumeric()
                || matches!(
                    get_general_category(*c),
                    G::NonspacingMark | G::SpacingMark | G::EnclosingMark
                )
        })
        .collect();
    letters
        .as_str()
        .check_restriction_level(RestrictionLevel::HighlyRestrictive)
}

/// True for a path that may appear in a commit made by gitloom: the tiers,
/// `sessions/`, `vocab/` and the top-level `.gitignore` (G1). Tests assert this on
/// every commit; the store refuses anything else before it builds a tree.
pub fn is_committable(path: &str) -> bool {
    path == ".gitignore" || StorePath::parse(path).is_ok()
}

/// Turns free text into a file-name slug: ASCII, lowercase, `-` separated, at most
/// `max` bytes, never empty.
pub fn slugify(text: &str, max: usize) -> String {
    let ascii = deunicode::deunicode(text).to_lowercase();
    let mut out = String::with_capacity(ascii.len());
    for c in ascii.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let mut out = out.trim_end_matches('-').to_owned();
    if out.len() > max {
        out.truncate(max);
        out = out.trim_end_matches('-').to_owned();
    }
    if out.is_empty() {
        out.push_str("memory");
    }
    out
}

/// A topic as given by a user (`database/replication`), validated and normalised
/// to lowercase slugs.
pub fn normalise_topic(topic: &str) -> Result<String, PathError> {
    let t = topic.trim().trim_matches('/');
    if t.is_empty() {
        return Ok(String::new());
    }
    let mut parts = Vec::new();
    for p in t.split('/') {
        if p.is_empty() || p == "." || p == ".." {
            return Err(PathError::BadComponent(topic.to_owned()));
        }
        parts.push(slugify(p, 64));
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_names_that_could_pass_for_others_or_break_a_clone_are_refused() {
        let refused = |p: &str| StorePath::parse(p).expect("parses").check_new().is_err();
        for ok in [
            "facts/work/employer.md",
            "facts/people/zoë-müller.md",
            "facts/город/москва.md",
            "facts/日本/東京タワー.md",
            "facts/shop/iphone-ケース.md",
            "facts/q3/plan — draft.md",
            "facts/a b/notes 2.md",
            &format!("facts/x/{}.md", "a".repeat(252)),
        ] {
            assert!(!refused(ok), "{ok}");
        }
        for bad in [
            "facts/.git/config.md",
            "facts/.GIT/hooks.md",
            "facts/git~1/x.md",
            "facts/.g\u{200c}it/x.md",
            "facts/con/x.md",
            "facts/a:b.md",
            "facts/x./y.md",
            &format!("facts/x/{}.md", "a".repeat(253)),
            "facts/evil\u{202e}dm.txt.md",
            "facts/zero\u{200b}width.md",
            "facts/nb\u{a0}sp.md",
            "facts/p\u{430}ypal.md",
            "facts/cafe\u{301}.md",
            "facts/\u{ff21}pple.md",
        ] {
            assert!(refused(bad), "{bad:?} accepted");
        }
        let err = StorePath::parse("facts/.git/config.md")
            .expect("parses")
            .check_new()
            .expect_err("refused");
        assert!(err.to_string().contains(".git"), "{err}");
    }

    #[test]
    fn accepts_tier_paths() {
        let p = StorePath::parse("facts/database/replication/pg.md").expect("valid");
        assert_eq!(p.tier(), Some(Tier::Facts));
        assert_eq!(p.topic(), "database/replication");
        assert_eq!(p.slug(), "pg");
        assert_eq!(StorePath::parse("./rules/x.md").expect("valid").topic(), "");
        assert_eq!(
            StorePath::parse("sessions/2026-01-01/s1.md")
                .expect("valid")
                .area(),
            Area::Sessions
        );
    }

    #[test]
    fn refuses_paths_that_leave_or_wander() {
        for bad in [
            "",
            "/etc/passwd.md",
            "facts/../../x.md",
            "facts/./x.md",
            "facts//x.md",
            "C:/facts/x.md",
            "facts\\x.md",
            "facts/x\0.md",
            "facts/x\n.md",
            ".gitloom/index.md",
            "notes/x.md",
            "facts.md",
            "facts/x.txt",
            "facts/.md",
            "Facts/x.md",
        ] {
            assert!(StorePath::parse(bad).is_err(), "{bad:?} should be refused");
        }
        assert!(matches!(
            StorePath::from_bytes(b"facts/\xff.md"),
            Err(PathError::NotUtf8(_))
        ));
        assert!(StorePath::parse(&format!("facts/{}.md", "a".repeat(2000))).is_err());
    }

    #[test]
    fn committable_set_is_exactly_the_areas() {
        assert!(is_committable(".gitignore"));
        assert!(is_committable("vocab/k8s.md"));
        assert!(!is_committable(".gitloom/index.db"));
        assert!(!is_committable("README.md"));
    }

    #[test]
    fn slugs() {
        assert_eq!(slugify("Works at Orbital AI!", 64), "works-at-orbital-ai");
        assert_eq!(slugify("Straße café", 64), "strasse-cafe");
        assert_eq!(slugify("???", 64), "memory");
        assert_eq!(slugify("aaaa bbbb", 6), "aaaa-b");
        assert_eq!(
            normalise_topic("/Database/Replication/").expect("ok"),
            "database/replication"
        );
        assert!(normalise_topic("a/../b").is_err());
    }
}
