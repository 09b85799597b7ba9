//! Choosing a backend at run time among those compiled in (`--device flex|wgpu|cuda[:N]`).

use std::fmt;
use std::str::FromStr;

use burn::tensor::backend::AutodiffBackend;

use crate::error::Error;

/// A device to train on: its backend and, for GPUs, its index.
///
/// Parsed from `flex`, `wgpu`, `wgpu:N`, `cuda` or `cuda:N` (case-insensitive).
///
/// ```
/// use giving_models::DeviceSpec;
///
/// assert_eq!("cuda:1".parse::<DeviceSpec>().unwrap(), DeviceSpec::Cuda(1));
/// assert_eq!("flex".parse::<DeviceSpec>().unwrap(), DeviceSpec::Flex);
/// assert!("tpu".parse::<DeviceSpec>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceSpec {
    /// The `Flex` CPU backend (feature `flex`, the default).
    Flex,
    /// A GPU through wgpu (feature `wgpu`): the default adapter, or discrete GPU `N`.
    Wgpu(Option<usize>),
    /// NVIDIA GPU `N` through CUDA (feature `cuda`).
    Cuda(usize),
}

impl DeviceSpec {
    /// The backend's name: `flex`, `wgpu` or `cuda`.
    pub fn backend(&self) -> &'static str {
        match self {
            DeviceSpec::Flex => "flex",
            DeviceSpec::Wgpu(_) => "wgpu",
            DeviceSpec::Cuda(_) => "cuda",
        }
    }

    /// Whether this build includes the device's backend.
    pub fn is_compiled(&self) -> bool {
        match self {
            DeviceSpec::Flex => cfg!(feature = "flex"),
            DeviceSpec::Wgpu(_) => cfg!(feature = "wgpu"),
            DeviceSpec::Cuda(_) => cfg!(feature = "cuda"),
        }
    }

    /// The backends compiled into this build, in order of preference (CPU first).
    pub fn compiled() -> Vec<&'static str> {
        [
            DeviceSpec::Flex,
            DeviceSpec::Wgpu(None),
            DeviceSpec::Cuda(0),
        ]
        .iter()
        .filter(|d| d.is_compiled())
        .map(DeviceSpec::backend)
        .collect()
    }

    /// Runs `task` with this device's autodiff backend, or fails with
    /// [`Error::BackendNotCompiled`] naming the cargo feature to enable.
    pub fn run<T: BackendTask>(&self, task: T) -> Result<T::Output, Error> {
        match *self {
            DeviceSpec::Flex => {
                #[cfg(feature = "flex")]
                {
                    use burn::backend::{Autodiff, Flex};
                    Ok(task.run::<Autodiff<Flex>>(Default::default()))
                }
                #[cfg(not(feature = "flex"))]
                {
                    drop(task);
                    Err(self.not_compiled())
                }
            }
            DeviceSpec::Wgpu(index) => {
                #[cfg(feature = "wgpu")]
                {
                    use burn::backend::wgpu::WgpuDevice;
                    use burn::backend::{Autodiff, Wgpu};
                    let device = index.map_or(WgpuDevice::DefaultDevice, WgpuDevice::DiscreteGpu);
                    probe::<Autodiff<Wgpu>>(self, &device)?;
                    Ok(task.run::<Autodiff<Wgpu>>(device))
                }
                #[cfg(not(feature = "wgpu"))]
                {
                    let _ = index;
                    drop(task);
                    Err(self.not_compiled())
                }
            }
            DeviceSpec::Cuda(index) => {
                #[cfg(feature = "cuda")]
                {
                    use burn::backend::cuda::CudaDevice;
                    use burn::backend::{Autodiff, Cuda};
                    let device = CudaDevice { index };
                    probe::<Autodiff<Cuda>>(self, &device)?;
                    Ok(task.run::<Autodiff<Cuda>>(device))
                }
                #[cfg(not(feature = "cuda"))]
                {
                    let _ = index;
                    drop(task);
                    Err(self.not_compiled())
                }
            }
        }
    }

    #[allow(dead_code)] // unused when every backend is compiled in
    fn not_compiled(&self) -> Error {
        Error::BackendNotCompiled {
            backend: self.backend(),
            feature: self.backend(),
        }
    }
}

impl Default for DeviceSpec {
    /// The first compiled backend among flex, wgpu, cuda (flex in a default build).
    fn default() -> Self {
        if cfg!(feature = "flex") {
            DeviceSpec::Flex
        } else if cfg!(feature = "wgpu") {
            DeviceSpec::Wgpu(None)
        } else if cfg!(feature = "cuda") {
            DeviceSpec::Cuda(0)
        } else {
            DeviceSpec::Flex
        }
    }
}

