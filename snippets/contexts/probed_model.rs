//! A model whose `step` returns a loss, the loader it reads, and one of each to train.

pub struct Model;

impl Model {
    pub fn step(&mut self, batch: &u32) -> f64 {
        1.0 / (1.0 + f64::from(*batch))
    }
}

pub type Loader = Vec<u32>;

pub fn snippet() -> anyhow::Result<()> {
    let mut model = Model;
    let loader: Loader = (0..10).collect();
    // SNIPPET
    Ok(())
}

#[test]
fn runs() {
    snippet().unwrap();
}
