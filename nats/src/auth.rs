//! [`NatsAuth`]: who a client says it is to the NATS server, and how it checks the server.

use std::path::{Path, PathBuf};

use giving_log::redact_url;

use crate::error::NatsError;

/// The environment variables the `nats` CLI reads for the same settings; giving's commands
/// read them too (a flag wins over its variable).
pub mod env {
    /// A user name, or a token when no password is set (as the `nats` CLI reads it).
    pub const USER: &str = "NATS_USER";
    /// The user's password.
    pub const PASSWORD: &str = "NATS_PASSWORD";
    /// A token (giving's own; the `nats` CLI reads a token from [`USER`]).
    pub const TOKEN: &str = "NATS_TOKEN";
    /// A `.creds` file: a user JWT and its nkey seed.
    pub const CREDS: &str = "NATS_CREDS";
    /// A file holding an nkey seed (`SU…`).
    pub const NKEY: &str = "NATS_NKEY";
    /// A PEM file of the certificate authorities that sign the server's certificate.
    pub const CA: &str = "NATS_CA";
    /// A PEM client certificate (with [`KEY`]).
    pub const CERT: &str = "NATS_CERT";
    /// The client certificate's PEM private key.
    pub const KEY: &str = "NATS_KEY";
}

/// How a client authenticates to the server and verifies it: a token, a user and password, a
/// `.creds` file or an nkey seed file; TLS with a custom CA and a client certificate.
///
/// A URL's own credentials count too: `nats://user:pass@host` is a user and password,
/// `nats://token@host` a token (as the NATS clients read them), and `tls://host` asks for TLS.
/// Secrets never appear in `Debug`, in errors or in banners: show a URL with
/// [`giving_log::redact_url`].
///
/// ```
/// use giving_nats::NatsAuth;
///
/// let auth = NatsAuth::default().token("s3cret").ca("ca.pem");
/// assert!(!format!("{auth:?}").contains("s3cret"));
/// assert_eq!(giving_log::redact_url("nats://ann:s3cret@host:4222"), "nats://ann:***@host:4222");
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct NatsAuth {
    token: Option<String>,
    user: Option<(String, String)>,
    creds: Option<PathBuf>,
    nkey: Option<PathBuf>,
    ca: Option<PathBuf>,
    client_cert: Option<(PathBuf, PathBuf)>,
}