impl FromStr for DeviceSpec {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        let invalid = |reason: &str| Error::InvalidDevice {
            given: s.to_string(),
            reason: reason.to_string(),
        };
        let lower = s.trim().to_ascii_lowercase();
        let (name, index) = match lower.split_once(':') {
            Some((name, index)) => {
                let index = index
                    .parse::<usize>()
                    .map_err(|_| invalid(&format!("`{index}` is not a device index")))?;
                (name, Some(index))
            }
            None => (lower.as_str(), None),
        };
        match name {
            "flex" | "cpu" if index.is_none() => Ok(DeviceSpec::Flex),
            "flex" | "cpu" => Err(invalid("the CPU backend takes no index")),
            "wgpu" => Ok(DeviceSpec::Wgpu(index)),
            "cuda" => Ok(DeviceSpec::Cuda(index.unwrap_or(0))),
            other => Err(invalid(&format!("unknown backend `{other}`"))),
        }
    }
}

impl fmt::Display for DeviceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceSpec::Flex => f.write_str("flex"),
            DeviceSpec::Wgpu(None) => f.write_str("wgpu"),
            DeviceSpec::Wgpu(Some(i)) => write!(f, "wgpu:{i}"),
            DeviceSpec::Cuda(i) => write!(f, "cuda:{i}"),
        }
    }
}

/// Work generic over the backend, run by [`DeviceSpec::run`] with the chosen one.
pub trait BackendTask {
    /// What the work returns.
    type Output;

    /// Runs the work with autodiff backend `B` on `device`.
    fn run<B: AutodiffBackend>(self, device: B::Device) -> Self::Output;
}

/// Makes one tiny tensor on `device` and syncs it, so that a device that does not exist
/// (`wgpu:99`, `cuda:7` on a one-GPU machine) is reported as [`Error::Device`] naming it,
/// instead of a panic deep inside the backend once training has started. The backend's panic
/// message is kept in the error and not printed by the panic hook.
#[allow(dead_code)] // unused when no GPU backend is compiled in
fn probe<B: burn::tensor::backend::Backend>(
    spec: &DeviceSpec,
    device: &B::Device,
) -> Result<(), Error> {
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    // The device is only read; a half-done probe leaves nothing behind to be unsound about.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let tensor = burn::tensor::Tensor::<B, 1>::zeros([1], device);
        B::sync(device).map(|()| tensor)
    }));
    std::panic::set_hook(quiet);
    let message = match outcome {
        Ok(Ok(_)) => return Ok(()),
        Ok(Err(error)) => format!("{error:?}"),
        Err(panic) => panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "the backend panicked".to_owned()),
    };
    Err(Error::Device(format!(
        "cannot use device {spec} (no such device, or its driver failed): {message}"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_devices() {
        assert_eq!("flex".parse::<DeviceSpec>().unwrap(), DeviceSpec::Flex);
        assert_eq!("CPU".parse::<DeviceSpec>().unwrap(), DeviceSpec::Flex);
        assert_eq!(
            "wgpu".parse::<DeviceSpec>().unwrap(),
            DeviceSpec::Wgpu(None)
        );
        assert_eq!(
            "wgpu:2".parse::<DeviceSpec>().unwrap(),
            DeviceSpec::Wgpu(Some(2))
        );
        assert_eq!("cuda".parse::<DeviceSpec>().unwrap(), DeviceSpec::Cuda(0));
        assert_eq!("cuda:3".parse::<DeviceSpec>().unwrap(), DeviceSpec::Cuda(3));
        for bad in ["", "tpu", "cuda:x", "flex:1", "wgpu:-1"] {
            let err = bad.parse::<DeviceSpec>().unwrap_err().to_string();
            assert!(err.contains("invalid device"), "{bad}: {err}");
        }
        for d in [
            DeviceSpec::Flex,
            DeviceSpec::Wgpu(Some(1)),
            DeviceSpec::Cuda(2),
        ] {
            assert_eq!(d.to_string().parse::<DeviceSpec>().unwrap(), d);
        }
    }

    #[test]
    fn missing_backend_names_its_feature() {
        struct Nothing;
        impl BackendTask for Nothing {
            type Output = ();
            fn run<B: AutodiffBackend>(self, _device: B::Device) {}
        }
        for device in [
            DeviceSpec::Flex,
            DeviceSpec::Wgpu(None),
            DeviceSpec::Cuda(0),
        ] {
            if device.is_compiled() {
                continue;
            }
            let err = device.run(Nothing).unwrap_err().to_string();
            assert!(
                err.contains(&format!("--features {}", device.backend())),
                "{err}"
            );
        }
        assert!(DeviceSpec::compiled().contains(&DeviceSpec::default().backend()));
    }
}
