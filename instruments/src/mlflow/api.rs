//! The few calls of MLflow's REST API (`/api/2.0/mlflow/…`) the sink makes, with a blocking
//! client (it runs on the sink's thread).

use std::time::Duration;

use serde_json::{Value as Json, json};

use giving_log::redact_url;

use super::auth::MlflowAuth;
use super::batch::Batch;
use super::error::MlflowError;

/// A tracking server.
pub(crate) struct Api {
    base: String,
    agent: ureq::Agent,
    /// The `Authorization` header's value, sent with every request.
    authorization: Option<String>,
}

impl Api {
    /// The server at `uri` (`http://host:port`, maybe with a path), reached with `auth`.
    pub(crate) fn new(uri: &str, auth: &MlflowAuth) -> Result<Self, MlflowError> {
        if !(uri.starts_with("http://") || uri.starts_with("https://")) {
            return Err(MlflowError::Uri {
                uri: redact_url(uri),
            });
        }
        let mut agent = ureq::AgentBuilder::new()
            .timeout_connect(Duration::from_secs(5))
            .timeout(Duration::from_secs(30));
        if let Some(tls) = auth.tls(uri)? {
            agent = agent.tls_config(tls);
        }
        Ok(Self {
            base: format!("{}/api/2.0/mlflow", uri.trim_end_matches('/')),
            agent: agent.build(),
            authorization: auth.header(),
        })
    }

    fn get(&self, url: &str) -> ureq::Request {
        self.authorize(self.agent.get(url))
    }

    fn authorize(&self, request: ureq::Request) -> ureq::Request {
        match &self.authorization {
            Some(value) => request.set("Authorization", value),
            None => request,
        }
    }

    fn answer(url: &str, result: Result<ureq::Response, ureq::Error>) -> Result<Json, MlflowError> {
        let response = match result {
            Ok(response) => response,
            Err(ureq::Error::Status(status, response)) => {
                return Err(MlflowError::Status {
                    url: redact_url(url),
                    status,
                    body: response.into_string().unwrap_or_default(),
                });
            }
            Err(error) => {
                return Err(MlflowError::Unreachable {
                    url: redact_url(url),
                    message: transport_message(&error),
                });
            }
        };
        let text = response
            .into_string()
            .map_err(|e| MlflowError::Unreachable {
                url: redact_url(url),
                message: e.to_string(),
            })?;
        Ok(serde_json::from_str(&text).unwrap_or(Json::Null))
    }

    fn post(&self, path: &str, body: &Json) -> Result<Json, MlflowError> {
        let url = format!("{}/{path}", self.base);
        let result = self
            .authorize(self.agent.post(&url))
            .set("Content-Type", "application/json")
            .send_string(&body.to_string());
        Self::answer(&url, result)
    }

    /// The id of experiment `name`, created if needed.
    pub(crate) fn experiment(&self, name: &str) -> Result<String, MlflowError> {
        let url = format!("{}/experiments/get-by-name", self.base);
        let found = Self::answer(&url, self.get(&url).query("experiment_name", name).call());
        match found {
            Ok(answer) => {
                return string(
                    &url,
                    &answer["experiment"]["experiment_id"],
                    "an experiment id",
                );
            }
            Err(MlflowError::Status { status: 404, .. }) => {}
            Err(error) => return Err(error),
        }
        match self.post("experiments/create", &json!({"name": name})) {
            Ok(answer) => string(&url, &answer["experiment_id"], "an experiment id"),
            // Created by another rank meanwhile.
            Err(MlflowError::Status { body, .. }) if body.contains("RESOURCE_ALREADY_EXISTS") => {
                let answer =
                    Self::answer(&url, self.get(&url).query("experiment_name", name).call())?;
                string(
                    &url,
                    &answer["experiment"]["experiment_id"],
                    "an experiment id",
                )
            }
            Err(error) => Err(error),
        }
    }

    /// A new run in experiment `experiment_id`; its id.
    pub(crate) fn create_run(
        &self,
        experiment_id: &str,
        run_name: Option<&str>,
        start_ms: u64,
    ) -> Result<String, MlflowError> {
        let mut body = json!({"experiment_id": experiment_id, "start_time": start_ms,
                              "tags": [{"key": "mlflow.source.name", "value": "giving"}]});
        if let Some(name) = run_name {
            body["run_name"] = json!(name);
        }
        let answer = self.post("runs/create", &body)?;
        let url = format!("{}/runs/create", self.base);
        string(&url, &answer["run"]["info"]["run_id"], "a run id")
    }

    /// Logs one batch (within the limits: see [`batches`](super::batch::batches)).
    pub(crate) fn log_batch(&self, run_id: &str, batch: &Batch) -> Result<(), MlflowError> {
        self.post("runs/log-batch", &batch.body(run_id)).map(drop)
    }

    /// Ends the run with `status` (`FINISHED`, `FAILED`, `KILLED`).
    pub(crate) fn end_run(
        &self,
        run_id: &str,
        status: &str,
        end_ms: u64,
    ) -> Result<(), MlflowError> {
        let body = json!({"run_id": run_id, "status": status, "end_time": end_ms});
        self.post("runs/update", &body).map(drop)
    }
}

fn string(url: &str, value: &Json, what: &'static str) -> Result<String, MlflowError> {
    value
        .as_str()
        .map(str::to_owned)
        .ok_or(MlflowError::Answer {
            url: redact_url(url),
            what,
        })
}

/// Why a request failed, without the URL: the error names that apart, its password hidden,
/// where ureq's own message starts with the whole URL, credentials included.
fn transport_message(error: &ureq::Error) -> String {
    let ureq::Error::Transport(transport) = error else {
        return redact_url(&error.to_string());
    };
    let mut message = transport.kind().to_string();
    if let Some(detail) = transport.message() {
        message = format!("{message}: {detail}");
    }
    if let Some(source) = std::error::Error::source(error) {
        message = format!("{message}: {source}");
    }
    redact_url(&message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreachable_server_is_named_once_and_without_its_password() {
        // Port 9 on loopback: nothing listens, the connection is refused at once.
        let api = Api::new("http://ann:s3cret@127.0.0.1:9", &MlflowAuth::default()).unwrap();
        let error = api.experiment("giving").unwrap_err();
        assert!(
            matches!(error, MlflowError::Unreachable { .. }),
            "{error:?}"
        );
        for shown in [error.to_string(), format!("{error:?}")] {
            assert!(!shown.contains("s3cret"), "the password is shown: {shown}");
            assert!(shown.contains("ann:***@127.0.0.1:9"), "{shown}");
            assert_eq!(shown.matches("127.0.0.1:9").count(), 1, "{shown}");
        }
    }

    #[test]
    fn a_uri_that_is_not_http_is_refused_without_its_password() {
        let Err(error) = Api::new("ftp://ann:s3cret@host", &MlflowAuth::default()) else {
            panic!("an ftp:// URI was accepted");
        };
        assert!(!error.to_string().contains("s3cret"), "{error}");
    }
}