impl NatsAuth {
    /// The settings in the `nats` CLI's environment variables ([`mod@env`]); none set: none.
    pub fn from_env() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok().filter(|value| !value.is_empty()))
    }

    /// As [`from_env`](Self::from_env), reading variables through `lookup`.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let mut auth = Self::default();
        match (lookup(env::USER), lookup(env::PASSWORD)) {
            (Some(user), Some(password)) => auth = auth.user(user, password),
            // `nats --user` without a password is a token.
            (Some(token), None) => auth = auth.token(token),
            _ => {}
        }
        if let Some(token) = lookup(env::TOKEN) {
            auth = auth.token(token);
        }
        if let Some(path) = lookup(env::CREDS) {
            auth = auth.creds(path);
        }
        if let Some(path) = lookup(env::NKEY) {
            auth = auth.nkey(path);
        }
        if let Some(path) = lookup(env::CA) {
            auth = auth.ca(path);
        }
        if let (Some(cert), Some(key)) = (lookup(env::CERT), lookup(env::KEY)) {
            auth = auth.client_cert(cert, key);
        }
        auth
    }

    /// Authenticates with a token.
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// Authenticates with a user name and password.
    pub fn user(mut self, user: impl Into<String>, password: impl Into<String>) -> Self {
        self.user = Some((user.into(), password.into()));
        self
    }

    /// Authenticates with a `.creds` file (a user JWT and the nkey seed that signs for it).
    pub fn creds(mut self, path: impl Into<PathBuf>) -> Self {
        self.creds = Some(path.into());
        self
    }

    /// Authenticates with the nkey seed in the file at `path`.
    pub fn nkey(mut self, path: impl Into<PathBuf>) -> Self {
        self.nkey = Some(path.into());
        self
    }

    /// Verifies the server's certificate against the CAs in the PEM file at `path` (and asks
    /// for TLS).
    pub fn ca(mut self, path: impl Into<PathBuf>) -> Self {
        self.ca = Some(path.into());
        self
    }

    /// Presents the client certificate `cert` with its private key `key` (PEM files; asks for
    /// TLS).
    pub fn client_cert(mut self, cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> Self {
        self.client_cert = Some((cert.into(), key.into()));
        self
    }

    /// Fills what `self` does not set from `other` (a flag's setting over its variable's).
    pub fn or(self, other: Self) -> Self {
        Self {
            token: self.token.or(other.token),
            user: self.user.or(other.user),
            creds: self.creds.or(other.creds),
            nkey: self.nkey.or(other.nkey),
            ca: self.ca.or(other.ca),
            client_cert: self.client_cert.or(other.client_cert),
        }
    }

    /// Whether any credential is set (a URL's own are not counted).
    pub fn has_credentials(&self) -> bool {
        self.token.is_some() || self.user.is_some() || self.creds.is_some() || self.nkey.is_some()
    }

    /// The environment variables that hand these settings to a child process (a suite's
    /// benchmark publishing to the same server), as the `nats` CLI names them.
    pub fn to_env(&self) -> Vec<(&'static str, String)> {
        let path = |p: &Path| p.display().to_string();
        let mut vars = Vec::new();
        if let Some((user, password)) = &self.user {
            vars.push((env::USER, user.clone()));
            vars.push((env::PASSWORD, password.clone()));
        }
        if let Some(token) = &self.token {
            vars.push((env::TOKEN, token.clone()));
        }
        if let Some(creds) = &self.creds {
            vars.push((env::CREDS, path(creds)));
        }
        if let Some(nkey) = &self.nkey {
            vars.push((env::NKEY, path(nkey)));
        }
        if let Some(ca) = &self.ca {
            vars.push((env::CA, path(ca)));
        }
        if let Some((cert, key)) = &self.client_cert {
            vars.push((env::CERT, path(cert)));
            vars.push((env::KEY, path(key)));
        }
        vars
    }

    /// `options` with these settings and `url`'s own credentials applied. Fails, naming the
    /// file, when a credentials, nkey or certificate file cannot be read; never with a secret
    /// in the message.
    pub(crate) fn apply(
        &self,
        url: &str,
        mut options: async_nats::ConnectOptions,
    ) -> Result<async_nats::ConnectOptions, NatsError> {
        let parsed = url::Url::parse(url).ok();
        let shown = redact_url(url);
        if let Some(parsed) = &parsed
            && !parsed.username().is_empty()
        {
            let user = percent_decode(parsed.username());
            options = match parsed.password() {
                Some(password) => options.user_and_password(user, percent_decode(password)),
                None => options.token(user),
            };
        }
        if let Some((user, password)) = &self.user {
            options = options.user_and_password(user.clone(), password.clone());
        }
        if let Some(token) = &self.token {
            options = options.token(token.clone());
        }
        if let Some(path) = &self.nkey {
            let seed = read(path, "nkey seed", &shown)?;
            options = options.nkey(seed.trim().to_owned());
        }
        if let Some(path) = &self.creds {
            let creds = read(path, "credentials", &shown)?;
            options = options.credentials(&creds).map_err(|e| NatsError::Auth {
                url: shown.clone(),
                what: "credentials",
                path: path.clone(),
                // The parser's message names the part of the file it wanted, not its content.
                message: e.to_string(),
            })?;
        }
        if let Some(path) = &self.ca {
            exists(path, "CA certificate", &shown)?;
            options = options
                .add_root_certificates(path.clone())
                .require_tls(true);
        }
        if let Some((cert, key)) = &self.client_cert {
            exists(cert, "client certificate", &shown)?;
            exists(key, "client key", &shown)?;
            options = options
                .add_client_certificate(cert.clone(), key.clone())
                .require_tls(true);
        }
        Ok(options)
    }
}

