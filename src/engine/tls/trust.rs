//! Whom the client trusts: the CA set a server's certificate must chain to (`--cacert`,
//! `--cacertdir`, the system's store), the verifiers (chain only by default, as valkey-benchmark;
//! strict name checking with `--tls-verify-name`; none with `--insecure`), and reading the PEM
//! files those options name. Apart from the stream code in `tls/mod.rs`, which never changes when
//! the trust rules do.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, DigitallySignedStruct, Error as RustlsError, RootCertStore, SignatureScheme,
};

use super::v1;
use crate::engine::error::io_reason;

/// The CAs the server's certificate must chain to: `--cacert`, `--cacertdir`, or without either
/// the system's trust store (as OpenSSL finds it). An empty set is an error naming the option.
/// Also every CA certificate as read (DER), for a v1 chain verified by `v1.rs`.
pub(super) fn trust_roots(
    cacert: Option<&Path>,
    cacertdir: Option<&Path>,
) -> Result<(RootCertStore, Vec<CertificateDer<'static>>), String> {
    let mut roots = Roots {
        store: RootCertStore::empty(),
        ders: Vec::new(),
    };
    if let Some(file) = cacert {
        let n = add_pem_certificates(&mut roots, "--cacert", file)?;
        if n == 0 {
            return Err(format!(
                "--cacert {}: no PEM certificate in the file",
                file.display()
            ));
        }
    }
    if let Some(dir) = cacertdir
        && add_certificate_dir(&mut roots, dir)? == 0
        && cacert.is_none()
    {
        return Err(format!(
            "--cacertdir {}: no PEM certificate in the directory",
            dir.display()
        ));
    }
    if cacert.is_none() && cacertdir.is_none() {
        // The system's trust store (SSL_CERT_FILE / SSL_CERT_DIR override the default
        // locations, as in OpenSSL).
        let found = rustls_native_certs::load_native_certs();
        roots.ders.extend(found.certs.iter().cloned());
        let (added, _) = roots.store.add_parsable_certificates(found.certs);
        if added == 0 {
            return Err(
                "no CA certificate found in the system's trust store (install \
                        ca-certificates, or pass the server's CA with --cacert)"
                    .to_string(),
            );
        }
    }
    Ok((roots.store, roots.ders))
}

/// The trust store being filled, with each certificate added as read.
struct Roots {
    store: RootCertStore,
    ders: Vec<CertificateDer<'static>>,
}

impl Roots {
    fn add(&mut self, cert: CertificateDer<'static>) -> Result<(), RustlsError> {
        self.store.add(cert.clone())?;
        self.ders.push(cert);
        Ok(())
    }
}

/// The one verifier of a TLS run: the server's certificate judged by `check`, and the
/// handshake's signatures checked with the provider's algorithms whatever the check (they prove
/// the server holds the certificate's key, and a broken one means a broken connection) — for a v1
/// certificate, which webpki cannot read, with its key as OpenSSL would (`v1.rs`).
#[derive(Debug)]
pub(super) struct Verifier {
    pub(super) check: Check,
    pub(super) algorithms: WebPkiSupportedAlgorithms,
}

/// How the server's certificate is judged.
#[derive(Debug)]
pub(super) enum Check {
    /// `--insecure`: any certificate and name.
    Nothing,
    /// The chain as webpki verifies it (trust anchor, validity period, key usage), a v1 chain as
    /// OpenSSL would (`v1.rs`). The name only with `verify_name` (`--tls-verify-name`): by
    /// default valkey-benchmark, with OpenSSL, never sets a host to check, and many deployments
    /// use certificates whose only name is a CN (`CN=Server-only`) with no subjectAltName for
    /// the address clients dial; webpki ignores the CN, so those would all fail. webpki checks
    /// the name last, after the chain, so a name error means the chain was accepted.
    Chain {
        webpki: Arc<WebPkiServerVerifier>,
        verify_name: bool,
        /// The CA certificates as given (DER): a v1 chain's issuer keys.
        cas: Vec<CertificateDer<'static>>,
    },
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, RustlsError> {
        let Check::Chain {
            webpki,
            verify_name,
            cas,
        } = &self.check
        else {
            return Ok(ServerCertVerified::assertion());
        };
        match webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(RustlsError::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !verify_name => Ok(ServerCertVerified::assertion()),
            Err(refused) => {
                let chain = v1::Chain {
                    end_entity,
                    intermediates,
                    cas,
                };
                v1::verify_server_cert(chain, server_name, *verify_name, now, refused)
            }
            ok => ok,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, RustlsError> {
        let checked = rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms);
        v1::signature(checked, message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, RustlsError> {
        let checked = rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms);
        v1::signature(checked, message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

pub(super) fn read_file(flag: &str, p: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(p).map_err(|e| match e.raw_os_error() {
        Some(libc::EISDIR) => format!("{flag} {}: is a directory, not a file", p.display()),
        _ => format!("cannot read {flag} file {}: {}", p.display(), io_reason(&e)),
    })
}

/// Every certificate of a PEM file (other sections, such as keys or CRLs, are skipped).
pub(super) fn read_pem_certificates(
    flag: &str,
    p: &Path,
) -> Result<Vec<CertificateDer<'static>>, String> {
    let bytes = read_file(flag, p)?;
    CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{flag} {}: not a PEM certificate file ({e})", p.display()))
}

/// Adds a PEM file's certificates to `roots`; how many.
fn add_pem_certificates(roots: &mut Roots, flag: &str, p: &Path) -> Result<usize, String> {
    let mut n = 0;
    for cert in read_pem_certificates(flag, p)? {
        roots
            .add(cert)
            .map_err(|e| format!("{flag} {}: unusable CA certificate: {e}", p.display()))?;
        n += 1;
    }
    Ok(n)
}

/// `--cacertdir`: every file of the directory that holds PEM certificates (OpenSSL's hashed
/// names, `1a2b3c4d.0`, are files like any other); other files are skipped.
fn add_certificate_dir(roots: &mut Roots, dir: &Path) -> Result<usize, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        format!(
            "cannot read --cacertdir {}: {}",
            dir.display(),
            io_reason(&e)
        )
    })?;
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    let mut n = 0;
    for path in paths.iter().filter(|p| p.is_file()) {
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        for cert in CertificateDer::pem_slice_iter(&bytes).flatten() {
            if roots.add(cert).is_ok() {
                n += 1;
            }
        }
    }
    Ok(n)
}
