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
                    Ok(task.run::<Autodiff<Cuda>>(CudaDevice { index }))
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
