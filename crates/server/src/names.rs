//! Account and namespace names. A name becomes one directory component, so it is
//! validated to a small alphabet: no separators, no dots, nothing a file system or a
//! URL decoder could turn into another place.

/// Longest account or namespace name.
pub const MAX_NAME: usize = 63;

/// Checks a name: 1–63 characters of `a-z`, `0-9`, `-`, `_`, starting with a letter
/// or digit. The error says what is wrong with it.
pub fn validate(kind: &str, name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err(format!("{kind} name is empty"));
    }
    if name.len() > MAX_NAME {
        return Err(format!(
            "{kind} name is {} bytes long; at most {MAX_NAME} are allowed",
            name.len()
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-' || *c == '_'))
    {
        return Err(format!(
            "{kind} name {name:?} contains {c:?}; only a-z, 0-9, '-' and '_' are allowed"
        ));
    }
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Err(format!(
            "{kind} name {name:?} must start with a letter or digit"
        ));
    }
    Ok(())
}

/// Checks a tenant id (`accounts::tenant_id`): an account name, or a name, a dot and
/// the generation of an account re-created after a deletion (`carol.1`).
pub fn validate_tenant(id: &str) -> Result<(), String> {
    let (name, generation) = match id.split_once('.') {
        Some((n, g)) => (n, Some(g)),
        None => (id, None),
    };
    validate("account", name)?;
    match generation {
        Some(g) if g.is_empty() || !g.bytes().all(|b| b.is_ascii_digit()) || g.starts_with('0') => {
            Err(format!("tenant id {id:?} must be NAME or NAME.GENERATION"))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::{validate, validate_tenant};

    #[test]
    fn tenant_ids_are_a_name_and_a_generation() {
        for ok in ["carol", "carol.1", "carol.12"] {
            assert!(validate_tenant(ok).is_ok(), "{ok}");
        }
        for bad in [
            "carol.",
            "carol.01",
            "carol.x",
            "carol.1.2",
            ".1",
            "../x",
            "carol/1",
        ] {
            assert!(validate_tenant(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn only_plain_names_pass() {
        for ok in ["a", "prod", "team-1", "x_y", "0abc"] {
            assert!(validate("namespace", ok).is_ok(), "{ok}");
        }
        for bad in [
            "", "..", ".", "a/b", "a\\b", "/abs", "A", "-a", "_a", "a.b", "a b", "é", "a%2Fb",
        ] {
            assert!(validate("namespace", bad).is_err(), "{bad:?}");
        }
        assert!(validate("namespace", &"a".repeat(64)).is_err());
    }
}
