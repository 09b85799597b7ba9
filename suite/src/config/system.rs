//! milabench's `system.yaml`: the nodes a suite runs on, and how to reach them over ssh.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;

/// The machines of a multi-node suite (`giving suite run --system FILE`), as milabench's
/// `system:` section.
///
/// ```
/// use giving_suite::config::SystemConfig;
///
/// let dir = tempfile::tempdir().unwrap();
/// let file = dir.path().join("system.yaml");
/// std::fs::write(&file, "
/// system:
///   sshkey: ~/.ssh/id_ed25519
///   nodes:
///     - {name: manager, ip: 192.168.11.11, port: 5000, main: true, user: bench}
///     - {name: node1, ip: 192.168.11.12, user: bench, sshport: 2222}
/// ").unwrap();
/// let system = SystemConfig::load(&file).unwrap();
/// assert_eq!(system.main().name, "manager");
/// assert_eq!(system.nodes[1].sshport, 2222);
/// assert_eq!(system.nodes[0].sshport, 22);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SystemConfig {
    /// The file it was read from.
    pub file: PathBuf,
    /// The private key ssh authenticates with (`sshkey`, `~` expanded); ssh's own default
    /// when absent.
    pub sshkey: Option<PathBuf>,
    /// More ssh options, given before the destination (`ssh_options: [-o, ConnectTimeout=5]`;
    /// giving's addition to milabench's format).
    pub ssh_options: Vec<String>,
    /// A NATS server (`nats: nats://HOST:PORT`; giving's addition): a giving program on a node
    /// other than the main one publishes its events there (`GIVING_PUBLISH`, `GIVING_RUN`)
    /// instead of smuggling them into its stdout. `None`: stdout.
    pub nats: Option<String>,
    /// The nodes, the main one first.
    pub nodes: Vec<Node>,
}

/// One machine of the system.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    /// Its name: part of its processes' tags (`{bench}.{node}.D0`).
    pub name: String,
    /// Its address, for ssh and, on the main node, for the other ranks (`MASTER_ADDR`).
    pub ip: String,
    /// On the main node: the rendezvous port of distributed benchmarks (`MASTER_PORT`).
    #[serde(default)]
    pub port: Option<u16>,
    /// Whether this is the node the suite runs from (rank 0). Its processes start locally;
    /// the others' over ssh.
    #[serde(default)]
    pub main: bool,
    /// The ssh user; ssh's own default when absent.
    #[serde(default)]
    pub user: Option<String>,
    /// The port its sshd listens on.
    #[serde(default = "default_ssh_port")]
    pub sshport: u16,
    /// The node's host name, accepted as milabench writes it; unused.
    #[serde(default)]
    pub hostname: Option<String>,
}

fn default_ssh_port() -> u16 {
    22
}

/// The file's shape: `system:` with milabench's keys.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    system: Section,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Section {
    #[serde(default)]
    sshkey: Option<String>,
    #[serde(default)]
    ssh_options: Vec<String>,
    #[serde(default)]
    nats: Option<String>,
    nodes: Vec<Node>,
    // Accepted as milabench writes them; the runner has no use for them.
    #[serde(default, rename = "arch")]
    _arch: Option<serde_norway::Value>,
    #[serde(default, rename = "docker_image")]
    _docker_image: Option<serde_norway::Value>,
    #[serde(default, rename = "gpu")]
    _gpu: Option<serde_norway::Value>,
}

