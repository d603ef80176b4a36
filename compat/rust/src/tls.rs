//! Checks over TLS: the SDK verifies the server certificate against the
//! scenario's own CA, then logs in, sends and polls; an untrusted or
//! misnamed certificate is refused.

use std::time::Duration;

use iggy::prelude::{
    Client, Identifier, IggyClient, MessageClient, Partitioning, PollingStrategy, StreamClient,
    SystemClient, UserClient,
};

use crate::catalog::TopicRef;
use crate::connect::{self, ROOT_PASSWORD, ROOT_USER, Target, TlsSettings};
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

/// Connects and logs in to `target` with its TLS settings; `Ok` only when
/// both worked, so a refused certificate is an `Err` (bounded by a timeout).
pub async fn try_login(target: &Target) -> Result<(), String> {
    let client = connect::build(target)?;
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
/// certificate does not carry, the SDK must refuse the server; with both it
/// logs in. Works for every transport that takes a CA file (TCP, WSS).
pub async fn verifies_certificate(target: &Target) -> Outcome {
    let tls = target.tls.as_ref().ctx("TLS settings")?;
    let ca = tls.ca_file.clone().ctx("TLS CA file")?;
    let without_ca = target.with_tls(Some(TlsSettings {
        ca_file: None,
        domain: tls.domain.clone(),
    }));
    if try_login(&without_ca).await.is_ok() {
        return Err("connected and logged in without trusting the scenario CA".to_string());
    }
    let misnamed = target.with_tls(Some(TlsSettings {
        ca_file: Some(ca),
        domain: "not-this-server.example".to_string(),
    }));
    if try_login(&misnamed).await.is_ok() {
        return Err("connected and logged in with a server name the certificate lacks".to_string());
    }
    try_login(target)
        .await
        .ctx("the same connection with the CA")
}
