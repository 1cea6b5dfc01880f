//! Settings from `MOROK_*` environment variables, read the same way
//! everywhere.
//!
//! An unset or empty variable means the default. A value that does not
//! parse never fails the user's computation: the setting keeps its
//! default and the process prints one warning naming the variable, the
//! value and what was expected (once per variable), so a typo such as
//! `MOROK_BEAM=four` is seen instead of silently ignored.

use std::collections::HashSet;
use std::sync::Mutex;

/// The value of `name` parsed by `parse`: `None` when unset or empty, and
/// `None` with a warning (see the module doc) when `parse` refuses it.
/// `expected` says what the variable takes, e.g. "a positive integer".
pub fn env_setting<T>(
    name: &str,
    expected: &str,
    parse: impl FnOnce(&str) -> Option<T>,
) -> Option<T> {
    let raw = std::env::var_os(name)?;
    let Some(text) = raw.to_str() else {
        warn_bad_setting(name, &raw.to_string_lossy(), expected);
        return None;
    };
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let parsed = parse(text);
    if parsed.is_none() {
        warn_bad_setting(name, text, expected);
    }
    parsed
}

/// A positive integer setting (`MOROK_BEAM`, `MOROK_THREADS`, ...).
pub fn env_count(name: &str) -> Option<usize> {
    env_setting(name, "a positive integer", |v| {
        v.parse::<usize>().ok().filter(|n| *n > 0)
    })
}

/// An on/off setting: `1`, `true`, `yes`, `on` turn it on; `0`, `false`,
/// `no`, `off` (or unset, or empty) leave it off; anything else leaves it
/// off with a warning.
pub fn env_flag(name: &str) -> bool {
    env_setting(name, "1 or 0 (true/false, yes/no, on/off)", parse_flag).unwrap_or(false)
}

/// The meaning of an on/off value (see [`env_flag`]).
pub fn parse_flag(value: &str) -> Option<bool> {
    match value.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// Prints, once per variable and process, that `name=value` is not
/// understood and the default is used.
pub fn warn_bad_setting(name: &str, value: &str, expected: &str) {
    static WARNED: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    let mut warned = WARNED.lock().unwrap_or_else(|e| e.into_inner());
    if warned
        .get_or_insert_with(HashSet::new)
        .insert(name.to_string())
    {
        eprintln!(
            "morok: warning: ignoring {name}={value:?}: expected {expected}; the default is used"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_take_the_usual_spellings_and_refuse_others() {
        for on in ["1", "true", "YES", "On"] {
            assert_eq!(parse_flag(on), Some(true), "{on}");
        }
        for off in ["0", "false", "No", "OFF"] {
            assert_eq!(parse_flag(off), Some(false), "{off}");
        }
        for bad in ["2", "maybe", "-1", "tru"] {
            assert_eq!(parse_flag(bad), None, "{bad}");
        }
    }

    #[test]
    fn an_unset_or_garbage_variable_gives_the_default() {
        let name = "MOROK_SETTINGS_UNIT_TEST_VARIABLE";
        assert_eq!(env_count(name), None);
        // SAFETY: no other test of this binary reads or writes this variable.
        unsafe { std::env::set_var(name, " 12 ") };
        assert_eq!(env_count(name), Some(12));
        unsafe { std::env::set_var(name, "twelve") };
        assert_eq!(env_count(name), None);
        unsafe { std::env::set_var(name, "0") };
        assert_eq!(env_count(name), None);
        unsafe { std::env::set_var(name, "") };
        assert_eq!(env_count(name), None);
        unsafe { std::env::remove_var(name) };
    }
}
