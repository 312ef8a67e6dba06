//! TLS connections that dibs opens itself, to one address at a time.
//!
//! The redis crate's TLS connect takes a host name, resolves it itself with no timeout, and tries
//! its addresses in order within one timeout, so a blackholed first address leaves none for the
//! others. Here the name is resolved and each address given its share by the caller (see
//! `conn::connect::connect_tls`), while the certificate is still checked against the name as
//! given. The TLS handshake is done at connect, within that address's share, so that an address
//! that accepts TCP but never speaks TLS leaves the next one the rest. The connection then speaks
//! RESP as every connection dibs opens itself does (`conn::wire`).

use std::io;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use redis::{ErrorKind, RedisError, RedisResult};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};

use crate::conn::Socket;
use crate::connspec::{ClientCert, ConnSpec, Pem};
use crate::error::{Error, Result};

/// What every TLS connection of one spec shares: the trusted roots and the client certificate.
/// Built once per locker, from files, never the network.
pub(crate) struct TlsConfig {
    /// Whether a client certificate is presented, for the message when the server wants one.
    client_cert: bool,
    /// Configuration only (rustls keeps a session cache behind it), so a panic elsewhere cannot
    /// leave it half-changed: this keeps `Locker` unwind-safe, as for the cluster client.
    config: AssertUnwindSafe<Arc<ClientConfig>>,
}

impl TlsConfig {
    /// Trusts the CAs of `ca_cert` (PEM), or else the platform's trust store, and presents
    /// `client_cert` when given.
    pub(crate) fn new(
        ca_cert: Option<&Pem>,
        client_cert: Option<&ClientCert>,
    ) -> Result<TlsConfig> {
        let builder = ClientConfig::builder().with_root_certificates(roots(ca_cert)?);
        let config = match client_cert {
            None => builder.with_no_client_auth(),
            Some(client) => {
                let (chain, key) = client_identity(client)?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| match e {
                        rustls::Error::InconsistentKeys(_) => Error::invalid(
                            "client-key",
                            format!(
                                "{} does not fit {}: {e}",
                                client.key.named("client-key"),
                                client.cert.named("client-cert")
                            ),
                        ),
                        e => Error::invalid(
                            "client-cert",
                            format!(
                                "{} with {} was refused: {e}",
                                client.cert.named("client-cert"),
                                client.key.named("client-key")
                            ),
                        ),
                    })?
            }
        };
        Ok(TlsConfig {
            client_cert: client_cert.is_some(),
            config: AssertUnwindSafe(Arc::new(config)),
        })
    }
}

impl ConnSpec {
    /// Reads the files the spec names (the CA, the client certificate and its key) and checks
    /// them as a locker would, with no network I/O: so that a service can refuse them at
    /// startup, not at its first lock call.
    pub fn check_files(&self) -> Result<()> {
        if self.tls() {
            TlsConfig::new(self.ca_cert(), self.client_cert())?;
        }
        Ok(())
    }
}

/// The roots a server's certificate must chain to.
fn roots(ca_cert: Option<&Pem>) -> Result<RootCertStore> {
    let mut roots = RootCertStore::empty();
    let Some(pem) = ca_cert else {
        let found = rustls_native_certs::load_native_certs();
        for cert in found.certs {
            let _ = roots.add(cert); // one unreadable system root is not worth failing for
        }
        if roots.is_empty() {
            return Err(Error::invalid(
                "ssl",
                "the platform's trust store holds no usable certificate: name a CA with 'ca-cert'",
            ));
        }
        return Ok(roots);
    };
    let no_certificate = || {
        Error::invalid(
            "ca-cert",
            format!("{} holds no PEM certificate", pem.named("ca-cert")),
        )
    };
    for cert in certificates(pem, "ca-cert")? {
        roots.add(cert).map_err(|e| {
            Error::invalid(
                "ca-cert",
                format!("{} was refused: {e}", pem.named("ca-cert")),
            )
        })?;
    }
    // An empty trust store would only fail later, at connect, with a vaguer message.
    if roots.is_empty() {
        return Err(no_certificate());
    }
    Ok(roots)
}

