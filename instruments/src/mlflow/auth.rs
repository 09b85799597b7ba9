//! [`MlflowAuth`]: how the sink proves who it is to an MLflow server behind authentication,
//! and how it checks the server's certificate, read from the variables MLflow's own clients
//! read.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine;

use super::error::MlflowError;

/// MLflow's variables, as its Python client reads them (`mlflow.environment_variables`).
pub mod env {
    /// A bearer token (`Authorization: Bearer …`).
    pub const TOKEN: &str = "MLFLOW_TRACKING_TOKEN";
    /// The user of HTTP basic authentication (with [`PASSWORD`]).
    pub const USERNAME: &str = "MLFLOW_TRACKING_USERNAME";
    /// The password of HTTP basic authentication.
    pub const PASSWORD: &str = "MLFLOW_TRACKING_PASSWORD";
    /// `true`: do not verify the server's TLS certificate (an explicit opt-in).
    pub const INSECURE_TLS: &str = "MLFLOW_TRACKING_INSECURE_TLS";
    /// A PEM file of the CAs that sign the server's certificate, in place of the usual roots.
    pub const SERVER_CERT_PATH: &str = "MLFLOW_TRACKING_SERVER_CERT_PATH";
}

/// Credentials and TLS settings for the tracking server: a bearer token or HTTP basic
/// authentication, a custom CA, or (opt-in) no certificate check at all. The values never
/// appear in `Debug`, errors or problems.
///
/// ```
/// use giving_instruments::MlflowAuth;
///
/// let auth = MlflowAuth::default().basic("ann", "hunter2");
/// assert!(!format!("{auth:?}").contains("hunter2"));
/// let from_env = MlflowAuth::from_lookup(|name| {
///     (name == "MLFLOW_TRACKING_TOKEN").then(|| "t0k".to_owned())
/// });
/// assert_eq!(from_env, MlflowAuth::default().token("t0k"));
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct MlflowAuth {
    token: Option<String>,
    basic: Option<(String, String)>,
    ca: Option<PathBuf>,
    insecure: bool,
}

impl MlflowAuth {
    /// The settings in MLflow's environment variables ([`mod@env`]).
    pub fn from_env() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok().filter(|value| !value.is_empty()))
    }

    /// As [`from_env`](Self::from_env), reading variables through `lookup`.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let mut auth = Self::default();
        if let Some(token) = lookup(env::TOKEN) {
            auth = auth.token(token);
        }
        if let (Some(user), Some(password)) = (lookup(env::USERNAME), lookup(env::PASSWORD)) {
            auth = auth.basic(user, password);
        }
        if let Some(path) = lookup(env::SERVER_CERT_PATH) {
            auth = auth.ca(path);
        }
        // As MLflow reads a boolean variable: `true` or `1`, any case.
        if lookup(env::INSECURE_TLS)
            .is_some_and(|v| matches!(v.to_lowercase().as_str(), "true" | "1"))
        {
            auth = auth.insecure_tls();
        }
        auth
    }

    /// Sends `Authorization: Bearer <token>`.
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// Sends HTTP basic authentication (MLflow's `basic-auth` app).
    pub fn basic(mut self, user: impl Into<String>, password: impl Into<String>) -> Self {
        self.basic = Some((user.into(), password.into()));
        self
    }

    /// Trusts only the CAs in the PEM file at `path` for the server's certificate.
    pub fn ca(mut self, path: impl Into<PathBuf>) -> Self {
        self.ca = Some(path.into());
        self
    }

    /// Does not verify the server's certificate (MLflow's `MLFLOW_TRACKING_INSECURE_TLS`):
    /// traffic is encrypted but anyone on the path can pose as the server.
    pub fn insecure_tls(mut self) -> Self {
        self.insecure = true;
        self
    }

    /// The `Authorization` header's value, if any (basic authentication wins over a token,
    /// as in MLflow's client).
    pub(crate) fn header(&self) -> Option<String> {
        if let Some((user, password)) = &self.basic {
            let encoded =
                base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
            return Some(format!("Basic {encoded}"));
        }
        self.token.as_ref().map(|token| format!("Bearer {token}"))
    }

    /// The TLS settings for the client, when they differ from the usual roots.
    pub(crate) fn tls(&self, uri: &str) -> Result<Option<Arc<rustls::ClientConfig>>, MlflowError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| tls_error(uri, e))?;
        if self.insecure {
            let config = builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
                .with_no_client_auth();
            return Ok(Some(Arc::new(config)));
        }
        let Some(path) = &self.ca else {
            return Ok(None);
        };
        let mut roots = rustls::RootCertStore::empty();
        for cert in certificates(path, uri)? {
            roots
                .add(cert)
                .map_err(|e| ca_error(uri, path, e.to_string()))?;
        }
        Ok(Some(Arc::new(
            builder.with_root_certificates(roots).with_no_client_auth(),
        )))
    }
}

