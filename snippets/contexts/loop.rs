//! A training loop over `loader` whose `step` returns the loss, on any burn backend `B`.

pub fn snippet<B: burn::tensor::backend::Backend>(
    device: B::Device,
    loader: Vec<f64>,
    mut step: impl FnMut(f64) -> f64,
) -> anyhow::Result<()> {
    // SNIPPET
    Ok(())
}

#[test]
fn runs() {
    let loader = (0..300).map(f64::from).collect();
    snippet::<burn::backend::Flex>(Default::default(), loader, |x| 1.0 / (1.0 + x)).unwrap();
}
