//! `--tls-ciphers` and `--tls-ciphersuites`: OpenSSL's cipher-string language, applied to the
//! suites respbench has (rustls with *ring*: ECDHE with AES-GCM or ChaCha20-Poly1305 for TLS 1.2,
//! the three AEAD suites of TLS 1.3). Pure functions; the result is indexes into [`TLS12`] and
//! [`TLS13`], in the order of preference the list gives.
//!
//! `--tls-ciphers` (TLS 1.2), as OpenSSL reads it:
//! - entries separated by `:`, `,` or spaces;
//! - an entry is a cipher name (OpenSSL's `ECDHE-RSA-AES256-GCM-SHA384` or the IANA
//!   `TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384`) or a keyword (`HIGH`, `ECDHE`, `AESGCM`, `aRSA`, ...),
//!   or several joined by `+` (all must match: `ECDHE+AESGCM`);
//! - a plain entry adds the ciphers it matches (those already in the list stay where they are),
//!   `-x` removes them, `!x` removes them for good, `+x` moves them to the end, `@STRENGTH` sorts
//!   by key length, `@SECLEVEL=n` is accepted and ignored;
//! - keywords match in OpenSSL's default order (AES-256, ChaCha20, AES-128; ECDSA before RSA).
//!
//! Keywords that only match ciphers respbench does not have (`MEDIUM`, `aNULL`, `MD5`, `RSA`,
//! `DHE`, `CAMELLIA`, ...) match nothing, as they would in an OpenSSL built without those ciphers,
//! and anything else unknown (including OpenSSL names of ciphers respbench does not have, such as
//! `AES128-SHA`) is skipped, as OpenSSL skips unknown entries. Both are silent: removing a cipher
//! respbench lacks removes nothing (`DEFAULT:-AES128-SHA256` is a common idiom), and harnesses
//! treat any output on stderr as failure. What the reference would refuse is an error: a list that
//! leaves nothing, and an unknown `@` command.
//!
//! `--tls-ciphersuites` (TLS 1.3): names separated by `:` only (OpenSSL's rule); unknown names are
//! skipped silently, as OpenSSL does; an empty or wholly unknown list is an error.

/// A TLS 1.2 suite respbench has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tls12Suite {
    pub openssl: &'static str,
    pub iana: &'static str,
    ecdsa: bool,
    enc: Enc,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Enc {
    Aes256Gcm,
    Chacha20,
    Aes128Gcm,
}

impl Enc {
    /// Key length in bits, for `@STRENGTH`.
    fn bits(self) -> u32 {
        match self {
            Enc::Aes256Gcm | Enc::Chacha20 => 256,
            Enc::Aes128Gcm => 128,
        }
    }
}

const fn s12(openssl: &'static str, iana: &'static str, ecdsa: bool, enc: Enc) -> Tls12Suite {
    Tls12Suite {
        openssl,
        iana,
        ecdsa,
        enc,
    }
}

/// The TLS 1.2 suites, in OpenSSL's default order (`openssl ciphers -v DEFAULT`).
pub const TLS12: [Tls12Suite; 6] = [
    s12(
        "ECDHE-ECDSA-AES256-GCM-SHA384",
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        true,
        Enc::Aes256Gcm,
    ),
    s12(
        "ECDHE-RSA-AES256-GCM-SHA384",
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        false,
        Enc::Aes256Gcm,
    ),
    s12(
        "ECDHE-ECDSA-CHACHA20-POLY1305",
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        true,
        Enc::Chacha20,
    ),
    s12(
        "ECDHE-RSA-CHACHA20-POLY1305",
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        false,
        Enc::Chacha20,
    ),
    s12(
        "ECDHE-ECDSA-AES128-GCM-SHA256",
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        true,
        Enc::Aes128Gcm,
    ),
    s12(
        "ECDHE-RSA-AES128-GCM-SHA256",
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        false,
        Enc::Aes128Gcm,
    ),
];

/// The TLS 1.3 suites, in OpenSSL's default order.
pub const TLS13: [&str; 3] = [
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
    "TLS_AES_128_GCM_SHA256",
];

/// TLS 1.3 suites OpenSSL knows and respbench does not have.
const TLS13_OTHER: [&str; 2] = ["TLS_AES_128_CCM_SHA256", "TLS_AES_128_CCM_8_SHA256"];

