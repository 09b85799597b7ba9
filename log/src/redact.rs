//! Secrets kept out of what a run writes: a command line's passwords and tokens, and the
//! password in a URL, are replaced by `***` before a log header (or anything else) records them.

/// Words that make a flag's value a secret (`--nats-token T`, `--password=P`, `--api-key K`).
const SECRET_FLAG_WORDS: [&str; 5] = ["token", "password", "passwd", "secret", "api-key"];

/// `text` with the password of a URL in it (`scheme://user:PASSWORD@host`) replaced by `***`,
/// or its whole user part when it has no password (a token, `scheme://TOKEN@host`). Text with
/// no credentials in it is returned as is.
///
/// ```
/// use giving_log::redact_url;
///
/// assert_eq!(redact_url("nats://ann:pw@host:4222"), "nats://ann:***@host:4222");
/// assert_eq!(redact_url("nats://t0ken@host"), "nats://***@host");
/// assert_eq!(redact_url("http://127.0.0.1:5000/api"), "http://127.0.0.1:5000/api");
/// ```
pub fn redact_url(text: &str) -> String {
    let Some(scheme_end) = text.find("://") else {
        return text.to_owned();
    };
    let authority_start = scheme_end + 3;
    let rest = &text[authority_start..];
    let authority_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let Some(at) = rest[..authority_len].rfind('@') else {
        return text.to_owned();
    };
    let userinfo = &rest[..at];
    let shown = match userinfo.split_once(':') {
        Some((user, _)) => format!("{user}:***"),
        None => "***".to_owned(),
    };
    format!("{}{shown}{}", &text[..authority_start], &rest[at..])
}

/// `args` with the values of secret flags (those naming a token, password, secret or API key,
/// as `--flag VALUE` or `--flag=VALUE`) and the passwords in URLs replaced by `***`: a command
/// line as a log header records it.
///
/// ```
/// use giving_log::redact_args;
///
/// let args = ["giving", "watch", "nats://w:pw@h", "--nats-token", "T", "--nats-password=P"];
/// assert_eq!(
///     redact_args(args.iter().map(|a| a.to_string())),
///     ["giving", "watch", "nats://w:***@h", "--nats-token", "***", "--nats-password=***"]
/// );
/// ```
pub fn redact_args(args: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut redacted = Vec::new();
    let mut value_is_secret = false;
    for arg in args {
        if std::mem::take(&mut value_is_secret) && !arg.starts_with('-') {
            redacted.push("***".to_owned());
            continue;
        }
        match arg.strip_prefix('-').map(|flag| flag.split_once('=')) {
            Some(Some((name, _))) if is_secret_flag(name) => {
                redacted.push(format!("-{name}=***"));
            }
            Some(None) if is_secret_flag(&arg) => {
                value_is_secret = true;
                redacted.push(arg);
            }
            _ => redacted.push(redact_url(&arg)),
        }
    }
    redacted
}

fn is_secret_flag(flag: &str) -> bool {
    let flag = flag.to_ascii_lowercase();
    flag.starts_with('-') && SECRET_FLAG_WORDS.iter().any(|word| flag.contains(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| (*a).to_owned()).collect()
    }

    #[test]
    fn only_secrets_are_masked() {
        let args = strings(&["giving", "train", "mlp", "--log", "runs", "--steps", "3"]);
        assert_eq!(redact_args(args.clone()), args);
        assert_eq!(
            redact_args(strings(&["x", "--nats-token", "--dash"])),
            strings(&["x", "--nats-token", "--dash"]),
            "a flag that follows is not taken as the value"
        );
        assert_eq!(
            redact_args(strings(&["x", "--NATS-PASSWORD", "p", "--api-key=k"])),
            strings(&["x", "--NATS-PASSWORD", "***", "--api-key=***"])
        );
    }

    #[test]
    fn urls_lose_their_password_but_keep_their_path() {
        assert_eq!(redact_url("tls://a:b@h:1/p@x"), "tls://a:***@h:1/p@x");
        assert_eq!(redact_url("no url here"), "no url here");
        assert_eq!(redact_url("nats://h:1"), "nats://h:1");
        assert_eq!(redact_url("nats://a:b@[bad"), "nats://a:***@[bad");
    }
}
