//! TLS on both ends through OpenSSL, with a certificate made fresh at start.
//!
//! The server signs a self-signed ECDSA P-256 certificate with `rcgen` in memory, so
//! no key ever touches the disk. The client encrypts but does not verify the
//! certificate, like libpq's `sslmode=require`, so the TLS figures here compare with
//! the PostgreSQL ones. Session tickets are off: every connection pays a full
//! handshake, which is what an application without session reuse pays.

use anyhow::{Context, Result};
use openssl::pkey::PKey;
use openssl::ssl::{
    SslAcceptor, SslConnector, SslMethod, SslOptions, SslRef, SslVerifyMode, SslVersion,
};
use openssl::x509::X509;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The certificate type the server presents, recorded with every TLS result because
/// it changes the handshake cost.
pub const CERTIFICATE_KIND: &str = "ECDSA P-256 (self-signed)";

/// The TLS protocol version the client asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsVersion {
    V1_2,
    V1_3,
}

impl TlsVersion {
    fn openssl(self) -> SslVersion {
        match self {
            TlsVersion::V1_2 => SslVersion::TLS1_2,
            TlsVersion::V1_3 => SslVersion::TLS1_3,
        }
    }
}

impl fmt::Display for TlsVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TlsVersion::V1_2 => "1.2",
            TlsVersion::V1_3 => "1.3",
        })
    }
}

impl FromStr for TlsVersion {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "1.2" => Ok(TlsVersion::V1_2),
            "1.3" => Ok(TlsVersion::V1_3),
            _ => Err(format!("unknown TLS version '{s}'; choose 1.2 or 1.3")),
        }
    }
}

/// What a TLS connection really negotiated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TlsInfo {
    pub version: String,
    pub cipher: String,
    pub certificate: String,
}

impl TlsInfo {
    pub fn of(ssl: &SslRef) -> TlsInfo {
        TlsInfo {
            version: ssl.version_str().to_string(),
            cipher: ssl
                .current_cipher()
                .map(|c| c.name().to_string())
                .unwrap_or_else(|| "unknown".into()),
            certificate: CERTIFICATE_KIND.to_string(),
        }
    }
}

/// A server-side TLS context with a fresh self-signed certificate, accepting TLS 1.2
/// and 1.3.
pub fn acceptor() -> Result<SslAcceptor> {
    let names = vec!["localhost".to_string(), "127.0.0.1".into(), "::1".into()];
    let made =
        rcgen::generate_simple_self_signed(names).context("cannot generate the TLS certificate")?;
    let cert = X509::from_pem(made.cert.pem().as_bytes())?;
    let key = PKey::private_key_from_pem(made.signing_key.serialize_pem().as_bytes())?;
    let mut builder = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls_server())?;
    builder.set_certificate(&cert)?;
    builder.set_private_key(&key)?;
    builder.check_private_key()?;
    builder.set_min_proto_version(Some(SslVersion::TLS1_2))?;
    builder.set_num_tickets(0)?;
    // A client that closes without close_notify ends the session; it is no error.
    builder.set_options(SslOptions::IGNORE_UNEXPECTED_EOF);
    Ok(builder.build())
}

/// A client-side TLS context pinned to one protocol version.
pub fn connector(version: TlsVersion) -> Result<SslConnector> {
    let mut builder = SslConnector::builder(SslMethod::tls_client())?;
    builder.set_verify(SslVerifyMode::NONE);
    builder.set_min_proto_version(Some(version.openssl()))?;
    builder.set_max_proto_version(Some(version.openssl()))?;
    Ok(builder.build())
}
