//! X.509 v1 certificates, which OpenSSL-based clients (valkey-benchmark, redis-cli,
//! memtier_benchmark) accept and webpki does not. `openssl x509 -req` without `-extfile` makes
//! them, and so do the test scripts of Redis and memtier (`gen-test-certs.sh`): a user whose TLS
//! line works with those tools must not need new certificates to switch to respbench.
//!
//! webpki already takes a v1 *CA* as a trust anchor; what it refuses is a v1 certificate that it
//! must verify (the server's, or an intermediate) and a v1 client certificate that rustls checks
//! against its key. So this module verifies only what webpki refused for its version, as OpenSSL
//! would: the chain up to a CA given (each signature checked with the issuer's key, each
//! certificate within its validity period), the name (with `--tls-verify-name`: a v1 certificate
//! has no extensions, so its common name, as OpenSSL's host check falls back to it), and the
//! handshake's signature with the certificate's key. Everything else goes through webpki
//! unchanged: this path is taken only after webpki said no, and only for a v1 certificate, so a
//! v3 chain costs nothing more. Handshakes only; nothing here runs per request.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, ServerName, SubjectPublicKeyInfoDer, UnixTime};
use rustls::sign::{CertifiedKey, SigningKey};
use rustls::{CertificateError, DigitallySignedStruct, Error as RustlsError, PeerMisbehaved};
use x509_parser::prelude::{FromDer, X509Certificate, X509Version};
use x509_parser::time::ASN1Time;

/// The longest chain followed from the server's certificate to a CA (OpenSSL's default depth is
/// 100; real chains have one or two intermediates).
const MAX_DEPTH: usize = 8;

/// Whether `der` is an X.509 v1 certificate (false for anything that does not parse).
pub(super) fn is_v1(der: &[u8]) -> bool {
    X509Certificate::from_der(der).is_ok_and(|(_, c)| c.version() == X509Version::V1)
}

/// A server's chain as the handshake presents it, with the CAs given.
pub(super) struct Chain<'c> {
    pub(super) end_entity: &'c CertificateDer<'c>,
    pub(super) intermediates: &'c [CertificateDer<'c>],
    /// The CA certificates as given (DER), for the issuer's key: a trust store keeps only
    /// anchors' names and keys in a form that needs re-encoding.
    pub(super) cas: &'c [CertificateDer<'static>],
}

/// A chain webpki refused (`refused`), verified as OpenSSL would when it holds a v1
/// certificate (the name too with `verify_name`: `--tls-verify-name`); any other chain keeps
/// webpki's refusal.
pub(super) fn verify_server_cert(
    chain: Chain<'_>,
    server_name: &ServerName<'_>,
    verify_name: bool,
    now: UnixTime,
    refused: RustlsError,
) -> Result<ServerCertVerified, RustlsError> {
    let Ok((_, cert)) = X509Certificate::from_der(chain.end_entity) else {
        return Err(refused);
    };
    let chain_has_v1 =
        cert.version() == X509Version::V1 || chain.intermediates.iter().any(|c| is_v1(c));
    if !chain_has_v1 {
        return Err(refused);
    }
    verify_chain(&cert, chain.intermediates, chain.cas, now)?;
    if verify_name && !names(&cert, server_name) {
        return Err(CertificateError::NotValidForName.into());
    }
    Ok(ServerCertVerified::assertion())
}

/// A handshake signature as webpki `checked` it, or, where webpki refused a v1 certificate,
/// checked with that certificate's key.
pub(super) fn signature(
    checked: Result<HandshakeSignatureValid, RustlsError>,
    message: &[u8],
    cert: &CertificateDer<'_>,
    dss: &DigitallySignedStruct,
    algorithms: &WebPkiSupportedAlgorithms,
) -> Result<HandshakeSignatureValid, RustlsError> {
    match checked {
        Err(e) if is_v1(cert) => verify_with_key(message, cert, dss, algorithms).map_err(|_| e),
        other => other,
    }
}

