//! Where the servers are and how a scenario opens a connection to them.
//!
//! Every connection is a fresh `IggyClient` over the target's transport (TCP,
//! QUIC or WebSocket) that makes one dial pass and does not retry, so a
//! refused or dropped connection fails its check instead of hanging in the
//! SDK's reconnect loop.

use std::sync::Arc;

use iggy::prelude::{
    Client, ClientWrapper, IggyClient, QuicClient, QuicClientConfig, QuicClientReconnectionConfig,
    UserClient,
};

use crate::outcome::{Context, Outcome};

/// Root credentials of a fresh iggo server.
pub const ROOT_USER: &str = "iggy";
/// Root password of a fresh iggo server.
pub const ROOT_PASSWORD: &str = "iggy";

/// The SDK client a target is reached with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// `TcpClient`, TLS when the target has TLS settings.
    Tcp,
    /// `QuicClient`; QUIC is always TLS 1.3.
    Quic,
    /// `WebSocketClient`, WSS when the target has TLS settings.
    WebSocket,
}

/// How the client verifies the server certificate.
#[derive(Clone, Debug)]
pub struct TlsSettings {
    /// PEM file of the CA to trust; `None` trusts only the SDK's built-in
    /// webpki roots. QUIC ignores it: the SDK's QUIC client verifies with
    /// rustls-platform-verifier, whose roots on Linux come from the file in
    /// `SSL_CERT_FILE` (set for the whole process by run.sh).
    pub ca_file: Option<String>,
    /// The name the certificate must carry.
    pub domain: String,
}

/// One server endpoint and how to reach it.
#[derive(Clone, Debug)]
pub struct Target {
    /// The SDK transport.
    pub transport: Transport,
    /// host:port of the server's listener for that transport.
    pub address: String,
    /// `Some` verifies the server certificate (and turns TLS on for TCP and
    /// WebSocket). `None` means no TLS for TCP and WebSocket and, for QUIC,
    /// the SDK's default `validate_certificate = false`, which accepts any
    /// certificate.
    pub tls: Option<TlsSettings>,
}

impl Target {
    /// A plain-TCP endpoint.
    pub fn plain(address: String) -> Self {
        Self::new(Transport::Tcp, address, None)
    }

    /// A TCP-TLS endpoint whose certificate must verify against `ca_file` for `domain`.
    pub fn tls(address: String, ca_file: String, domain: String) -> Self {
        Self::new(
            Transport::Tcp,
            address,
            Some(TlsSettings {
                ca_file: Some(ca_file),
                domain,
            }),
        )
    }

    /// An endpoint over any transport.
    pub fn new(transport: Transport, address: String, tls: Option<TlsSettings>) -> Self {
        Self {
            transport,
            address,
            tls,
        }
    }

    /// The same endpoint with other certificate settings.
    pub fn with_tls(&self, tls: Option<TlsSettings>) -> Self {
        Self::new(self.transport, self.address.clone(), tls)
    }
}

/// Builds a client for the target without connecting.
pub fn build(target: &Target) -> Outcome<IggyClient> {
    let address = target.address.clone();
    match target.transport {
        Transport::Tcp => {
            let mut builder = IggyClient::builder()
                .with_tcp()
                .with_server_address(address)
                .with_reconnection_max_retries(Some(0))
                .with_no_delay();
            if let Some(tls) = &target.tls {
                builder = builder
                    .with_tls_enabled(true)
                    .with_tls_domain(tls.domain.clone())
                    .with_tls_validate_certificate(true);
                if let Some(ca) = &tls.ca_file {
                    builder = builder.with_tls_ca_file(ca.clone());
                }
            }
            builder.build().ctx("build TCP client")
        }
        Transport::Quic => {
            // QuicClientBuilder cannot switch certificate validation on, so the
            // config is built by hand; the SDK offers no CA file for QUIC.
            let defaults = QuicClientConfig::default();
            let config = QuicClientConfig {
                server_address: address,
                server_name: target
                    .tls
                    .as_ref()
                    .map_or(defaults.server_name.clone(), |tls| tls.domain.clone()),
                validate_certificate: target.tls.is_some(),
                reconnection: QuicClientReconnectionConfig {
                    max_retries: Some(0),
                    ..defaults.reconnection.clone()
                },
                ..defaults
            };
            let client = QuicClient::create(Arc::new(config)).ctx("build QUIC client")?;
            IggyClient::builder()
                .with_client(ClientWrapper::Quic(client))
                .build()
                .ctx("build QUIC client")
        }
        Transport::WebSocket => {
            let mut builder = IggyClient::builder()
                .with_websocket()
                .with_server_address(address)
                .with_reconnection_max_retries(Some(0));
            if let Some(tls) = &target.tls {
                builder = builder
                    .with_tls_enabled(true)
                    .with_tls_domain(tls.domain.clone())
                    .with_tls_validate_certificate(true);
                if let Some(ca) = &tls.ca_file {
                    builder = builder.with_tls_ca_file(ca.clone());
                }
            }
            builder.build().ctx("build WebSocket client")
        }
    }
}

/// Builds and connects a client without logging in.
pub async fn connect(target: &Target) -> Outcome<IggyClient> {
    let client = build(target)?;
    client.connect().await.ctx(&format!(
        "connect over {:?} to {}",
        target.transport, target.address
    ))?;
    Ok(client)
}

/// Connects and logs in with a username and password.
pub async fn login(target: &Target, username: &str, password: &str) -> Outcome<IggyClient> {
    let client = connect(target).await?;
    client
        .login_user(username, password)
        .await
        .ctx(&format!("login as {username}"))?;
    Ok(client)
}

/// Connects and logs in as root.
pub async fn login_root(target: &Target) -> Outcome<IggyClient> {
    login(target, ROOT_USER, ROOT_PASSWORD).await
}

/// Closes a client's connection; errors are irrelevant at that point.
pub async fn close(client: IggyClient) {
    let _ = client.shutdown().await;
}