/// OpenSSL keywords that select only ciphers respbench does not have: they match nothing here.
const EMPTY_KEYWORDS: &[&str] = &[
    "MEDIUM",
    "LOW",
    "EXP",
    "EXPORT",
    "NULL",
    "eNULL",
    "aNULL",
    "COMPLEMENTOFDEFAULT",
    "COMPLEMENTOFALL",
    "RSA",
    "kRSA",
    "DH",
    "DHE",
    "EDH",
    "kDHE",
    "kEDH",
    "ADH",
    "AECDH",
    "aECDH",
    "kECDH",
    "kECDHr",
    "kECDHe",
    "aDSS",
    "DSS",
    "PSK",
    "kPSK",
    "aPSK",
    "ECDHEPSK",
    "DHEPSK",
    "RSAPSK",
    "SRP",
    "kSRP",
    "aSRP",
    "MD5",
    "SHA1",
    "SHA",
    "SHA256",
    "SHA384",
    "AEAD",
    "RC4",
    "DES",
    "3DES",
    "IDEA",
    "SEED",
    "CAMELLIA",
    "CAMELLIA128",
    "CAMELLIA256",
    "ARIA",
    "ARIA128",
    "ARIA256",
    "ARIAGCM",
    "AESCCM",
    "AESCCM8",
    "SSLv3",
    "TLSv1",
    "TLSv1.0",
    "kGOST",
    "aGOST",
    "GOST89MAC",
    "GOST94",
];

/// The suites a single term matches, as a bit set over [`TLS12`]; `None` if unknown.
fn term(t: &str) -> Option<u8> {
    let all = (1u8 << TLS12.len()) - 1;
    let matching = |f: &dyn Fn(&Tls12Suite) -> bool| {
        TLS12
            .iter()
            .enumerate()
            .filter(|(_, s)| f(s))
            .fold(0u8, |acc, (i, _)| acc | 1 << i)
    };
    if let Some(i) = TLS12.iter().position(|s| s.openssl == t || s.iana == t) {
        return Some(1 << i);
    }
    Some(match t {
        "ALL" | "DEFAULT" | "HIGH" | "ECDHE" | "EECDH" | "kECDHE" | "kEECDH" | "TLSv1.2" => all,
        "aRSA" => matching(&|s| !s.ecdsa),
        "aECDSA" | "ECDSA" => matching(&|s| s.ecdsa),
        "AESGCM" | "AES" | "FIPS" => matching(&|s| s.enc != Enc::Chacha20),
        "AES128" => matching(&|s| s.enc == Enc::Aes128Gcm),
        "AES256" => matching(&|s| s.enc == Enc::Aes256Gcm),
        "CHACHA20" => matching(&|s| s.enc == Enc::Chacha20),
        "SUITEB128" => matching(&|s| s.ecdsa && s.enc != Enc::Chacha20),
        "SUITEB128ONLY" => matching(&|s| s.ecdsa && s.enc == Enc::Aes128Gcm),
        "SUITEB192" => matching(&|s| s.ecdsa && s.enc == Enc::Aes256Gcm),
        _ if EMPTY_KEYWORDS.contains(&t) => 0,
        _ => return None,
    })
}

