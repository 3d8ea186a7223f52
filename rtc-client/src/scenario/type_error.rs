//! Naming the key behind a type error inside a tagged table.
//!
//! Tables chosen by a tag (`kind = "lognormal"`, `source = "slots"`) are internally tagged
//! enums in [`super::schema`]. serde buffers such a table before it knows the variant, so when a
//! value inside has the wrong type, toml can only point at the table (its `[header]` or its
//! `{ ... }`), and the message does not say which key was wrong. This module finds the key
//! afterwards: the table is the one the error points at, and the key is the one whose removal
//! makes the error go away (serde reports a wrong type as it meets the value, before it checks
//! for missing keys, so removing any other key of the table leaves the error as it was). It runs
//! only on the error path, over a document that already parsed as TOML.

use super::schema::ScenarioFile;

/// The keys that pick a variant: removing one changes any error, so they are never blamed.
const TAG_KEYS: [&str; 2] = ["kind", "source"];

/// The dotted key (`forward.capacity.median_mbps`) whose value caused `error`, when `text` is
/// valid TOML whose fault is a value inside a table the error points at.
pub(super) fn key_behind(text: &str, error: &toml::de::Error) -> Option<String> {
    let document: toml::Table = toml::from_str(text).ok()?;
    let pointed = text.get(error.span()?)?.trim();
    let path = if let Some(header) = pointed.strip_prefix('[') {
        let header = header.strip_suffix(']')?;
        if header.starts_with('[') {
            return None;
        }
        header.split('.').map(|k| k.trim().to_owned()).collect()
    } else {
        let inline: toml::Table = toml::from_str(&format!("inline = {pointed}")).ok()?;
        let toml::Value::Table(inline) = inline.get("inline")? else {
            return None;
        };
        path_of(&document, inline, &mut Vec::new())?
    };
    let table = table_at(&document, &path)?;
    let mut fields = table.keys().filter(|key| !TAG_KEYS.contains(&key.as_str()));
    fields.find_map(|key| {
        let mut without = document.clone();
        if let Some(parent) = table_at_mut(&mut without, &path) {
            parent.remove(key);
        }
        let same = toml::Value::Table(without)
            .try_into::<ScenarioFile>()
            .err()
            .is_some_and(|e| e.message() == error.message());
        (!same).then(|| [path.join("."), key.clone()].join("."))
    })
}

/// Where in `table` a table equal to `wanted` sits.
fn path_of(
    table: &toml::Table,
    wanted: &toml::Table,
    path: &mut Vec<String>,
) -> Option<Vec<String>> {
    for (key, value) in table {
        if let toml::Value::Table(inner) = value {
            path.push(key.clone());
            if inner == wanted {
                return Some(path.clone());
            }
            if let Some(found) = path_of(inner, wanted, path) {
                return Some(found);
            }
            path.pop();
        }
    }
    None
}

fn table_at<'a>(table: &'a toml::Table, path: &[String]) -> Option<&'a toml::Table> {
    path.iter().try_fold(table, |t, key| t.get(key)?.as_table())
}

fn table_at_mut<'a>(table: &'a mut toml::Table, path: &[String]) -> Option<&'a mut toml::Table> {
    path.iter()
        .try_fold(table, |t, key| t.get_mut(key)?.as_table_mut())
}
