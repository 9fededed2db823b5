//! The transport options: TLS (valkey-benchmark's spellings, plus `--tls-verify-name`), MPTCP,
//! and RDMA, which this build does not have.

use std::path::PathBuf;

use super::super::flag::{Action, Flag, Value};
use super::super::state::State;
use super::super::value::{invalid_value, text};

/// The main table's entry type (names the state its setters change).
type F = Flag<State>;

/// In valkey-benchmark's help order.
pub(in crate::cli) const TRANSPORT: &[Flag<State>] = &[
    F::switch(
        &["--tls"],
        "--tls",
        "Establish a secure TLS connection.",
        |st, _, _| {
            st.args.tls.enabled = true;
            Ok(())
        },
    ),
    F::value(
        &["--sni"],
        Value::Text,
        "--sni <host>",
        "Server name indication for TLS (also the name checked\n\
         with --tls-verify-name).",
        |st, name, v| {
            let sni = text(name, v)?;
            if sni.is_empty() {
                return Err(invalid_value(name, v, "a server name"));
            }
            st.args.tls.sni = Some(sni);
            Ok(())
        },
    )
    .example(&["--tls", "--sni", "redis.test"]),
    F::value(
        &["--cacert"],
        Value::File("a CA certificate file"),
        "--cacert <file>",
        "CA Certificate file to verify with.",
        |st, _, v| {
            st.args.tls.cacert = Some(PathBuf::from(v));
            Ok(())
        },
    )
    .example(&["--tls", "--cacert", "ca.crt"]),
    F::value(
        &["--cacertdir"],
        Value::Dir("a directory"),
        "--cacertdir <dir>",
        "Directory where trusted CA certificates are stored\n\
         (every PEM file in it is read).\n\
         If neither cacert nor cacertdir are specified, the default\n\
         system-wide trusted root certs configuration will apply.",
        |st, _, v| {
            st.args.tls.cacertdir = Some(PathBuf::from(v));
            Ok(())
        },
    )
    .example(&["--tls", "--cacertdir", "certs"]),
    F::switch(
        &["--insecure"],
        "--insecure",
        "Allow insecure TLS connection by skipping cert validation.",
        |st, _, _| {
            st.args.tls.insecure = true;
            Ok(())
        },
    ),
    F::switch(
        &["--tls-verify-name"],
        "--tls-verify-name",
        "Also require the server's certificate to be valid for the\n\
         host name or address given with -h/-u (or for --sni).\n\
         By default only the chain is verified, as valkey-benchmark\n\
         does.",
        |st, _, _| {
            st.args.tls.verify_name = true;
            Ok(())
        },
    ),
    F::value(
        &["--cert"],
        Value::File("a certificate file"),
        "--cert <file>",
        "Client certificate to authenticate with (needs --key).",
        |st, _, v| {
            st.args.tls.cert = Some(PathBuf::from(v));
            Ok(())
        },
    )
    .example(&["--tls", "--cert", "c.crt", "--key", "c.key"]),
    F::value(
        &["--key"],
        Value::File("a private key file"),
        "--key <file>",
        "Private key file to authenticate with (needs --cert).",
        |st, _, v| {
            st.args.tls.key = Some(PathBuf::from(v));
            Ok(())
        },
    )
    .example(&["--tls", "--key", "c.key", "--cert", "c.crt"]),
    F::value(
        &["--tls-ciphers"],
        Value::Text,
        "--tls-ciphers <list>",
        "Sets the list of preferred ciphers (TLSv1.2)\n\
         in order of preference from highest to lowest separated\n\
         by colon (\":\"). See the ciphers(1ssl) manpage for more\n\
         information about the syntax of this string. respbench\n\
         has ECDHE-{ECDSA,RSA}-{AES256-GCM-SHA384,CHACHA20-POLY1305,\n\
         AES128-GCM-SHA256}.",
        |st, name, v| {
            st.args.tls.ciphers = Some(text(name, v)?);
            Ok(())
        },
    )
    .example(&["--tls", "--tls-ciphers", "HIGH"]),
    F::value(
        &["--tls-ciphersuites"],
        Value::Text,
        "--tls-ciphersuites <list>",
        "Sets the list of preferred ciphersuites (TLSv1.3)\n\
         in order of preference from highest to lowest separated\n\
         by colon (\":\"). See the ciphers(1ssl) manpage for more\n\
         information about the syntax of this string, and\n\
         specifically for TLSv1.3 ciphersuites. respbench has\n\
         TLS_AES_256_GCM_SHA384, TLS_CHACHA20_POLY1305_SHA256 and\n\
         TLS_AES_128_GCM_SHA256.",
        |st, name, v| {
            st.args.tls.ciphersuites = Some(text(name, v)?);
            Ok(())
        },
    )
    .example(&["--tls", "--tls-ciphersuites", "TLS_AES_128_GCM_SHA256"]),
    F::new(
        &["--rdma"],
        Value::None,
        "",
        "respbench has no RDMA transport",
        Action::NotInThisBuild,
    ),
    F::switch(
        &["--mptcp"],
        "--mptcp",
        "Establish an MPTCP connection (Linux, TCP only).",
        |st, _, _| {
            st.args.mptcp = true;
            Ok(())
        },
    ),
];