/// Every PEM certificate that `arg` gives.
fn certificates(given: &Pem, arg: &'static str) -> Result<Vec<CertificateDer<'static>>> {
    let pem = given.bytes(arg)?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|_| {
            Error::invalid(
                arg,
                format!(
                    "{} holds a PEM certificate that does not parse",
                    given.named(arg)
                ),
            )
        })?;
    if certs.is_empty() {
        return Err(Error::invalid(
            arg,
            format!("{} holds no PEM certificate", given.named(arg)),
        ));
    }
    Ok(certs)
}

/// The client's certificate chain and its key.
fn client_identity(
    client: &ClientCert,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
    let chain = certificates(&client.cert, "client-cert")?;
    let pem = client.key.bytes("client-key")?;
    // Never echo the key: it is a secret.
    let key = PrivateKeyDer::from_pem_slice(&pem).map_err(|_| {
        Error::invalid(
            "client-key",
            format!(
                "{} holds no PEM private key (PKCS#8, PKCS#1 or SEC1)",
                client.key.named("client-key")
            ),
        )
    })?;
    Ok((chain, key))
}

/// A [`TlsConfig`] and the host name that the server's certificate must name.
pub(crate) struct TlsClient {
    /// As in [`TlsConfig`]: configuration only, so `Locker` stays unwind-safe.
    config: AssertUnwindSafe<Arc<ClientConfig>>,
    client_cert: bool,
    name: ServerName<'static>,
}

impl TlsClient {
    /// `host` as given (a name or an IP address), to verify the certificate against.
    pub(crate) fn new(config: &TlsConfig, host: &str) -> RedisResult<TlsClient> {
        let name = ServerName::try_from(host.to_owned()).map_err(|e| {
            RedisError::from((
                ErrorKind::InvalidClientConfig,
                "no name TLS can verify",
                format!("'{host}': {e}"),
            ))
        })?;
        Ok(TlsClient {
            config: AssertUnwindSafe(Arc::clone(&config.config.0)),
            client_cert: config.client_cert,
            name,
        })
    }

    /// Whether a client certificate is presented.
    pub(crate) fn presents_cert(&self) -> bool {
        self.client_cert
    }
}

/// The error of a failed handshake, said plainly where the server refused the client.
fn explain(conn: &mut ClientConnection, io: io::Error, client_cert: bool) -> RedisError {
    // rustls keeps a fatal error, and gives it again.
    match conn.process_new_packets() {
        Err(tls) => explain_tls(tls, client_cert),
        Ok(_) => io.into(),
    }
}

pub(crate) fn explain_tls(tls: rustls::Error, client_cert: bool) -> RedisError {
    use rustls::AlertDescription as Alert;
    let why = match &tls {
        rustls::Error::AlertReceived(Alert::CertificateRequired) if !client_cert => {
            "the server requires a client certificate (tls-auth-clients): give 'client-cert' and 'client-key'"
        }
        rustls::Error::AlertReceived(Alert::HandshakeFailure) if !client_cert => {
            "the server ended the TLS handshake; it may require a client certificate (tls-auth-clients): give 'client-cert' and 'client-key'"
        }
        rustls::Error::AlertReceived(
            Alert::BadCertificate
            | Alert::UnknownCA
            | Alert::CertificateUnknown
            | Alert::CertificateExpired
            | Alert::CertificateRevoked
            | Alert::DecryptError,
        ) if client_cert => "the server refused the client certificate ('client-cert')",
        _ => return io::Error::new(io::ErrorKind::InvalidData, tls).into(),
    };
    io::Error::new(io::ErrorKind::PermissionDenied, format!("{why}: {tls}")).into()
}

/// A TLS handshake over `socket` for the client's name, within the socket's deadline (a
/// server that trickles a byte at a time cannot stretch it).
pub(crate) fn handshake(
    client: &TlsClient,
    socket: Socket,
) -> RedisResult<StreamOwned<ClientConnection, Socket>> {
    let tls = ClientConnection::new(Arc::clone(&client.config.0), client.name.clone())
        .map_err(|e| RedisError::from((ErrorKind::Io, "TLS setup failed", e.to_string())))?;
    let mut stream = StreamOwned::new(tls, socket);
    // complete_io returns early on a read that timed out after some progress: go on until the
    // handshake is done or the deadline says no.
    while stream.conn.is_handshaking() {
        if let Err(e) = stream.conn.complete_io(&mut stream.sock) {
            return Err(explain(&mut stream.conn, e, client.client_cert));
        }
    }
    Ok(stream)
}