impl std::fmt::Debug for MlflowAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MlflowAuth")
            .field("token", &self.token.as_ref().map(|_| "***"))
            .field("basic", &self.basic.as_ref().map(|(user, _)| (user, "***")))
            .field("ca", &self.ca)
            .field("insecure", &self.insecure)
            .finish()
    }
}

fn certificates(
    path: &Path,
    uri: &str,
) -> Result<Vec<rustls::pki_types::CertificateDer<'static>>, MlflowError> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let certs: Vec<_> = CertificateDer::pem_file_iter(path)
        .map_err(|e| ca_error(uri, path, e.to_string()))?
        .collect::<Result<_, _>>()
        .map_err(|e| ca_error(uri, path, e.to_string()))?;
    if certs.is_empty() {
        return Err(ca_error(uri, path, "no PEM certificate in it".to_owned()));
    }
    Ok(certs)
}

fn ca_error(uri: &str, path: &Path, message: String) -> MlflowError {
    MlflowError::Tls {
        url: giving_log::redact_url(uri),
        message: format!("{} ({}): {message}", env::SERVER_CERT_PATH, path.display()),
    }
}

fn tls_error(uri: &str, error: rustls::Error) -> MlflowError {
    MlflowError::Tls {
        url: giving_log::redact_url(uri),
        message: error.to_string(),
    }
}

/// Accepts any server certificate (the `MLFLOW_TRACKING_INSECURE_TLS` opt-in), but still
/// checks that the server holds the key of the certificate it showed.
#[derive(Debug)]
struct AnyCertificate(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mlflow_variables_are_read_as_mlflow_reads_them() {
        let vars = [
            (env::USERNAME, "ann"),
            (env::PASSWORD, "pw"),
            (env::INSECURE_TLS, "True"),
        ];
        let auth = MlflowAuth::from_lookup(|name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, v)| (*v).to_owned())
        });
        assert_eq!(
            auth,
            MlflowAuth::default().basic("ann", "pw").insecure_tls()
        );
        assert_eq!(auth.header().as_deref(), Some("Basic YW5uOnB3"));
        assert_eq!(
            MlflowAuth::default().token("t").header().as_deref(),
            Some("Bearer t")
        );
        let no_password =
            MlflowAuth::from_lookup(|name| (name == env::USERNAME).then(|| "ann".to_owned()));
        assert_eq!(
            no_password.header(),
            None,
            "a user without a password sends nothing"
        );
    }

    #[test]
    fn a_bad_ca_file_is_named_and_the_insecure_opt_in_builds() {
        let error = MlflowAuth::default()
            .ca("/no/such/ca.pem")
            .tls("https://h")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("/no/such/ca.pem") && error.contains(env::SERVER_CERT_PATH),
            "{error}"
        );
        assert!(
            MlflowAuth::default()
                .insecure_tls()
                .tls("https://h")
                .unwrap()
                .is_some()
        );
        assert!(MlflowAuth::default().tls("https://h").unwrap().is_none());
    }
}
