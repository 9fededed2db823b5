//! A command typed as one line (`--command 'SET "a b" x'`) split into its arguments the way
//! memtier_benchmark splits its `--command` (the rule of redis-cli's prompt too), so the lines
//! its users copy send the same arguments here.
//!
//! Owns: the quoting rule, in one place: `--command` parses with it and `crate::redact` finds a
//! secret argument's place in the typed line with it. Must not: know what the arguments mean.
//!
//! The rule: arguments are separated by whitespace. `"` starts a quoted part in which `\n`,
//! `\r`, `\t`, `\b`, `\a` are those control bytes, `\xHH` is the byte HH, and a backslash before
//! any other character stands for that character (`\"`, `\\`). `'` starts a quoted part taken
//! literally except `\'` for a quote. A quote may open in the middle of an argument
//! (`key"a b"` is `keya b`) but closes it: whitespace or the end of the line must follow the
//! closing quote. An unterminated quote is an error.

use std::ops::Range;

/// One argument: its bytes after unquoting, and where it was typed (quotes included).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word {
    pub bytes: Vec<u8>,
    pub span: Range<usize>,
}

/// Why a line does not split: the message names the rule, never the line (it may hold a
/// password).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuoteError {
    /// A `"` or `'` with no closing one.
    Unterminated,
    /// A closing quote followed by something other than whitespace (`"a"b`).
    TextAfterQuote,
}

impl std::fmt::Display for QuoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            QuoteError::Unterminated => "a quote is not closed",
            QuoteError::TextAfterQuote => {
                "a closing quote must be followed by a space or the end of the line"
            }
        })
    }
}

/// The arguments of `line` by the rule above.
pub fn split_words(line: &[u8]) -> Result<Vec<Word>, QuoteError> {
    let mut words = Vec::new();
    let mut i = 0;
    loop {
        while i < line.len() && line[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == line.len() {
            return Ok(words);
        }
        let start = i;
        let mut bytes = Vec::new();
        while i < line.len() && !line[i].is_ascii_whitespace() {
            i = match line[i] {
                b'"' => double_quoted(line, i + 1, &mut bytes)?,
                b'\'' => single_quoted(line, i + 1, &mut bytes)?,
                b => {
                    bytes.push(b);
                    i + 1
                }
            };
        }
        words.push(Word {
            bytes,
            span: start..i,
        });
    }
}

/// The inside of `"…"` from `i` (after the opening quote) into `out`; the index after the
/// closing quote, which must end the argument.
fn double_quoted(line: &[u8], mut i: usize, out: &mut Vec<u8>) -> Result<usize, QuoteError> {
    loop {
        match line.get(i) {
            None => return Err(QuoteError::Unterminated),
            Some(b'"') => return closed(line, i + 1),
            Some(b'\\') if i + 1 < line.len() => {
                let hex = |b: Option<&u8>| b.and_then(|b| (*b as char).to_digit(16));
                if line[i + 1] == b'x'
                    && let (Some(hi), Some(lo)) = (hex(line.get(i + 2)), hex(line.get(i + 3)))
                {
                    out.push((hi * 16 + lo) as u8);
                    i += 4;
                    continue;
                }
                out.push(match line[i + 1] {
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    b'b' => 0x08,
                    b'a' => 0x07,
                    other => other,
                });
                i += 2;
            }
            Some(&b) => {
                out.push(b);
                i += 1;
            }
        }
    }
}

/// The inside of `'…'`, as [`double_quoted`]: literal but for `\'`.
fn single_quoted(line: &[u8], mut i: usize, out: &mut Vec<u8>) -> Result<usize, QuoteError> {
    loop {
        match line.get(i) {
            None => return Err(QuoteError::Unterminated),
            Some(b'\\') if line.get(i + 1) == Some(&b'\'') => {
                out.push(b'\'');
                i += 2;
            }
            Some(b'\'') => return closed(line, i + 1),
            Some(&b) => {
                out.push(b);
                i += 1;
            }
        }
    }
}

/// `i` (just after a closing quote) when the argument ends there.
fn closed(line: &[u8], i: usize) -> Result<usize, QuoteError> {
    match line.get(i) {
        Some(b) if !b.is_ascii_whitespace() => Err(QuoteError::TextAfterQuote),
        _ => Ok(i),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        split_words(line.as_bytes())
            .unwrap()
            .into_iter()
            .map(|w| String::from_utf8_lossy(&w.bytes).into_owned())
            .collect()
    }

    #[test]
    fn whitespace_separates_and_quotes_group() {
        assert_eq!(args("  SET  a\tb \n"), ["SET", "a", "b"]);
        assert_eq!(args(r#"set "a b" x"#), ["set", "a b", "x"]);
        assert_eq!(args("set 'a b' x"), ["set", "a b", "x"]);
        assert_eq!(args(r#"set key"a b" ''"#), ["set", "keya b", ""]);
        assert_eq!(
            args(r#"set "it's" 'say "hi"'"#),
            ["set", "it's", r#"say "hi""#]
        );
        assert!(args("").is_empty() && args("   ").is_empty());
    }

    #[test]
    fn escapes_inside_double_quotes_only() {
        assert_eq!(
            split_words(br#""a\n\r\t\b\a\x41\xzz\"\\" 'x\'y\n'"#).unwrap()[..]
                .iter()
                .map(|w| w.bytes.clone())
                .collect::<Vec<_>>(),
            [b"a\n\r\t\x08\x07Axzz\"\\".to_vec(), b"x'y\\n".to_vec()]
        );
        assert_eq!(
            args(r"a\nb"),
            [r"a\nb"],
            "outside quotes a backslash is a byte"
        );
    }

    #[test]
    fn spans_cover_the_typed_argument() {
        let w = split_words(br#"AUTH  "my pw" x"#).unwrap();
        let spans: Vec<_> = w.iter().map(|w| w.span.clone()).collect();
        assert_eq!(spans, [0..4, 6..13, 14..15]);
    }

    #[test]
    fn broken_quoting_is_an_error() {
        for (line, e) in [
            (r#"set "a b"#, QuoteError::Unterminated),
            ("set 'a", QuoteError::Unterminated),
            (r#"set "a\"#, QuoteError::Unterminated),
            (r#"set "a"b"#, QuoteError::TextAfterQuote),
            ("set 'a''b'", QuoteError::TextAfterQuote),
        ] {
            assert_eq!(split_words(line.as_bytes()), Err(e), "{line}");
        }
    }
}