impl SystemConfig {
    /// Reads `file`. An error names the file, the line and what is wrong (a missing field, an
    /// unknown key, two main nodes, a name that cannot be part of a file name).
    pub fn load(file: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let file = file.as_ref();
        let error = |line, key: &str, message: String| ConfigError {
            file: file.to_path_buf(),
            line,
            key: key.to_owned(),
            message,
        };
        let text = std::fs::read_to_string(file)
            .map_err(|e| error(None, "(file)", format!("cannot read: {e}")))?;
        let parsed: File = serde_norway::from_str(&text)
            .map_err(|e| error(e.location().map(|l| l.line()), "system", e.to_string()))?;
        let section = parsed.system;
        let line_of = |needle: &str| text.lines().position(|l| l.contains(needle)).map(|i| i + 1);
        if section.nodes.is_empty() {
            return Err(error(
                line_of("nodes"),
                "system.nodes",
                "no node: list at least the main one".to_owned(),
            ));
        }
        let mut nodes = section.nodes;
        for (i, node) in nodes.iter().enumerate() {
            let valid = !node.name.is_empty()
                && node
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !valid {
                return Err(error(
                    line_of(&node.name),
                    &format!("system.nodes[{i}].name"),
                    format!(
                        "`{}`: a node's name is part of file names: letters, digits, `-` and `_` only",
                        node.name
                    ),
                ));
            }
            if nodes[..i].iter().any(|n| n.name == node.name) {
                return Err(error(
                    line_of(&node.name),
                    &format!("system.nodes[{i}].name"),
                    format!("`{}` names two nodes", node.name),
                ));
            }
        }
        let mains: Vec<usize> = (0..nodes.len()).filter(|&i| nodes[i].main).collect();
        match mains[..] {
            // None marked: the first is the main node, as milabench takes it.
            [] => nodes[0].main = true,
            [i] => {
                let main = nodes.remove(i);
                nodes.insert(0, main);
            }
            [_, second, ..] => {
                return Err(error(
                    line_of(&nodes[second].name),
                    &format!("system.nodes[{second}].main"),
                    "only one node can be the main one".to_owned(),
                ));
            }
        }
        Ok(Self {
            file: file.to_path_buf(),
            sshkey: section.sshkey.map(|k| expand_home(&k)),
            ssh_options: section.ssh_options,
            nats: section.nats,
            nodes,
        })
    }

    /// The node the suite runs from.
    pub fn main(&self) -> &Node {
        &self.nodes[0]
    }
}

/// `~/x` as `$HOME/x`, as milabench's `sshkey: ~/.ssh/id_rsa`.
fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(yaml: &str) -> Result<SystemConfig, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("system.yaml");
        std::fs::write(&file, yaml).unwrap();
        SystemConfig::load(&file)
    }

    #[test]
    fn the_main_node_comes_first_and_the_first_is_main_when_none_is_marked() {
        let s = load("system:\n  nodes:\n    - {name: a, ip: 10.0.0.1}\n    - {name: b, ip: 10.0.0.2, main: true, port: 29500}\n").unwrap();
        assert_eq!(s.main().name, "b");
        assert_eq!(s.main().port, Some(29500));
        assert_eq!(s.nodes[1].name, "a");
        let s = load("system:\n  nodes:\n    - {name: a, ip: 10.0.0.1}\n").unwrap();
        assert!(s.main().main);
    }

    #[test]
    fn errors_name_the_file_the_line_and_the_key() {
        let e = load("system:\n  nodes:\n    - name: a\n      ip: 1.2.3.4\n    - name: b\n")
            .unwrap_err();
        let text = e.to_string();
        assert!(text.contains("system.yaml:"), "{text}");
        assert!(text.contains("missing field `ip`"), "{text}");
        assert!(e.line.is_some(), "{text}");

        let e = load("system:\n  nodes:\n    - {name: a, ip: x, main: true}\n    - {name: b, ip: y, main: true}\n").unwrap_err();
        assert_eq!(e.line, Some(4));
        assert_eq!(e.key, "system.nodes[1].main");

        let e = load("system:\n  nodes:\n    - {name: a.b, ip: x}\n").unwrap_err();
        assert_eq!(e.key, "system.nodes[0].name");
        assert!(e.to_string().contains("letters, digits"), "{e}");

        let e = load("system:\n  nodes:\n    - {name: a, ip: x, colour: red}\n").unwrap_err();
        assert!(e.to_string().contains("unknown field `colour`"), "{e}");

        let e = load("system:\n  nodes: []\n").unwrap_err();
        assert_eq!(e.key, "system.nodes");
    }

    #[test]
    fn the_ssh_key_is_expanded_from_home() {
        let s = load("system:\n  sshkey: ~/.ssh/k\n  arch: cuda\n  nodes: [{name: a, ip: x}]\n")
            .unwrap();
        let home = std::env::var_os("HOME").unwrap();
        assert_eq!(s.sshkey, Some(PathBuf::from(home).join(".ssh/k")));
    }
}
