//! The options every command that connects to NATS shares: credentials and TLS, read from
//! flags or from the variables the `nats` CLI reads (values never shown in `--help`).

use std::path::PathBuf;

use clap::Args;
use giving_nats::{NatsAuth, env};

/// How to authenticate to the NATS server and verify it (`nats://user:pass@host` and
/// `tls://host` work in the URL too).
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct NatsAuthArgs {
    /// Authenticate with this token.
    #[arg(long, value_name = "TOKEN", env = env::TOKEN, hide_env_values = true)]
    nats_token: Option<String>,
    /// Authenticate as this user (with --nats-password; alone, it is a token, as for the
    /// `nats` CLI).
    #[arg(long, value_name = "USER", env = env::USER, hide_env_values = true)]
    nats_user: Option<String>,
    /// The user's password.
    #[arg(long, value_name = "PASSWORD", env = env::PASSWORD, hide_env_values = true, requires = "nats_user")]
    nats_password: Option<String>,
    /// Authenticate with a `.creds` file (a user JWT and its nkey seed).
    #[arg(long, value_name = "FILE", env = env::CREDS, hide_env_values = true)]
    nats_creds: Option<PathBuf>,
    /// Authenticate with the nkey seed in FILE.
    #[arg(long, value_name = "FILE", env = env::NKEY, hide_env_values = true)]
    nats_nkey: Option<PathBuf>,
    /// Verify the server's TLS certificate with the CAs in this PEM file (and require TLS).
    #[arg(long, value_name = "FILE", env = env::CA, hide_env_values = true)]
    nats_ca: Option<PathBuf>,
    /// Present this PEM client certificate (with --nats-key; requires TLS).
    #[arg(long, value_name = "FILE", env = env::CERT, hide_env_values = true, requires = "nats_key")]
    nats_cert: Option<PathBuf>,
    /// The client certificate's PEM private key.
    #[arg(long, value_name = "FILE", env = env::KEY, hide_env_values = true, requires = "nats_cert")]
    nats_key: Option<PathBuf>,
}

impl NatsAuthArgs {
    /// The settings, for the library.
    pub(crate) fn auth(&self) -> NatsAuth {
        let mut auth = NatsAuth::default();
        match (&self.nats_user, &self.nats_password) {
            (Some(user), Some(password)) => auth = auth.user(user, password),
            (Some(token), None) => auth = auth.token(token),
            _ => {}
        }
        if let Some(token) = &self.nats_token {
            auth = auth.token(token);
        }
        if let Some(path) = &self.nats_creds {
            auth = auth.creds(path);
        }
        if let Some(path) = &self.nats_nkey {
            auth = auth.nkey(path);
        }
        if let Some(path) = &self.nats_ca {
            auth = auth.ca(path);
        }
        if let (Some(cert), Some(key)) = (&self.nats_cert, &self.nats_key) {
            auth = auth.client_cert(cert, key);
        }
        auth
    }
}
