//! `--fuzz-mode config-commands`: `CONFIG SET` of the server's own parameters, read once with
//! `CONFIG GET *`, minus the never-touch list ([`super::exclude::NEVER_SET`]). Values follow the
//! current one's shape (yes/no flipped, numbers moved to edges and neighbours, lists and words
//! kept or swapped for a wrong word), so most sets are accepted and change how the server runs.

use resp::Value;

use super::exclude::Exclusions;

/// A parameter `CONFIG SET` may change, with the value it had.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigParam {
    pub name: String,
    pub value: String,
}

/// The parameters of a `CONFIG GET *` reply that may be set, sorted by name (so a seed gives the
/// same stream against the same server).
pub fn params(reply: &Value, exclusions: &Exclusions) -> Vec<ConfigParam> {
    let text = |v: &Value| match v {
        Value::BulkString(b) | Value::SimpleString(b) => Some(String::from_utf8_lossy(b).into()),
        _ => None,
    };
    let pairs: Vec<(String, String)> = match reply {
        Value::Map(m) => m
            .iter()
            .filter_map(|(k, v)| Some((text(k)?, text(v)?)))
            .collect(),
        Value::Array(a) => a
            .chunks_exact(2)
            .filter_map(|kv| Some((text(&kv[0])?, text(&kv[1])?)))
            .collect(),
        _ => Vec::new(),
    };
    let mut out: Vec<ConfigParam> = pairs
        .into_iter()
        .filter(|(name, _)| exclusions.allows_config(name))
        .map(|(name, value)| ConfigParam { name, value })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_touch_list_is_applied() {
        let b = |s: &str| Value::BulkString(s.as_bytes().to_vec());
        let reply = Value::Array(vec![
            b("requirepass"),
            b(""),
            b("maxclients"),
            b("10000"),
            b("hz"),
            b("10"),
            b("bind"),
            b("* -::*"),
        ]);
        let p = params(&reply, &Exclusions::new(&[], &[]));
        assert_eq!(
            p,
            vec![ConfigParam {
                name: "hz".into(),
                value: "10".into()
            }]
        );
    }
}