impl std::fmt::Debug for NatsAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsAuth")
            .field("token", &self.token.as_ref().map(|_| "***"))
            .field("user", &self.user.as_ref().map(|(user, _)| user))
            .field("creds", &self.creds)
            .field("nkey", &self.nkey)
            .field("ca", &self.ca)
            .field("client_cert", &self.client_cert)
            .finish()
    }
}

/// A URL's user or password as typed (`%40` is `@`; `+` stays `+`, unlike in a query).
fn percent_decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
}

fn read(path: &Path, what: &'static str, url: &str) -> Result<String, NatsError> {
    std::fs::read_to_string(path).map_err(|e| NatsError::Auth {
        url: url.to_owned(),
        what,
        path: path.to_owned(),
        message: e.to_string(),
    })
}

fn exists(path: &Path, what: &'static str, url: &str) -> Result<(), NatsError> {
    std::fs::metadata(path)
        .map(|_| ())
        .map_err(|e| NatsError::Auth {
            url: url.to_owned(),
            what,
            path: path.to_owned(),
            message: e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nats_cli_variables_are_read_as_it_reads_them() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| (*value).to_owned())
            }
        };
        let auth = NatsAuth::from_lookup(vars(&[("NATS_USER", "ann"), ("NATS_PASSWORD", "pw")]));
        assert_eq!(auth, NatsAuth::default().user("ann", "pw"));
        let auth = NatsAuth::from_lookup(vars(&[("NATS_USER", "tok")]));
        assert_eq!(auth, NatsAuth::default().token("tok"));
        let auth = NatsAuth::from_lookup(vars(&[("NATS_CERT", "c.pem")]));
        assert_eq!(
            auth,
            NatsAuth::default(),
            "a certificate without its key is not used"
        );
        let auth = NatsAuth::from_lookup(vars(&[("NATS_CA", "ca.pem"), ("NATS_CREDS", "u.creds")]));
        assert_eq!(auth, NatsAuth::default().ca("ca.pem").creds("u.creds"));
        assert_eq!(
            NatsAuth::from_lookup(vars(&[("NATS_TOKEN", "t")])).to_env(),
            vec![("NATS_TOKEN", "t".to_owned())]
        );
    }

    #[test]
    fn a_flag_wins_over_its_variable() {
        let flags = NatsAuth::default().token("flag");
        let merged = flags.or(NatsAuth::default().token("env").ca("ca.pem"));
        assert_eq!(merged, NatsAuth::default().token("flag").ca("ca.pem"));
    }

    #[test]
    fn secrets_are_masked_in_urls_and_debug() {
        assert_eq!(redact_url("nats://a%40b:p%2Fw@h:1"), "nats://a%40b:***@h:1");
        let debug = format!(
            "{:?}",
            NatsAuth::default().user("ann", "hunter2").token("t0k")
        );
        assert!(
            !debug.contains("hunter2") && !debug.contains("t0k"),
            "{debug}"
        );
        assert!(debug.contains("ann"), "{debug}");
    }

    #[test]
    fn a_missing_file_is_named_and_no_secret_is_shown() {
        let auth = NatsAuth::default().creds("/nonexistent/u.creds");
        let error = auth
            .apply(
                "nats://ann:hunter2@127.0.0.1:4222",
                async_nats::ConnectOptions::new(),
            )
            .unwrap_err()
            .to_string();
        assert!(error.contains("/nonexistent/u.creds"), "{error}");
        assert!(error.contains("credentials"), "{error}");
        assert!(!error.contains("hunter2"), "{error}");
    }

    #[test]
    fn percent_encoded_credentials_are_decoded() {
        assert_eq!(percent_decode("p%2Fw%40+"), "p/w@+");
        assert_eq!(percent_decode("plain"), "plain");
    }
}
