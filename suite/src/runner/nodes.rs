//! Where a benchmark's processes go: its nodes, the system's accelerator, and the variables
//! a multi-node launcher reads. Shared by the run and its plan (`giving suite plan`).

use crate::RunError;
use crate::config::{Bench, Node, SystemConfig};

/// The nodes `bench` runs on: its `num_machines` first, the main one first; `None` in the
/// list stands for this machine when the run has no system configuration.
pub(crate) fn nodes_of<'s>(
    bench: &Bench,
    system: Option<&'s SystemConfig>,
) -> Result<Vec<Option<&'s Node>>, RunError> {
    let wanted = bench.num_machines as usize;
    let available = system.map_or(1, |s| s.nodes.len());
    if wanted > available {
        let given = match system {
            Some(s) => format!("{} lists {available}", s.file.display()),
            None => "without --system, the run has this machine only".to_owned(),
        };
        return Err(RunError::Plan {
            bench: bench.name.clone(),
            message: format!("num_machines is {wanted}, but {given}"),
        });
    }
    Ok(match system {
        Some(s) => s.nodes[..wanted].iter().map(Some).collect(),
        None => vec![None],
    })
}

/// The system's accelerator (`cuda` when it does not say): which variable gives a process
/// its GPU.
pub(crate) fn arch_of(system: Option<&SystemConfig>) -> String {
    system
        .and_then(|s| s.arch.clone())
        .unwrap_or_else(|| "cuda".to_owned())
}

/// What a process on a system's node learns about the others, as torchrun's variables:
/// `NODE_RANK`, `MASTER_ADDR` (the main node's address) and `MASTER_PORT` (its `port`).
pub(crate) fn distributed_env(system: &SystemConfig, node_rank: usize) -> Vec<(String, String)> {
    let main = system.main();
    let mut env = vec![
        ("NODE_RANK".to_owned(), node_rank.to_string()),
        ("MASTER_ADDR".to_owned(), main.ip.clone()),
    ];
    if let Some(port) = main.port {
        env.push(("MASTER_PORT".to_owned(), port.to_string()));
    }
    env
}