fn tls12_names() -> String {
    TLS12
        .iter()
        .map(|s| s.openssl)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `--tls-ciphers`: the chosen TLS 1.2 suites (indexes into [`TLS12`], in preference order), or a
/// one-line error.
pub fn tls12(list: &str) -> Result<Vec<usize>, String> {
    let mut active: Vec<usize> = Vec::new();
    let mut killed = 0u8;
    let mut unknown: Vec<&str> = Vec::new();
    for entry in list.split([':', ',', ' ']).filter(|e| !e.is_empty()) {
        let (op, rule) = match entry.as_bytes()[0] {
            b'!' | b'-' | b'+' => (entry.as_bytes()[0], &entry[1..]),
            _ => (0, entry),
        };
        if let Some(command) = rule.strip_prefix('@') {
            if command == "STRENGTH" {
                active.sort_by_key(|&i| std::cmp::Reverse(TLS12[i].enc.bits()));
            } else if !command.starts_with("SECLEVEL=") {
                // OpenSSL refuses the whole list over an unknown command.
                return Err(format!(
                    "--tls-ciphers {list:?}: unknown command {entry} (OpenSSL knows @STRENGTH and \
                     @SECLEVEL=n)"
                ));
            }
            continue;
        }
        let mut set = u8::MAX;
        let mut known = true;
        for t in rule.split('+') {
            match term(t) {
                Some(s) => set &= s,
                None => known = false,
            }
        }
        if !known || rule.is_empty() {
            unknown.push(entry); // OpenSSL skips a rule it cannot read
            continue;
        }
        let hit = |i: &usize| set & (1 << i) != 0;
        match op {
            b'!' => {
                killed |= set;
                active.retain(|i| !hit(i));
            }
            b'-' => active.retain(|i| !hit(i)),
            b'+' => {
                let (moved, kept): (Vec<usize>, Vec<usize>) = active.iter().partition(|i| hit(i));
                active = kept;
                active.extend(moved);
            }
            _ => {
                for i in 0..TLS12.len() {
                    if hit(&i) && killed & (1 << i) == 0 && !active.contains(&i) {
                        active.push(i);
                    }
                }
            }
        }
    }
    if active.is_empty() {
        let tls13 = unknown
            .iter()
            .any(|e| TLS13.contains(e) || TLS13_OTHER.contains(e));
        return Err(format!(
            "--tls-ciphers {list:?} selects no cipher respbench has{} (TLS 1.2 ciphers: {}; OpenSSL \
             keywords such as HIGH, ECDHE, AESGCM, CHACHA20, aRSA, aECDSA, !x, -x, +x and \
             @STRENGTH work too{})",
            if unknown.is_empty() {
                String::new()
            } else {
                format!("; unknown or unsupported: {}", unknown.join(", "))
            },
            tls12_names(),
            if tls13 {
                "; TLS 1.3 ciphersuites go in --tls-ciphersuites"
            } else {
                ""
            }
        ));
    }
    Ok(active)
}

/// `--tls-ciphersuites`: the chosen TLS 1.3 suites (indexes into [`TLS13`], in preference order),
/// or a one-line error.
pub fn tls13(list: &str) -> Result<Vec<usize>, String> {
    let names = TLS13.join(", ");
    let mut chosen = Vec::new();
    let mut unknown = Vec::new();
    for entry in list.split(':').filter(|e| !e.is_empty()) {
        match TLS13.iter().position(|n| *n == entry) {
            Some(i) if !chosen.contains(&i) => chosen.push(i),
            Some(_) => {}
            None => unknown.push(entry),
        }
    }
    if chosen.is_empty() {
        if unknown.is_empty() {
            return Err(format!(
                "--tls-ciphersuites {list:?}: an empty list leaves TLS 1.3 without \
                 ciphersuites, and OpenSSL-based clients then cannot connect at all; respbench \
                 refuses it (ciphersuites: {names})"
            ));
        }
        return Err(format!(
            "--tls-ciphersuites {list:?}: no TLS 1.3 ciphersuite respbench has ({}: unknown or \
             unsupported; respbench has {names}; separate them with ':')",
            unknown.join(", ")
        ));
    }
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The OpenSSL names a TLS 1.2 list selects, in order.
    fn names(list: &str) -> Vec<&'static str> {
        tls12(list)
            .unwrap_or_else(|e| panic!("{list}: {e}"))
            .into_iter()
            .map(|i| TLS12[i].openssl)
            .collect()
    }

    const E256: &str = "ECDHE-ECDSA-AES256-GCM-SHA384";
    const R256: &str = "ECDHE-RSA-AES256-GCM-SHA384";
    const ECHA: &str = "ECDHE-ECDSA-CHACHA20-POLY1305";
    const RCHA: &str = "ECDHE-RSA-CHACHA20-POLY1305";
    const E128: &str = "ECDHE-ECDSA-AES128-GCM-SHA256";
    const R128: &str = "ECDHE-RSA-AES128-GCM-SHA256";

    #[test]
    fn names_in_both_spellings_keep_the_given_order() {
        assert_eq!(names(&format!("{R128}:{E256}")), [R128, E256]);
        assert_eq!(
            names(
                "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256:TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"
            ),
            [R128, ECHA]
        );
        // A name given twice keeps its first place.
        assert_eq!(names(&format!("{R128}:{E256}:{R128}")), [R128, E256]);
    }

    #[test]
    fn the_three_separators() {
        for list in [
            format!("{R128}:{E256}"),
            format!("{R128},{E256}"),
            format!("{R128} {E256}"),
            format!(" {R128} ,: {E256}:"),
        ] {
            assert_eq!(names(&list), [R128, E256], "{list:?}");
        }
    }

    #[test]
    fn keywords_match_as_in_openssl() {
        // Checked against `openssl ciphers -s -tls1_2 <keyword>` (OpenSSL 3.0), restricted to
        // the suites respbench has.
        let all = [E256, R256, ECHA, RCHA, E128, R128];
        for k in [
            "ALL", "DEFAULT", "HIGH", "ECDHE", "EECDH", "kECDHE", "TLSv1.2",
        ] {
            assert_eq!(names(k), all, "{k}");
        }
        assert_eq!(names("aRSA"), [R256, RCHA, R128]);
        assert_eq!(names("aECDSA"), [E256, ECHA, E128]);
        assert_eq!(names("ECDSA"), [E256, ECHA, E128]);
        assert_eq!(names("AESGCM"), [E256, R256, E128, R128]);
        assert_eq!(names("AES128"), [E128, R128]);
        assert_eq!(names("AES256"), [E256, R256]);
        assert_eq!(names("CHACHA20"), [ECHA, RCHA]);
        assert_eq!(names("ECDHE+AESGCM"), [E256, R256, E128, R128]);
        assert_eq!(names("aRSA+AES256"), [R256]);
    }

    #[test]
    fn removals_reordering_and_strength() {
        assert_eq!(
            names("HIGH:!aNULL:!MD5"),
            [E256, R256, ECHA, RCHA, E128, R128]
        );
        assert_eq!(
            names("DEFAULT:!MEDIUM"),
            [E256, R256, ECHA, RCHA, E128, R128]
        );
        assert_eq!(names("HIGH:!aRSA"), [E256, ECHA, E128]);
        // `!` is for good, `-` can be added back.
        assert_eq!(names("!CHACHA20:HIGH"), [E256, R256, E128, R128]);
        assert_eq!(
            names("HIGH:-CHACHA20:CHACHA20"),
            [E256, R256, E128, R128, ECHA, RCHA]
        );
        // `+` moves to the end; adding what is there does not move it.
        assert_eq!(names("HIGH:+AES256"), [ECHA, RCHA, E128, R128, E256, R256]);
        assert_eq!(
            names(&format!("{E128}:HIGH")),
            [E128, E256, R256, ECHA, RCHA, R128]
        );
        assert_eq!(names(&format!("{E128}:{E256}:@STRENGTH")), [E256, E128]);
        assert_eq!(
            names("HIGH:@SECLEVEL=2"),
            [E256, R256, ECHA, RCHA, E128, R128]
        );
    }

    #[test]
    fn unknown_entries_are_skipped_as_openssl_skips_them() {
        assert_eq!(tls12(&format!("AES128-SHA:{R256}:NOPE")).unwrap(), [1]);
        // Removing what respbench lacks removes nothing: the harness idiom.
        assert_eq!(
            tls12("DEFAULT:-AES128-SHA256").unwrap(),
            tls12("DEFAULT").unwrap()
        );
        assert_eq!(
            tls12("HIGH:!aNULL:!MD5:!RC4").unwrap(),
            tls12("HIGH").unwrap()
        );
        assert_eq!(tls12("HIGH:+NOPE:!NOPE").unwrap(), tls12("HIGH").unwrap());
        // An unknown command is what OpenSSL refuses the whole list for.
        let e = tls12("HIGH:@NOPE").unwrap_err();
        assert!(e.contains("unknown command @NOPE"), "{e}");
        assert_eq!(tls12("HIGH:@SECLEVEL=2").unwrap(), tls12("HIGH").unwrap());
    }

    #[test]
    fn nothing_left_is_one_clear_line() {
        let e = tls12("AES128-SHA:DHE-RSA-AES256-GCM-SHA384").unwrap_err();
        assert!(
            e.starts_with(
                "--tls-ciphers \"AES128-SHA:DHE-RSA-AES256-GCM-SHA384\" selects no cipher \
                 respbench has; unknown or unsupported: AES128-SHA, DHE-RSA-AES256-GCM-SHA384"
            ),
            "{e}"
        );
        assert!(
            e.contains(E256) && e.contains("HIGH") && !e.contains('\n'),
            "{e}"
        );
        for nothing in ["MEDIUM", "HIGH:!HIGH", "", "!ALL:HIGH"] {
            assert!(tls12(nothing).is_err(), "{nothing:?}");
        }
        // A TLS 1.3 name here points to the other option.
        let e = tls12("TLS_AES_128_GCM_SHA256").unwrap_err();
        assert!(
            e.ends_with("TLS 1.3 ciphersuites go in --tls-ciphersuites)"),
            "{e}"
        );
    }

    #[test]
    fn ciphersuites() {
        assert_eq!(tls13("TLS_AES_128_GCM_SHA256").unwrap(), [2]);
        assert_eq!(
            tls13("TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384").unwrap(),
            [1, 0]
        );
        // A suite respbench lacks is skipped, silently, as OpenSSL skips unknown names.
        assert_eq!(
            tls13("TLS_AES_128_CCM_SHA256:TLS_AES_256_GCM_SHA384").unwrap(),
            [0]
        );
        // Only ':' separates (OpenSSL's rule for ciphersuites).
        let e = tls13("TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384").unwrap_err();
        assert!(e.contains("separate them with ':'"), "{e}");
        let e = tls13("TLS_NOPE").unwrap_err();
        assert!(
            e.starts_with("--tls-ciphersuites \"TLS_NOPE\": no TLS 1.3"),
            "{e}"
        );
        assert!(e.contains("TLS_AES_256_GCM_SHA384"), "{e}");
        for empty in ["", ":"] {
            assert!(tls13(empty).unwrap_err().contains("an empty list"));
        }
        // A TLS 1.2 name is not a ciphersuite.
        assert!(tls13(E256).is_err());
    }
}
