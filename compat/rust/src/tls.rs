//! Checks over TLS: the SDK verifies the server certificate against the
//! scenario's own CA, then logs in, sends and polls; an untrusted or
//! misnamed certificate is refused.

use std::time::Duration;

use iggy::prelude::{
    Client, Identifier, IggyClient, MessageClient, Partitioning, PollingStrategy, StreamClient,
    SystemClient, UserClient,
};

use crate::catalog::TopicRef;
use crate::connect::{self, ROOT_PASSWORD, ROOT_USER, Target};
use crate::messages::{message, payloads, poll};
use crate::outcome::{Context, Outcome, ensure_eq};

/// Logs in over TLS and checks the session.
pub async fn login(target: &Target) -> Outcome<IggyClient> {
    let client = connect::login_root(target).await?;
    let me = client.get_me().await.ctx("get_me over TLS")?;
    ensure_eq("get_me logged in", me.user_id.is_some(), true)?;
    Ok(client)
}

/// Stream the TLS checks create.
pub const STREAM: &str = "compat-rust-tls";
/// Topic the TLS checks create.
pub const TOPIC: &str = "tls-topic";

/// Sends to and polls from the topic, then deletes the stream.
pub async fn send_poll(client: &IggyClient, topic: &TopicRef) -> Outcome {
    let sent: Vec<String> = (0..3).map(|i| format!("tls-{i}")).collect();
    let mut batch = sent
        .iter()
        .map(|p| message(p))
        .collect::<Outcome<Vec<_>>>()?;
    client
        .send_messages(
            &topic.stream_id(),
            &topic.topic_id(),
            &Partitioning::partition_id(0),
            &mut batch,
        )
        .await
        .ctx("send_messages over TLS")?;
    let polled = poll(client, topic, 0, PollingStrategy::first(), 10).await?;
    ensure_eq("payloads polled over TLS", payloads(&polled)?, sent)?;
    client
        .delete_stream(&Identifier::named(STREAM).ctx("stream identifier")?)
        .await
        .ctx("delete_stream over TLS")
}

/// Connects and logs in with the given TLS settings; `Ok` only when both
/// worked, so a refused certificate is an `Err` (bounded by a timeout).
async fn try_tls(address: &str, domain: &str, ca_file: Option<&str>) -> Result<(), String> {
    let mut builder = IggyClient::builder()
        .with_tcp()
        .with_server_address(address.to_string())
        .with_reconnection_max_retries(Some(0))
        .with_tls_enabled(true)
        .with_tls_domain(domain.to_string())
        .with_tls_validate_certificate(true);
    if let Some(ca) = ca_file {
        builder = builder.with_tls_ca_file(ca.to_string());
    }
    let client = builder.build().map_err(|e| format!("build: {e}"))?;
    let attempt = async {
        client
            .connect()
            .await
            .map_err(|e| format!("connect: {e}"))?;
        client
            .login_user(ROOT_USER, ROOT_PASSWORD)
            .await
            .map_err(|e| format!("login: {e}"))?;
        Ok(())
    };
    let result = match tokio::time::timeout(Duration::from_secs(8), attempt).await {
        Ok(result) => result,
        Err(_) => Err("timed out".to_string()),
    };
    let _ = client.shutdown().await;
    result
}

/// Without the scenario CA (built-in roots only), or with a name the
/// certificate does not carry, the SDK must refuse the server.
pub async fn verifies_certificate(target: &Target) -> Outcome {
    let ca = target.tls_ca_file.as_deref().ctx("TLS CA file")?;
    if try_tls(&target.address, &target.tls_domain, None)
        .await
        .is_ok()
    {
        return Err("connected and logged in without trusting the scenario CA".to_string());
    }
    if try_tls(&target.address, "not-this-server.example", Some(ca))
        .await
        .is_ok()
    {
        return Err("connected and logged in with a server name the certificate lacks".to_string());
    }
    try_tls(&target.address, &target.tls_domain, Some(ca))
        .await
        .ctx("the same connection with the CA")
}