/// The chain from `cert` to one of `cas`, through `intermediates` (any order): each link's
/// signature checked with its issuer's key, each certificate valid at `now`. The errors are
/// rustls's, so the caller's messages ("not signed by the CA given with --cacert", "expired")
/// read the same as for a v3 chain.
fn verify_chain(
    cert: &X509Certificate<'_>,
    intermediates: &[CertificateDer<'_>],
    cas: &[CertificateDer<'static>],
    now: UnixTime,
) -> Result<(), RustlsError> {
    let at = ASN1Time::from_timestamp(now.as_secs() as i64)
        .map_err(|_| RustlsError::from(CertificateError::BadEncoding))?;
    let cas: Vec<X509Certificate<'_>> = cas.iter().filter_map(|d| parse(d)).collect();
    let links: Vec<X509Certificate<'_>> = intermediates.iter().filter_map(|d| parse(d)).collect();
    let mut current = cert.clone();
    for _ in 0..MAX_DEPTH {
        if !current.validity().is_valid_at(at) {
            return Err(if current.validity().not_before > at {
                CertificateError::NotValidYet
            } else {
                CertificateError::Expired
            }
            .into());
        }
        let signed_by = |issuer: &&X509Certificate<'_>| {
            issuer.subject().as_raw() == current.issuer().as_raw()
                && current.verify_signature(Some(issuer.public_key())).is_ok()
        };
        if let Some(ca) = cas.iter().find(signed_by) {
            return if ca.validity().is_valid_at(at) {
                Ok(())
            } else {
                Err(CertificateError::Expired.into())
            };
        }
        match links.iter().find(signed_by) {
            Some(next) if next.as_raw() != current.as_raw() => current = next.clone(),
            _ => return Err(CertificateError::UnknownIssuer.into()),
        }
    }
    Err(CertificateError::UnknownIssuer.into())
}

fn parse(der: &[u8]) -> Option<X509Certificate<'_>> {
    X509Certificate::from_der(der).ok().map(|(_, c)| c)
}

/// Whether a v1 certificate names `server_name`: its common names, compared as OpenSSL's host
/// check does when a certificate has no subjectAltName (case-insensitive, a leading `*.`
/// matching one label; an address compared as text).
fn names(cert: &X509Certificate<'_>, server_name: &ServerName<'_>) -> bool {
    let wanted = match server_name {
        ServerName::DnsName(d) => d.as_ref().to_ascii_lowercase(),
        ServerName::IpAddress(ip) => std::net::IpAddr::from(*ip).to_string(),
        _ => return false,
    };
    cert.subject()
        .iter_common_name()
        .filter_map(|cn| cn.as_str().ok())
        .any(|cn| {
            let cn = cn.to_ascii_lowercase();
            match cn.strip_prefix("*.") {
                Some(rest) => wanted
                    .split_once('.')
                    .is_some_and(|(label, tail)| !label.is_empty() && tail == rest),
                None => cn == wanted,
            }
        })
}

/// The handshake's signature checked with the certificate's own key (what webpki does for a v3
/// certificate, and for a raw public key): the key is read from the certificate, and the
/// algorithms are the ones the scheme maps to.
fn verify_with_key(
    message: &[u8],
    cert: &CertificateDer<'_>,
    dss: &DigitallySignedStruct,
    algorithms: &WebPkiSupportedAlgorithms,
) -> Result<HandshakeSignatureValid, RustlsError> {
    let (_, parsed) = X509Certificate::from_der(cert)
        .map_err(|_| RustlsError::from(CertificateError::BadEncoding))?;
    let spki = SubjectPublicKeyInfoDer::from(parsed.public_key().raw);
    let key = webpki::RawPublicKeyEntity::try_from(&spki)
        .map_err(|_| RustlsError::from(CertificateError::BadEncoding))?;
    let Some((_, algs)) = algorithms.mapping.iter().find(|(s, _)| *s == dss.scheme) else {
        return Err(PeerMisbehaved::SignedHandshakeWithUnadvertisedSigScheme.into());
    };
    for alg in algs.iter() {
        if key.verify_signature(*alg, message, dss.signature()).is_ok() {
            return Ok(HandshakeSignatureValid::assertion());
        }
    }
    Err(CertificateError::BadSignature.into())
}

/// The client certificate with its key, for a chain whose first certificate is v1 (rustls
/// refuses to pair those: it reads the certificate with webpki to check the key). The check is
/// the same — the key's public half is the certificate's — made on the certificate as parsed
/// here, so a wrong `--key` is still refused before connecting.
pub(super) fn certified_v1_client_key(
    chain: Vec<CertificateDer<'static>>,
    key: Arc<dyn SigningKey>,
) -> Result<CertifiedKey, RustlsError> {
    let first = chain.first().ok_or(RustlsError::NoCertificatesPresented)?;
    let (_, cert) = X509Certificate::from_der(first)
        .map_err(|_| RustlsError::from(CertificateError::BadEncoding))?;
    match key.public_key() {
        Some(spki) if spki.as_ref() == cert.public_key().raw => Ok(CertifiedKey::new(chain, key)),
        _ => Err(RustlsError::InconsistentKeys(
            rustls::InconsistentKeys::KeyMismatch,
        )),
    }
}
