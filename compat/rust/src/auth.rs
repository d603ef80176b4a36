//! Checks for signing in: password, personal access token, wrong password.

use iggy::prelude::{
    IggyClient, IggyExpiry, PersonalAccessTokenClient, StreamClient, SystemClient, UserClient,
};

use crate::connect::{self, ROOT_PASSWORD, ROOT_USER, Target};
use crate::outcome::{Context, Outcome, ensure, ensure_eq, expect_code};

/// Name of the personal access token the scenario creates.
pub const PAT_NAME: &str = "compat-rust-pat";

/// Logs in as root with a password and checks the session is the root user's.
pub async fn login_password(target: &Target) -> Outcome<(IggyClient, u32)> {
    let client = connect::connect(target).await?;
    let identity = client
        .login_user(ROOT_USER, ROOT_PASSWORD)
        .await
        .ctx("login_user")?;
    let me = client.get_me().await.ctx("get_me after login")?;
    ensure_eq("get_me user_id", me.user_id, Some(identity.user_id))?;
    client.get_streams().await.ctx("get_streams as root")?;
    Ok((client, identity.user_id))
}

/// A wrong password is refused with InvalidCredentials (42; eviction reason 9).
pub async fn wrong_password(target: &Target) -> Outcome {
    let client = connect::connect(target).await?;
    let result = client.login_user(ROOT_USER, "not-the-password").await;
    connect::close(client).await;
    expect_code("login_user with a wrong password", result, 42)
}

/// Creates a personal access token for root and returns its secret.
pub async fn create_pat(root: &IggyClient) -> Outcome<String> {
    let raw = root
        .create_personal_access_token(PAT_NAME, IggyExpiry::NeverExpire)
        .await
        .ctx("create_personal_access_token")?;
    ensure(!raw.token.is_empty(), || {
        "the token secret is empty".to_string()
    })?;
    let tokens = root
        .get_personal_access_tokens()
        .await
        .ctx("get_personal_access_tokens")?;
    ensure(tokens.iter().any(|token| token.name == PAT_NAME), || {
        format!("token {PAT_NAME} missing from the list: {tokens:?}")
    })?;
    Ok(raw.token)
}

/// Logs in with the token on a new connection; the session must be root's.
pub async fn login_pat(target: &Target, token: &str, root_id: u32) -> Outcome {
    let client = connect::connect(target).await?;
    let result = async {
        let identity = client
            .login_with_personal_access_token(token)
            .await
            .ctx("login_with_personal_access_token")?;
        ensure_eq("user id of the token session", identity.user_id, root_id)?;
        let me = client.get_me().await.ctx("get_me on the token session")?;
        ensure_eq("get_me user_id", me.user_id, Some(root_id))?;
        client
            .get_streams()
            .await
            .ctx("get_streams on the token session")?;
        Ok(())
    }
    .await;
    connect::close(client).await;
    result
}

/// After deletion the token is gone from the list and no longer logs in
/// (InvalidPersonalAccessToken 53; eviction reason 10).
pub async fn delete_pat(root: &IggyClient, target: &Target, token: &str) -> Outcome {
    root.delete_personal_access_token(PAT_NAME)
        .await
        .ctx("delete_personal_access_token")?;
    let tokens = root
        .get_personal_access_tokens()
        .await
        .ctx("get_personal_access_tokens")?;
    ensure(tokens.iter().all(|t| t.name != PAT_NAME), || {
        format!("deleted token still listed: {tokens:?}")
    })?;
    let client = connect::connect(target).await?;
    let result = client.login_with_personal_access_token(token).await;
    connect::close(client).await;
    expect_code("login with the deleted token", result, 53)
}
