//! milabench's `system.yaml`: the nodes a suite runs on, and how to reach them over ssh.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{ConfigError, FILE_KEY};

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
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
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
    /// The accelerator's kind (`arch: cuda`, `rocm`, `xpu`, `hpu`, `cpu`): `{arch}`,
    /// `{device_name}`, `{ccl}`. `None`: `cuda` where there are GPUs, else `cpu`.
    pub arch: Option<String>,
    /// How milabench runs a worker node's processes in a container (`docker:`).
    pub docker: Option<DockerConfig>,
    /// milabench's `options:` that change a plan (`cpu`, `sizer`, `torchrun`).
    pub options: SystemOptions,
    /// `gpu: {capacity, count}`: what the GPUs are said to be, for `requires_capabilities`.
    pub gpu: GpuConfig,
    /// `dirs: {venv, data, runs, extra, cache}`: milabench's folders, overriding the defaults
    /// under its base.
    pub dirs: BTreeMap<String, PathBuf>,
    /// The `system:` section as written, `${…}` resolved: what `${system.…}` in a suite's
    /// configuration and `requires_capabilities` read.
    #[serde(skip)]
    pub raw: serde_norway::Value,
    /// Keys milabench knows that giving does not use, kept as written (with a warning).
    pub unused: Vec<String>,
}

/// milabench's `system.docker`: `{executable} run {args} … {image} COMMAND`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DockerConfig {
    /// The container program (default `podman`, as milabench).
    #[serde(default = "default_docker")]
    pub executable: String,
    /// The image; none: no container.
    #[serde(default)]
    pub image: Option<String>,
    /// The folder the container's volumes are under.
    #[serde(default = "default_docker_base")]
    pub base: String,
    /// Arguments after `run`.
    #[serde(default)]
    pub args: Vec<String>,
}

fn default_docker() -> String {
    "podman".to_owned()
}

fn default_docker_base() -> String {
    "/tmp/workspace".to_owned()
}

/// milabench's `system.options` that giving reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SystemOptions {
    /// `options.cpu`.
    pub cpu: CpuOptions,
    /// `options.sizer`.
    pub sizer: SizerOptions,
    /// `options.torchrun`.
    pub torchrun: TorchrunOptions,
}

/// milabench's `options.cpu`: the CPUs a benchmark's `{n_worker}` and `auto(…)` see.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CpuOptions {
    /// `auto(value, default)` gives `value` (default: `default`).
    pub enabled: bool,
    /// The CPUs counted (default: this machine's).
    pub total_count: Option<usize>,
    /// `{n_worker}`'s upper bound (16).
    pub max: usize,
    /// `{n_worker}`'s lower bound (2).
    pub min: usize,
    /// CPUs left out of the count.
    pub reserved_cores: usize,
    /// `{n_worker}` itself, bounds ignored.
    pub n_workers: Option<usize>,
}

impl Default for CpuOptions {
    fn default() -> Self {
        Self {
            enabled: false,
            total_count: None,
            max: 16,
            min: 2,
            reserved_cores: 0,
            n_workers: None,
        }
    }
}

/// milabench's `options.sizer`: how `auto_batch(…)` changes a batch size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SizerOptions {
    /// Above 0: resize batches.
    pub auto: u32,
    /// Multiply the configured batch size.
    pub mult: Option<f64>,
    /// Add to it.
    pub add: Option<i64>,
    /// Every resized batch is this.
    pub batch_size: Option<i64>,
    /// The memory to fill (`64Go`, `All`), instead of `gpu.capacity`.
    pub capacity: Option<String>,
    /// A resized batch is a multiple of this (8).
    pub multiple: Option<u64>,
    /// … or a power of this.
    pub power: Option<u64>,
    /// The scaling table (default: `scaling/default.yaml` beside the suite's file).
    pub config: Option<PathBuf>,
}

impl Default for SizerOptions {
    fn default() -> Self {
        Self {
            auto: 0,
            mult: None,
            add: None,
            batch_size: None,
            capacity: None,
            multiple: Some(8),
            power: None,
            config: None,
        }
    }
}

/// milabench's `options.torchrun`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TorchrunOptions {
    /// The rendezvous port (29400).
    pub port: u16,
    /// The rendezvous backend of multi-node runs (`static`).
    pub backend: String,
}

