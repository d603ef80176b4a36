//! Where the servers are and how a scenario opens a connection to them.
//!
//! Every connection is a fresh `IggyClient` over TCP that makes one dial pass
//! and does not retry, so a refused or dropped connection fails its check
//! instead of hanging in the SDK's reconnect loop.

use iggy::prelude::{Client, IggyClient, UserClient};

use crate::outcome::{Context, Outcome};

/// Root credentials of a fresh iggo server.
pub const ROOT_USER: &str = "iggy";
/// Root password of a fresh iggo server.
pub const ROOT_PASSWORD: &str = "iggy";

/// One server endpoint and how to reach it.
#[derive(Clone, Debug)]
pub struct Target {
    /// host:port of the server's TCP listener.
    pub address: String,
    /// PEM file of the CA to trust; `Some` turns TLS on.
    pub tls_ca_file: Option<String>,
    /// The name the certificate must carry when TLS is on.
    pub tls_domain: String,
}

impl Target {
    /// A plain-TCP endpoint.
    pub fn plain(address: String) -> Self {
        Self {
            address,
            tls_ca_file: None,
            tls_domain: String::new(),
        }
    }

    /// A TLS endpoint whose certificate must verify against `ca_file` for `domain`.
    pub fn tls(address: String, ca_file: String, domain: String) -> Self {
        Self {
            address,
            tls_ca_file: Some(ca_file),
            tls_domain: domain,
        }
    }
}

/// Builds and connects a client without logging in.
pub async fn connect(target: &Target) -> Outcome<IggyClient> {
    let mut builder = IggyClient::builder()
        .with_tcp()
        .with_server_address(target.address.clone())
        .with_reconnection_max_retries(Some(0))
        .with_no_delay();
    if let Some(ca_file) = &target.tls_ca_file {
        builder = builder
            .with_tls_enabled(true)
            .with_tls_domain(target.tls_domain.clone())
            .with_tls_ca_file(ca_file.clone())
            .with_tls_validate_certificate(true);
    }
    let client = builder.build().ctx("build TCP client")?;
    client
        .connect()
        .await
        .ctx(&format!("connect to {}", target.address))?;
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