impl Default for TorchrunOptions {
    fn default() -> Self {
        Self {
            port: 29400,
            backend: "static".to_owned(),
        }
    }
}

/// milabench's `system.gpu`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GpuConfig {
    /// Memory of one GPU (`81920 MiB`), as written.
    pub capacity: Option<String>,
    /// How many GPUs a node has (default: those planned for).
    pub count: Option<usize>,
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
    /// milabench's `multirun:` (matrix runs of the whole suite): kept, unused.
    #[serde(default, rename = "multirun")]
    _multirun: Option<serde_norway::Value>,
}

// Not `deny_unknown_fields`: milabench's system has more keys than giving reads, kept in
// `rest`.
#[derive(Deserialize)]
struct Section {
    #[serde(default)]
    sshkey: Option<String>,
    #[serde(default)]
    ssh_options: Vec<String>,
    #[serde(default)]
    nats: Option<String>,
    nodes: Vec<Node>,
    #[serde(default)]
    arch: Option<String>,
    #[serde(default)]
    docker: Option<DockerConfig>,
    #[serde(default)]
    options: SystemOptions,
    #[serde(default)]
    gpu: GpuConfig,
    #[serde(default)]
    dirs: BTreeMap<String, PathBuf>,
    /// milabench's other keys (`docker_image`, `run_name`, `base`, `dash`, …), kept.
    #[serde(flatten)]
    rest: BTreeMap<String, serde_norway::Value>,
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
            .map_err(|e| error(None, FILE_KEY, format!("cannot read: {e}")))?;
        // Read twice: from the text, for errors with their line; then from the values with
        // `${…}` resolved (`image: milabench:${system.arch}`).
        serde_norway::from_str::<File>(&text)
            .map_err(|e| error(e.location().map(|l| l.line()), "system", e.to_string()))?;
        let mut doc: serde_norway::Value = serde_norway::from_str(&text)
            .map_err(|e| error(e.location().map(|l| l.line()), "system", e.to_string()))?;
        super::interpolate::interpolate(&mut doc).map_err(|e| error(None, "system", e))?;
        let raw = doc.get("system").cloned().unwrap_or_default();
        let parsed: File =
            serde_norway::from_value(doc).map_err(|e| error(None, "system", e.to_string()))?;
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
            arch: section.arch,
            docker: section.docker,
            options: section.options,
            gpu: section.gpu,
            dirs: section.dirs,
            raw,
            unused: section.rest.into_keys().collect(),
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
    fn milabench_example_system_loads_with_docker_options_gpu_and_dirs() {
        let s = load("system:\n  arch: rocm\n  docker_image: x\n  gpu: {capacity: 81920 MiB}\n  options: {cpu: {total_count: 64, n_workers: 4}, sizer: {auto: 1, mult: 2}}\n  dirs: {data: /data}\n  docker:\n    image: ghcr.io/m:${system.arch}-nightly\n    base: /w\n    args: [-v, '${system.docker.base}/data:/d']\n  nodes: [{name: a, ip: x, user: u}]\nmultirun: {runs: []}\n").unwrap();
        let docker = s.docker.unwrap();
        assert_eq!(docker.image.as_deref(), Some("ghcr.io/m:rocm-nightly"));
        assert_eq!(docker.executable, "podman");
        assert_eq!(docker.args, ["-v", "/w/data:/d"]);
        assert_eq!(s.gpu.capacity.as_deref(), Some("81920 MiB"));
        assert_eq!(s.options.cpu.total_count, Some(64));
        assert_eq!(s.options.cpu.max, 16);
        assert_eq!(s.options.sizer.mult, Some(2.0));
        assert_eq!(s.options.torchrun.port, 29400);
        assert_eq!(s.dirs["data"], PathBuf::from("/data"));
        assert_eq!(s.arch.as_deref(), Some("rocm"));
        assert_eq!(s.unused, ["docker_image"]);
        assert_eq!(s.raw["nodes"][0]["name"], "a");
    }

    #[test]
    fn the_ssh_key_is_expanded_from_home() {
        let s = load("system:\n  sshkey: ~/.ssh/k\n  arch: cuda\n  nodes: [{name: a, ip: x}]\n")
            .unwrap();
        let home = std::env::var_os("HOME").unwrap();
        assert_eq!(s.sshkey, Some(PathBuf::from(home).join(".ssh/k")));
    }
}
